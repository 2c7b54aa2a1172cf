// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Decoding playlist bytes to text.
enum PlaylistText {
    /// The text of `data`: a UTF-8 or UTF-16 byte-order mark is honoured and removed; otherwise UTF-8
    /// when the bytes are valid UTF-8, else Windows-1252 (Latin-1 where that has no character).
    static func decode<D: DataProtocol>(_ data: D) -> (text: String, encoding: String.Encoding) {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            bytes.removeFirst(3)
            return (String(decoding: bytes, as: UTF8.self), .utf8)
        }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            let little = bytes[0] == 0xFF
            bytes.removeFirst(2)
            if bytes.count % 2 == 1 { bytes.removeLast() }  // a truncated last unit
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var i = 0
            while i + 1 < bytes.count {
                let a = UInt16(bytes[i]), b = UInt16(bytes[i + 1])
                units.append(little ? (a | b << 8) : (a << 8 | b))
                i += 2
            }
            return (String(decoding: units, as: UTF16.self), little ? .utf16LittleEndian : .utf16BigEndian)
        }
        if let s = String(validating: bytes, as: UTF8.self) {
            return (s, .utf8)
        }
        // Not UTF-8: a legacy 8-bit file. Windows-1252 is Latin-1 plus printable characters in
        // 0x80–0x9F; the five bytes it leaves undefined fall back to Latin-1 (every byte decodes).
        if let s = String(data: Data(bytes), encoding: .windowsCP1252) {
            return (s, .windowsCP1252)
        }
        return (String(bytes.map { Character(Unicode.Scalar($0)) }), .isoLatin1)
    }

    /// Splits at `\n`, `\r\n` and lone `\r` (and nothing else), keeping empty lines so that
    /// indices are line numbers − 1.
    static func lines(_ text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
    }

    /// Trims spaces and tabs (and a stray BOM) at both ends.
    static func trim(_ s: Substring) -> Substring {
        let ws: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" }
        guard let start = s.firstIndex(where: { !ws($0) }) else { return s[s.endIndex...] }
        let end = s.lastIndex(where: { !ws($0) })!
        return s[start...end]
    }

    /// Removes line breaks from a value written on one line (a title in M3U or PLS).
    static func oneLine(_ s: String) -> String {
        String(s.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }
}

extension StringProtocol {
    /// True when the text has no NUL and no control characters other than tab, line feed,
    /// carriage return and form feed: binary data fails this almost at once.
    var looksLikeText: Bool { firstBinaryOffset == nil }

    /// The offset (in characters) of the first character that text does not contain, or nil.
    var firstBinaryOffset: Int? {
        var i = 0
        for scalar in unicodeScalars {
            let v = scalar.value
            if (v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D && v != 0x0C) || v == 0x7F {
                return i
            }
            i += 1
        }
        return nil
    }
}

/// Paths and URI references in playlists.
enum PlaylistPaths {
    /// `path` made absolute against `base` (the current directory when nil), with `.` and `..`
    /// components and repeated slashes removed. Purely textual: symbolic links are not resolved.
    static func absolute(_ path: String, base: String? = nil) -> String {
        var p = path
        if p == "~" || p.hasPrefix("~/") {
            p = NSHomeDirectory() + p.dropFirst()
        }
        if !p.hasPrefix("/") {
            let b = base ?? FileManager.default.currentDirectoryPath
            p = b + "/" + p
        }
        return normalize(p)
    }

