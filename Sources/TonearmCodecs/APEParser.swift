// SPDX-License-Identifier: GPL-3.0-or-later

/// An APEv1/APEv2 tag at the end of a file (before an ID3v1 tag, if any).
///
/// FFmpeg reads APE tags only in the APE, WavPack, TAK and Musepack demuxers; MP3 files tagged
/// by foobar2000/mp3gain often carry one too, so this parser reads it directly.
/// Text values are decoded with `TagText.decode` (APEv2 is specified as UTF-8, but GBK is
/// common in the wild; APEv1 has no charset); multiple values (NUL-separated) are joined with
/// "; ". Binary items named "Cover Art (…)" become artwork.
struct APETag {
    /// Text items by key, keys lower-cased, in tag order.
    var items: [(key: String, value: String)] = []
    /// Binary "Cover Art (Front)" (or other cover) items: image bytes without the file name.
    var covers: [(key: String, data: [UInt8])] = []

    private static let preamble: [UInt8] = Array("APETAGEX".utf8)
    /// Limits that reject garbage sizes before allocating.
    private static let maxTagSize = 64 << 20
    private static let maxItems = 4096

    /// Reads the APE tag ending at the end of the file or just before its ID3v1 tag.
    static func read(_ file: some TagByteSource) -> APETag? {
        var ends = [file.size]
        if file.size >= 128, let t = file.read(at: file.size - 128, count: 3), t == Array("TAG".utf8) {
            ends.insert(file.size - 128, at: 0)
        }
        for end in ends {
            guard end >= 32, let footer = file.read(at: end - 32, count: 32),
                  Array(footer[0..<8]) == preamble else { continue }
            let version = le32(footer, 8)
            let size = Int(le32(footer, 12))      // items + footer, excluding the header
            let count = Int(le32(footer, 16))
            guard version == 1000 || version == 2000, size >= 32, size <= maxTagSize,
                  size <= end, count <= maxItems,
                  let body = file.read(at: end - size, count: size - 32) else { return nil }
            return parse(items: body, count: count)
        }
        return nil
    }

    /// Where the APE tag ending at the end of the file or just before its ID3v1 tag starts (its
    /// header, when it has one); nil when there is none or its size does not fit the file.
    static func start(in file: some TagByteSource) -> Int? {
        var end = file.size
        if end >= 128, let t = file.read(at: end - 128, count: 3), t == Array("TAG".utf8) { end -= 128 }
        guard end >= 32, let footer = file.read(at: end - 32, count: 32), Array(footer[0..<8]) == preamble else {
            return nil
        }
        let version = le32(footer, 8)
        let size = Int(le32(footer, 12))      // items + footer, excluding the header
        let hasHeader = le32(footer, 20) & 0x8000_0000 != 0
        let start = end - size - (hasHeader ? 32 : 0)
        guard version == 1000 || version == 2000, size >= 32, size <= maxTagSize, start >= 0 else { return nil }
        return start
    }

    /// Parses `count` items from the tag body (the bytes between the header and the footer).
    static func parse(items b: [UInt8], count: Int) -> APETag {
        var tag = APETag()
        var p = 0
        for _ in 0..<count {
            guard p + 8 < b.count else { break }
            let len = Int(le32(b, p))
            let flags = le32(b, p + 4)
            p += 8
            guard let nul = b[p...].firstIndex(of: 0) else { break }
            let key = String(decoding: b[p..<nul], as: UTF8.self).lowercased()
            p = nul + 1
            guard len >= 0, p + len <= b.count else { break }
            let value = Array(b[p..<(p + len)])
            p += len
            let kind = (flags >> 1) & 3
            if kind == 1 {
                // Binary. Cover art is "<file name>\0<image bytes>".
                if key.hasPrefix("cover art"), let z = value.firstIndex(of: 0) {
                    tag.covers.append((key, Array(value[(z + 1)...])))
                }
                continue
            }
            let parts = value.split(separator: 0, omittingEmptySubsequences: true).map { TagText.decode($0) }
            guard !parts.isEmpty else { continue }
            tag.items.append((key, parts.joined(separator: "; ")))
        }
        return tag
    }

    private static func le32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
}
