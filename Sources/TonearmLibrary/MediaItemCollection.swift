// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Items that belong together (MPMediaItemCollection): an album in disc/track order, an
/// artist's items by year and album, a genre's. Made by ``MediaQuery/collections(in:)``; never
/// empty.
public struct MediaItemCollection: Sendable, Hashable, Codable {
    public var items: [MediaItem]
    public var grouping: MediaGrouping
    /// The playlist, for a collection of ``MediaQuery/playlists()``.
    public var playlist: MediaPlaylist?

    public init(items: [MediaItem], grouping: MediaGrouping) {
        precondition(!items.isEmpty, "a MediaItemCollection holds at least one item")
        self.items = items
        self.grouping = grouping
    }

    public var count: Int { items.count }
    /// The first item: the one whose album, artist or genre names the collection.
    public var representativeItem: MediaItem { items[0] }

    /// What names the collection: the album title, the artist, the album artist, the genre, the
    /// composer, or the title for a single item; nil when that tag is missing.
    public var name: String? {
        let r = representativeItem
        switch grouping {
        case .title: return r.title
        case .album: return r.albumTitle
        case .artist: return r.artist
        case .albumArtist: return r.albumArtistOrArtist
        case .genre: return r.genre
        case .composer: return r.composer
        case .playlist: return playlist?.name
        }
    }

    /// For an album: its artist ("Various Artists" for a compilation without an album artist).
    public var albumArtist: String? {
        let r = representativeItem
        if r.isCompilation { return r.albumArtist ?? "Various Artists" }
        return r.albumArtistOrArtist
    }

    /// Total seconds.
    public var duration: Double { items.reduce(0) { $0 + $1.duration } }

    /// The distinct album titles, in the collection's order (an artist's albums by year).
    public var albumTitles: [String] {
        var seen = Set<String>()
        return items.compactMap { $0.albumTitle }.filter { seen.insert(SearchKey.fold($0)).inserted }
    }
}

/// A collection described without its items (``MediaQuery/collectionSummaries(in:)``): what a
/// listing of albums, artists or genres shows, read in one row per collection.
public struct MediaCollectionSummary: Sendable, Hashable, Codable {
    public var grouping: MediaGrouping
    /// As ``MediaItemCollection/name``.
    public var name: String?
    /// For an album, as ``MediaItemCollection/albumArtist``; nil for other groupings.
    public var albumArtist: String?
    /// The representative item's year.
    public var year: Int?
    /// Items.
    public var count: Int
    /// Distinct album titles among the items (``MediaItemCollection/albumTitles``'s count).
    public var albumCount: Int
    /// Total seconds.
    public var duration: Double
    /// The persistentID of the representative item (the first in the collection's order).
    public var representativeID: UInt64

    public init(grouping: MediaGrouping, name: String?, albumArtist: String?, year: Int?, count: Int,
                albumCount: Int, duration: Double, representativeID: UInt64) {
        self.grouping = grouping
        self.name = name
        self.albumArtist = albumArtist
        self.year = year
        self.count = count
        self.albumCount = albumCount
        self.duration = duration
        self.representativeID = representativeID
    }
}
