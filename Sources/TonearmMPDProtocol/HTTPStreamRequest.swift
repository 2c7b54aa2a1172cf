// SPDX-License-Identifier: GPL-3.0-or-later
// The request head of a listener of the daemon's HTTP stream output (issue 20): no I/O, fuzzed
// alone (FuzzHTTPStreamRequest).

/// What a listener of the daemon's HTTP stream output asked for: the request line's method and whether it wants ICY titles.
public struct HTTPStreamRequest: Equatable, Sendable {
    public var method: String
    public var wantsMetadata: Bool

    /// Parses a request head (the bytes up to and including the blank line). Nil when it is not
    /// an HTTP request line.
    public static func parse(_ head: [UInt8]) -> HTTPStreamRequest? {
        // By bytes: as a String, CR LF is one Character and would not split at LF.
        let lines = head.split(separator: 10, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
        }
        guard let first = lines.first else { return nil }
        let parts = first.split(separator: " ")
        guard parts.count >= 2, parts.last?.hasPrefix("HTTP/") == true || parts.count == 2 else { return nil }
        var wants = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if trim(line[..<colon]).lowercased() == "icy-metadata" {
                wants = trim(line[line.index(after: colon)...]) == "1"
            }
        }
        return HTTPStreamRequest(method: String(parts[0]), wantsMetadata: wants)
    }
}

private func trim(_ s: Substring) -> Substring {
    var t = s
    while t.first == " " || t.first == "\t" { t.removeFirst() }
    while t.last == " " || t.last == "\t" { t.removeLast() }
    return t
}
