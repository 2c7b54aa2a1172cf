// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import TonearmCore
import TonearmPlaylists

/// A playlist stored in the library (MPMediaPlaylist): a name and an ordered list of items, the
/// same item possibly more than once. A value: it does not change when the database does; fetch
/// it again (``MediaLibrary/playlist(named:)``) for fresh counts, and ``MediaLibrary/items(in:)``
/// for its items.
public struct MediaPlaylist: Sendable, Hashable, Codable, Identifiable {
    /// Stable identity: random when the playlist is made, kept through renames and changes.
    public var persistentID: UInt64
    public var id: UInt64 { persistentID }
    /// Unique in the library, case and accents ignored ("Mix" and "mix" are one name, as
    /// ``SearchKey`` folds them); kept as it was written.
    public var name: String
    /// The number of entries.
    public var count: Int
    public var dateCreated: Date
    /// The last change made through ``MediaLibrary`` (items removed from the library by a scan
    /// do not change it).
    public var dateModified: Date

    init(row: Row) {
        persistentID = UInt64(bitPattern: row["persistentID"])
        name = row["name"]
        count = row["count"]
        dateCreated = Date(timeIntervalSince1970: row["dateCreated"])
        dateModified = Date(timeIntervalSince1970: row["dateModified"])
    }
}

/// A computed playlist (iTunes' smart playlists): not stored, evaluated over the library's music
/// each time it is asked for.
public enum SmartPlaylist: Sendable, Hashable, Codable {
    /// Items added within the last `days` days (nil: any time), newest first.
    case recentlyAdded(days: Int?)
    /// Items played at least once, most played first (then the most recently played).
    case mostPlayed
    /// Items rated four or five stars, best first (then by title).
    case topRated
    /// Items never played, by title.
    case neverPlayed
}

extension SmartPlaylist {
    /// The smart playlists every library shows beside its own playlists, as iTunes did: added in
    /// the last 30 days, the 25 most played, the top rated (four stars and up), never played.
    public static let standard: [SmartPlaylist] = [.recentlyAdded(days: 30), .mostPlayed, .topRated, .neverPlayed]

    /// The name it is shown and asked for by (`tonearm play --playlist "Top 25 Most Played"`).
    public var name: String {
        switch self {
        case .recentlyAdded(nil): "Recently Added (all)"
        case .recentlyAdded(let days?): days == 30 ? "Recently Added" : "Added in the last \(days) days"
        case .mostPlayed: "Top 25 Most Played"
        case .topRated: "Top Rated"
        case .neverPlayed: "Never Played"
        }
    }

    /// How many items it holds at most (the 25 most played; 1,000 of the others).
    public var defaultLimit: Int {
        if case .mostPlayed = self { return 25 }
        return 1000
    }

    /// The standard smart playlist called `name` (case and accents ignored), or nil.
    public init?(named name: String) {
        let key = SearchKey.fold(name.trimmingCharacters(in: .whitespaces))
        guard let found = Self.standard.first(where: { SearchKey.fold($0.name) == key }) else { return nil }
        self = found
    }
}

/// A playlist asked for by name (``MediaLibrary/namedPlaylist(_:)``): one of the library's own or
/// a standard smart one.
public enum NamedPlaylist: Sendable, Hashable {
    case playlist(MediaPlaylist)
    case smart(SmartPlaylist)

    public var name: String {
        switch self {
        case .playlist(let p): p.name
        case .smart(let s): s.name
        }
    }
}

/// What ``MediaLibrary/importPlaylist(from:named:)`` made.
public struct PlaylistImport: Sendable, Hashable {
    /// The new playlist, holding the matched entries in the file's order.
    public var playlist: MediaPlaylist
    /// The entries that match no library item (a network URL, or a file not in the library), in
    /// the file's order.
    public var unmatched: [PlaylistEntry]
}

extension MediaLibrary {
    // MARK: Playlists

