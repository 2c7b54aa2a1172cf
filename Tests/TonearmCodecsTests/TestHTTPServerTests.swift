// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// Bytes of a fixed pseudo-random sequence (the same every run).
private func payload(_ count: Int, seed: UInt32 = 777) -> [UInt8] {
    var x = seed
    return (0..<count).map { _ in
        x = x &* 1_103_515_245 &+ 12345
        return UInt8(truncatingIfNeeded: x >> 16)
    }
}

/// A private server on a fresh root holding `a.mp3` (100 000 bytes of ``payload(_:seed:)``),
/// and a folder for what curl downloads.
private final class Fixture {
    let root: TempDir
    let downloads: TempDir
    let server: PrivateHTTPServer
    let audio = payload(100_000)

    init(tls: Bool = false, files: [String: [UInt8]] = [:]) throws {
        root = try TempDir("tonearm-httpd-root")
        downloads = try TempDir("tonearm-httpd-dl")
        var all = files
        all["a.mp3"] = audio
        for (name, bytes) in all {
            let path = root.file(name)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        do {
            server = try PrivateHTTPServer(root: root.path, tls: tls)
        } catch {
            root.remove()
            downloads.remove()
            throw error
        }
    }

    func stop() {
        server.stop()
        root.remove()
        downloads.remove()
    }

    /// What one curl run got.
    struct Fetched {
        /// curl's exit status (18: partial body, 22: HTTP error with -f, 47: too many redirects,
        /// 52: empty reply, 56: receive failure, 60: certificate not trusted).
        var exit: Int32
        /// The status of the last response (0: none).
        var status: Int
        /// The headers of the last response, names in lower case.
        var headers: [String: String]
        /// Everything curl wrote with -D (status lines and headers of every response).
        var headerText: String
        var body: [UInt8]
        var stderr: String
    }

    /// Runs `curl -sS OPTIONS URL`, the headers and the body written to files.
    func curl(_ url: URL, _ options: [String] = []) throws -> Fetched {
        let name = UUID().uuidString.prefix(8)
        let headerFile = downloads.file("h-\(name)"), bodyFile = downloads.file("b-\(name)")
        let r = try run("curl", ["-sS", "--max-time", "60", "-D", headerFile, "-o", bodyFile, "-w", "%{http_code}"]
                                + options + [url.absoluteString])
        let headerText = (try? String(contentsOfFile: headerFile, encoding: .isoLatin1)) ?? ""
        let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))).map { [UInt8]($0) } ?? []
        var headers: [String: String] = [:]
        let blocks = headerText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
        for line in (blocks.last ?? "").components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Fetched(exit: r.status, status: Int(r.stdout) ?? 0, headers: headers, headerText: headerText, body: body,
                       stderr: r.stderr)
    }

    /// The log entry of the first request matching `predicate` once it is complete (the server
    /// writes the last line after the client may have seen the whole body).
    func completed(_ predicate: @escaping @Sendable (RequestLogEntry) -> Bool) async -> RequestLogEntry? {
        await server.waitForRequest(timeout: 10) { $0.complete && predicate($0) }
    }
}

/// An ICY body taken apart: the audio, and each metadata block with the number of audio bytes
/// before it and its title (nil for an empty block). Nil when a block runs past the end.
private func parseICY(_ body: [UInt8], metaint: Int) -> (audio: [UInt8], blocks: [(position: Int, title: String?)])? {
    var audio: [UInt8] = []
    var blocks: [(position: Int, title: String?)] = []
    var i = 0
    while i < body.count {
        let n = min(metaint, body.count - i)
        audio += body[i..<(i + n)]
        i += n
        guard n == metaint, i < body.count else { break }
        let length = Int(body[i]) * 16
        i += 1
        guard i + length <= body.count else { return nil }
        if length == 0 {
            blocks.append((audio.count, nil))
        } else {
            let block = body[i..<(i + length)]
            // Zero padding after `StreamTitle='…';`.
            guard let end = block.lastIndex(where: { $0 != 0 }) else { return nil }
            let text = String(decoding: block[...end], as: UTF8.self)
            guard text.hasPrefix("StreamTitle='"), text.hasSuffix("';") else { return nil }
            blocks.append((audio.count, String(text.dropFirst("StreamTitle='".count).dropLast(2))))
        }
        i += length
    }
    return (audio, blocks)
}

