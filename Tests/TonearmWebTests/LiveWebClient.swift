// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import Hummingbird
import Logging
import TonearmTestSupport
@testable import TonearmWeb

/// The web remote's HTTP API as a browser or curl meets it: the application listening on a real
/// port of 127.0.0.1, and requests sent over real TCP connections (HTTP/1.1, one connection each).
///
/// Hummingbird's own test client (HummingbirdTesting) is not used: it brings AsyncHTTPClient and
/// with it BoringSSL, HTTP/2 and swift-crypto into the build (≈ 700 more files compiled in every
/// build and again in the ThreadSanitizer build) for what a hundred lines of socket code do.
enum LiveWebSetup { case live }

extension WebRemote {
    /// Runs the remote's application on a free port of 127.0.0.1, calls `body` with a client for
    /// it once it listens, then shuts it down.
    ///
    /// - Throws: `TestSupportError` when the server does not listen within 60 s; what `body`
    ///   throws.
    func test<T: Sendable>(_ setup: LiveWebSetup, _ body: (LiveWebClient) async throws -> T) async throws -> T {
        let listening = Watched<Int?>(nil)
        var logger = Logger(label: "web test")
        logger.logLevel = .warning
        let app = application(host: "127.0.0.1", port: 0, logger: logger) { address in
            listening.update { $0 = address.split(separator: ":").last.flatMap { Int($0) } }
        }
        let server = Task { try await app.run() }
        defer { server.cancel() }
        guard await listening.wait(timeout: 60, until: { $0 != nil }), let port = listening.value else {
            throw TestSupportError("the web remote did not listen within 60 s")
        }
        return try await body(LiveWebClient(port: port))
    }
}

/// One answer: its status, header fields and whole body.
struct LiveWebResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer
}

/// Sends requests to 127.0.0.1:`port`, each on its own connection (`Connection: close`), on a
/// thread of its own (blocking socket calls with a deadline never hold a thread of the
/// cooperative pool that the server's handlers run on).
struct LiveWebClient: Sendable {
    let port: Int

    /// Sends one request and hands its answer to `check`.
    ///
    /// - Throws: `TestSupportError` when the connection fails, the answer does not come within
    ///   `timeout` seconds or is not HTTP/1.1; what `check` throws.
    @discardableResult
    func execute<T>(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
                    timeout: Double = 60, _ check: (LiveWebResponse) async throws -> T) async throws -> T {
        var head = "\(method.rawValue) \(uri) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for field in headers { head += "\(field.name.rawName): \(field.value)\r\n" }
        let bodyBytes = body.map { Array($0.readableBytesView) } ?? []
        if body != nil || method == .post || method == .put { head += "Content-Length: \(bodyBytes.count)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + bodyBytes
        let port = self.port
        let raw: [UInt8] = try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try Self.exchange(request, port: port, timeout: timeout) })
            }
            thread.name = "web test client"
            thread.start()
        }
        return try await check(try Self.parse(raw))
    }

    /// Connects, writes `request`, and reads until the server closes the connection.
    private static func exchange(_ request: [UInt8], port: Int, timeout: Double) throws -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        let fd = try connectLoopbackTCP(port: port)
        defer { close(fd) }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestSupportError("send to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
            sent += n
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TestSupportError("no whole answer from 127.0.0.1:\(port) within \(timeout) s (\(answer.count) bytes read)") }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(min(left, 1) * 1000))
            if ready < 0 && errno != EINTR { throw TestSupportError("poll: \(String(cString: strerror(errno)))") }
            guard ready > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return answer }
            guard n > 0 else { throw TestSupportError("recv from 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
            answer += chunk[..<n]
        }
    }

    /// Splits an HTTP/1.1 answer into status, fields and body (a chunked body decoded).
    static func parse(_ raw: [UInt8]) throws -> LiveWebResponse {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = raw.firstRange(of: separator) else { throw TestSupportError("an answer without the end of its head: \(String(decoding: raw, as: UTF8.self))") }
        let lines = String(decoding: raw[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let code = Int(statusParts[1]) else {
            throw TestSupportError("not an HTTP/1.1 status line: \(lines[0])")
        }
        var fields = HTTPFields()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else {
                throw TestSupportError("a malformed header line: \(line)")
            }
            fields.append(HTTPField(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(raw[end.upperBound...])
        if fields[.transferEncoding]?.lowercased() == "chunked" { body = try dechunk(body) }
        return LiveWebResponse(status: HTTPResponse.Status(code: code), headers: fields, body: ByteBuffer(bytes: body))
    }

    /// Decodes a `Transfer-Encoding: chunked` body.
    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        let crlf: [UInt8] = [13, 10]
        while true {
            guard let lineEnd = bytes[i...].firstRange(of: crlf) else { throw TestSupportError("a chunk size line without its end") }
            let sizeText = String(decoding: bytes[i..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw TestSupportError("a bad chunk size: \(sizeText)") }
            i = lineEnd.upperBound
            if size == 0 { return out }
            guard i + size <= bytes.count else { throw TestSupportError("a chunk cut short (\(size) bytes announced)") }
            out += bytes[i..<(i + size)]
            i += size + 2
        }
    }
}
