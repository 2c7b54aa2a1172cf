// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import TonearmCore

/// A property of ``MediaItem`` a predicate can test.
public enum MediaItemProperty: String, Sendable, Hashable, Codable, CaseIterable {
    case title, artist, albumTitle, albumArtist, composer, genre
    case persistentID, year, mediaType, isCompilation
    /// The artist or the album artist: "Various Artists" finds a compilation's tracks, whatever
    /// their own artists.
    case artistOrAlbumArtist

    /// The text properties, compared folded (case- and accent-insensitive).
    var keyColumn: String? {
        switch self {
        case .title: "titleKey"
        case .artist: "artistKey"
        case .albumTitle: "albumKey"
        case .albumArtist: "albumArtistKey"
        case .composer: "composerKey"
        case .genre: "genreKey"
        default: nil
        }
    }
}

/// A filter on one property (MPMediaPropertyPredicate). Text is compared folded: "beyonce"
/// equals "Beyoncé", "ONCE" is contained in it. `persistentID`, `year`, `mediaType` and
/// `isCompilation` compare for equality only (`contains` means equality for them).
public struct MediaPropertyPredicate: Sendable, Hashable {
    public enum Comparison: Sendable, Hashable {
        case equalTo
        case contains
    }

    public var property: MediaItemProperty
    public var value: String
    public var comparison: Comparison

    /// `value` as text: a name, a number for `persistentID` and `year`, a ``MediaType`` raw
    /// value, or "true"/"false" for `isCompilation`.
    public init(value: String, forProperty property: MediaItemProperty, comparisonType: Comparison = .equalTo) {
        self.property = property
        self.value = value
        self.comparison = comparisonType
    }

    public static func artist(_ name: String, _ c: Comparison = .equalTo) -> Self { .init(value: name, forProperty: .artist, comparisonType: c) }
    /// Items whose artist or album artist is `name` (folded: case and accents ignored).
    public static func artistOrAlbumArtist(_ name: String, _ c: Comparison = .equalTo) -> Self {
        .init(value: name, forProperty: .artistOrAlbumArtist, comparisonType: c)
    }
    public static func albumTitle(_ name: String, _ c: Comparison = .equalTo) -> Self { .init(value: name, forProperty: .albumTitle, comparisonType: c) }
    public static func title(_ name: String, _ c: Comparison = .equalTo) -> Self { .init(value: name, forProperty: .title, comparisonType: c) }
    public static func genre(_ name: String, _ c: Comparison = .equalTo) -> Self { .init(value: name, forProperty: .genre, comparisonType: c) }
    public static func persistentID(_ id: UInt64) -> Self { .init(value: String(id), forProperty: .persistentID) }

    /// The SQL condition and its arguments.
    func sql() -> (String, [any DatabaseValueConvertible]) {
        if let column = property.keyColumn {
            let key = SearchKey.fold(value)
            switch comparison {
            case .equalTo: return ("\(column) = ?", [key])
            case .contains: return ("instr(\(column), ?) > 0", [key])
            }
        }
        switch property {
        case .artistOrAlbumArtist:
            // Each side by its own index (item_artist, item_albumArtist); the album artist's key
            // is the artist's when none is tagged.
            let key = SearchKey.fold(value)
            switch comparison {
            case .equalTo: return ("(artistKey = ? OR albumArtistKey = ?)", [key, key])
            case .contains: return ("(instr(artistKey, ?) > 0 OR instr(albumArtistKey, ?) > 0)", [key, key])
            }
        case .persistentID: return ("id = ?", [Int64(bitPattern: UInt64(value) ?? 0)])
        case .year: return ("year = ?", [Int(value) ?? Int.min])
        case .mediaType: return ("mediaType = ?", [value])
        case .isCompilation: return ("isCompilation = ?", [["true", "1", "yes"].contains(value.lowercased())])
        default: return ("0", [])
        }
    }
}

/// How a query's items are grouped into collections (MPMediaGrouping).
public enum MediaGrouping: String, Sendable, Hashable, Codable {
    /// Each item its own collection; items by title.
    case title
    /// By album (title and album artist; a compilation by title alone), items in disc/track order.
    case album
    /// By artist, each artist's items by year, album, disc, track.
    case artist
    /// By album artist (the artist when none is tagged), likewise.
    case albumArtist
    case genre
    case composer
    /// By playlist of the library (``MediaQuery/playlists()``): each playlist's items in its
    /// order; playlists by name.
    case playlist
}

