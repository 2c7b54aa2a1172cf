// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// One request as the test HTTP server logged it (see `httpd.py` next to this file for every
/// field). The server writes a line when the request arrives, when its headers are sent, when a
/// stall begins and when it ends; the entry is the latest of them, so ``complete`` tells whether
/// the response has ended and ``bytes`` is final only then.
public struct RequestLogEntry: Decodable, Sendable, Equatable {
    /// The request's number, from 1, in the order of arrival.
    public var id: Int
    /// `GET`, `HEAD` or `POST`.
    public var method: String
    /// The path, percent-decoded, without the query.
    public var path: String
    /// The request target as sent (path and query, still encoded).
    public var target: String
    /// The query parameters (the last value of each name).
    public var query: [String: String]
    /// The `Range` header, as sent.
    public var range: String?
    /// The `Icy-MetaData` header, as sent.
    public var icyMetaData: String?
    /// Every request header, names in lower case.
    public var headers: [String: String]
    /// Whether the request came over TLS.
    public var tls: Bool
    /// The status sent; nil until the status line is sent (and for `/hang`).
    public var status: Int?
    /// Body bytes written after the headers (ICY metadata included; chunk framing not).
    public var bytes: Int
    /// Whether the response has ended (completely or not).
    public var complete: Bool
    /// Whether the server cut the connection on purpose (`drop=`).
    public var dropped: Bool
    /// Whether the server stalled this response (`stall=`).
    public var stalled: Bool
    /// Whether the client went away before the body ended.
    public var clientClosed: Bool
    /// The throttle in force (bytes/s) when the entry was written; nil: none.
    public var rate: Int?
    /// Seconds since the server started (monotonic clock) when the entry was written: for an
    /// entry still under way, when it arrived, sent its headers or stalled; for a complete one,
    /// when it ended. Compare ``arrival``s to tell how far apart requests came.
    public var time: Double
    /// Seconds since the server started (monotonic clock) when the request had been read; the
    /// same in every entry of one request.
    public var arrival: Double

    enum CodingKeys: String, CodingKey {
        case id, method, path, target, query, range, icyMetaData, headers, tls, status, bytes, complete, dropped,
             stalled, clientClosed, rate
        case time = "t", arrival = "arrived"
    }

    /// The first byte that ``range`` asks for (`bytes=a-` or `bytes=a-b`); nil without a Range
    /// header or for a suffix range (`bytes=-n`).
    public var rangeStart: Int? {
        guard let range, let spec = range.split(separator: "=", maxSplits: 1).last else { return nil }
        return Int(spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).first?
            .trimmingCharacters(in: .whitespaces) ?? "")
    }
}

/// The test HTTP server (`httpd.py` in this folder, run with python3) on 127.0.0.1, serving the
/// files of a folder with faults chosen per request by query parameters: `norange=1` (`=lie`), `failafter=K`, `rate=N`,
/// `drop=N` (`&reset=1`), `stall=S&at=N`, `chunked=1`, `type=MIME`; and the endpoints
/// `/status/NNN`, `/redirect?to=URL&hops=K&code=C`, `/redirectloop` (and `/redirectloop/a` ↔
/// `/b`), `/html`, `/hang`, `/bigheader?bytes=N`, `/radio?file=NAME&metaint=N&titles=A|B&every=B&icy=1&length=B`
/// and `/live/NAME.m3u8?window=K&initial=I&interval=T&end=1` — `httpd.py` documents each exactly.
/// Every request is logged; ``requests()`` and ``waitForRequest(timeout:matching:)`` read the log.
///
/// With `tls: true` it serves HTTPS with a fresh self-signed certificate for 127.0.0.1 (a client
/// that verifies certificates refuses it unless it trusts ``certificatePath``), and the same
/// content over plain HTTP on ``plainPort``.
///
/// Thread-safety: all members may be used from any thread; ``stop()`` is idempotent.
public final class PrivateHTTPServer: Sendable {
    /// The folder served.
    public let root: String
    /// The port of ``baseURL`` (TLS with `tls: true`).
    public let port: Int
    /// A port serving the same without TLS (``port`` itself without `tls: true`).
    public let plainPort: Int
    /// Whether ``port`` speaks TLS.
    public let isTLS: Bool
    /// The server's certificate (PEM; self-signed, for 127.0.0.1) with `tls: true`.
    public let certificatePath: String?
    /// `http://127.0.0.1:PORT` (`https://` with `tls: true`).
    public let baseURL: URL
    /// `http://127.0.0.1:PLAINPORT`.
    public let plainBaseURL: URL

