// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// Limits every network request keeps to. Nothing waits longer than these, nothing reads more
/// header than this.
public struct NetworkLimits: Sendable, Hashable {
    /// Seconds to resolve and connect.
    public var connectTimeout: Double = 10
    /// Seconds to wait for the response, and for each next piece of the body.
    public var readTimeout: Double = 15
    /// Redirects followed at most (a loop fails at once).
    public var maxRedirects = 8
    /// Bytes of status line and headers accepted at most.
    public var maxHeaderBytes = 64 * 1024
    /// A PEM file of certificates to trust besides the system's (a private server's own); nil:
    /// the system's only. Certificates are always verified, and the host name checked.
    public var additionalTrustedCertificates: String?

    public init(connectTimeout: Double = 10, readTimeout: Double = 15, maxRedirects: Int = 8, maxHeaderBytes: Int = 64 * 1024,
                additionalTrustedCertificates: String? = nil) {
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.maxRedirects = maxRedirects
        self.maxHeaderBytes = maxHeaderBytes
        self.additionalTrustedCertificates = additionalTrustedCertificates
    }
}

/// One HTTP/1.1 GET and its response (status, headers, body), over a ``ByteChannel``; redirects
/// followed. One request per connection (`Connection: close`).
///
/// Threading: made and read by one thread; ``cancel()`` from any thread makes a blocked read
/// fail at once.
package final class HTTPResponse: @unchecked Sendable {
    /// The address that answered (after redirects).
    package let url: URL
    /// The status code (200, 206, …); an `ICY 200 OK` status line gives 200.
    package let status: Int
    package let reason: String
    /// Whether the status line was Shoutcast's `ICY`.
    package let isICY: Bool
    /// The headers, names as sent.
    package let headers: [(name: String, value: String)]
    /// The redirects followed to get here, in order.
    package let redirects: [URL]

    private let channel: ByteChannel
    private let limits: NetworkLimits
    private var buffer: [UInt8]
    private var start = 0, end = 0
    private enum Framing { case length(Int64), chunked(remaining: Int64, done: Bool), untilClose }
    private var framing: Framing
    /// Body bytes handed out so far.
    package private(set) var bodyBytesRead: Int64 = 0

    fileprivate init(url: URL, status: Int, reason: String, isICY: Bool, headers: [(String, String)], redirects: [URL],
                     channel: ByteChannel, limits: NetworkLimits, buffer: [UInt8], start: Int, end: Int) {
        self.url = url
        self.status = status
        self.reason = reason
        self.isICY = isICY
        self.headers = headers.map { (name: $0.0, value: $0.1) }
        self.redirects = redirects
        self.channel = channel
        self.limits = limits
        self.buffer = buffer
        self.start = start
        self.end = end
        let te = headers.first { $0.0.lowercased() == "transfer-encoding" }?.1.lowercased() ?? ""
        if te.contains("chunked") {
            framing = .chunked(remaining: 0, done: false)
        } else if let cl = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int64($0.1.trimmingCharacters(in: .whitespaces)) }), cl >= 0 {
            framing = .length(cl)
        } else {
            framing = .untilClose
        }
    }

    /// False for the header reader made before the response exists: it must not close the channel.
    fileprivate var ownsChannel = true

    deinit { if ownsChannel { channel.close() } }

    /// The value of header `name` (case-insensitive), the first one sent.
    package func header(_ name: String) -> String? {
        let n = name.lowercased()
        return headers.first { $0.name.lowercased() == n }?.value
    }

    /// The body's length when the server said (`Content-Length`, not chunked).
    package var contentLength: Int64? {
        if case .length = framing { return header("content-length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) } }
        return nil
    }

    /// `Content-Range: bytes a-b/total` of a 206: where the body starts, and the whole length.
    package var contentRange: (start: Int64, total: Int64?)? {
        guard status == 206, let v = header("content-range") else { return nil }
        let parts = v.replacingOccurrences(of: "bytes", with: "").trimmingCharacters(in: .whitespaces).split(separator: "/")
        guard let range = parts.first, let a = range.split(separator: "-").first.flatMap({ Int64($0) }) else { return nil }
        let total = parts.count > 1 ? Int64(parts[1]) : nil
        return (a, total)
    }

    /// Reads body bytes into `out`; 0 at the end of the body. Throws
    /// ``NetworkFailure/connectionDropped(afterBytes:detail:)`` when the connection ends before
    /// the length the server announced, and the channel's failures (timeouts, cancellation).
    package func read(into out: UnsafeMutableRawBufferPointer) throws(NetworkFailure) -> Int {
        guard !out.isEmpty else { return 0 }
        switch framing {
        case .length(let left):
            if left == 0 { return 0 }
            let n = try raw(into: out, max: Int(min(Int64(out.count), left)))
            if n == 0 { throw .connectionDropped(afterBytes: bodyBytesRead, detail: "\(left) bytes missing") }
            framing = .length(left - Int64(n))
            bodyBytesRead += Int64(n)
            return n
        case .untilClose:
            let n = try raw(into: out, max: out.count)
            bodyBytesRead += Int64(n)
            return n
        case .chunked(var remaining, let done):
            if done { return 0 }
            if remaining == 0 {
                let line = try readLine(limit: 1024, what: "a chunk size")
                let hex = line.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                guard let size = Int64(hex, radix: 16), size >= 0 else { throw .badResponse(detail: "bad chunk size '\(line)'") }
                if size == 0 {
                    // Trailers up to the empty line.
                    var total = 0
                    while true {
                        let t = try readLine(limit: limits.maxHeaderBytes, what: "the trailers")
                        total += t.utf8.count
                        if t.isEmpty || total > limits.maxHeaderBytes { break }
                    }
                    framing = .chunked(remaining: 0, done: true)
                    return 0
                }
                remaining = size
            }
            let n = try raw(into: out, max: Int(min(Int64(out.count), remaining)))
            if n == 0 { throw .connectionDropped(afterBytes: bodyBytesRead, detail: "inside a chunk") }
            remaining -= Int64(n)
            bodyBytesRead += Int64(n)
            if remaining == 0 { _ = try readLine(limit: 16, what: "the end of a chunk") }
            framing = .chunked(remaining: remaining, done: false)
            return n
        }
    }

    /// Makes a blocked read fail at once (any thread).
    package func cancel() { channel.cancel() }

    // MARK: Buffered reading

    private func raw(into out: UnsafeMutableRawBufferPointer, max: Int) throws(NetworkFailure) -> Int {
        if start < end {
            let n = min(max, end - start)
            buffer.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: n) }
            start += n
            return n
        }
        return try channel.read(into: UnsafeMutableRawBufferPointer(rebasing: out[0..<max]), timeout: limits.readTimeout)
    }

    private func fill() throws(NetworkFailure) -> Bool {
        if start == end { start = 0; end = 0 }
        if end == buffer.count {
            if start > 0 {
                buffer.replaceSubrange(0..<(end - start), with: buffer[start..<end])
                end -= start
                start = 0
            } else {
                buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count))
            }
        }
        var n = 0
        var failure: NetworkFailure?
        buffer.withUnsafeMutableBytes { raw in
            do throws(NetworkFailure) { n = try channel.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[end...]), timeout: limits.readTimeout) }
            catch { failure = error }
        }
        if let failure { throw failure }
        end += n
        return n > 0
    }

    /// One line without its CRLF (or LF).
    fileprivate func readLine(limit: Int, what: String) throws(NetworkFailure) -> String {
        while true {
            if let nl = buffer[start..<end].firstIndex(of: 10) {
                var lineEnd = nl
                if lineEnd > start && buffer[lineEnd - 1] == 13 { lineEnd -= 1 }
                let line = String(decoding: buffer[start..<lineEnd], as: UTF8.self)
                start = nl + 1
                return line
            }
            if end - start > limit { throw .limitExceeded("\(what) is longer than \(limit) bytes") }
            guard try fill() else { throw .badResponse(detail: "the connection closed in \(what)") }
        }
    }

    fileprivate static func start(channel: ByteChannel, limits: NetworkLimits) -> HTTPResponse {
        let r = HTTPResponse(url: URL(fileURLWithPath: "/"), status: 0, reason: "", isICY: false, headers: [], redirects: [],
                             channel: channel, limits: limits, buffer: [UInt8](repeating: 0, count: 16 * 1024), start: 0, end: 0)
        r.ownsChannel = false
        return r
    }

    fileprivate func takeBuffer() -> ([UInt8], Int, Int) { (buffer, start, end) }
}

