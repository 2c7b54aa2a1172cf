// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// What kind of recording an item is (MPMediaType, reduced to what a file can say).
public enum MediaType: String, Sendable, Hashable, Codable, CaseIterable {
    case music
    case podcast
    case audiobook

    /// The type of a file, by these rules, first match wins:
    /// 1. tags: an MP4 `stik` (media_type 2 → audiobook, 21 → podcast), an ID3 `PCST` or iTunes
    ///    podcast flag → podcast;
    /// 2. the genre: one containing "podcast" → podcast; "audiobook", "audio book", "hörbuch"
    ///    or "spoken word" → audiobook;
    /// 3. a folder on the path named "Podcasts"/"Podcast" → podcast, "Audiobooks"/"Audiobook"/
    ///    "Hörbücher" → audiobook (folded, so case and accents do not matter);
    /// 4. otherwise music.
    /// `genreKey`: the genre already folded, when the caller has it.
    static func classify(metadata: AudioMetadata, path: String, genreKey: String? = nil) -> MediaType {
        let raw = metadata.rawTags
        if let stik = raw["media_type"] ?? raw["stik"], let n = Int(stik) {
            if n == 2 { return .audiobook }
            if n == 21 { return .podcast }
        }
        if raw["pcst"] != nil || raw["podcast"] == "1" || raw["itunespodcast"] != nil { return .podcast }
        let genre = genreKey ?? SearchKey.fold(metadata.genre)
        if contains(genre, "podcast") { return .podcast }
        if contains(genre, "audiobook") || contains(genre, "audio book") || contains(genre, "horbuch")
            || contains(genre, "spoken word") {
            return .audiobook
        }
        // The folders of the path (not its last component), found in its UTF-8 bytes: the
        // standard library's `split` on a String walks Characters (28,000 instructions a file
        // of a library scan), and indexing its UTF-8 view 4,000 (a buffer: a few hundred).
        var path = path
        return path.withUTF8 { b -> MediaType in
            var end = b.count
            while end > 0 && b[end - 1] == UInt8(ascii: "/") { end -= 1 }  // as `split` drops empty parts
            var start = 0
            for i in 0..<end where b[i] == UInt8(ascii: "/") {
                if i != start, let type = folderType(UnsafeBufferPointer(rebasing: b[start..<i])) { return type }
                start = i + 1
            }
            return .music
        }
    }

    /// Whether `word` occurs in `text`, byte for byte (both folded already). Foundation's
    /// `contains` goes through NSString, the standard library's builds a search table per call.
    private static func contains(_ text: String, _ word: StaticString) -> Bool {
        let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        var text = text
        return text.withUTF8 { t in
            guard !w.isEmpty, t.count >= w.count else { return w.isEmpty }
            for start in 0...(t.count - w.count) where t[start] == w[0] {
                var k = 1
                while k < w.count && t[start + k] == w[k] { k += 1 }
                if k == w.count { return true }
            }
            return false
        }
    }

    /// The type a folder's name (its UTF-8 bytes) says (rule 3), folded as ``SearchKey/fold(_:)``
    /// folds; ASCII names (most) compared byte by byte, since folding leaves ASCII lower-cased
    /// with its white space collapsed, and none of the names has a space.
    private static func folderType(_ name: UnsafeBufferPointer<UInt8>) -> MediaType? {
        let key: String
        if name.allSatisfy({ $0 < 0x80 }) {
            let space: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
            var lower = 0, upper = name.count
            while lower < upper && space(name[lower]) { lower += 1 }
            while upper > lower && space(name[upper - 1]) { upper -= 1 }
            guard (7...10).contains(upper - lower) else { return nil }
            // Compared byte by byte, lower-cased, without making a String (one per folder of every file).
            func `is`(_ word: StaticString) -> Bool {
                guard word.utf8CodeUnitCount == upper - lower else { return false }
                let w = word.utf8Start
                for k in 0..<(upper - lower) {
                    let x = name[lower + k]
                    if ((0x41...0x5A).contains(x) ? x | 0x20 : x) != w[k] { return false }
                }
                return true
            }
            if `is`("podcasts") || `is`("podcast") { return .podcast }
            if `is`("audiobooks") || `is`("audiobook") || `is`("horbucher") { return .audiobook }
            return nil
        } else {
            key = SearchKey.fold(String(decoding: name, as: UTF8.self))
        }
        switch key {
        case "podcasts", "podcast": return .podcast
        case "audiobooks", "audiobook", "horbucher": return .audiobook
        default: return nil
        }
    }
}