    /// Every playlist, by name (in ``SortKey`` order, as listings are: case ignored, numbers by
    /// value).
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func playlists() throws(TonearmError) -> [MediaPlaylist] {
        let all = try read { db in try Row.fetchAll(db, sql: Self.playlistSelect).map(MediaPlaylist.init(row:)) }
        return all.map { (SortKey.make($0.name), $0) }.sorted { ($0.0, $0.1.name) < ($1.0, $1.1.name) }.map(\.1)
    }

    /// The playlist named `name` (case and accents ignored; a name written exactly so first), or nil.
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func playlist(named name: String) throws(TonearmError) -> MediaPlaylist? {
        try read { db in try Self.fetchPlaylist(db, name: name) }
    }

    /// Makes an empty playlist named `name` (surrounding spaces removed).
    /// - Throws: `TonearmError.invalidArgument` for an empty name, `.playlistExists` naming the
    ///   playlist that has the name (case and accents ignored: "Mix" when "mix" exists is
    ///   `.playlistExists(name: "mix")`), `.library` when the database cannot be written.
    @discardableResult
    public func createPlaylist(named name: String) throws(TonearmError) -> MediaPlaylist {
        let name = try Self.validName(name)
        return try write { db in
            let id = try Self.insertPlaylist(db, name: name)
            return try Self.fetchPlaylist(db, rowID: id)!
        }
    }

    /// Renames the playlist `name` to `newName` (surrounding spaces removed); its items, dates of
    /// creation and persistentID stay. A change of case alone ("mix" to "Mix") is a rename.
    /// - Throws: `.playlistNotFound`, `.playlistExists` naming another playlist that has `newName`
    ///   (case and accents ignored),
    ///   `.invalidArgument` for an empty name, `.library`.
    @discardableResult
    public func renamePlaylist(_ name: String, to newName: String) throws(TonearmError) -> MediaPlaylist {
        let newName = try Self.validName(newName)
        return try write { db in
            let id = try Self.requirePlaylist(db, name: name)
            if let other = try Self.matchPlaylist(db, name: newName), other.id != id {
                throw TonearmError.playlistExists(name: other.name)
            }
            try db.execute(sql: "UPDATE playlist SET name = ?, dateModified = ? WHERE id = ?",
                           arguments: [newName, Date().timeIntervalSince1970, id])
            return try Self.fetchPlaylist(db, rowID: id)!
        }
    }

    /// Deletes the playlist `name` (its items stay in the library).
    /// - Throws: `.playlistNotFound`, `.library`.
    public func deletePlaylist(named name: String) throws(TonearmError) {
        try write { db in
            let id = try Self.requirePlaylist(db, name: name)
            try db.execute(sql: "DELETE FROM playlist WHERE id = ?", arguments: [id])
        }
    }

