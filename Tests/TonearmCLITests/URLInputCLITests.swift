// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `info`, `extract-audio` and `convert` given an address instead of a path, against a real
/// HTTP server on 127.0.0.1: `info` reads it over the network; the export commands say they
/// take files (not "file not found" of a path made from the URL); an HTML page is said once.
@Suite  final class URLInputCLITests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("url-input") }
    deinit { dir.remove() }

    @Test func infoReadsAnHTTPAddress() throws {
        defer { dir.remove() }
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=2:sample_rate=48000", "-c:a", "flac",
                             "-metadata", "title=Over The Wire", dir.file("song.flac")])
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let url = server.url("/song.flac").absoluteString
        let r = try run(try tonearmBinary(), ["info", url])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("\(url)\n"), "\(r.stdout)")
        #expect(r.stdout.contains("FLAC · 48 kHz"), "\(r.stdout)")
        #expect(r.stdout.contains("96000 frames"), "\(r.stdout)")
        #expect(r.stdout.contains("title      Over The Wire"), "\(r.stdout)")
        #expect(!r.stderr.contains("file not found"))
        let json = try run(try tonearmBinary(), ["info", "--json", url])
        let arr = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(arr.first?["sampleRate"] as? Int == 48000)
        // A missing one says what the server said.
        let gone = try run(try tonearmBinary(), ["info", server.url("/gone.flac").absoluteString])
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("\(server.url("/gone.flac").absoluteString): the server answered 404"), "\(gone.stderr)")
    }

    @Test func anHTMLPageIsSaidOnce() throws {
        defer { dir.remove() }
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let page = server.url("/html").absoluteString
        let r = try run(try tonearmBinary(), ["info", page])
        #expect(r.status == 1)
        #expect(r.stderr == "\(page): not audio (the server sent a text/html page)\n", "\(r.stderr)")
        let play = try run(try tonearmBinary(), ["play", "--output", "null", page])
        #expect(play.status == 1)
        #expect(play.stderr.components(separatedBy: "text/html").count == 2, "said more than once: \(play.stderr)")
    }

    @Test func exportCommandsSayTheyTakeFiles() throws {
        defer { dir.remove() }
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", dir.file("a.wav")])
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let url = server.url("/a.wav").absoluteString
        for command in ["extract-audio", "convert"] {
            let out = dir.file("out-\(command).flac")
            let r = try run(try tonearmBinary(), [command, url, "-o", out])
            #expect(r.status != 0)
            #expect(r.stderr.contains("\(url) is a URL: \(command) reads local files only"), "\(r.stderr)")
            #expect(!r.stderr.contains("file not found"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        // A file:// URL is a file.
        let r = try run(try tonearmBinary(), ["convert", URL(fileURLWithPath: dir.file("a.wav")).absoluteString, "-o", dir.file("b.flac")])
        #expect(r.status == 0, "\(r.stderr)")
    }
}
