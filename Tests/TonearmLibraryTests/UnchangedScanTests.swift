// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import GRDB
import Testing
import TonearmCore
@testable import TonearmLibrary
import TonearmTestSupport

/// `MediaLibrary.scanIfUnchanged` (what `tonearm library scan` tries first): on a folder whose
/// every file the library has with its size and modification time, the summary a scan gives,
/// with nothing written to the database; on anything a scan would change, nil.
@Suite struct UnchangedScanTests {
    /// The fixture scanned, its library closed (no connection left: its log is gone, as after
    /// `tonearm library scan`).
    static func scanned() async throws -> (LibraryFixture, ScanSummary) {
        let f = try LibraryFixture()
        try await f.library.scanToEnd(folders: [f.root], leavingIndexesForNextUse: true)
        let again = try await f.library.scanToEnd(folders: [f.root])
        try f.library.pool.close()
        return (f, again)
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test func anUnchangedFolderGivesTheScansSummaryAndWritesNothing() async throws {
        let (f, scan) = try await Self.scanned()
        defer { f.dir.remove() }
        let db = f.library.path
        let before = try #require(Self.bytes(db))
        var events: [ScanProgress] = []
        let quick = try #require(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]) { events.append($0) })
        #expect(quick == scan, "the summary a scan gives: every media file unchanged, the junk skipped for the same reasons")
        #expect(quick.unchanged == LibraryFixtures.mediaCount && quick.skipped.count == LibraryFixtures.junk.count)
        #expect(quick.skipped.map(\.path).contains(f.path("notes.txt")))
        #expect(events == [ScanProgress(filesDone: quick.unchanged + quick.skipped.count,
                                        filesTotal: quick.unchanged + quick.skipped.count, currentFile: nil)])
        #expect(Self.bytes(db) == before, "nothing written")
        #expect(NewDatabaseScanTests.files(in: f.dir.file("db")) == ["library.sqlite"], "no log or shared memory left")
        // Paths with accents and Chinese characters are among those found unchanged.
        #expect(LibraryFixtures.tracks.contains { $0.path.unicodeScalars.contains { $0.value > 0x3000 } })
    }

    @Test func aChangedAddedOrRemovedFileGivesNilAndTheScanFindsIt() async throws {
        let (f, _) = try await Self.scanned()
        defer { f.dir.remove() }
        let db = f.library.path
        let before = try #require(Self.bytes(db))
        // A file's modification time changed (same size).
        let changed = f.path("The Band/Album One/1.mp3")
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, changed, &times, 0) == 0)
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]) == nil)
        #expect(Self.bytes(db) == before, "nothing written")
        var s = try await MediaLibrary(path: db).scanToEnd(folders: [f.root])
        #expect(s.updated == 1)
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]) != nil, "unchanged again after the scan")

        // A new media file (a copy of one: a new row).
        try FileManager.default.copyItem(atPath: f.path("Sigur Rós/Ágætis byrjun/1-1.mp3"), toPath: f.path("copy.mp3"))
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]) == nil)
        s = try await MediaLibrary(path: db).scanToEnd(folders: [f.root])
        #expect(s.added == 1)

        // A file removed.
        try FileManager.default.removeItem(atPath: f.path("copy.mp3"))
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]) == nil)
        s = try await MediaLibrary(path: db).scanToEnd(folders: [f.root])
        #expect(s.removed == 1)

        // A new file that is not media: skipped, as the scan skips it; nothing else to do.
        try Data("just text".utf8).write(to: URL(fileURLWithPath: f.path("more notes.txt")))
        let quick = try #require(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]))
        let library = try MediaLibrary(path: db)
        s = try await library.scanToEnd(folders: [f.root])
        #expect(quick == s && quick.skipped.count == LibraryFixtures.junk.count + 1)
        try library.pool.close()
    }

    @Test func rowsOfOtherFoldersAreKeptWhenTheirFilesExist() async throws {
        let (f, _) = try await Self.scanned()
        defer { f.dir.remove() }
        let db = f.library.path
        let other = f.dir.file("Other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: f.path("Sigur Rós/Ágætis byrjun/1-1.mp3"), toPath: other + "/x.mp3")
        let library = try MediaLibrary(path: db)
        #expect(try await library.scanToEnd(folders: [other]).added == 1)
        try library.pool.close()
        // The fixture's folder alone: the other folder's row stays (its file exists).
        let quick = try #require(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]))
        #expect(quick.unchanged == LibraryFixtures.mediaCount && quick.removed == 0)
        // That file gone: a scan of the fixture's folder removes its row, so no summary here.
        try FileManager.default.removeItem(atPath: other + "/x.mp3")
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]) == nil)
        #expect(try await MediaLibrary(path: db).scanToEnd(folders: [f.root]).removed == 1)
    }

    @Test func noDatabaseAnotherSchemaOrABadFolderGiveNilAndCreateNothing() async throws {
        let (f, _) = try await Self.scanned()
        defer { f.dir.remove() }
        let db = f.library.path
        let missing = f.dir.file("none/library.sqlite")
        #expect(MediaLibrary.scanIfUnchanged(path: missing, folders: [f.root]) == nil)
        #expect(!FileManager.default.fileExists(atPath: missing))
        let notALibrary = f.dir.file("text.sqlite")
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: notALibrary))
        #expect(MediaLibrary.scanIfUnchanged(path: notALibrary, folders: [f.root]) == nil)
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.dir.file("no such folder")]) == nil)
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.path("notes.txt")]) == nil)
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: []) == nil)
        // A database a migration is missing from: the scan migrates it first.
        let queue = try DatabaseQueue(path: db)
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [Schema.migrationIdentifiers.last!])
        }
        try queue.close()
        #expect(MediaLibrary.scanIfUnchanged(path: db, folders: [f.root]) == nil)
    }
}