    /// Removes `.`, `..` and empty components of an absolute path.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for c in path.split(separator: "/", omittingEmptySubsequences: true) {
            if c == "." { continue }
            if c == ".." {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(c)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `path` relative to the folder `base` when it is inside it, else nil. Both are absolute and normalised.
    static func relative(_ path: String, to base: String) -> String? {
        let prefix = base == "/" ? "/" : base + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        return String(path.dropFirst(prefix.count))
    }

    /// The characters kept as they are in a URI path: RFC 3986 unreserved characters and `/`.
    /// (Everything else, including `:`, `#`, `%`, `?`, spaces and non-ASCII, is percent-encoded, so a
    /// relative reference can never be mistaken for a scheme, fragment or query.)
    static let uriPathAllowed: CharacterSet = {
        var s = CharacterSet()
        s.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
        return s
    }()

    /// A path percent-encoded (UTF-8) for use in a URI.
    static func percentEncode(_ path: String) -> String {
        path.addingPercentEncoding(withAllowedCharacters: uriPathAllowed) ?? path
    }

    /// A path written in an M3U or PLS playlist, as a URI reference to resolve against a network
    /// base: percent-encoded like ``percentEncode(_:)``, except that escapes already there
    /// (`%20`, `%E6%99%B4`: players write entries so) are kept as they are, not encoded again
    /// (`%2520`). A `%` that does not start an escape is encoded (`100%25 live.mp3`).
    static func percentEncodeKeepingEscapes(_ path: String) -> String {
        let bytes = Array(path.utf8)
        func isHex(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) || (0x41...0x46).contains(b) || (0x61...0x66).contains(b) }
        var out = ""
        var run = ""  // the text since the last kept escape, encoded in one go
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, isHex(bytes[i + 1]), isHex(bytes[i + 2]) {
                out += percentEncode(run) + String(decoding: bytes[i...(i + 2)], as: UTF8.self)
                run = ""
                i += 3
                continue
            }
            // Whole scalars (a `%` is ASCII, so the run between escapes is valid UTF-8).
            let start = i
            i += 1
            while i < bytes.count, bytes[i] & 0xC0 == 0x80 { i += 1 }
            run += String(decoding: bytes[start..<i], as: UTF8.self)
        }
        return out + percentEncode(run)
    }

    /// A `file://` URI for an absolute path.
    static func fileURI(_ path: String) -> String {
        "file://" + percentEncode(path)
    }

    /// Percent-decodes, keeping the text as it is when it holds an invalid escape (a raw `%`).
    static func percentDecode(_ s: some StringProtocol) -> String {
        String(s).removingPercentEncoding ?? String(s)
    }

    /// The URI scheme of `s` (lowercased) when it starts with one (`name:`), else nil.
    /// A one-letter scheme is a Windows drive (`C:`), not a scheme.
    static func scheme(of s: some StringProtocol) -> String? {
        guard let colon = s.firstIndex(of: ":") else { return nil }
        let name = s[s.startIndex..<colon]
        guard name.count > 1, let first = name.first, first.isASCII, first.isLetter,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        return name.lowercased()
    }

    /// The path of a `file:` URI (`file:///a%20b`, `file://host/a`, `file:/a`), percent-decoded.
    static func pathOfFileURI(_ s: some StringProtocol) -> String {
        var rest = Substring(s).dropFirst(5)  // "file:"
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            // An authority (usually empty, or "localhost") up to the path's slash.
            if let slash = rest.firstIndex(of: "/") { rest = rest[slash...] } else { rest = "/" }
        }
        // A query or fragment is not part of the path.
        if let cut = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<cut] }
        return percentDecode(rest)
    }

    /// Resolves an entry as written in a playlist.
    ///
    /// - `isURIReference`: XSPF gives URI references (percent-encoded, `/` separators); M3U and PLS
    ///   give paths as they are (Windows `\` separators converted) or URLs.
    /// - `base`: the folder relative entries are relative to: a file URL, or a network URL for a
    ///   playlist that came from the network.
    /// Returns nil for an empty entry or a URL that cannot be parsed.
    static func location(of raw: some StringProtocol, base: URL?, isURIReference: Bool) -> PlaylistLocation? {
        let s = String(raw)
        guard !s.isEmpty else { return nil }
        if let scheme = scheme(of: s) {
            if scheme == "file" { return .file(path: normalize(pathOfFileURI(s))) }
            if let u = URL(string: s) ?? URL(string: s.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed.union(["#", "%"])) ?? "") {
                return .remote(u)
            }
            return nil
        }
        var path = isURIReference ? percentDecode(s) : s
        if !isURIReference && path.contains("\\") && !path.hasPrefix("/") {
            // A Windows path: `Music\Album\01.mp3` or `C:\Music\01.mp3` (the drive cannot be resolved
            // here; the entry is kept and will be reported missing).
            path = path.replacingOccurrences(of: "\\", with: "/")
        }
        if let base, !base.isFileURL {
            // A playlist from the network: its relative (and host-absolute) entries are on that server.
            let ref = isURIReference ? s : percentEncodeKeepingEscapes(path)
            guard let u = URL(string: ref, relativeTo: base)?.absoluteURL else { return nil }
            return .remote(u)
        }
        let basePath = base.map { absolute($0.path) }
        func resolved(_ p: String) -> String {
            p.hasPrefix("/") || p == "~" || p.hasPrefix("~/") ? absolute(p) : absolute(p, base: basePath)
        }
        let literal = resolved(path)
        // M3U and PLS entries written percent-encoded (`sub%20dir/%E6%99%B4.flac`, as players that
        // write URIs without `file://` do): decoded when the path as written is not there and the
        // decoded one is, as for `file://` entries.
        if !isURIReference, path.contains("%") {
            let decoded = percentDecode(path)
            let fm = FileManager.default
            if decoded != path, !fm.fileExists(atPath: literal), case let d = resolved(decoded), fm.fileExists(atPath: d) {
                return .file(path: d)
            }
        }
        return .file(path: literal)
    }
}

/// Seconds as playlist text: whole numbers without a fraction, others in the shortest form that
/// reads back to the same value.
func formatSeconds(_ d: Double?) -> String {
    guard let d, d.isFinite, d >= 0 else { return "-1" }
    if d == d.rounded(), d < 1e15 { return String(Int64(d)) }
    return String(d)
}

/// A duration in seconds read from playlist text; negative (the usual -1), empty or invalid → nil.
func parseSeconds(_ s: some StringProtocol) -> Double? {
    guard let d = Double(String(s).trimmingCharacters(in: .whitespaces)), d.isFinite, d >= 0 else { return nil }
    return d
}