    /// Appends the items to the playlist `name`, in the order given (an item may appear more than
    /// once). All or nothing.
    /// - Throws: `.playlistNotFound`; `.invalidArgument` naming the first persistentID that is
    ///   not in the library; `.library`.
    @discardableResult
    public func addItems(_ persistentIDs: [UInt64], to name: String) throws(TonearmError) -> MediaPlaylist {
        try changeItems(of: name) { db, ids in
            for pid in persistentIDs {
                let id = Int64(bitPattern: pid)
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item WHERE id = ?)", arguments: [id]) == true else {
                    throw TonearmError.invalidArgument("no item with persistentID \(pid) in \(self.path)")
                }
                ids.append(id)
            }
        }
    }

    /// Removes the entry at `index` (0-based) of the playlist `name`; the later ones move up.
    /// - Throws: `.playlistNotFound`; `.invalidArgument` for an index out of range; `.library`.
    @discardableResult
    public func removeItem(at index: Int, from name: String) throws(TonearmError) -> MediaPlaylist {
        try changeItems(of: name) { _, ids in
            guard ids.indices.contains(index) else {
                throw TonearmError.invalidArgument("index \(index) is not in playlist '\(name)' (\(ids.count) items)")
            }
            ids.remove(at: index)
        }
    }

    /// Moves the entry at `from` so that it ends at `to` (both 0-based indices of the playlist
    /// `name`, `to` counted after the removal: the entry's final index).
    /// - Throws: `.playlistNotFound`; `.invalidArgument` for an index out of range; `.library`.
    @discardableResult
    public func moveItem(from: Int, to: Int, in name: String) throws(TonearmError) -> MediaPlaylist {
        try changeItems(of: name) { _, ids in
            guard ids.indices.contains(from), ids.indices.contains(to) else {
                throw TonearmError.invalidArgument("cannot move \(from) to \(to) in playlist '\(name)' (\(ids.count) items)")
            }
            ids.insert(ids.remove(at: from), at: to)
        }
    }

    /// The items of the playlist `name`, in its order.
    /// - Throws: `.playlistNotFound`, `.library`.
    public func items(in name: String) throws(TonearmError) -> [MediaItem] {
        try read { db in
            let id = try Self.requirePlaylist(db, name: name)
            return try Row.fetchAll(db, sql: """
                SELECT item.* FROM playlistItem JOIN item ON item.id = playlistItem.itemID
                WHERE playlistItem.playlistID = ? ORDER BY playlistItem.position
                """, arguments: [id]).map(MediaItem.init(row:))
        }
    }

    /// The playlist a name asks for: the library's own playlist of that name (case and accents
    /// ignored, as ``playlist(named:)``), or else
    /// the standard smart playlist of that name (``SmartPlaylist/init(named:)``), or nil.
    /// - Throws: `.library`.
    public func namedPlaylist(_ name: String) throws(TonearmError) -> NamedPlaylist? {
        if let own = try playlist(named: name) { return .playlist(own) }
        return SmartPlaylist(named: name).map(NamedPlaylist.smart)
    }

    /// The items of `playlist`: a playlist's in its order; a smart playlist's computed now, at
    /// most ``SmartPlaylist/defaultLimit`` of them.
    /// - Throws: `.playlistNotFound` for a playlist deleted since, `.library`.
    public func items(in playlist: NamedPlaylist) throws(TonearmError) -> [MediaItem] {
        switch playlist {
        case .playlist(let own): try items(in: own.name)
        case .smart(let smart): try smartPlaylist(smart, limit: smart.defaultLimit)
        }
    }

    /// The items of the playlist `name` (``namedPlaylist(_:)``: the library's own first).
    /// - Throws: `.playlistNotFound` when there is none of that name, `.library`.
    public func items(inPlaylistOrSmartPlaylist name: String) throws(TonearmError) -> [MediaItem] {
        guard let playlist = try namedPlaylist(name) else { throw .playlistNotFound(name: name) }
        return try items(in: playlist)
    }

    /// The standard smart playlists that no playlist of the library's own hides (one with the same
    /// name takes its place), with their items now — what a library shows after its playlists.
    /// - Throws: `.library`.
    public func standardSmartPlaylists() throws(TonearmError) -> [(playlist: SmartPlaylist, items: [MediaItem])] {
        var result: [(playlist: SmartPlaylist, items: [MediaItem])] = []
        for smart in SmartPlaylist.standard where try playlist(named: smart.name) == nil {
            result.append((smart, try smartPlaylist(smart, limit: smart.defaultLimit)))
        }
        return result
    }

    // MARK: Smart playlists

    /// The music items of a smart playlist, at most `limit` of them, computed now.
    /// - Throws: `.invalidArgument` for a `limit` below 1 or negative days; `.library`.
    public func smartPlaylist(_ kind: SmartPlaylist, limit: Int = 25, now: Date = Date()) throws(TonearmError) -> [MediaItem] {
        guard limit >= 1 else { throw .invalidArgument("a smart playlist's limit is 1 or more, not \(limit)") }
        var conditions = ["mediaType = 'music'"]
        var arguments: [any DatabaseValueConvertible] = []
        let order: String
        switch kind {
        case .recentlyAdded(let days):
            if let days {
                guard days >= 0 else { throw .invalidArgument("days must be 0 or more, not \(days)") }
                conditions.append("dateAdded >= ?")
                arguments.append(now.timeIntervalSince1970 - Double(days) * 86_400)
            }
            order = "dateAdded DESC, titleSort"
        case .mostPlayed:
            conditions.append("playCount > 0")
            order = "playCount DESC, lastPlayedDate DESC, titleSort"
        case .topRated:
            conditions.append("rating >= 4")
            order = "rating DESC, titleSort"
        case .neverPlayed:
            conditions.append("playCount = 0")
            order = "titleSort, artistSort, albumSort"
        }
        arguments.append(limit)
        let sql = "SELECT * FROM item WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order) LIMIT ?"
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map(MediaItem.init(row:))
        }
    }

    // MARK: Import and export

    /// Reads the playlist file at `url` (M3U, M3U8, PLS or XSPF, see `Playlist.read(from:)`) into
    /// a new playlist named `name` (nil: the file's own title, else the file name without its
    /// extension). Entries are matched to library items by path (as written, else with symbolic
    /// links resolved); those that match nothing are returned, not added.
    /// - Throws: the errors of `Playlist.read(from:)`; `.playlistExists`; `.invalidArgument` for
    ///   an empty name; `.library`.
    public func importPlaylist(from url: URL, named name: String? = nil) throws(TonearmError) -> PlaylistImport {
        let file = try Playlist.read(from: url)
        let fallback = url.deletingPathExtension().lastPathComponent
        let name = try Self.validName(name ?? file.title.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 } ?? fallback)
        var unmatched: [PlaylistEntry] = []
        let playlist: MediaPlaylist = try write { db in
            let playlistID = try Self.insertPlaylist(db, name: name)
            var ids: [Int64] = []
            for entry in file.entries {
                guard let path = entry.location.path else { unmatched.append(entry); continue }
                var id = try Int64.fetchOne(db, sql: "SELECT id FROM item WHERE path = ?", arguments: [path])
                if id == nil {
                    let resolved = (path as NSString).resolvingSymlinksInPath
                    if resolved != path {
                        id = try Int64.fetchOne(db, sql: "SELECT id FROM item WHERE path = ?", arguments: [resolved])
                    }
                }
                if let id { ids.append(id) } else { unmatched.append(entry) }
            }
            try Self.storeItems(db, playlist: playlistID, items: ids)
            return try Self.fetchPlaylist(db, rowID: playlistID)!
        }
        return PlaylistImport(playlist: playlist, unmatched: unmatched)
    }

    /// Writes the playlist `name` (or the smart playlist of that name, as it is now) to the file at `url` (replacing it atomically) in `format` (nil:
    /// from the extension): each item as a local path relative to the file's folder when inside it,
    /// with its title, duration and (XSPF) artist and album; the playlist's name as the title. The
    /// order is kept, so importing the file back gives the same items.
    /// - Throws: `.playlistNotFound`; the errors of `Playlist.write(to:format:relativeTo:)`
    ///   (`.invalidArgument` for an extension that names no format, `.writeFailed`, …); `.library`.
    public func exportPlaylist(_ name: String, to url: URL, format: PlaylistFormat? = nil) throws(TonearmError) {
        let items = try items(inPlaylistOrSmartPlaylist: name)
        let entries = items.map {
            PlaylistEntry(location: .file(path: $0.path), title: $0.title, duration: $0.duration,
                          artist: $0.artist, album: $0.albumTitle)
        }
        try Playlist(title: name, entries: entries).write(to: url, format: format)
    }

    // MARK: Helpers

    static let playlistSelect = """
        SELECT persistentID, name, dateCreated, dateModified,
               (SELECT count(*) FROM playlistItem WHERE playlistID = playlist.id) AS count
        FROM playlist
        """

    static func fetchPlaylist(_ db: Database, name: String) throws -> MediaPlaylist? {
        guard let id = try playlistRowID(db, name: name) else { return nil }
        return try fetchPlaylist(db, rowID: id)
    }

    static func fetchPlaylist(_ db: Database, rowID: Int64) throws -> MediaPlaylist? {
        try Row.fetchOne(db, sql: playlistSelect + " WHERE id = ?", arguments: [rowID]).map(MediaPlaylist.init(row:))
    }

    /// The row id and stored name of the playlist called `name`: the one named exactly so, else
    /// the one whose name folds alike (``SearchKey``: case, accents and surrounding spaces
    /// ignored). Playlists are few: their names are compared here, not in SQL.
    static func matchPlaylist(_ db: Database, name: String) throws -> (id: Int64, name: String)? {
        let rows = try Row.fetchAll(db, sql: "SELECT id, name FROM playlist").map { (id: $0["id"] as Int64, name: $0["name"] as String) }
        if let exact = rows.first(where: { $0.name == name }) { return exact }
        let key = SearchKey.fold(name)
        return rows.first { SearchKey.fold($0.name) == key }
    }

    static func playlistRowID(_ db: Database, name: String) throws -> Int64? {
        try matchPlaylist(db, name: name)?.id
    }

    static func requirePlaylist(_ db: Database, name: String) throws -> Int64 {
        guard let id = try playlistRowID(db, name: name) else { throw TonearmError.playlistNotFound(name: name) }
        return id
    }

    /// Inserts an empty playlist named `name` with a fresh random persistentID; its row id.
    /// Throws `.playlistExists` naming the playlist that has the name (case and accents ignored).
    static func insertPlaylist(_ db: Database, name: String) throws -> Int64 {
        if let existing = try matchPlaylist(db, name: name) { throw TonearmError.playlistExists(name: existing.name) }
        var pid: Int64
        repeat {
            pid = Int64.random(in: 1...Int64.max)
        } while try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM playlist WHERE persistentID = ?)", arguments: [pid]) == true
        let now = Date().timeIntervalSince1970
        try db.execute(sql: "INSERT INTO playlist (persistentID, name, dateCreated, dateModified) VALUES (?, ?, ?, ?)",
                       arguments: [pid, name, now, now])
        return db.lastInsertedRowID
    }

    static func validName(_ name: String) throws(TonearmError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .invalidArgument("a playlist's name cannot be empty") }
        return trimmed
    }

    /// Reads the playlist's item ids in order, lets `change` edit them, and writes them back
    /// numbered from 0, in one transaction; returns the playlist after the change.
    private func changeItems(of name: String, _ change: (Database, inout [Int64]) throws -> Void) throws(TonearmError) -> MediaPlaylist {
        try write { db in
            let id = try Self.requirePlaylist(db, name: name)
            var ids = try Int64.fetchAll(db, sql: "SELECT itemID FROM playlistItem WHERE playlistID = ? ORDER BY position", arguments: [id])
            try change(db, &ids)
            try Self.storeItems(db, playlist: id, items: ids)
            try db.execute(sql: "UPDATE playlist SET dateModified = ? WHERE id = ?", arguments: [Date().timeIntervalSince1970, id])
            return try Self.fetchPlaylist(db, rowID: id)!
        }
    }

    static func storeItems(_ db: Database, playlist id: Int64, items: [Int64]) throws {
        try db.execute(sql: "DELETE FROM playlistItem WHERE playlistID = ?", arguments: [id])
        let insert = try db.cachedStatement(sql: "INSERT INTO playlistItem (playlistID, position, itemID) VALUES (?, ?, ?)")
        for (position, item) in items.enumerated() {
            try insert.execute(arguments: [id, position, item])
        }
    }
}