/// The test HTTP server (`httpd.py`) that the streaming tests use, checked with curl as a neutral
/// client. Every wait is signalled by the server's log and bounded.
@Suite("Test HTTP server")
struct TestHTTPServerTests {
    @Test func rangeRequests() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let url = f.server.url("/a.mp3")

        let whole = try f.curl(url)
        #expect(whole.exit == 0 && whole.status == 200)
        #expect(whole.body == f.audio)
        #expect(whole.headers["content-length"] == "100000")
        #expect(whole.headers["accept-ranges"] == "bytes")
        #expect(whole.headers["content-type"] == "audio/mpeg")

        let middle = try f.curl(url, ["-r", "1000-1999"])
        #expect(middle.status == 206)
        #expect(middle.headers["content-range"] == "bytes 1000-1999/100000")
        #expect(middle.body == Array(f.audio[1000..<2000]))

        let tail = try f.curl(url, ["-r", "99000-"])
        #expect(tail.status == 206)
        #expect(tail.headers["content-range"] == "bytes 99000-99999/100000")
        #expect(tail.body == Array(f.audio[99000...]))

        let suffix = try f.curl(url, ["-r", "-500"])
        #expect(suffix.status == 206 && suffix.body == Array(f.audio[99500...]))

        let past = try f.curl(url, ["-r", "200000-"])
        #expect(past.status == 416)
        #expect(past.headers["content-range"] == "bytes */100000")

        let head = try f.curl(url, ["-I"])
        #expect(head.status == 200 && head.headers["content-length"] == "100000")

        let logged = await f.completed { $0.rangeStart == 1000 }
        #expect(logged?.range == "bytes=1000-1999")
        #expect(logged?.status == 206 && logged?.bytes == 1000 && logged?.dropped == false)
        #expect(await f.completed { $0.method == "HEAD" }?.bytes == 0)
        #expect(f.server.unreadableLogLines.isEmpty)

