// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import TonearmCore

/// What the listener made of an item: its play and skip counts, when it was last played and its
/// rating — the library's columns that a scan never writes (MPMediaItem's `playCount`,
/// `skipCount`, `lastPlayedDate`, `rating`). Read for many songs at once by the daemon's
/// stickers and the web remote's song lists.
public struct ItemUsage: Sendable, Hashable, Codable {
    public var persistentID: UInt64
    public var playCount: Int
    public var skipCount: Int
    public var lastPlayedDate: Date?
    /// 0 (unrated) to 5.
    public var rating: Int

    public init(persistentID: UInt64, playCount: Int = 0, skipCount: Int = 0, lastPlayedDate: Date? = nil, rating: Int = 0) {
        self.persistentID = persistentID
        self.playCount = playCount
        self.skipCount = skipCount
        self.lastPlayedDate = lastPlayedDate
        self.rating = rating
    }

    init(row: Row) {
        persistentID = UInt64(bitPattern: row["id"])
        playCount = row["playCount"]
        skipCount = row["skipCount"]
        lastPlayedDate = (row["lastPlayedDate"] as Double?).map { Date(timeIntervalSince1970: $0) }
        rating = row["rating"]
    }
}

extension MediaLibrary {
    /// The usage of the items at `paths` (absolute, as scanned), by path; paths the library does
    /// not hold are left out. Reads only. Callable from any thread.
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func usage(forPaths paths: [String]) throws(TonearmError) -> [String: ItemUsage] {
        guard !paths.isEmpty else { return [:] }
        return try read(needsIndexes: false) { db in
            var found: [String: ItemUsage] = [:]
            // SQLite takes at most 32,766 parameters per statement: ask in pieces.
            var start = 0
            while start < paths.count {
                let piece = Array(paths[start..<min(paths.count, start + 500)])
                start += piece.count
                let marks = Array(repeating: "?", count: piece.count).joined(separator: ",")
                let sql = "SELECT id, path, playCount, skipCount, lastPlayedDate, rating FROM item WHERE path IN (\(marks))"
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(piece)) {
                    found[row["path"]] = ItemUsage(row: row)
                }
            }
            return found
        }
    }
}
