// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import GRDB
import GRDBSQLite
import TonearmCore

extension MediaLibrary {
    /// A scan that finds nothing to do, without opening the library for writing: when every
    /// file under `folders` has a row of the library at `path` with its size and modification
    /// time (or is a file the scan would skip: not media, empty, unreadable), and every row whose
    /// file was not found still has a file (a row of another folder), returns the summary
    /// ``scanToEnd(folders:readerThreads:batchSize:leavingIndexesForNextUse:progress:)`` would
    /// return — every file unchanged, the skipped ones skipped for the same reasons — having
    /// written nothing. Otherwise (a file new or changed, a row whose file is gone, no database,
    /// a schema that is not this version's, folders that cannot be scanned, any SQLite error)
    /// nil, having written nothing: scan with ``scanToEnd(folders:readerThreads:batchSize:leavingIndexesForNextUse:progress:)``,
    /// which also reports the errors.
    ///
    /// Why: opening the library for writing (GRDB's `DatabasePool`) writes a transaction when
    /// the write-ahead log is missing — and the last connection of every process removes it —
    /// and that transaction makes the log's last checkpoint wait for the disk twice at the end
    /// (2 × `fdatasync`, 12 ms each on this machine's disk), besides the pool's connections, its
    /// schema check and the scan's threads. Here one plain SQLite connection reads the rows'
    /// paths, sizes and modification times once: nothing written, nothing synced (`tonearm
    /// library scan` of an unchanged 2,000-file folder, issue 17).
    ///
    /// `progress` is called once, with every file done, when the summary is returned.
    public static func scanIfUnchanged(path: String? = nil, folders: [String], readerThreads: Int? = nil,
                                       progress: (ScanProgress) -> Void = { _ in }) -> ScanSummary? {
        let path = path ?? defaultPath
        guard !folders.isEmpty, (try? checkFolders(folders)) != nil else { return nil }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        // The rows first: a database that is not this version's library gives nil before the walk.
        guard let rows = knownFiles(path) else { return nil }
        return unchangedSummary(rows: rows, folders: folders, readerThreads: readerThreads, progress: progress)
    }

    /// ``scanIfUnchanged(path:folders:readerThreads:progress:)`` for this open library (the
    /// daemon's `update`, which MPD answers from memory in a stat a file): the rows' paths,
    /// sizes and modification times read in one read transaction of the pool, the folders walked
    /// and compared. The summary a scan would give when it would change nothing; else nil, having
    /// written nothing (a rescan, which rereads every file, never asks). Does not wait for a scan
    /// that runs (it reads what is committed: a scan's changes are reported by that scan).
    /// Called on any thread; blocks it for the walk.
    public func unchangedScanSummary(folders: [String], readerThreads: Int? = nil) -> ScanSummary? {
        guard !folders.isEmpty, (try? Self.checkFolders(folders)) != nil else { return nil }
        guard let rows = try? pool.read({ db in db.sqliteConnection.flatMap { Self.rows($0) } }) else { return nil }
        return Self.unchangedSummary(rows: rows, folders: folders, readerThreads: readerThreads, progress: { _ in })
    }

    /// The comparison both share: `rows` (every row's path, size and modification time) against
    /// the files under `folders`.
    private static func unchangedSummary(rows: [String: (size: Int64, mtime: Int64)], folders: [String], readerThreads: Int?,
                                         progress: (ScanProgress) -> Void) -> ScanSummary? {
        var rows = rows
        var st = stat()
        let found = FolderWalk.files(under: folders, threads: readerThreads ?? defaultReaderThreads,
                                     started: { ScanPriority.enter("tonearm-scan-walk") })
        var summary = ScanSummary()
        let noMoves = MoveCandidates(hashes: [])
        for file in found {
            if let row = rows.removeValue(forKey: file.path) {
                guard row.size == file.size && row.mtime == file.mtime else { return nil }
                summary.unchanged += 1
                continue
            }
            // Not in the library: the scan would read it. Nothing to do only if it is skipped
            // (no row is missing here, so no move can be found either).
            guard case .skipped(let s) = FileReader.read(file, mayBeMove: false, moves: noMoves) else { return nil }
            summary.skipped.append(s)
        }
        // Rows not found under the folders: kept when their file exists (another folder's),
        // else the scan would remove them (or move them).
        for rowPath in rows.keys {
            guard stat(rowPath, &st) == 0 else { return nil }
        }
        summary.skipped.sort { $0.path < $1.path }
        progress(ScanProgress(filesDone: found.count, filesTotal: found.count, currentFile: nil))
        return summary
    }

    /// Every row's path, size and modification time, read with one plain SQLite connection
    /// (opened for reading and writing, so that it opens a database in WAL mode whose log is
    /// missing, but writing nothing); nil when the file is not a library of this schema version
    /// or cannot be read.
    private static func knownFiles(_ path: String) -> [String: (size: Int64, mtime: Int64)]? {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else {
            return nil
        }
        sqlite3_busy_timeout(db, 2_000)
        guard sqlite3_exec(db, "BEGIN", nil, nil, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_exec(db, "COMMIT", nil, nil, nil) }
        // Every migration of this version applied, and no other: else the scan migrates first.
        var migrations: Set<String> = []
        guard query(db, "SELECT identifier FROM grdb_migrations", { s in
            migrations.insert(String(cString: sqlite3_column_text(s, 0)))
        }), migrations == Set(Schema.migrationIdentifiers) else { return nil }
        return rows(db)
    }

    /// Every row's path, size and modification time read on `db` (in the caller's
    /// transaction); nil on an SQLite error.
    private static func rows(_ db: OpaquePointer) -> [String: (size: Int64, mtime: Int64)]? {
        var rows: [String: (size: Int64, mtime: Int64)] = [:]
        guard query(db, "SELECT path, size, mtime FROM item", { s in
            rows[String(cString: sqlite3_column_text(s, 0))] = (sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2))
        }) else { return nil }
        return rows
    }

    /// Runs `sql`, calling `row` for each row; false on any error or a NULL first column.
    private static func query(_ db: OpaquePointer, _ sql: String, _ row: (OpaquePointer) -> Void) -> Bool {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return false }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                guard sqlite3_column_type(statement, 0) != SQLITE_NULL else { return false }
                row(statement)
            case SQLITE_DONE: return true
            default: return false
            }
        }
    }
}