        let types = try Fixture(files: ["b.flac": [1], "c.ogg": [1], "d.aac": [1], "e.m4a": [1], "p.m3u8": [1], "s.ts": [1],
                                        "x.html": [1]])
        defer { types.stop() }
        for (name, type) in [("b.flac", "audio/flac"), ("c.ogg", "audio/ogg"), ("d.aac", "audio/aac"), ("e.m4a", "audio/mp4"),
                             ("p.m3u8", "application/vnd.apple.mpegurl"), ("s.ts", "video/mp2t"),
                             ("x.html", "text/html; charset=utf-8")] {
            #expect(try types.curl(types.server.url(name), ["-I"]).headers["content-type"] == type, "\(name)")
        }
        #expect(try f.curl(f.server.url("/missing.mp3")).status == 404)
        #expect(try f.curl(f.server.url("/a.mp3", query: ["type": "application/octet-stream"]), ["-I"])
            .headers["content-type"] == "application/octet-stream")
    }

    @Test func noRange() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let r = try f.curl(f.server.url("/a.mp3", query: ["norange": "1"]), ["-r", "1000-1999"])
        #expect(r.status == 200)
        #expect(r.body == f.audio)
        #expect(r.headers["accept-ranges"] == nil)
        #expect(r.headers["content-range"] == nil)
        let logged = await f.completed { $0.path == "/a.mp3" }
        #expect(logged?.range == "bytes=1000-1999" && logged?.status == 200 && logged?.bytes == 100_000)
    }

    @Test func dropOnceThenResume() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let url = f.server.url("/a.mp3", query: ["drop": "30000"])

        let first = try f.curl(url)
        #expect(first.exit == 18, "curl reports a partial body: \(first.stderr)")
        #expect(first.body == Array(f.audio[..<30000]))
        let dropped = await f.completed { $0.path == "/a.mp3" }
        #expect(dropped?.dropped == true && dropped?.bytes == 30000 && dropped?.status == 200)

        // Only the first response for the path drops: a Range resume, then a new request, succeed.
        let resumed = try f.curl(url, ["-r", "30000-"])
        #expect(resumed.exit == 0 && resumed.status == 206)
        #expect(first.body + resumed.body == f.audio)
        let again = try f.curl(url)
        #expect(again.exit == 0 && again.body == f.audio)

        // After resetDrops the path drops again, once a body goes past the drop point (a shorter
        // one does not use up the drop).
        try f.server.resetDrops()
        let short = try f.curl(url, ["-r", "0-999"])
        #expect(short.exit == 0 && short.body == Array(f.audio[..<1000]))
        #expect(try f.curl(url).exit == 18)

        // A reset instead of a clean close: curl sees a receive failure and at most the bytes sent.
        try f.server.resetDrops()
        let reset = try f.curl(f.server.url("/a.mp3", query: ["drop": "3000", "reset": "1"]))
        #expect(reset.exit == 56, "connection reset: \(reset.stderr)")
        #expect(reset.body.count <= 3000 && reset.body == Array(f.audio[..<reset.body.count]))
        #expect(await f.server.waitForRequests(timeout: 10) { log in log.filter { $0.dropped && $0.complete }.count == 3 })
    }

    @Test func stallThenContinue() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let url = f.server.url("/a.mp3", query: ["stall": "0.2", "at": "5000"])
        let r = try f.curl(url)
        #expect(r.exit == 0 && r.body == f.audio)
        #expect(await f.completed { $0.path == "/a.mp3" }?.stalled == true)
        _ = try f.curl(url)
        let second = await f.completed { $0.path == "/a.mp3" && $0.id > 1 }
        #expect(second?.stalled == false && second?.bytes == 100_000)
    }

    @Test func chunked() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let r = try f.curl(f.server.url("/a.mp3", query: ["chunked": "1"]))
        #expect(r.exit == 0 && r.status == 200)
        #expect(r.headers["transfer-encoding"] == "chunked")
        #expect(r.headers["content-length"] == nil)
        #expect(r.body == f.audio)
        let part = try f.curl(f.server.url("/a.mp3", query: ["chunked": "1"]), ["-r", "10-19"])
        #expect(part.status == 206 && part.body == Array(f.audio[10..<20]))
    }

    @Test func statusCodesAndNonMedia() async throws {
        let f = try Fixture()
        defer { f.stop() }
        #expect(try f.curl(f.server.url("/status/404")).status == 404)
        #expect(try f.curl(f.server.url("/status/500")).status == 500)
        #expect(try f.curl(f.server.url("/status/503"), ["-f"]).exit == 22)
        let html = try f.curl(f.server.url("/html"))
        #expect(html.status == 200 && html.headers["content-type"] == "text/html; charset=utf-8")
        #expect(String(decoding: html.body, as: UTF8.self).contains("<html>"))
        let big = try f.curl(f.server.url("/bigheader", query: ["bytes": "5000"]))
        #expect(big.headers["x-filler"]?.count == 5000)

        // A request that is never answered: curl sees the connection close without a reply.
        let hang = try f.curl(f.server.url("/hang", query: ["seconds": "0.2"]))
        #expect(hang.exit == 52)
        let logged = await f.completed { $0.path == "/hang" }
        #expect(logged != nil && logged?.status == nil)
    }

    @Test func redirects() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let once = try f.curl(f.server.url("/redirect", query: ["to": "/a.mp3"]), ["-L"])
        #expect(once.status == 200 && once.body == f.audio)
        #expect(once.headerText.hasPrefix("HTTP/1.1 302 "))
        let chain = f.server.url("/redirect", query: ["to": "/a.mp3", "hops": "3", "code": "301"])
        #expect(try f.curl(chain, ["-L", "--max-redirs", "3"]).body == f.audio)
        #expect(try f.curl(chain, ["-L", "--max-redirs", "2"]).exit == 47)

        let loop = try f.curl(f.server.url("/redirectloop"), ["-L", "--max-redirs", "5"])
        #expect(loop.exit == 47, "too many redirects: \(loop.stderr)")
        #expect(await f.server.waitForRequests(timeout: 10) { log in
            log.filter { $0.path == "/redirectloop" && $0.complete && $0.status == 302 }.count == 6
        })
        let pingPong = try f.curl(f.server.url("/redirectloop/a"), ["-L", "--max-redirs", "3"])
        #expect(pingPong.exit == 47)
        #expect(await f.server.waitForRequests(timeout: 10) { log in
            log.filter { $0.path.hasPrefix("/redirectloop/") }.map(\.path)
                == ["/redirectloop/a", "/redirectloop/b", "/redirectloop/a", "/redirectloop/b"]
        })
    }

    /// A throttled body in progress speeds up when the server-wide rate is lifted: without that,
    /// 100 000 bytes at 1000 bytes/s would take 100 s, past curl's limit.
    @Test func throttleChangesMidStream() async throws {
        let f = try Fixture()
        defer { f.stop() }
        try f.server.setRate(1000)
        #expect(try f.server.control("state").contains("\"rate\": 1000"))
        let output = f.downloads.file("slow")
        let slow = try ChildProcess(["curl", "-sS", "--max-time", "60", "-o", output, f.server.url("/a.mp3").absoluteString])
        defer { slow.terminate(SIGKILL) }
        let started = await f.server.waitForRequest(timeout: 10) { $0.path == "/a.mp3" && $0.status == 200 }
        #expect(started?.rate == 1000)
        #expect(started?.complete == false)
        try f.server.setRate(nil)
        #expect(await slow.waitForExit(timeout: 30) && slow.succeeded)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output))) == f.audio)
        let done = await f.completed { $0.path == "/a.mp3" }
        #expect(done?.bytes == 100_000 && done?.rate == nil)

        // A request's own rate= is kept whatever the server-wide rate.
        try f.server.setRate(1000)
        let own = try f.curl(f.server.url("/a.mp3", query: ["rate": "100000000"]))
        #expect(own.body == f.audio)
        #expect(await f.completed { $0.query["rate"] != nil }?.rate == 100_000_000)
        try f.server.reset()
        #expect(try f.server.control("state").contains("\"rate\": null"))
    }

    @Test func icyMetadata() async throws {
        let radio = payload(7000, seed: 99)
        let f = try Fixture(files: ["radio.mp3": radio])
        defer { f.stop() }
        let titles = ["First", "Second title", "It's third"]
        let query = ["file": "radio.mp3", "metaint": "1000", "titles": titles.joined(separator: "|"), "every": "5000",
                     "length": "20000", "name": "Test FM", "br": "64"]
        let looped = (0..<20000).map { radio[$0 % radio.count] }

        let r = try f.curl(f.server.url("/radio", query: query), ["-H", "Icy-MetaData: 1"])
        #expect(r.exit == 0 && r.status == 200)
        #expect(r.headerText.hasPrefix("HTTP/1.0 200 OK\r\n"))
        #expect(r.headers["icy-metaint"] == "1000")
        #expect(r.headers["icy-name"] == "Test FM" && r.headers["icy-br"] == "64")
        #expect(r.headers["content-type"] == "audio/mpeg")
        #expect(r.headers["content-length"] == nil)
        let parsed = try #require(parseICY(r.body, metaint: 1000))
        #expect(parsed.audio == looped)
        // The first block comes after metaint bytes and holds the first title; then a block every
        // metaint bytes, empty while the title stays, the next title every 5000 audio bytes.
        #expect(parsed.blocks.count == 20)
        #expect(parsed.blocks.first?.position == 1000 && parsed.blocks.first?.title == "First")
        let changes = parsed.blocks.filter { $0.title != nil }
        #expect(changes.map(\.position) == [1000, 5000, 10000, 15000, 20000])
        #expect(changes.map(\.title) == ["First", "Second title", "It's third", "First", "Second title"])
        let logged = await f.completed { $0.path == "/radio" }
        #expect(logged?.icyMetaData == "1")
        #expect(logged?.bytes == r.body.count)

        // Without Icy-MetaData: 1, plain audio.
        let plain = try f.curl(f.server.url("/radio", query: query))
        #expect(plain.headers["icy-metaint"] == nil && plain.headers["icy-name"] == "Test FM")
        #expect(plain.body == looped)

        // Shoutcast's status line (curl takes a reply without "HTTP/" for HTTP/0.9).
        var shoutcast = query
        shoutcast["icy"] = "1"
        let icy = try f.curl(f.server.url("/radio", query: shoutcast), ["--http0.9", "-H", "Icy-MetaData: 1"])
        let text = String(decoding: icy.body.prefix(300), as: UTF8.self)
        #expect(icy.exit == 0 && text.hasPrefix("ICY 200 OK\r\n") && text.contains("icy-metaint: 1000\r\n"))
    }

    @Test func hls() async throws {
        let durations = [2.0, 2.5, 2.0, 1.5, 2.0]
        var files: [String: [UInt8]] = [:]
        var index = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n#EXT-X-MEDIA-SEQUENCE:0\n"
        for (i, d) in durations.enumerated() {
            files["news/seg\(i).ts"] = payload(1000 + i, seed: UInt32(i + 1))
            index += "#EXTINF:\(d),\nseg\(i).ts\n"
        }
        files["news/index.m3u8"] = Array((index + "#EXT-X-ENDLIST\n").utf8)
        files["vod/index.m3u8"] = Array(index.utf8)
        files["plain/b10.ts"] = [10]
        files["plain/b2.ts"] = [2]
        let f = try Fixture(files: files)
        defer { f.stop() }

        let vod = try f.curl(f.server.url("/vod/index.m3u8"))
        #expect(vod.headers["content-type"] == "application/vnd.apple.mpegurl" && vod.body == Array(index.utf8))

        let live = f.server.url("/live/news.m3u8", query: ["window": "3", "initial": "2", "end": "1"])
        func playlist() throws -> String {
            let r = try f.curl(live)
            #expect(r.status == 200 && r.headers["content-type"] == "application/vnd.apple.mpegurl")
            return String(decoding: r.body, as: UTF8.self)
        }
        #expect(try playlist() == """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:3
            #EXT-X-MEDIA-SEQUENCE:0
            #EXTINF:2.000,
            news/seg0.ts
            #EXTINF:2.500,
            news/seg1.ts

            """)
        // Each request reveals one more segment; the window slides; the end comes with the last.
        let second = try playlist()
        #expect(second.contains("#EXT-X-MEDIA-SEQUENCE:0\n") && second.contains("news/seg2.ts") && !second.contains("ENDLIST"))
        let third = try playlist()
        #expect(third.contains("#EXT-X-MEDIA-SEQUENCE:1\n") && !third.contains("seg0.ts") && third.contains("news/seg3.ts"))
        #expect(!third.contains("#EXT-X-ENDLIST"))
        let fourth = try playlist()
        #expect(fourth.contains("#EXT-X-MEDIA-SEQUENCE:2\n") && fourth.contains("news/seg4.ts"))
        #expect(fourth.hasSuffix("#EXTINF:2.000,\nnews/seg4.ts\n#EXT-X-ENDLIST\n"))

        // Segment URIs resolve against the playlist's URL.
        let segment = try f.curl(URL(string: "news/seg3.ts", relativeTo: live)!.absoluteURL)
        #expect(segment.status == 200 && segment.headers["content-type"] == "video/mp2t")
        #expect(segment.body == files["news/seg3.ts"])

        // Without a playlist in the folder: its segments in natural order, `duration` seconds each.
        let generated = String(decoding: try f.curl(f.server.url("/live/plain.m3u8", query: ["duration": "4"])).body,
                               as: UTF8.self)
        #expect(generated.hasSuffix("#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:4.000,\nplain/b2.ts\n#EXTINF:4.000,\nplain/b10.ts\n"))
        try f.server.reset()
        #expect(try playlist().contains("#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2.000,\nnews/seg0.ts\n#EXTINF:2.500,\nnews/seg1.ts\n"))
    }

    @Test func tls() async throws {
        let f = try Fixture(tls: true)
        defer { f.stop() }
        #expect(f.server.baseURL.scheme == "https")
        let url = f.server.url("/a.mp3")
        let verified = try f.curl(url)
        #expect(verified.exit == 60, "curl refuses the self-signed certificate: \(verified.stderr)")
        let insecure = try f.curl(url, ["-k"])
        #expect(insecure.exit == 0 && insecure.body == f.audio)
        let trusted = try f.curl(url, ["--cacert", try #require(f.server.certificatePath), "-r", "0-99"])
        #expect(trusted.status == 206 && trusted.body == Array(f.audio[..<100]))
        let plain = try f.curl(f.server.plainURL("/a.mp3"))
        #expect(plain.body == f.audio)
        #expect(await f.completed { $0.tls && $0.range == nil }?.bytes == 100_000)
        #expect(await f.completed { !$0.tls && $0.path == "/a.mp3" } != nil)
    }

    @Test func waitingIsBounded() async throws {
        let f = try Fixture()
        defer { f.stop() }
        #expect(await f.server.waitForRequest(timeout: 0.1) { $0.path == "/never" } == nil)
        let url = f.server.url("/a b.mp3", query: ["titles": "A|B&C=D", "x": "1 2"])
        #expect(url.absoluteString.hasSuffix("/a%20b.mp3?titles=A%7CB%26C%3DD&x=1%202"))
        _ = try f.curl(url)
        let logged = await f.completed { $0.path == "/a b.mp3" }
        #expect(logged?.query == ["titles": "A|B&C=D", "x": "1 2"] && logged?.status == 404)
        f.server.stop()
        #expect(!f.server.isRunning)
        #expect(await f.server.waitForRequest(timeout: 10) { $0.path == "/never" } == nil)
    }
}
