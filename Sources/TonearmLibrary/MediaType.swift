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
        // of a library scan).
        var utf8 = path.utf8[...]
        while utf8.last == UInt8(ascii: "/") { utf8 = utf8.dropLast() }  // as `split` drops empty parts
        var start = utf8.startIndex
        var i = utf8.startIndex
        while i != utf8.endIndex {
            if utf8[i] == UInt8(ascii: "/") {
                if i != start, let type = folderType(path[start..<i]) { return type }
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        return .music
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

    /// The type a folder's name says (rule 3), folded as ``SearchKey/fold(_:)`` folds; ASCII
    /// names (most) compared byte by byte, since folding leaves ASCII lower-cased with its
    /// white space collapsed, and none of the names has a space.
    private static func folderType(_ name: Substring) -> MediaType? {
        let key: String
        if name.utf8.allSatisfy({ $0 < 0x80 }) {
            var bytes = name.utf8[...]
            let space: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
            while let b = bytes.first, space(b) { bytes = bytes.dropFirst() }
            while let b = bytes.last, space(b) { bytes = bytes.dropLast() }
            guard (7...10).contains(bytes.count) else { return nil }
            // Compared byte by byte, lower-cased, without making a String (one per folder of every file).
            func `is`(_ word: StaticString) -> Bool {
                word.utf8CodeUnitCount == bytes.count
                    && zip(bytes, UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
                        .allSatisfy { ((0x41...0x5A).contains($0) ? $0 | 0x20 : $0) == $1 }
            }
            if `is`("podcasts") || `is`("podcast") { return .podcast }
            if `is`("audiobooks") || `is`("audiobook") || `is`("horbucher") { return .audiobook }
            return nil
        } else {
            key = SearchKey.fold(String(name))
        }
        switch key {
        case "podcasts", "podcast": return .podcast
        case "audiobooks", "audiobook", "horbucher": return .audiobook
        default: return nil
        }
    }
}