    private let process: ChildProcess
    private let log: Watched<Log>
    private let certificates: TempDir?
    private let stopped = Mutex(false)

    /// The script, found next to this source file (the tests run from the source tree).
    public static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("httpd.py").path

    /// What the server has written so far: its ports and the request log.
    private struct Log: Sendable {
        var pending: [UInt8] = []
        var port: Int?
        var plainPort: Int?
        var order: [Int] = []
        var entries: [Int: RequestLogEntry] = [:]
        var unreadable: [String] = []
        var ended = false

        var all: [RequestLogEntry] { order.compactMap { entries[$0] } }

        mutating func take(_ chunk: [UInt8]) {
            pending += chunk
            let decoder = JSONDecoder()
            while let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if line.hasPrefix("PORT ") {
                    let words = line.split(separator: " ")
                    port = words.count >= 2 ? Int(words[1]) : nil
                    plainPort = words.count >= 4 && words[2] == "PLAIN" ? Int(words[3]) : port
                } else if let entry = try? decoder.decode(RequestLogEntry.self, from: Data(line.utf8)) {
                    if entries.updateValue(entry, forKey: entry.id) == nil { order.append(entry.id) }
                } else if !line.isEmpty {
                    unreadable.append(line)
                }
            }
        }
    }

    /// Starts the server on `root` and waits (up to `timeout` seconds) until it reports its port.
    /// With `tls`, first makes a self-signed certificate with `openssl req` in a private folder.
    public init(root: String, tls: Bool = false, timeout: Double = 10) throws {
        let script = Self.scriptPath
        guard FileManager.default.fileExists(atPath: script) else {
            throw TestSupportError("the test HTTP server is not at \(script)")
        }
        var arguments = [FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3",
                         script, root]
        var certificates: TempDir?
        if tls {
            let dir = try TempDir("tonearm-httpd")
            let certificate = dir.file("cert.pem"), key = dir.file("key.pem")
            let r = try run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                                        "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                                        "-keyout", key, "-out", certificate])
            guard r.status == 0 else {
                dir.remove()
                throw TestSupportError("openssl could not make a certificate: \(r.stderr)")
            }
            arguments += ["--tls", certificate, key]
            certificates = dir
        }
        let log = Watched(Log())
        let process: ChildProcess
        do {
            process = try ChildProcess(arguments, captureStandardError: true, captureStandardOutput: true,
                                       onStandardOutput: { chunk in log.update { $0.take(chunk) } },
                                       lifeline: true, onExit: { _ in log.update { $0.ended = true } })
        } catch {
            certificates?.remove()
            throw error
        }
        _ = log.waitBlocking(timeout: timeout) { $0.port != nil || $0.ended }
        let started = log.value
        guard let port = started.port, let plainPort = started.plainPort else {
            process.terminate(SIGKILL)
            certificates?.remove()
            throw TestSupportError(started.ended ? "httpd.py exited at start: \(process.standardErrorText.suffix(2000))"
                                                 : "httpd.py did not report its port within \(timeout) s")
        }
        self.root = root
        self.port = port
        self.plainPort = plainPort
        isTLS = tls
        certificatePath = certificates?.file("cert.pem")
        baseURL = URL(string: "\(tls ? "https" : "http")://127.0.0.1:\(port)")!
        plainBaseURL = URL(string: "http://127.0.0.1:\(plainPort)")!
        self.process = process
        self.log = log
        self.certificates = certificates
    }

    deinit { stop() }

    /// Stops the server (SIGTERM; SIGKILL after 5 s), waits for it, and removes the certificate.
    /// The root folder is the caller's.
    public func stop() {
        let already = stopped.withLock { s -> Bool in
            defer { s = true }
            return s
        }
        if already { return }
        process.terminate(SIGTERM)
        certificates?.remove()
    }

    /// The server's process id.
    public var pid: pid_t { process.pid }

    /// Whether the server process still runs.
    public var isRunning: Bool { process.isRunning }

    /// What the server wrote on standard error (failed TLS handshakes, Python errors).
    public var standardError: String { process.standardErrorText }

    // MARK: URLs

    /// `baseURL` + `path` + `?query` (names sorted; names and values percent-encoded, so `|`,
    /// `&`, `=` or spaces in a value are safe). `path` has no query of its own.
    public func url(_ path: String, query: [String: String] = [:]) -> URL {
        Self.url(baseURL, path, query)
    }

    /// ``url(_:query:)`` on the plain (non-TLS) port.
    public func plainURL(_ path: String, query: [String: String] = [:]) -> URL {
        Self.url(plainBaseURL, path, query)
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    private static let pathAllowed = unreserved.union(CharacterSet(charactersIn: "/!$'()*+,;=:@"))

    private static func target(_ path: String, _ query: [String: String]) -> String {
        let encodedPath = (path.hasPrefix("/") ? path : "/" + path).addingPercentEncoding(withAllowedCharacters: pathAllowed) ?? path
        guard !query.isEmpty else { return encodedPath }
        let pairs = query.sorted { $0.key < $1.key }.map { key, value in
            (key.addingPercentEncoding(withAllowedCharacters: unreserved) ?? key) + "="
                + (value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value)
        }
        return encodedPath + "?" + pairs.joined(separator: "&")
    }

    private static func url(_ base: URL, _ path: String, _ query: [String: String]) -> URL {
        URL(string: base.absoluteString + target(path, query))!
    }

    // MARK: The request log

    /// Every request so far, in the order of arrival (control requests, `/_control/…`, included).
    public func requests() -> [RequestLogEntry] { log.value.all }

    /// The requests so far whose path is `path`.
    public func requests(path: String) -> [RequestLogEntry] { requests().filter { $0.path == path } }

    /// Log lines that were not understood (none, unless the script and this file disagree).
    public var unreadableLogLines: [String] { log.value.unreadable }

    /// Suspends until a request matching `predicate` is in the log (woken by each line the server
    /// writes) and returns the first such; nil after `timeout` seconds or when the server ended.
    @discardableResult
    public func waitForRequest(timeout: Double,
                               matching predicate: @escaping @Sendable (RequestLogEntry) -> Bool) async -> RequestLogEntry? {
        _ = await log.wait(timeout: timeout) { $0.ended || $0.entries.values.contains(where: predicate) }
        return requests().first(where: predicate)
    }

    /// ``waitForRequest(timeout:matching:)``, blocking the calling thread.
    @discardableResult
    public func waitForRequestBlocking(timeout: Double,
                                       matching predicate: @escaping @Sendable (RequestLogEntry) -> Bool) -> RequestLogEntry? {
        _ = log.waitBlocking(timeout: timeout) { $0.ended || $0.entries.values.contains(where: predicate) }
        return requests().first(where: predicate)
    }

    /// Suspends until `condition` holds for the whole log (e.g. "six requests to /redirectloop,
    /// all complete"); false after `timeout` seconds or when the server ended without it.
    public func waitForRequests(timeout: Double,
                                until condition: @escaping @Sendable ([RequestLogEntry]) -> Bool) async -> Bool {
        _ = await log.wait(timeout: timeout) { $0.ended || condition($0.all) }
        return condition(requests())
    }

    /// ``waitForRequests(timeout:until:)``, blocking the calling thread.
    public func waitForRequestsBlocking(timeout: Double, until condition: @escaping @Sendable ([RequestLogEntry]) -> Bool) -> Bool {
        _ = log.waitBlocking(timeout: timeout) { $0.ended || condition($0.all) }
        return condition(requests())
    }

    // MARK: Control

    /// Throttles every body served from now on, and those under way, that has no `rate=` of
    /// its own, to `bytesPerSecond`; nil lifts the throttle. In force when this returns.
    public func setRate(_ bytesPerSecond: Int?) throws {
        try control("rate", ["value": bytesPerSecond.map(String.init) ?? "none"])
    }

    /// Forgets which paths have dropped (`drop=`) or stalled (`stall=`), so they do it again.
    public func resetDrops() throws {
        try control("reset-drops")
    }

    /// Back to the start: no throttle, no drops or stalls done, live playlists from their first
    /// segments.
    public func reset() throws {
        try control("reset")
    }

    /// Sends `GET /_control/NAME?query` on the plain port and checks the answer is 200; returns
    /// the body (the server's state as JSON).
    @discardableResult
    public func control(_ name: String, _ query: [String: String] = [:]) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(plainPort).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            throw TestSupportError("cannot reach the test HTTP server: \(String(cString: strerror(errno)))")
        }
        let request = Array("GET \(Self.target("/_control/\(name)", query)) HTTP/1.1\r\nHost: 127.0.0.1:\(plainPort)\r\nConnection: close\r\n\r\n".utf8)
        var written = 0
        while written < request.count {
            let n = request[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw TestSupportError("cannot send to the test HTTP server: \(String(cString: strerror(errno)))") }
            written += n
        }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw TestSupportError("no answer from the test HTTP server: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            answer += buffer[0..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200 "), let bodyStart = text.range(of: "\r\n\r\n") else {
            throw TestSupportError("/_control/\(name) failed: \(text.prefix(500))")
        }
        return String(text[bodyStart.upperBound...])
    }
}
