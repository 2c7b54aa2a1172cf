// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Synchronization
import Testing
@testable import TonearmLibrary
import TonearmTestSupport

/// A first scan of an empty library fills a bare table and builds the indexes and the full-text
/// index at the end; whatever happens, the library ends with the schema it would have had.
@Suite struct BulkScanTests {
    /// The item table's indexes and triggers, with their SQL.
    static func schema(_ path: String) throws -> [String: String] {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            var result: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'item' AND type IN ('index', 'trigger')") {
                result[row["name"]] = row["sql"] ?? ""
            }
            return result
        }
    }

    static func deferred(_ path: String) throws -> Int {
        try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM deferredSchema") ?? -1 }
    }

    @Test func aFirstScanEndsWithEveryIndexAndASearchableLibrary() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let before = try Self.schema(f.library.path)
        #expect(before.count >= 10 && before["item_ai"] != nil, "\(before.keys.sorted())")
        #expect(LibraryFixtures.mediaCount >= Scanner.bulkThreshold, "the fixture exercises the bulk path")
        let summary = try await f.library.scanToEnd(folders: [f.root])
        #expect(summary.added == LibraryFixtures.mediaCount)
        #expect(try Self.schema(f.library.path) == before)
        #expect(try Self.deferred(f.library.path) == 0)
        // The full-text index was rebuilt from the rows, and the insert trigger feeds it again.
        let found = try MediaQuery.search("beyonce").items(in: f.library).count
        let byArtist = try MediaQuery.songs().filtered(by: .artist("Beyoncé")).items(in: f.library).count
        #expect(found == byArtist && found > 0)
        let later = LibraryFixtures.Track(path: "Later/01 Zyzzyva.mp3", title: "Zyzzyva Nocturne", artist: "Nobody",
                                          album: "Later", genre: "Jazz", track: 1, trackCount: 1, year: 2020)
        try LibraryFixtures.write(later, base: try LibraryFixtures.baseMP3(in: f.root),
                                  png: try TagFixtures.coverPNG(f.dir.file("cover.png")), root: f.root)
        let again = try await f.library.scanToEnd(folders: [f.root])
        #expect(again.added == 1)
        #expect(try MediaQuery.search("zyzzyva").items(in: f.library).map(\.title) == ["Zyzzyva Nocturne"],
                "a later scan's rows are searchable (the trigger is back)")
    }

    /// A first scan knows every id it gave (the table was empty): copies of one file, read in
    /// different transactions, still get ids of their own.
    @Test func copiesInDifferentTransactionsOfAFirstScanGetIdsOfTheirOwn() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let original = f.path("Sigur Rós/Ágætis byrjun/1-1.mp3")
        try FileManager.default.createDirectory(atPath: f.path("zz/deeper"), withIntermediateDirectories: true)
        for copy in ["0 first copy.mp3", "zz/copy.mp3", "zz/deeper/copy.mp3"] {
            try FileManager.default.copyItem(atPath: original, toPath: f.path(copy))
        }
        let s = try await f.library.scanToEnd(folders: [f.root], batchSize: 2)
        #expect(s.added == LibraryFixtures.mediaCount + 3)
        let ids = try ["Sigur Rós/Ágætis byrjun/1-1.mp3", "0 first copy.mp3", "zz/copy.mp3", "zz/deeper/copy.mp3"].map {
            try #require(try f.item(at: $0)).persistentID
        }
        #expect(Set(ids).count == 4)
        #expect(try f.library.statistics().items == LibraryFixtures.mediaCount + 3)
    }

    /// A first scan's rows go in with the foreign keys off for their transactions (see
    /// `Scanner.flush`): the covers they refer to are there, and the writer's foreign keys are
    /// on again after it.
    @Test func aFirstScanLeavesTheForeignKeysOnAndHeld() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        #expect(LibraryFixtures.mediaCount >= Scanner.bulkThreshold, "the fixture exercises the bulk path")
        let summary = try await f.library.scanToEnd(folders: [f.root])
        #expect(summary.added == LibraryFixtures.mediaCount)
        let (violations, covered, foreignKeys) = try await f.library.pool.writeWithoutTransaction { db in
            (try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE artworkHash IS NOT NULL") ?? 0,
             try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false)
        }
        #expect(violations == 0)
        #expect(covered >= 10, "the fixture's tracks with a cover: \(covered)")
        #expect(foreignKeys, "the writer's foreign keys are on again")
    }

    /// A first scan writes its rows in INSERT statements of its own size (`Scanner.firstScanInsertChunk`,
    /// without the full-text trigger) and a later scan in others (`insertChunk`, with it): the
    /// same files give the same rows either way — every column but the date added, the full
    /// chunks and the last short one — and the same search results.
    @Test func aFirstScanWritesTheRowsALaterScanWrites() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        // Enough rows for several statements of either size and a short last one.
        let original = f.path("Sigur Rós/Ágætis byrjun/1-1.mp3")
        try FileManager.default.createDirectory(atPath: f.path("copies"), withIntermediateDirectories: true)
        for copy in 0..<57 { try FileManager.default.copyItem(atPath: original, toPath: f.path("copies/\(copy).mp3")) }
        let first = try await f.library.scanToEnd(folders: [f.root])
        #expect(first.added == LibraryFixtures.mediaCount + 57)
        // The other library is not empty when it scans the folder: a later scan's path.
        let seed = f.dir.file("Seed")
        try FileManager.default.createDirectory(atPath: seed, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: original, toPath: seed + "/seed.mp3")
        let other = try MediaLibrary(path: f.dir.file("db/other.sqlite"))
        #expect(try await other.scanToEnd(folders: [seed]).added == 1)
        let later = try await other.scanToEnd(folders: [seed, f.root])
        #expect(later.added == LibraryFixtures.mediaCount + 57 && later.unchanged == 1)
        func rows(_ path: String) throws -> [[DatabaseValue]] {
            try DatabaseQueue(path: path).read { db in
                let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(item)").map { $0["name"] as String }
                    .filter { $0 != "dateAdded" && $0 != "id" }
                return try Row.fetchAll(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM item WHERE path LIKE ? ORDER BY path",
                                        arguments: [f.root + "/%"]).map { Array($0.databaseValues) }
            }
        }
        let a = try rows(f.library.path), b = try rows(other.path)
        #expect(a.count == LibraryFixtures.mediaCount + 57)
        #expect(a == b)
        for word in ["beyonce", "sigur"] {
            let found = try Set(MediaQuery.search(word).items(in: f.library).map(\.path))
            // (Less the other library's seed, outside the folder.)
            let foundInOther = try Set(MediaQuery.search(word).items(in: other).map(\.path).filter { $0.hasPrefix(f.root + "/") })
            #expect(!found.isEmpty && found == foundInOther, "\(word)")
        }
    }

    /// A batch's new rows go into the table in its order (by id), each after the last: the
    /// table's pages are filled, not split in the middle as rows with ids spread over the whole
    /// range (content hashes) would leave them — about a third of each page empty.
    @Test func aFirstScanFillsTheTablesPages() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        // 300 copies of one file: ids of their own (a hash of the path), rows of about one size.
        let original = f.path("Sigur Rós/Ágætis byrjun/1-1.mp3")
        for folder in 0..<10 {
            try FileManager.default.createDirectory(atPath: f.path("copies/\(folder)"), withIntermediateDirectories: true)
            for copy in 0..<30 { try FileManager.default.copyItem(atPath: original, toPath: f.path("copies/\(folder)/\(copy).mp3")) }
        }
        let s = try await f.library.scanToEnd(folders: [f.root])
        #expect(s.added == LibraryFixtures.mediaCount + 300)
        let (unused, size, pages) = try await DatabaseQueue(path: f.library.path).read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT sum(unused), sum(pgsize), count(*) FROM dbstat WHERE name = 'item' AND pagetype = 'leaf'"))
            return (row[0] as Int, row[1] as Int, row[2] as Int)
        }
        #expect(pages > 20, "enough rows for many pages: \(pages)")
        #expect(Double(unused) < 0.08 * Double(size), "\(unused) of \(size) bytes unused in \(pages) leaf pages")
    }

    /// A scan killed between deferring and restoring (simulated: the deferral committed, rows
    /// added without the trigger) is completed by the first query that needs the indexes, after
    /// the library is next opened (opening it does not wait for them).
    @Test func deferredIndexesAreMadeByTheFirstQueryAfterTheLibraryIsOpened() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        _ = try await f.library.scanToEnd(folders: [f.root])
        let complete = try Self.schema(f.library.path)
        let count = try MediaQuery.search("beyonce").items(in: f.library).count
        let queue = try DatabaseQueue(path: f.library.path)
        try await queue.write { db in
            try Schema.deferListingSchema(db)
            // The killed scan's rows went into the bare table: the full-text index has none.
            try db.execute(sql: "INSERT INTO itemSearch(itemSearch) VALUES ('delete-all')")
        }
        try queue.close()
        #expect(try Self.deferred(f.library.path) == complete.count - 3, "every index and the insert trigger")
        #expect(try Self.schema(f.library.path).count == 3, "left: the path's unique index, the update and delete triggers")

        let reopened = try MediaLibrary(path: f.library.path)
        #expect(try Self.schema(f.library.path).count == 3, "opening leaves them")
        #expect(try MediaQuery.search("beyonce").items(in: reopened).count == count && count > 0)
        #expect(try Self.schema(f.library.path) == complete)
        #expect(try Self.deferred(f.library.path) == 0)
    }
}

