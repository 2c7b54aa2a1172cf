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
    static func classify(metadata: AudioMetadata, path: String) -> MediaType {
        let raw = metadata.rawTags
        if let stik = raw["media_type"] ?? raw["stik"], let n = Int(stik) {
            if n == 2 { return .audiobook }
            if n == 21 { return .podcast }
        }
        if raw["pcst"] != nil || raw["podcast"] == "1" || raw["itunespodcast"] != nil { return .podcast }
        let genre = SearchKey.fold(metadata.genre)
        if genre.contains("podcast") { return .podcast }
        if ["audiobook", "audio book", "horbuch", "spoken word"].contains(where: { genre.contains($0) }) {
            return .audiobook
        }
        for folder in path.split(separator: "/").dropLast().map({ SearchKey.fold(String($0)) }) {
            if folder == "podcasts" || folder == "podcast" { return .podcast }
            if folder == "audiobooks" || folder == "audiobook" || folder == "horbucher" { return .audiobook }
        }
        return .music
    }
}