/// Makes HTTP/1.1 GET requests: `http` over TCP, `https` over TLS (see ``TLSChannel``), other
/// schemes refused; redirects followed up to the limit (a loop fails at once); 4xx / 5xx and
/// malformed responses are errors naming the status.
package enum HTTPClient {
    /// Makes a channel for a host; replaceable for HTTPS.
    package typealias Connector = @Sendable (_ secure: Bool, _ host: String, _ port: Int, _ limits: NetworkLimits) throws(NetworkFailure) -> ByteChannel

    /// The standard connector: TCP, or TLS over it.
    package static let standardConnector: Connector = { secure, host, port, limits throws(NetworkFailure) in
        let tcp = try TCPChannel.connect(host: host, port: port, timeout: limits.connectTimeout)
        if secure { return try TLSChannel(over: tcp, host: host, limits: limits) }
        return tcp
    }

    /// GETs `url` (from byte `rangeStart` on when given: `Range: bytes=N-`), with `headers`
    /// added. Returns once the status and headers are in; read the body from the response.
    /// `onChannel` is told each channel as it is made, so that another thread can cancel it.
    ///
    /// Throws ``TonearmError/network(url:failure:)`` with the failure and `url` as asked.
    package static func get(_ url: URL, rangeStart: Int64? = nil, headers: [(String, String)] = [],
                            limits: NetworkLimits = NetworkLimits(), connector: Connector = standardConnector,
                            onChannel: ((ByteChannel) -> Void)? = nil) throws(TonearmError) -> HTTPResponse {
        var current = url
        var visited: Set<String> = []
        var redirects: [URL] = []
        while true {
            do throws(NetworkFailure) {
                let r = try once(current, rangeStart: rangeStart, headers: headers, limits: limits, connector: connector,
                                 redirects: redirects, onChannel: onChannel)
                if [301, 302, 303, 307, 308].contains(r.status) {
                    visited.insert(current.absoluteString)
                    guard let location = r.header("location"), !location.isEmpty else {
                        throw NetworkFailure.badRedirect(detail: "status \(r.status) without a Location")
                    }
                    guard let next = URL(string: location, relativeTo: current)?.absoluteURL else {
                        throw NetworkFailure.badRedirect(detail: "Location '\(location)' is not a URL")
                    }
                    if visited.contains(next.absoluteString) || redirects.count >= limits.maxRedirects {
                        throw NetworkFailure.tooManyRedirects(limit: limits.maxRedirects)
                    }
                    redirects.append(next)
                    current = next
                    continue
                }
                if r.status >= 400 || r.status < 200 || r.status >= 300 {
                    throw NetworkFailure.httpStatus(code: r.status, reason: r.reason)
                }
                return r
            } catch {
                throw .network(url: url.absoluteString, failure: error)
            }
        }
    }

    /// The request target for `url`: its path and query exactly as escaped in the address
    /// (`/%E6%9C%88%20x.mp3`, never the decoded UTF-8 and spaces, which servers refuse), `/`
    /// for an empty path. Characters a request line cannot hold (a space, non-ASCII) that are
    /// somehow unescaped in `url` are escaped.
    package static func requestTarget(_ url: URL) -> String {
        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let q = url.query(percentEncoded: true) { target += "?" + q }
        let allowed = CharacterSet.urlPathAllowed.union(.urlQueryAllowed).union(CharacterSet(charactersIn: "%"))
        return target.addingPercentEncoding(withAllowedCharacters: allowed) ?? target
    }

    private static func once(_ url: URL, rangeStart: Int64?, headers: [(String, String)], limits: NetworkLimits,
                             connector: Connector, redirects: [URL], onChannel: ((ByteChannel) -> Void)?) throws(NetworkFailure) -> HTTPResponse {
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else { throw .schemeNotAllowed(scheme.isEmpty ? url.absoluteString : scheme) }
        guard let host = url.host, !host.isEmpty else { throw .badRedirect(detail: "no host in \(url.absoluteString)") }
        let secure = scheme == "https"
        let port = url.port ?? (secure ? 443 : 80)
        let channel = try connector(secure, host, port, limits)
        onChannel?(channel)
        let path = requestTarget(url)
        let hostHeader = url.port.map { "\(host.contains(":") ? "[\(host)]" : host):\($0)" } ?? (host.contains(":") ? "[\(host)]" : host)
        var request = "GET \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: Tonearm\r\nAccept: */*\r\nConnection: close\r\n"
        if let rangeStart { request += "Range: bytes=\(rangeStart)-\r\n" }
        for (k, v) in headers { request += "\(k): \(v)\r\n" }
        request += "\r\n"
        do {
            try channel.write(Array(request.utf8), timeout: limits.readTimeout)
        } catch {
            channel.close()
            throw error
        }
        let reader = HTTPResponse.start(channel: channel, limits: limits)
        var handedOver = false
        defer { if !handedOver { channel.close() } }
        let statusLine = try reader.readLine(limit: limits.maxHeaderBytes, what: "the status line")
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") || parts[0] == "ICY" || parts[0].hasPrefix("HTTP/2"),
              let code = Int(parts[1]) else {
            throw .badResponse(detail: "status line '\(statusLine.prefix(80))'")
        }
        var fields: [(String, String)] = []
        var total = statusLine.utf8.count
        while true {
            let line = try reader.readLine(limit: limits.maxHeaderBytes, what: "the headers")
            if line.isEmpty { break }
            total += line.utf8.count + 2
            if total > limits.maxHeaderBytes { throw .limitExceeded("the headers are longer than \(limits.maxHeaderBytes) bytes") }
            guard let colon = line.firstIndex(of: ":") else { throw .badResponse(detail: "header line '\(line.prefix(80))'") }
            fields.append((String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                           String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
        let (buffer, s, e) = reader.takeBuffer()
        handedOver = true
        return HTTPResponse(url: url, status: code, reason: parts.count > 2 ? String(parts[2]) : "", isICY: parts[0] == "ICY",
                            headers: fields, redirects: redirects, channel: channel, limits: limits, buffer: buffer, start: s, end: e)
    }
}
