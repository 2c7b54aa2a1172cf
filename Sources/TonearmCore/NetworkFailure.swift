// SPDX-License-Identifier: GPL-3.0-or-later

/// What went wrong with a network source (the reason inside ``TonearmError/network(url:failure:)``).
/// Each case says in which step it happened, so a message can tell a user what to fix: the
/// address, the server, the network, or the content.
public enum NetworkFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The URL's scheme is not one a network source may use (only `http` and `https`; a
    /// playlist naming `file:`, `pipe:` or another scheme is refused).
    case schemeNotAllowed(String)
    /// The host name could not be resolved.
    case hostNotFound(host: String, detail: String)
    /// Nothing accepts connections at the address (the server is down, a wrong port).
    case connectionRefused(host: String, port: Int)
    /// The connection could not be made or broke for another reason.
    case connectionFailed(detail: String)
    /// The TLS handshake failed (an untrusted or mismatched certificate, no common protocol).
    case tlsFailed(detail: String)
    /// No answer within the limit: `phase` is "connecting", "waiting for the response", …
    case timedOut(phase: String, seconds: Double)
    /// The server answered with an error status.
    case httpStatus(code: Int, reason: String)
    /// More redirects than allowed (`limit`), or a redirect back to an address already visited.
    case tooManyRedirects(limit: Int)
    /// A redirect without a usable `Location`.
    case badRedirect(detail: String)
    /// The response was not HTTP, or its headers were malformed or larger than allowed.
    case badResponse(detail: String)
    /// The server closed the connection before the whole body came, and resuming failed.
    case connectionDropped(afterBytes: Int64, detail: String)
    /// The body is not media (`contentType` as the server said; an HTML page, say).
    case notMedia(contentType: String?, detail: String)
    /// A limit on what a source may use was reached (playlist size, header size, …).
    case limitExceeded(String)
    /// Encrypted content could not be decrypted (an HLS AES-128 segment with a wrong key or IV,
    /// a key that is not 16 bytes).
    case decryptionFailed(detail: String)
    /// The server cannot seek (it ignores `Range`: no `Accept-Ranges`, or a whole body for a
    /// ranged request) and the resource (`length` bytes) is larger than a source keeps in memory
    /// to seek in (`limit` bytes): it fails instead of being fetched again for every seek.
    case seekingUnsupported(length: Int64, limit: Int64)

    public var description: String {
        switch self {
        case .schemeNotAllowed(let s): "the scheme '\(s)' is not allowed (only http and https)"
        case .hostNotFound(let h, let d): "the host '\(h)' was not found (\(d))"
        case .connectionRefused(let h, let p): "connection refused by \(h) port \(p)"
        case .connectionFailed(let d): "the connection failed (\(d))"
        case .tlsFailed(let d): "the secure connection failed (\(d))"
        case .timedOut(let phase, let s): "no answer within \(s) s while \(phase)"
        case .httpStatus(let c, let r): "the server answered \(c)\(r.isEmpty ? "" : " \(r)")"
        case .tooManyRedirects(let l): "too many redirects (more than \(l), or a loop)"
        case .badRedirect(let d): "a bad redirect (\(d))"
        case .badResponse(let d): "not a valid HTTP response (\(d))"
        case .connectionDropped(let n, let d): "the connection dropped after \(n) bytes (\(d))"
        case .notMedia(let t, let d):
            // The type is said once: details that already name it ("the server sent a text/html page") stand alone.
            if let t, !d.lowercased().contains(String(t.lowercased().prefix { $0 != ";" && $0 != " " })) {
                "not audio (the server says \(t)) (\(d))"
            } else {
                "not audio (\(d))"
            }
        case .limitExceeded(let d): "a limit was exceeded (\(d))"
        case .decryptionFailed(let d): "could not be decrypted (\(d))"
        case .seekingUnsupported(let length, let limit):
            "the server does not support seeking and the file is larger than \(Self.size(limit)) (\(Self.size(length)))"
        }
    }

    /// "512 MB", "1.5 GB", "900 kB" (binary multiples, as the limits are set).
    private static func size(_ bytes: Int64) -> String {
        let units: [(Int64, String)] = [(1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "kB")]
        for (unit, name) in units where bytes >= unit {
            let value = Double(bytes) / Double(unit)
            return value == value.rounded() ? "\(Int64(value)) \(name)" : "\((value * 10).rounded() / 10) \(name)"
        }
        return "\(bytes) bytes"
    }
}
