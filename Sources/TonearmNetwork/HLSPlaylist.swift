// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// How much of a playlist the parser accepts: larger ones are refused rather than held.
public struct HLSPlaylistLimits: Sendable, Hashable {
    /// Bytes of playlist text at most.
    public var maximumBytes: Int
    /// Lines at most (tags, URIs, comments and blank lines alike).
    public var maximumLines: Int

    public init(maximumBytes: Int = 1 << 20, maximumLines: Int = 100_000) {
        self.maximumBytes = maximumBytes
        self.maximumLines = maximumLines
    }
}

/// One variant stream of a master playlist (`#EXT-X-STREAM-INF` and the URI after it).
public struct HLSVariant: Sendable, Hashable {
    /// The variant's media playlist, resolved against the master playlist's address.
    public var url: URL
    /// `BANDWIDTH`: the peak bit rate in bits per second.
    public var bandwidth: Int
    /// `AVERAGE-BANDWIDTH`, when given (bits per second).
    public var averageBandwidth: Int?
    /// `CODECS`, split at the commas (`mp4a.40.2`, …); empty when not given.
    public var codecs: [String]
}

/// An `#EXT-X-KEY`: how the segments after it are encrypted.
public struct HLSKey: Sendable, Hashable {
    public enum Method: Sendable, Hashable {
        /// `METHOD=NONE`: the segments are clear.
        case none
        /// `METHOD=AES-128`: each segment is AES-128-CBC with PKCS7 padding.
        case aes128
    }
    public var method: Method
    /// The key's address (16 bytes), for ``Method/aes128``.
    public var url: URL?
    /// `IV=0x…` (16 bytes) when given; otherwise each segment's IV is its media sequence number.
    public var iv: [UInt8]?

    /// The IV for the segment with media sequence number `sequence`: the explicit one, or the
    /// sequence number as a 128-bit big-endian integer.
    public func iv(forSequence sequence: Int) -> [UInt8] {
        if let iv { return iv }
        var out = [UInt8](repeating: 0, count: 16)
        var n = UInt64(truncatingIfNeeded: sequence)
        for i in stride(from: 15, through: 8, by: -1) {
            out[i] = UInt8(n & 0xff)
            n >>= 8
        }
        return out
    }
}

/// One media segment of a media playlist.
public struct HLSSegment: Sendable, Hashable {
    /// The segment's address, resolved against the playlist's.
    public var url: URL
    /// `#EXTINF` duration in seconds.
    public var duration: Double
    /// `#EXTINF` title (after the comma), often empty.
    public var title: String
    /// The media sequence number.
    public var sequence: Int
    /// The key in force; nil (or ``HLSKey/Method/none``) for a clear segment.
    public var key: HLSKey?
    /// Whether an `#EXT-X-DISCONTINUITY` came before it.
    public var discontinuity: Bool
}

/// A media playlist: the segments, in order, with their sequence numbers.
public struct HLSMediaPlaylist: Sendable, Hashable {
    public enum PlaylistType: Sendable, Hashable { case vod, event }
    /// The address the playlist came from (after redirects): URIs were resolved against it.
    public var url: URL
    /// `#EXT-X-TARGETDURATION` in seconds.
    public var targetDuration: Double
    /// `#EXT-X-MEDIA-SEQUENCE`: the sequence number of the first segment (0 when absent).
    public var mediaSequence: Int
    public var segments: [HLSSegment]
    /// Whether `#EXT-X-ENDLIST` is present: no segment will be added.
    public var hasEndList: Bool
    /// `#EXT-X-PLAYLIST-TYPE`, when given.
    public var playlistType: PlaylistType?

