// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
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
    /// added without the trigger) is completed when the library is next opened.
    @Test func deferredIndexesAreMadeWhenTheLibraryIsOpened() async throws {
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
        #expect(try Self.schema(f.library.path) == complete)
        #expect(try Self.deferred(f.library.path) == 0)
        #expect(try MediaQuery.search("beyonce").items(in: reopened).count == count && count > 0)
    }
}

/// A first scan may leave its indexes to the library's next use (`tonearm library scan`, which
/// exits after scanning): the next read or write of the same library makes them first, and so
/// does the next open of the file.
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

    @Test func theNextOpenOfTheFileMakesThem() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        let complete = try BulkScanTests.schema(f.library.path)
        _ = try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        #expect(try BulkScanTests.deferred(f.library.path) > 0)
        let other = try MediaLibrary(path: f.library.path)
        #expect(try BulkScanTests.schema(f.library.path) == complete)
        #expect(try MediaQuery.search("beyonce").items(in: other).count > 0)
        // The first library has nothing left to make: its next query just reads.
        #expect(try MediaQuery.search("beyonce").items(in: f.library).count > 0)
        #expect(try BulkScanTests.deferred(f.library.path) == 0)
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
