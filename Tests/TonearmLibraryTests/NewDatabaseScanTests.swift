// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import GRDB
import Synchronization
import Testing
import TonearmCore
@testable import TonearmLibrary
import TonearmTestSupport

/// `MediaLibrary.scanIntoNewDatabase` (what `tonearm library scan` does when its database does
/// not exist yet): the database built in a temporary file without syncs is the one a scan in
/// place makes, and it appears at its path only complete — an interrupted scan leaves none.
@Suite struct NewDatabaseScanTests {
    /// Everything stored: the schema, and every table's rows in id order (`item` without
    /// `dateAdded`, which is the time of the scan).
    static func contents(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            var out = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").map { "\($0)" }
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'itemSearch%' ORDER BY name")
            for table in tables {
                let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String }
                    .filter { $0 != "dateAdded" }.map { "\"\($0)\"" }.joined(separator: ", ")
                out += try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(table) ORDER BY 1").map { "\(table): \($0)" }
            }
            return out
        }
    }

    static func integrity(_ path: String) throws -> [String] {
        try DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
    }

    /// The names of the files in `folder`.
    static func files(in folder: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
    }

    @Test func theNewDatabaseIsTheOneAScanInPlaceMakesAndNothingElseIsLeft() async throws {
        let dir = try TempDir("new-database")
        defer { dir.remove() }
        let root = dir.file("Music")
        try LibraryFixtures.make(at: root)
        let inPlace = try MediaLibrary(path: dir.file("a/library.sqlite"))
        let a = try await inPlace.scanToEnd(folders: [root], leavingIndexesForNextUse: true)
        let path = dir.file("b/library.sqlite")
        let made = try await MediaLibrary.scanIntoNewDatabase(path: path, folders: [root])
        let b = try #require(made)
        #expect(b.added == a.added && b.added == LibraryFixtures.mediaCount && b.skipped.map(\.path) == a.skipped.map(\.path))
        #expect(Self.files(in: dir.file("b")) == ["library.sqlite"], "no temporary file, log or shared memory is left")
        let expected = try Self.contents(inPlace.path)
        #expect(expected.count > LibraryFixtures.mediaCount)
        #expect(try Self.contents(path) == expected)
        #expect(try Self.integrity(path) == ["ok"])
        // The library opens it, makes the indexes it left and finds its rows.
        let library = try MediaLibrary(path: path)
        #expect(try MediaQuery.search("beyonce").items(in: library).count > 0)
        #expect(try MediaQuery.search("beyonce").items(in: inPlace).count > 0)
        #expect(try BulkScanTests.schema(path) == BulkScanTests.schema(inPlace.path))
    }

    @Test func aDatabaseThatExistsIsLeftToTheCaller() async throws {
        let dir = try TempDir("new-database")
        defer { dir.remove() }
        let root = dir.file("Music")
        try LibraryFixtures.make(at: root)
        let path = dir.file("library.sqlite")
        _ = try MediaLibrary(path: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(try await MediaLibrary.scanIntoNewDatabase(path: path, folders: [root]) == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try MediaLibrary(path: path).statistics().items == 0)
    }

    /// The scan is cancelled while its readers are held at their start: the error is thrown and
    /// there is no database, temporary file or log afterwards. (Built in place, the database
    /// would exist, with its schema and none of the rows.)
    @Test func aCancelledScanLeavesNoDatabase() async throws {
        let dir = try TempDir("new-database")
        defer { dir.remove() }
        let root = dir.file("Music")
        try LibraryFixtures.make(at: root)
        let folder = dir.file("db")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/library.sqlite"
        let readerStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let hook: @Sendable (String) -> Void = { name in
            guard name == "tonearm-scan-reader" else { return }
            readerStarted.signal()
            release.wait()
        }
        // High priority: in the parallel offline phase hundreds of tests are queued on the
        // cooperative pool (two threads here), and a clean-clone run saw the scan's task not
        // started after 120 s behind them.
        let task = Task(priority: .high) {
            try await MediaLibrary.scanIntoNewDatabase(path: path, folders: [root], readerThreads: 2, batchSize: 500,
                                                       threadStarted: hook, progress: { _ in })
        }
        // (Waited for off the cooperative pool, which the scan's task needs to start; an event
        // with a generous deadline.)
        let started = await withCheckedContinuation { c in
            DispatchQueue.global().async { c.resume(returning: readerStarted.wait(timeout: .now() + 600)) }
        }
        #expect(started == .success)
        #expect(Self.files(in: folder).contains { $0.hasPrefix("library.sqlite.new-") }, "the database is being built aside")
        task.cancel()
        release.signal()
        release.signal()
        let result = await task.result
        var named: String?
        if case .failure(TonearmError.library(let at, _)) = result { named = at }
        #expect(named == path, "a library error naming the database, not its temporary file: \(result)")
        #expect(Self.files(in: folder).isEmpty, "\(Self.files(in: folder))")
        // A later scan makes it.
        #expect(try await MediaLibrary.scanIntoNewDatabase(path: path, folders: [root])?.added == LibraryFixtures.mediaCount)
    }

    /// A killed scan's temporary files (its process gone) are removed by the next new-database
    /// scan of the same path; those of a process still running are not.
    @Test func aKilledScansTemporaryFilesAreRemovedByTheNext() async throws {
        let dir = try TempDir("new-database")
        defer { dir.remove() }
        let root = dir.file("Music")
        try LibraryFixtures.make(at: root)
        let path = dir.file("library.sqlite")
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let gone = MediaLibrary.temporaryPath(of: path, pid: ended.processIdentifier)
        let running = MediaLibrary.temporaryPath(of: path, pid: getppid())
        for file in [gone, gone + "-wal", gone + "-shm", running] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data("partial".utf8)))
        }
        #expect(try await MediaLibrary.scanIntoNewDatabase(path: path, folders: [root])?.added == LibraryFixtures.mediaCount)
        #expect(Self.files(in: dir.path) == ["Music", "library.sqlite", (running as NSString).lastPathComponent])
    }
}