    /// Whether segments may still be added (no `#EXT-X-ENDLIST`): a live or event stream.
    public var isLive: Bool { !hasEndList }
    /// The sum of the segments' durations.
    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }
    /// The segment with media sequence number `sequence`, if listed.
    public func segment(sequence: Int) -> HLSSegment? {
        let i = sequence - mediaSequence
        return segments.indices.contains(i) ? segments[i] : nil
    }
    /// The sequence number after the last listed segment.
    public var endSequence: Int { mediaSequence + segments.count }
}

/// A master playlist: the variant streams of one presentation.
public struct HLSMasterPlaylist: Sendable, Hashable {
    /// The address the playlist came from (after redirects).
    public var url: URL
    /// The variants, in playlist order.
    public var variants: [HLSVariant]
}

/// An HLS playlist (RFC 8216), parsed: a master playlist (variants) or a media playlist
/// (segments). Only `http` and `https` URIs are accepted anywhere in it.
///
/// Errors: ``TonearmError/invalidPlaylist(path:line:reason:)`` naming the line and what is wrong
/// (no `#EXTM3U` first, a malformed attribute list, a URI without `#EXTINF` or without
/// `#EXT-X-STREAM-INF`, a missing `#EXT-X-TARGETDURATION`, an unsupported feature such as
/// `#EXT-X-BYTERANGE`, too many bytes or lines); ``TonearmError/network(url:failure:)`` with
/// ``NetworkFailure/schemeNotAllowed(_:)`` for a URI whose scheme is not `http` or `https`
/// (`file:`, `pipe:`, `data:`, …), so that nothing but the network is ever read.
public enum HLSPlaylist: Sendable, Hashable {
    case master(HLSMasterPlaylist)
    case media(HLSMediaPlaylist)

