// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import GRDBSQLite

/// The full-text index (`itemSearch`) of a first scan, built on a thread of its own while the
/// scan's writer builds the listing indexes — before, the two ran one after the other on the
/// writer with the other core idle (the full-text part 14k instructions a file of 64k).
///
/// The thread is given every row's id and search key as the scan wrote them (reading them back
/// through a connection of its own read the whole table again: 2 ms more CPU at 2,000 files,
/// in page faults and system time), puts them in id order (as FTS5's `rebuild` reads the
/// table) into the same FTS5 table in an in-memory database, and hands over that database's
/// image. The writer attaches the image and copies the index's tables (`itemSearch_data`,
/// `_idx`, `_docsize`) into the library's, in the transaction that restores the last deferred
/// part of the schema (see ``Schema/restoreDeferredSchema(_:searchRows:)``).
final class SearchIndexBuild: @unchecked Sendable {  // `image` is guarded by `condition`
    private let condition = NSCondition()
    private var image: Result<Data, any Error>?

    /// Starts the thread. `tableSQL`: the `CREATE VIRTUAL TABLE itemSearch …` of the library.
    init(rows: [(id: Int64, key: String)], tableSQL: String) {
        let thread = Thread { [self] in
            let result = Result { try Self.build(rows: rows, tableSQL: tableSQL) }
            condition.withLock {
                image = result
                condition.broadcast()
            }
        }
        thread.name = "tonearm-scan-search"
        thread.start()
    }

    /// Waits for the thread, and returns the in-memory database holding the index (its
    /// serialized image) or why it could not be made.
    func wait() -> Result<Data, any Error> {
        condition.withLock {
            while image == nil { condition.wait() }
            return image!
        }
    }

    /// The shadow tables of an FTS5 table with external content and the default `detail` that
    /// hold the index (`_config` holds only the format version, the same in both).
    static let shadowTables = ["itemSearch_data", "itemSearch_idx", "itemSearch_docsize"]

    private static func build(rows: [(id: Int64, key: String)], tableSQL: String) throws -> Data {
        let queue = try DatabaseQueue()  // in memory
        return try queue.writeWithoutTransaction { db in
            try db.execute(sql: tableSQL)
            // In one transaction, in id order: the index FTS5's 'rebuild' makes of the table.
            try db.inTransaction {
                let insert = try db.makeStatement(sql: "INSERT INTO itemSearch(rowid, searchKey) VALUES (?, ?)")
                for row in rows.sorted(by: { $0.id < $1.id }) {
                    try insert.execute(arguments: [row.id, row.key])
                }
                return .commit
            }
            var size: sqlite3_int64 = 0
            guard let bytes = sqlite3_serialize(db.sqliteConnection, "main", &size, 0) else {
                throw DatabaseError(resultCode: .SQLITE_NOMEM, message: "serializing the full-text index")
            }
            defer { sqlite3_free(bytes) }
            return Data(bytes: bytes, count: Int(size))
        }
    }

    /// Attaches `image` to the writer's connection as `searchBuild` (outside a transaction),
    /// runs `body`, and detaches it.
    static func withAttached<T>(_ image: Data, _ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "ATTACH DATABASE ':memory:' AS searchBuild")
        defer { try? db.execute(sql: "DETACH DATABASE searchBuild") }
        guard let copy = sqlite3_malloc64(sqlite3_uint64(image.count)) else {
            throw DatabaseError(resultCode: .SQLITE_NOMEM, message: "attaching the full-text index")
        }
        image.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: image.count) }
        // SQLite owns `copy` from here (it frees it on failure too).
        let rc = sqlite3_deserialize(db.sqliteConnection, "searchBuild", copy.assumingMemoryBound(to: UInt8.self),
                                     sqlite3_int64(image.count), sqlite3_int64(image.count),
                                     UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE))
        guard rc == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: "attaching the full-text index")
        }
        return try body()
    }
}