/// A first scan may leave its indexes (`tonearm library scan`, which exits after scanning): the
/// first query that needs them makes them — a listing, a search, a playlist or a later scan, in
/// this library or in another process's — while lookups by id or path, covers, play counts,
/// ratings and the statistics read the bare table and leave them.
@Suite struct IndexesLeftForNextUseTests {
    @Test func theNextQueryOfTheLibraryMakesThem() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let complete = try BulkScanTests.schema(f.library.path)
        let summary = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        #expect(summary.added == LibraryFixtures.mediaCount)
        #expect(try BulkScanTests.deferred(f.library.path) == complete.count - 3, "left: every index and the insert trigger")
        #expect(try BulkScanTests.schema(f.library.path).count == 3)
        // The first query makes them, and finds through the full-text index rebuilt from the rows.
        let found = try MediaQuery.search("beyonce").items(in: f.library).count
        #expect(try BulkScanTests.schema(f.library.path) == complete)
        #expect(try BulkScanTests.deferred(f.library.path) == 0)
        let byArtist = try MediaQuery.songs().filtered(by: .artist("Beyoncé")).items(in: f.library).count
        #expect(found == byArtist && found > 0)
    }

    /// Queries on several threads at once right after the scan: one makes the indexes, the
    /// others wait for it, and every one finds what a search finds afterwards (none reads the
    /// bare table's empty full-text index meanwhile).
    @Test func queriesOnSeveralThreadsWaitForTheOneThatMakesThem() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        _ = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        #expect(try BulkScanTests.deferred(f.library.path) > 0)
        let counts = Mutex<[Int]>([])
        let library = f.library
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            let n = (try? MediaQuery.search("beyonce").items(in: library).count) ?? -1
            counts.withLock { $0.append(n) }
        }
        let expected = try MediaQuery.songs().filtered(by: .artist("Beyoncé")).items(in: f.library).count
        #expect(expected > 0 && counts.withLock { $0 } == Array(repeating: expected, count: 6))
    }

    /// Another process (another library of the same file) finds what was left in the database:
    /// opening does not make the indexes, its first listing does — also when it opened the
    /// file before the scan.
    @Test func anotherLibraryOfTheFileMakesThemAtItsFirstQuery() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let complete = try BulkScanTests.schema(f.library.path)
        let openedBefore = try MediaLibrary(path: f.library.path)
        _ = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        #expect(try BulkScanTests.deferred(f.library.path) > 0)
        let other = try MediaLibrary(path: f.library.path)
        #expect(try BulkScanTests.schema(f.library.path).count == 3, "opening leaves them")
        let albums = try MediaQuery.albums().collections(in: other)
        #expect(!albums.isEmpty)
        #expect(try BulkScanTests.schema(f.library.path) == complete)
        #expect(try BulkScanTests.deferred(f.library.path) == 0)
        // The others have nothing left to make: their queries just read, and find.
        #expect(try MediaQuery.search("beyonce").items(in: openedBefore).count > 0)
        #expect(try MediaQuery.search("beyonce").items(in: f.library).count > 0)
        #expect(try MediaQuery.albums().collections(in: f.library).count == albums.count)
    }

    /// A library opened before another's first scan, whose first query comes after it: the
    /// query finds the left indexes in the database (nothing in memory said so) and makes them.
    @Test func aLibraryOpenedBeforeTheScanMakesThemAtItsNextQuery() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let complete = try BulkScanTests.schema(f.library.path)
        let openedBefore = try MediaLibrary(path: f.library.path)
        #expect(try MediaQuery.songs().items(in: openedBefore).isEmpty)
        _ = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        #expect(try BulkScanTests.deferred(f.library.path) > 0)
        let found = try MediaQuery.search("beyonce").items(in: openedBefore).count
        #expect(try BulkScanTests.schema(f.library.path) == complete)
        #expect(found == (try MediaQuery.songs().filtered(by: .artist("Beyoncé")).items(in: f.library).count) && found > 0)
    }

    /// Lookups by id and path, covers, play counts, ratings and the statistics are right on the
    /// bare table, and leave the indexes for a query that needs them; the statistics are the
    /// same before and after the indexes are made.
    @Test func lookupsPlayCountsAndStatisticsLeaveThem() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let complete = try BulkScanTests.schema(f.library.path)
        let summary = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        let left = try BulkScanTests.deferred(f.library.path)
        #expect(left > 0)
        let other = try MediaLibrary(path: f.library.path)
        let coveredPath: String? = try await DatabaseQueue(path: f.library.path).read {
            try String.fetchOne($0, sql: "SELECT path FROM item WHERE artworkHash IS NOT NULL LIMIT 1")
        }
        let covered = try #require(coveredPath)
        for library in [f.library, other] {
            let stats = try library.statistics()
            #expect(stats.items == summary.added && stats.items > 0)
            #expect(stats.albums > 0 && stats.artists > 0 && stats.genres > 0)
            let item = try #require(try library.item(atPath: f.path("Sigur Rós/Ágætis byrjun/1-1.mp3")))
            #expect(try library.item(persistentID: item.persistentID)?.path == item.path)
            #expect(try library.persistentIDs(forPaths: [item.path]) == [item.path: item.persistentID])
            #expect(try library.recordPlay(of: item.persistentID, playedSeconds: item.duration) == .played)
            try library.setRating(4, of: item.persistentID)
            try library.setRating(3, of: [item.persistentID])
            #expect(try library.item(persistentID: item.persistentID)?.rating == 3)
            let coveredItem = try #require(try library.item(atPath: covered))
            #expect(try library.artwork(for: coveredItem) != nil)
            #expect(try BulkScanTests.deferred(f.library.path) == left, "nothing made them")
        }
        let before = try other.statistics()
        #expect(try f.library.item(atPath: f.path("Sigur Rós/Ágætis byrjun/1-1.mp3"))?.playCount == 2)
        // A listing makes them; the statistics are the same with them.
        #expect(!(try MediaQuery.songs().items(in: other)).isEmpty)
        #expect(try BulkScanTests.schema(f.library.path) == complete)
        #expect(try BulkScanTests.deferred(f.library.path) == 0)
        #expect(try other.statistics() == before)
        #expect(try f.library.statistics() == before)
    }

    /// A later scan of a library with rows (the last one left its indexes) makes them before it
    /// writes: its new rows are searchable.
    @Test func aLaterScanMakesThemBeforeItWrites() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let complete = try BulkScanTests.schema(f.library.path)
        _ = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        let later = LibraryFixtures.Track(path: "Later/01 Zyzzyva.mp3", title: "Zyzzyva Nocturne", artist: "Nobody",
                                          album: "Later", genre: "Jazz", track: 1, trackCount: 1, year: 2020)
        try LibraryFixtures.write(later, base: try LibraryFixtures.baseMP3(in: f.root),
                                  png: try TagFixtures.coverPNG(f.dir.file("cover.png")), root: f.root)
        let other = try MediaLibrary(path: f.library.path)
        let again = try await other.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        #expect(again.added == 1)
        #expect(try BulkScanTests.schema(f.library.path) == complete)
        #expect(try BulkScanTests.deferred(f.library.path) == 0)
        #expect(try MediaQuery.search("zyzzyva").items(in: other).map(\.title) == ["Zyzzyva Nocturne"])
        #expect(try MediaQuery.search("beyonce").items(in: other).count > 0)
    }

    /// A scan that finds nothing changed writes no row: it leaves them too, and the next
    /// listing makes them.
    @Test func aScanThatChangesNothingLeavesThem() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let complete = try BulkScanTests.schema(f.library.path)
        _ = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        let left = try BulkScanTests.deferred(f.library.path)
        let other = try MediaLibrary(path: f.library.path)
        let again = try await other.scanToEnd(folders: [f.root])
        #expect(again.unchanged == LibraryFixtures.mediaCount && again.added == 0 && again.removed == 0)
        #expect(try BulkScanTests.deferred(f.library.path) == left && left > 0)
        #expect(try MediaQuery.search("beyonce").items(in: other).count > 0)
        #expect(try BulkScanTests.schema(f.library.path) == complete)
    }

    /// A later scan (not a first one) writes rows with every index in place either way.
    @Test func aScanOfALibraryWithRowsLeavesNothing() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        _ = try await f.library.scanToEnd(folders: [f.root])
        let complete = try BulkScanTests.schema(f.library.path)
        try FileManager.default.copyItem(atPath: f.path("Sigur Rós/Ágætis byrjun/1-1.mp3"), toPath: f.path("copy.mp3"))
        let again = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        #expect(again.added == 1)
        #expect(try BulkScanTests.schema(f.library.path) == complete)
        #expect(try BulkScanTests.deferred(f.library.path) == 0)
    }
}