    /// Parses playlist bytes (UTF-8) that came from `url`.
    public static func parse(_ bytes: [UInt8], url: URL, limits: HLSPlaylistLimits = HLSPlaylistLimits()) throws(TonearmError) -> HLSPlaylist {
        let name = url.absoluteString
        if bytes.count > limits.maximumBytes {
            throw .invalidPlaylist(path: name, line: nil, reason: "larger than \(limits.maximumBytes) bytes (the limit)")
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        guard let text = String(validating: body, as: UTF8.self) else {
            throw .invalidPlaylist(path: name, line: nil, reason: "not UTF-8 text")
        }
        return try parse(text, url: url, limits: limits)
    }

    /// Parses playlist text that came from `url`.
    public static func parse(_ text: String, url: URL, limits: HLSPlaylistLimits = HLSPlaylistLimits()) throws(TonearmError) -> HLSPlaylist {
        var parser = Parser(url: url, limits: limits)
        return try parser.run(text)
    }

    /// Parses an attribute list (`NAME=VALUE,NAME="quoted, text",…`): names of `A`–`Z`, `0`–`9`
    /// and `-`; quoted values without their quotes. A failure says what is malformed.
    public static func attributes(_ list: Substring) -> Result<[String: String], AttributeError> {
        var out: [String: String] = [:]
        var i = list.startIndex
        while i < list.endIndex {
            var nameEnd = i
            while nameEnd < list.endIndex, list[nameEnd] != "=" && list[nameEnd] != "," { nameEnd = list.index(after: nameEnd) }
            let name = String(list[i..<nameEnd])
            guard !name.isEmpty else { return .failure(AttributeError("an empty attribute name")) }
            guard name.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }) else {
                return .failure(AttributeError("the attribute name '\(name)' has characters other than A-Z, 0-9 and -"))
            }
            guard nameEnd < list.endIndex, list[nameEnd] == "=" else {
                return .failure(AttributeError("the attribute '\(name)' has no value"))
            }
            var v = list.index(after: nameEnd)
            let value: String
            if v < list.endIndex, list[v] == "\"" {
                let open = list.index(after: v)
                guard let close = list[open...].firstIndex(of: "\"") else {
                    return .failure(AttributeError("the quoted value of '\(name)' has no closing quote"))
                }
                value = String(list[open..<close])
                v = list.index(after: close)
                if v < list.endIndex, list[v] != "," {
                    return .failure(AttributeError("text after the quoted value of '\(name)'"))
                }
            } else {
                var end = v
                while end < list.endIndex, list[end] != "," { end = list.index(after: end) }
                value = String(list[v..<end])
                if value.isEmpty { return .failure(AttributeError("the attribute '\(name)' has an empty value")) }
                if value.contains("\"") { return .failure(AttributeError("a stray quote in the value of '\(name)'")) }
                v = end
            }
            if out.updateValue(value, forKey: name) != nil {
                return .failure(AttributeError("the attribute '\(name)' appears twice"))
            }
            if v < list.endIndex {
                v = list.index(after: v)  // the comma
                if v == list.endIndex { return .failure(AttributeError("a trailing comma")) }
            }
            i = v
        }
        return .success(out)
    }

    /// Why an attribute list is malformed.
    public struct AttributeError: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        init(_ d: String) { description = d }
    }

    /// The address `uri` names, resolved against `base`; refuses every scheme but http and https.
    /// `uri` itself is what the error names.
    static func resolve(_ uri: String, against base: URL, playlist: String, line: Int) throws(TonearmError) -> URL {
        if let scheme = explicitScheme(uri), scheme != "http" && scheme != "https" {
            throw .network(url: uri, failure: .schemeNotAllowed(scheme))
        }
        guard let url = URL(string: uri, relativeTo: base)?.absoluteURL else {
            throw .invalidPlaylist(path: playlist, line: line, reason: "'\(uri.prefix(200))' is not a valid URI")
        }
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw .network(url: url.absoluteString, failure: .schemeNotAllowed(scheme.isEmpty ? uri : scheme))
        }
        return url
    }

    /// The scheme `uri` starts with (`scheme:` per RFC 3986), lowercased; nil for a relative reference.
    static func explicitScheme(_ uri: String) -> String? {
        guard let colon = uri.firstIndex(of: ":") else { return nil }
        let candidate = uri[..<colon]
        func letter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
        guard let first = candidate.unicodeScalars.first, letter(first),
              candidate.unicodeScalars.allSatisfy({ letter($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { return nil }
        return candidate.lowercased()
    }
}

/// The line-by-line parse behind ``HLSPlaylist/parse(_:url:limits:)``.
private struct Parser {
    let url: URL
    let limits: HLSPlaylistLimits
    var name: String { url.absoluteString }

    // Master playlist.
    var variants: [HLSVariant] = []
    var pendingStream: (attributes: [String: String], line: Int)?
    // Media playlist.
    var targetDuration: Double?
    var mediaSequence: Int?
    var segments: [HLSSegment] = []
    var pendingInfo: (duration: Double, title: String, line: Int)?
    var key: HLSKey?
    var discontinuity = false
    var endList = false
    var playlistType: HLSMediaPlaylist.PlaylistType?
    var firstMediaTagLine: Int?

    init(url: URL, limits: HLSPlaylistLimits) {
        self.url = url
        self.limits = limits
    }

    /// The largest `#EXT-X-MEDIA-SEQUENCE` accepted.
    static let maximumMediaSequence = 1 << 62

    func error(_ line: Int, _ reason: String) -> TonearmError { .invalidPlaylist(path: name, line: line, reason: reason) }

    mutating func run(_ text: String) throws(TonearmError) -> HLSPlaylist {
        if text.utf8.count > limits.maximumBytes {
            throw .invalidPlaylist(path: name, line: nil, reason: "larger than \(limits.maximumBytes) bytes (the limit)")
        }
        var number = 0
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            if number > limits.maximumLines { throw error(number, "more than \(limits.maximumLines) lines (the limit)") }
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if number == 1 {
                guard line == "#EXTM3U" else {
                    throw error(1, "the first line is not #EXTM3U (it starts with '\(line.prefix(40))')")
                }
                continue
            }
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                try tag(line[...], number)
            } else {
                try uri(line, number)
            }
        }
        if number == 0 { throw error(1, "the playlist is empty (no #EXTM3U)") }
        if let p = pendingStream { throw error(p.line, "#EXT-X-STREAM-INF is not followed by a URI") }
        if let p = pendingInfo { throw error(p.line, "#EXTINF is not followed by a URI") }
        if !variants.isEmpty {
            if let l = firstMediaTagLine { throw error(l, "a master playlist (with #EXT-X-STREAM-INF) cannot have media segment tags") }
            return .master(HLSMasterPlaylist(url: url, variants: variants))
        }
        guard let targetDuration else {
            throw .invalidPlaylist(path: name, line: nil, reason: "no #EXT-X-TARGETDURATION and no #EXT-X-STREAM-INF: neither a media nor a master playlist")
        }
        return .media(HLSMediaPlaylist(url: url, targetDuration: targetDuration, mediaSequence: mediaSequence ?? 0,
                                       segments: segments, hasEndList: endList, playlistType: playlistType))
    }

    mutating func tag(_ line: Substring, _ number: Int) throws(TonearmError) {
        guard line.hasPrefix("#EXT") else { return }  // a comment
        let colon = line.firstIndex(of: ":")
        let tagName = colon.map { line[..<$0] } ?? line
        let value = colon.map { line[line.index(after: $0)...] } ?? ""
        func mediaTag() { if firstMediaTagLine == nil { firstMediaTagLine = number } }
        switch tagName {
        case "#EXTM3U":
            throw error(number, "#EXTM3U again")
        case "#EXT-X-STREAM-INF":
            if pendingStream != nil { throw error(number, "#EXT-X-STREAM-INF after another one without a URI between") }
            let a = try attributes(value, number, tagName)
            guard let bw = a["BANDWIDTH"] else { throw error(number, "#EXT-X-STREAM-INF without BANDWIDTH") }
            guard let b = Int(bw), b >= 0 else { throw error(number, "BANDWIDTH '\(bw)' is not a non-negative integer") }
            if let avg = a["AVERAGE-BANDWIDTH"], Int(avg).map({ $0 < 0 }) ?? true {
                throw error(number, "AVERAGE-BANDWIDTH '\(avg)' is not a non-negative integer")
            }
            pendingStream = (a, number)
        case "#EXT-X-TARGETDURATION":
            mediaTag()
            guard let d = Double(value.trimmingCharacters(in: .whitespaces)), d.isFinite, d > 0 else {
                throw error(number, "#EXT-X-TARGETDURATION '\(value)' is not a positive number")
            }
            targetDuration = d
        case "#EXT-X-MEDIA-SEQUENCE":
            mediaTag()
            guard !segmentsStarted else { throw error(number, "#EXT-X-MEDIA-SEQUENCE after the first segment") }
            guard let n = Int(value.trimmingCharacters(in: .whitespaces)), n >= 0 else {
                throw error(number, "#EXT-X-MEDIA-SEQUENCE '\(value)' is not a non-negative integer")
            }
            // Sequence numbers are added to (segments, the next one to fetch): one near Int.max
            // would overflow. 2^62 is beyond any stream (a segment a nanosecond for 146 years).
            guard n <= Self.maximumMediaSequence else {
                throw error(number, "#EXT-X-MEDIA-SEQUENCE \(n) is larger than \(Self.maximumMediaSequence) (the limit)")
            }
            mediaSequence = n
        case "#EXTINF":
            mediaTag()
            if pendingInfo != nil { throw error(number, "#EXTINF after another one without a URI between") }
            let comma = value.firstIndex(of: ",")
            let d = (comma.map { value[..<$0] } ?? value).trimmingCharacters(in: .whitespaces)
            guard let duration = Double(d), duration.isFinite, duration >= 0 else {
                throw error(number, "the #EXTINF duration '\(d)' is not a non-negative number")
            }
            pendingInfo = (duration, comma.map { String(value[value.index(after: $0)...]) } ?? "", number)
        case "#EXT-X-ENDLIST":
            mediaTag()
            endList = true
        case "#EXT-X-PLAYLIST-TYPE":
            mediaTag()
            switch value.trimmingCharacters(in: .whitespaces) {
            case "VOD": playlistType = .vod
            case "EVENT": playlistType = .event
            default: throw error(number, "#EXT-X-PLAYLIST-TYPE '\(value)' is neither VOD nor EVENT")
            }
        case "#EXT-X-KEY":
            mediaTag()
            let a = try attributes(value, number, tagName)
            guard let method = a["METHOD"] else { throw error(number, "#EXT-X-KEY without METHOD") }
            switch method {
            case "NONE":
                key = nil
            case "AES-128":
                guard let uri = a["URI"], !uri.isEmpty else { throw error(number, "#EXT-X-KEY METHOD=AES-128 without URI") }
                let keyURL = try HLSPlaylist.resolve(uri, against: url, playlist: name, line: number)
                var iv: [UInt8]?
                if let text = a["IV"] {
                    guard let bytes = Self.hex(text), bytes.count == 16 else {
                        throw error(number, "IV '\(text)' is not 0x followed by 32 hexadecimal digits")
                    }
                    iv = bytes
                }
                key = HLSKey(method: .aes128, url: keyURL, iv: iv)
            default:
                throw error(number, "#EXT-X-KEY METHOD=\(method) is not supported (only NONE and AES-128)")
            }
        case "#EXT-X-DISCONTINUITY":
            mediaTag()
            discontinuity = true
        case "#EXT-X-BYTERANGE":
            throw error(number, "#EXT-X-BYTERANGE (sub-range segments) is not supported")
        case "#EXT-X-MAP":
            throw error(number, "#EXT-X-MAP (fragmented MP4 segments) is not supported")
        default:
            break  // other tags (#EXT-X-VERSION, #EXT-X-MEDIA, #EXT-X-PROGRAM-DATE-TIME, …) change nothing here
        }
    }

    var segmentsStarted: Bool { !segments.isEmpty || pendingInfo != nil }

    mutating func uri(_ line: String, _ number: Int) throws(TonearmError) {
        if let stream = pendingStream {
            pendingStream = nil
            let a = stream.attributes
            let codecs = a["CODECS"].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
            variants.append(HLSVariant(url: try HLSPlaylist.resolve(line, against: url, playlist: name, line: number),
                                       bandwidth: Int(a["BANDWIDTH"]!)!, averageBandwidth: a["AVERAGE-BANDWIDTH"].flatMap { Int($0) },
                                       codecs: codecs))
            return
        }
        guard let info = pendingInfo else {
            if !variants.isEmpty { throw error(number, "a URI without #EXT-X-STREAM-INF before it") }
            throw error(number, "a segment URI without #EXTINF before it")
        }
        pendingInfo = nil
        let segmentURL = try HLSPlaylist.resolve(line, against: url, playlist: name, line: number)
        segments.append(HLSSegment(url: segmentURL, duration: info.duration, title: info.title,
                                   sequence: (mediaSequence ?? 0) + segments.count, key: key, discontinuity: discontinuity))
        discontinuity = false
    }

    func attributes(_ value: Substring, _ number: Int, _ tagName: Substring) throws(TonearmError) -> [String: String] {
        switch HLSPlaylist.attributes(value) {
        case .success(let a): return a
        case .failure(let e): throw error(number, "a bad attribute list in \(tagName): \(e)")
        }
    }

    /// `0x…` or `0X…` hexadecimal as bytes (an odd count of digits is refused).
    static func hex(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        let digits = Array(text.utf8.dropFirst(2))
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let h = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(h)
            i += 2
        }
        return out
    }
}