/// An order for a query's items that replaces the grouping's order.
public enum MediaSortOrder: String, Sendable, Hashable, Codable {
    case title, artist, album, year, duration, dateAdded, playCount, lastPlayedDate, rating

    var sql: String {
        switch self {
        case .title: "titleSort"
        case .artist: "artistSort"
        case .album: "albumSort"
        case .year: "year"
        case .duration: "duration"
        case .dateAdded: "dateAdded"
        case .playCount: "playCount"
        case .lastPlayedDate: "lastPlayedDate"
        case .rating: "rating"
        }
    }
}

/// A description of items to fetch (MPMediaQuery): a kind (its media type and grouping), filter
/// predicates (all must hold), an optional full-text search and an optional sort order. A value;
/// run it with ``items(in:)`` or ``collections(in:)`` from any thread.
public struct MediaQuery: Sendable, Hashable {
    public var filterPredicates: [MediaPropertyPredicate] = []
    public var groupingType: MediaGrouping
    /// Only items of this type (nil: all).
    public var mediaType: MediaType?
    /// Only compilations.
    public var compilationsOnly = false
    /// Full-text search over title, artist and album: every word must start a word of one of
    /// them (folded, so accents and case do not matter); Chinese, Japanese and Korean text is
    /// found from any part of it, and Chinese also from its pinyin (see ``SearchIndex``).
    public var searchText: String?
    /// Replaces the grouping's order of ``items(in:)`` (collections keep theirs).
    public var sortOrder: MediaSortOrder?
    public var ascending = true

    public init(filterPredicates: [MediaPropertyPredicate] = [], groupingType: MediaGrouping = .title,
                mediaType: MediaType? = .music) {
        self.filterPredicates = filterPredicates
        self.groupingType = groupingType
        self.mediaType = mediaType
    }

    public static func songs() -> MediaQuery { MediaQuery(groupingType: .title) }
    public static func albums() -> MediaQuery { MediaQuery(groupingType: .album) }
    public static func artists() -> MediaQuery { MediaQuery(groupingType: .artist) }
    public static func albumArtists() -> MediaQuery { MediaQuery(groupingType: .albumArtist) }
    public static func genres() -> MediaQuery { MediaQuery(groupingType: .genre) }
    public static func composers() -> MediaQuery { MediaQuery(groupingType: .composer) }
    public static func compilations() -> MediaQuery {
        var q = MediaQuery(groupingType: .album)
        q.compilationsOnly = true
        return q
    }
    /// The library's playlists (MPMediaQuery.playlists()): ``collections(in:)`` gives one
    /// collection per playlist that has items (matching the predicates), by name, each with its
    /// ``MediaItemCollection/playlist``.
    public static func playlists() -> MediaQuery { MediaQuery(groupingType: .playlist, mediaType: nil) }
    public static func podcasts() -> MediaQuery { MediaQuery(groupingType: .album, mediaType: .podcast) }
    public static func audiobooks() -> MediaQuery { MediaQuery(groupingType: .album, mediaType: .audiobook) }
    /// Every item of every type, by title, matching `text` in full-text search.
    public static func search(_ text: String) -> MediaQuery {
        var q = MediaQuery(groupingType: .title, mediaType: nil)
        q.searchText = text
        return q
    }

    /// This query with one more predicate.
    public func filtered(by predicate: MediaPropertyPredicate) -> MediaQuery {
        var q = self
        q.filterPredicates.append(predicate)
        return q
    }

    /// This query also restricted to a full-text search.
    public func searching(_ text: String) -> MediaQuery {
        var q = self
        q.searchText = text
        return q
    }

    /// This query sorted by `order`.
    public func sorted(by order: MediaSortOrder, ascending: Bool = true) -> MediaQuery {
        var q = self
        q.sortOrder = order
        q.ascending = ascending
        return q
    }

    /// The matching items, in the grouping's order (or ``sortOrder``).
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func items(in library: MediaLibrary) throws(TonearmError) -> [MediaItem] {
        if groupingType == .playlist && sortOrder == nil { return try collections(in: library).flatMap(\.items) }
        return try fetch(in: library, order: sortOrder.map { ["\($0.sql) \(ascending ? "ASC" : "DESC")", "titleSort", "titleKey"] } ?? groupOrder)
    }