/// `MediaLibrary.unchangedScanSummary(folders:)` (the daemon's `update` and start): the same
/// check on an open library, through its pool.
@Suite struct OpenLibraryUnchangedScanTests {
    /// The write-ahead log's size and SQLite's count of changes other connections made.
    static func written(_ library: MediaLibrary) throws -> (log: Int64, dataVersion: Int) {
        let log = (try? FileManager.default.attributesOfItem(atPath: library.path + "-wal")[.size] as? Int64) ?? nil
        return (log ?? -1, try library.pool.read { try Int.fetchOne($0, sql: "PRAGMA data_version") ?? -1 })
    }

    @Test func anOpenLibraryAnswersTheScansSummaryWithoutWriting() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])
        let scan = try await f.library.scanToEnd(folders: [f.root])
        let before = try Self.written(f.library)
        let quick = try #require(f.library.unchangedScanSummary(folders: [f.root]))
        #expect(quick == scan, "every media file unchanged, the junk skipped for the same reasons")
        #expect(quick.unchanged == LibraryFixtures.mediaCount)
        #expect(try Self.written(f.library) == before, "nothing written")

        // A changed file (its modification time): nil, and the scan finds it.
        let changed = f.path("The Band/Album One/1.mp3")
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, changed, &times, 0) == 0)
        #expect(f.library.unchangedScanSummary(folders: [f.root]) == nil)
        #expect(try await f.library.scanToEnd(folders: [f.root]).updated == 1)
        #expect(f.library.unchangedScanSummary(folders: [f.root]) != nil)

        // A new media file, then that file gone.
        try FileManager.default.copyItem(atPath: f.path("Sigur Rós/Ágætis byrjun/1-1.mp3"), toPath: f.path("copy.mp3"))
        #expect(f.library.unchangedScanSummary(folders: [f.root]) == nil)
        #expect(try await f.library.scanToEnd(folders: [f.root]).added == 1)
        try FileManager.default.removeItem(atPath: f.path("copy.mp3"))
        #expect(f.library.unchangedScanSummary(folders: [f.root]) == nil)
        #expect(try await f.library.scanToEnd(folders: [f.root]).removed == 1)

        // Not a folder, or none: nil.
        #expect(f.library.unchangedScanSummary(folders: [f.dir.file("no such folder")]) == nil)
        #expect(f.library.unchangedScanSummary(folders: []) == nil)
    }
}