    /// The matching items grouped by ``groupingType``: albums in album-title order with their
    /// items in disc/track order, artists in name order with their items by year, album, track.
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func collections(in library: MediaLibrary) throws(TonearmError) -> [MediaItemCollection] {
        if groupingType == .playlist { return try playlistCollections(in: library) }
        // Items arrive in the grouping's order; a new collection starts where the stored keys
        // of the grouping change (no folding again here).
        let sql = select("*, \(groupKeys.joined(separator: " || char(1) || ")) AS groupKey", order: groupOrder)
        guard let (sql, arguments) = sql else { return [] }
        let rows: [(MediaItem, String)] = try library.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { (MediaItem(row: $0), $0["groupKey"]) }
        }
        var result: [MediaItemCollection] = []
        var current: [MediaItem] = []
        var currentKey: String?
        for (item, key) in rows {
            if key != currentKey, !current.isEmpty {
                result.append(MediaItemCollection(items: current, grouping: groupingType))
                current.removeAll()
            }
            currentKey = key
            current.append(item)
        }
        if !current.isEmpty { result.append(MediaItemCollection(items: current, grouping: groupingType)) }
        return result
    }

    /// The collections ``collections(in:)`` returns, without their items: one row each from
    /// the database (a listing of albums, artists or genres reads no item it does not show).
    /// Names, album artist and year are those of each collection's representative item.
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func collectionSummaries(in library: MediaLibrary) throws(TonearmError) -> [MediaCollectionSummary] {
        if groupingType == .playlist {
            return try playlistCollections(in: library).map { c in
                MediaCollectionSummary(grouping: .playlist, name: c.name, albumArtist: nil, year: c.representativeItem.year,
                                       count: c.count, albumCount: c.albumTitles.count, duration: c.items.reduce(0) { $0 + $1.duration },
                                       representativeID: c.representativeItem.persistentID)
            }
        }
        let keys = groupKeys
        // The representative is the first item in the grouping's order: the row holding the
        // smallest order key (SQLite takes the other columns from the row of a min()). For
        // albums a number (disc, track) does it at half the cost of text: ties keep the first
        // row read, and the rows come in item_albumOrder's order, by title.
        let first = groupingType == .album
            ? "min(COALESCE(discNumber, 1) * 4294967296 + COALESCE(trackNumber, 0))"
            : "min(\(withinGroupOrder.joined(separator: " || char(1) || ")))"
        // Albums: the album is part of the group's key, so an album counts one (none untitled).
        let albumCount = groupingType == .album ? "albumKey != ''" : "count(DISTINCT NULLIF(albumKey, ''))"
        let columns = """
            count(*), total(duration), \(albumCount), \(first),
            id, title, artist, album, albumArtist, genre, composer, isCompilation, year
            """
        guard let (sql, arguments) = select(columns, order: keys, groupBy: keys) else { return [] }
        let grouping = groupingType
        return try library.read { db in
            // Columns by position: 10,000 rows read by name cost as much as the query.
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let artist: String? = row[6], albumArtist: String? = row[8]
                let isCompilation: Bool = row[11]
                let name: String? = switch grouping {
                case .title, .playlist: row[5]
                case .album: row[7]
                case .artist: artist
                case .albumArtist: albumArtist ?? artist
                case .genre: row[9]
                case .composer: row[10]
                }
                return MediaCollectionSummary(
                    grouping: grouping, name: name,
                    albumArtist: grouping != .album ? nil : isCompilation ? albumArtist ?? "Various Artists" : albumArtist ?? artist,
                    year: row[12], count: row[0], albumCount: row[2], duration: row[1],
                    representativeID: UInt64(bitPattern: row[4]))
            }
        }
    }

    /// The identity of an item's album beside its title: "" for a compilation, else the album artist.
    static let albumIdentity = "CASE WHEN isCompilation THEN '' ELSE albumArtistKey END"

    private static let trackOrder = ["COALESCE(discNumber, 1)", "COALESCE(trackNumber, 0)", "titleSort"]

    private var groupOrder: [String] { groupKeys + withinGroupColumns }

    /// What identifies a collection, in the order collections are listed: each name's
    /// ``SortKey`` (pinyin for Chinese, articles skipped…), then its folded key, which keeps a
    /// group together when two names sort alike ("The Band" and "Band"). Stored columns only.
    /// The album columns are those of the `item_albumOrder` index, which must stay the same.
    private var groupKeys: [String] {
        switch groupingType {
        case .title: ["titleSort", "titleKey", "artistSort", "artistKey", "albumSort", "albumKey", "id"]
        case .album: ["albumSort", "albumKey", Self.albumIdentity]
        case .artist: ["artistSort", "artistKey"]
        case .albumArtist: ["albumArtistSort", "albumArtistKey"]
        case .genre: ["genreSort", "genreKey"]
        case .composer: ["composerSort", "composerKey"]
        case .playlist: ["titleSort", "titleKey", "id"]
        }
    }

    /// The order of the items within a collection.
    private var withinGroupColumns: [String] {
        switch groupingType {
        case .title, .playlist: []
        case .album: Self.trackOrder
        case .artist, .albumArtist: ["COALESCE(year, 0)", "albumSort", "albumKey"] + Self.trackOrder
        case .genre: ["artistSort", "artistKey", "albumSort", "albumKey"] + Self.trackOrder
        case .composer: ["titleSort", "titleKey"]
        }
    }

    /// ``withinGroupColumns`` as text that sorts the same way (numbers offset and zero-padded).
    private var withinGroupOrder: [String] {
        let columns = withinGroupColumns.isEmpty ? ["id"] : withinGroupColumns
        return columns.map { $0.hasPrefix("COALESCE") || $0 == "id" ? "printf('%020d', \($0) + 5000000000)" : $0 }
    }

    /// Each playlist with the items that match, in its order.
    private func playlistCollections(in library: MediaLibrary) throws(TonearmError) -> [MediaItemCollection] {
        guard let (conditions, arguments) = whereClause() else { return [] }
        let lists = try library.playlists()
        return try library.read { db in
            try lists.compactMap { list -> MediaItemCollection? in
                let sql = "SELECT item.* FROM playlistItem JOIN item ON item.id = playlistItem.itemID"
                    + " WHERE playlistItem.playlistID = (SELECT id FROM playlist WHERE persistentID = ?)"
                    + conditions.map { " AND " + $0 }.joined() + " ORDER BY playlistItem.position"
                let items = try Row.fetchAll(db, sql: sql, arguments: StatementArguments([Int64(bitPattern: list.persistentID)] + arguments))
                    .map(MediaItem.init(row:))
                guard !items.isEmpty else { return nil }
                var c = MediaItemCollection(items: items, grouping: .playlist)
                c.playlist = list
                return c
            }
        }
    }

    /// The conditions of the predicates, media type and search, and their arguments; nil when
    /// nothing can match (a search with no words).
    private func whereClause() -> ([String], [any DatabaseValueConvertible])? {
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        if let mediaType {
            conditions.append("mediaType = ?")
            arguments.append(mediaType.rawValue)
        }
        if compilationsOnly { conditions.append("isCompilation") }
        for p in filterPredicates {
            let (sql, args) = p.sql()
            conditions.append(sql)
            arguments += args
        }
        if let searchText {
            guard let match = SearchIndex.query(searchText) else { return nil }
            conditions.append("item.id IN (SELECT rowid FROM itemSearch WHERE itemSearch MATCH ?)")
            arguments.append(match)
        }
        return (conditions, arguments)
    }

    /// The SQL and arguments of a query for `columns` of the matching items; nil when it can
    /// match nothing (a search without words).
    private func select(_ columns: String, order: [String], groupBy: [String] = []) -> (String, StatementArguments)? {
        guard let (conditions, arguments) = whereClause() else { return nil }
        let sql = "SELECT \(columns) FROM item" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + (groupBy.isEmpty ? "" : " GROUP BY " + groupBy.joined(separator: ", "))
            + " ORDER BY " + order.joined(separator: ", ")
        return (sql, StatementArguments(arguments))
    }

    private func fetch(in library: MediaLibrary, order: [String]) throws(TonearmError) -> [MediaItem] {
        guard let (sql, arguments) = select("*", order: order) else { return [] }
        return try library.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map(MediaItem.init(row:))
        }
    }

}
