// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import GRDB
import GRDBSQLite
import TonearmCore

/// One scan of some folders into the database: walks them, compares with the rows, reads what
/// is new or changed on `readerCount` reader threads, and writes the results in transactions
/// of `batchSize` rows from its own coordinator thread, which holds `lock` for the whole scan.
/// Removals come in a last transaction.
///
/// Every transaction leaves the database consistent: a scan killed at any point loses at most
/// the batch in progress, and the next scan finds those files new (or changed) and completes it.
/// Moves: a file new at its path whose content hash is that of a row whose file is gone takes
/// that row (its persistentID, play count, rating) instead of a new one. The hash is compared in
/// the row's ``ContentHash`` version (a version 1 row's with the file hashed the old way too),
/// and the moved row is hashed again with the current version.
///
/// With `changed` (a folder watcher's batch), only those paths are looked at — files, and
/// folders walked like the folders are — and only the rows at or under them are compared, so
/// rows elsewhere are neither removed nor taken by a move.
final class Scanner: @unchecked Sendable {
    private let batchSize: Int
    private let lock: NSLock
    private let pool: DatabasePool
    private let databasePath: String
    private let folders: [String]
    private let changed: Set<String>?
    private let readerCount: Int
    private let continuation: AsyncThrowingStream<ScanEvent, any Error>.Continuation
    private let cancelled = Flag()
    /// Set: a first scan leaves the indexes it deferred to be made later, and calls this
    /// (before it reports its summary) instead of making them at its end.
    private let leaveIndexes: (@Sendable () -> Void)?
    /// Called on each of the scan's threads as it starts, after ``ScanPriority/enter(_:)``,
    /// with the thread's name (tests).
    private let threadStarted: (@Sendable (String) -> Void)?
    /// Every file is read again, unchanged or not (a rescan).
    private let rereadAll: Bool

    init(pool: DatabasePool, databasePath: String, folders: [String], changed: Set<String>? = nil, readerThreads: Int,
         batchSize: Int, lock: NSLock, leaveIndexes: (@Sendable () -> Void)? = nil, rereadAll: Bool = false,
         threadStarted: (@Sendable (String) -> Void)? = nil,
         continuation: AsyncThrowingStream<ScanEvent, any Error>.Continuation) {
        self.pool = pool
        self.rereadAll = rereadAll
        self.threadStarted = threadStarted
        self.leaveIndexes = leaveIndexes
        self.databasePath = databasePath
        self.folders = folders
        self.changed = changed
        self.readerCount = max(1, readerThreads)
        self.continuation = continuation
        self.batchSize = batchSize
        self.lock = lock
    }

    /// Starts the coordinator thread; ending the stream's iteration cancels the scan (readers
    /// stop taking files; the batch in progress is not written).
    func start() {
        continuation.onTermination = { [cancelled] _ in cancelled.set() }
        let thread = Thread { [self] in
            started("tonearm-scan")
            lock.lock()
            defer { lock.unlock() }
            do {
                let summary = try run()
                continuation.yield(.finished(summary))
                continuation.finish()
            } catch let error as TonearmError {
                continuation.finish(throwing: error)
            } catch {
                continuation.finish(throwing: TonearmError.library(path: databasePath, reason: String(describing: error)))
            }
        }
        thread.name = "tonearm-scan"
        thread.start()
    }

    /// What each of the scan's threads does first: `SCHED_BATCH` (``ScanPriority``), then the
    /// test hook.
    private func started(_ name: String) {
        ScanPriority.enter(name)
        threadStarted?(name)
    }

    /// A row as the scan needs it.
    private struct Known {
        var id: Int64
        var path: String
        var size: Int64
        var mtime: Int64
        var hash: StoredHash
    }

    private func run() throws -> ScanSummary {
        var summary = ScanSummary()
        // The scan's commits do not wait for the disk (each took ~15 ms here): in WAL mode the
        // database stays consistent, and a power cut may lose only the last batches, which the
        // next scan redoes. Nor does the scan copy the log into the database every 4 MB (each
        // copy waits for the disk twice): once, at the end. Its pages stay in a cache of 64 MB
        // (SQLite's default of 2 MB wrote pages to the log in the middle of a transaction that
        // changed them again). The connection's settings are restored after. (A database built
        // in a temporary file, `synchronous = OFF`, stays so: it is synced once when complete.)
        let (synchronous, autocheckpoint, cacheSize) = try pool.writeWithoutTransaction { db in
            let old = (try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 2, try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000,
                       try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000)
            try db.execute(sql: "PRAGMA synchronous = \(min(old.0, 1)); PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = -65536")
            return old
        }
        defer {
            try? pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(synchronous); PRAGMA wal_autocheckpoint = \(autocheckpoint); PRAGMA cache_size = \(cacheSize)")
                _ = try db.checkpoint(.passive)
            }
        }
        let found = changed.map { walk(changed: $0) } ?? walk(folders)
        let known = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, path, size, mtime, contentHash, hashVersion FROM item").map {
                Known(id: $0["id"], path: $0["path"], size: $0["size"], mtime: $0["mtime"],
                      hash: StoredHash(version: $0["hashVersion"], value: UInt64(bitPattern: $0["contentHash"])))
            }
        }.filter { changed?.covers($0.path) ?? true }
        let byPath = Dictionary(known.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        let foundPaths = Set(found.map(\.path))
        // Rows whose file is gone, by content hash: candidates for moves, removed at the end
        // when unclaimed.
        var missing = Dictionary(grouping: known.filter { !foundPaths.contains($0.path) && !Self.exists($0.path) }, by: \.hash)
        let moves = MoveCandidates(hashes: Set(missing.keys))
        /// A row whose file is gone with the content hashed as `hashes`, no longer a candidate.
        func claimMissing(_ hashes: FileHashes) -> Known? {
            for key in hashes.candidates {
                guard var rows = missing[key], !rows.isEmpty else { continue }
                let row = rows.removeFirst()
                missing[key] = rows.isEmpty ? nil : rows
                return row
            }
            return nil
        }

        var work: [(FoundFile, existing: Int64?)] = []
        for f in found {
            if let k = byPath[f.path] {
                if k.size == f.size && k.mtime == f.mtime && !rereadAll { summary.unchanged += 1 } else { work.append((f, k.id)) }
            } else {
                work.append((f, nil))
            }
        }
        // A first scan of an empty library fills a bare table and builds the indexes and the
        // full-text index once at the end (about twice as fast as growing them row by row);
        // meanwhile the library lists slowly and its search finds nothing new.
        let bulk = changed == nil && known.isEmpty && work.count >= Self.bulkThreshold
        if bulk { try pool.write(Schema.deferListingSchema) }
        // Rows are written in transactions of `batchSize` files; a first scan's of four times as
        // many: its ids (content hashes) fall all over the table, so each commit writes most of
        // the table's pages to the log again, and a kill loses at most a few seconds' reading.
        let commitEvery = bulk ? Self.bulkBatchFactor * batchSize : batchSize
        var scanIDs: Set<Int64>? = bulk ? [] : nil
        defer {
            if bulk {
                if let leaveIndexes { leaveIndexes() } else { try? pool.write(Schema.restoreDeferredSchema) }
            }
        }
        var done = summary.unchanged
        continuation.yield(.progress(ScanProgress(filesDone: done, filesTotal: found.count, currentFile: nil)))
        var reported = done
        let progressStep = max(1, found.count / Self.progressEvents)

        // Each reader hands its results over ``handOff`` at a time (and its last ones when it
        // is done): one wake-up of the writer, and one lock, for that many files instead of one
        // each. Bounded, at ``queuedPerReader`` hand-overs a reader: readers outrun the writer
        // (six of them share two cores with it; waiting, they leave it the CPU), and a read file
        // may carry its cover. (At 10,000 files, 24 hand-overs of 16 instead of 4,000 results
        // made the peak memory 3.6 MB lower for the same CPU time.)
        let handOff = min(Self.handOff, max(1, work.count / (2 * readerCount)))
        let takenAtOnce = min(Self.takenAtOnce, max(1, work.count / (4 * readerCount)))
        let results = BlockingQueue<[(Int, ReadOutcome)]>(capacity: Self.queuedPerReader * readerCount)
        let next = Counter()
        let jobs = work
        // The kernel is asked to read ahead (``ReadAhead``) only once a reader finds a file
        // that is not in memory: a warm scan would pay an open, an fadvise and a close a file
        // for nothing.
        let readAhead = jobs.count >= Self.readAheadThreshold
            ? ColdStart { [self, cancelled] in
                ReadAhead(files: jobs.map(\.0), distance: Self.readAheadDistance, taken: next, cancelled: cancelled,
                          started: { [self] in started("tonearm-scan-readahead") }).start()
            }
            : nil
        for _ in 0..<min(readerCount, max(1, work.count)) {
            let reader = Thread { [self, cancelled] in
                started("tonearm-scan-reader")
                var done: [(Int, ReadOutcome)] = []
                done.reserveCapacity(handOff)
                // (Files taken a few at a time: one lock for them, fewer waits on it.)
                while !cancelled.isSet, let taken = next.take(takenAtOnce, below: jobs.count) {
                    for i in taken where !cancelled.isSet {
                        let (file, existing) = jobs[i]
                        done.append((i, FileReader.read(file, mayBeMove: existing == nil, moves: moves, cold: readAhead)))
                        if done.count >= handOff {
                            results.push(done)
                            done.removeAll(keepingCapacity: true)
                        }
                    }
                }
                next.close()
                done.append((-1, .skipped(SkippedFile(path: "", reason: "", kind: .unreadable))))  // this reader is done
                results.push(done)
            }
            reader.name = "tonearm-scan-reader"
            reader.start()
        }

        var batch: [Write] = []
        // (Sized once: growing it by doubling held the old and the new buffer at once.)
        batch.reserveCapacity(min(commitEvery, work.count))
        var batchArtworkBytes = 0
        var readersLeft = min(readerCount, max(1, work.count))
        var handed: [(Int, ReadOutcome)] = []
        var position = 0
        while readersLeft > 0 {
            if position == handed.count {
                handed = results.pop()
                position = 0
            }
            let (i, outcome) = handed[position]
            position += 1
            if i < 0 { readersLeft -= 1; continue }
            if cancelled.isSet { continue }
            let existing = work[i].existing
            switch outcome {
            case .skipped(let s):
                summary.skipped.append(s)
            case .read(let file, let hash, let fields):
                summary.filesRead += 1
                batchArtworkBytes += fields.artwork?.data.count ?? 0
                if let existing {
                    batch.append(.update(id: existing, file, hash: hash.current, fields))
                    summary.updated += 1
                } else if let m = claimMissing(hash) {
                    batch.append(.update(id: m.id, file, hash: hash.current, fields))
                    summary.moved += 1
                } else {
                    batch.append(.insert(file, hash: hash.current, fields))
                    summary.added += 1
                }
            case .hashed(let file, let hash):
                if let m = claimMissing(hash) {
                    batch.append(.move(id: m.id, file, hash: hash.current))
                    summary.moved += 1
                } else {
                    // Another file took that row (a copy of a moved file): read this one as new.
                    switch FileReader.fields(file) {
                    case .success(let fields):
                        summary.filesRead += 1
                        batch.append(.insert(file, hash: hash.current, fields))
                        summary.added += 1
                    case .failure(let why):
                        summary.skipped.append(SkippedFile(path: file.path, reason: why.text, kind: why.kind))
                    }
                }
            }
            done += 1
            // Every file in scans of up to a hundred, else every hundredth of them: each event
            // wakes the task that reads the stream (≈ 17,000 instructions a wake-up: a tenth of
            // a 2,000-file scan's with one event for every second file).
            if done - reported >= progressStep || done == found.count {
                reported = done
                continuation.yield(.progress(ScanProgress(filesDone: done, filesTotal: found.count, currentFile: work[i].0.path)))
            }
            if batch.count >= commitEvery || batchArtworkBytes >= Self.batchArtworkLimit {
                try flush(batch, scanIDs: &scanIDs, makingLeftIndexes: !bulk)
                batch.removeAll(keepingCapacity: true)
                batchArtworkBytes = 0
            }
        }
        if cancelled.isSet { throw CancellationError() }
        try flush(batch, scanIDs: &scanIDs, makingLeftIndexes: !bulk)
        let gone = missing.values.flatMap { $0 }.map(\.id)
        try pool.write { db in
            if !bulk && !gone.isEmpty { try Schema.restoreDeferredSchema(db) }
            // Many rows per statement, for the full-text index's trigger (see flush).
            for start in stride(from: 0, to: gone.count, by: Self.deleteChunk) {
                let ids = gone[start..<min(gone.count, start + Self.deleteChunk)]
                try db.execute(sql: "DELETE FROM item WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ", ")))",
                               arguments: StatementArguments(Array(ids)))
            }
            try db.execute(sql: "DELETE FROM artwork WHERE hash NOT IN (SELECT artworkHash FROM item WHERE artworkHash IS NOT NULL)")
        }
        summary.removed = gone.count
        summary.skipped.sort { $0.path < $1.path }
        return summary
    }

    // MARK: Walking

    /// Every regular file under the folders (``FolderWalk``, on the reader threads' count of
    /// threads), sorted by path, each once.
    private func walk(_ folders: [String]) -> [FoundFile] {
        FolderWalk.files(under: folders, threads: readerCount, started: { [self] in started("tonearm-scan-walk") })
    }

    /// The changed paths that are regular files, and the files under those that are folders
    /// (walked as above); sorted by path, each once. Paths that no longer exist give nothing.
    private func walk(changed: Set<String>) -> [FoundFile] {
        var files: [String: FoundFile] = [:]
        var folders: [String] = []
        for path in changed {
            var st = stat()
            guard stat(path, &st) == 0 else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFDIR: folders.append(path)
            case S_IFREG:
                let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
                files[path] = FoundFile(path: path, size: Int64(st.st_size), mtime: mtime)
            default: break
            }
        }
        for f in walk(folders) { files[f.path] = f }
        return files.values.sorted { $0.path < $1.path }
    }

    private static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    // MARK: Writing

    private enum Write {
        case insert(FoundFile, hash: UInt64, ItemFields)
        case update(id: Int64, FoundFile, hash: UInt64, ItemFields)
        /// The row's file moved: its new place, and its content hash made again with the
        /// current version.
        case move(id: Int64, FoundFile, hash: UInt64)
    }

    /// Writes a batch in one transaction. New rows go in with multi-row INSERT statements
    /// (``insertChunk`` rows each, a first scan's ``firstScanInsertChunk``), after the batch's updates: a statement that fires the
    /// full-text index's trigger opens a statement savepoint, at which FTS5 writes out its
    /// pending terms, so one row per statement made inserting about three times as slow.
    ///
    /// `scanIDs`: in a first scan (the table was empty when it began, and only scans insert
    /// rows, one at a time), every id given so far, so that a new row's id is checked against
    /// them instead of queried.
    /// `makingLeftIndexes`: indexes an earlier first scan left (`deferredSchema`) are made first,
    /// in the same transaction, so that rows written now go in with every index and the insert
    /// trigger feeding the full-text index in place (a scan that writes nothing leaves them to
    /// the first query that needs them). False for a first scan's own bare table.
    ///
    /// A first scan's rows (`scanIDs` set) go in with `INSERT OR FAIL` and the foreign keys
    /// off for the transaction: a multi-row INSERT that may stop half-way (a constraint, or an
    /// immediate foreign key, checked with `OR ABORT`) makes SQLite copy every page it changes
    /// to a statement journal first, to undo the statement alone; with `OR FAIL` the rows
    /// before a failing one stay, which is the same here, since the error ends the scan and
    /// rolls the whole transaction back (6.3M instructions, 2 %, of a 2,000-file scan). The
    /// rows' covers go in first, in the same transaction, so the foreign key holds.
    private func flush(_ batch: [Write], scanIDs: inout Set<Int64>?, makingLeftIndexes: Bool) throws {
        guard !batch.isEmpty else { return }
        let now = Date().timeIntervalSince1970
        var known = scanIDs
        defer { scanIDs = known }
        let firstScan = scanIDs != nil
        try pool.writeWithoutTransaction { db in
            // (Set outside the transaction: SQLite ignores it inside one.)
            let foreignKeys = firstScan ? try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false : false
            if foreignKeys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
            defer { if foreignKeys { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            try db.inTransaction {
                try write(batch, db, known: &known, now: now, makingLeftIndexes: makingLeftIndexes, orFail: firstScan)
                return .commit
            }
        }
    }

    /// ``flush``'s transaction.
    private func write(_ batch: [Write], _ db: Database, known: inout Set<Int64>?, now: Double, makingLeftIndexes: Bool,
                       orFail: Bool) throws {
        if makingLeftIndexes { try Schema.restoreDeferredSchema(db) }
        // New rows as their id and their place in the batch: a copy of each row's fields
        // (the whole batch's, 0.9 MB at 2,000 files) was a sixth of a first scan's peak heap.
        var inserts: [(id: Int64, at: Int)] = []
        inserts.reserveCapacity(batch.count)
        var assigned = known ?? Set<Int64>()
        for (at, w) in batch.enumerated() {
            switch w {
            case .insert(let file, let hash, let fields):
                let id = try Self.freeID(db, hash: hash, path: file.path, taken: assigned, onlyTaken: known != nil)
                assigned.insert(id)
                try Self.storeArtwork(db, fields)
                inserts.append((id, at))
            case .update(let id, let file, let hash, let fields):
                try Self.storeArtwork(db, fields)
                try Self.execute(db.cachedStatement(sql: Self.updateSQL), Self.arguments(file, hash: hash, fields) + [.int(id)])
            case .move(let id, let file, let hash):
                try Self.execute(db.cachedStatement(sql: "UPDATE item SET path = ?, size = ?, mtime = ?, contentHash = ?, hashVersion = ? WHERE id = ?"),
                                 [.text(file.path), .int(file.size), .int(file.mtime), .int(Int64(bitPattern: hash)),
                                  .int(Int64(ContentHash.version)), .int(id)])
            }
        }
        if known != nil { known = assigned }
        // In the table's order (the ids, content hashes, are spread over the whole range):
        // each row then goes after the last one written, where the B-tree appends without
        // splitting pages in the middle of the table.
        // (The positions sorted, not the rows: moving rows of 40 fields cost 5,600
        // instructions a row.)
        let ids = inserts.map(\.id)
        let order = ids.indices.sorted { ids[$0] < ids[$1] }
        let width = Self.insertColumns.count
        // (The full chunk's statement looked up once a batch: its SQL is 12 KB, hashed at
        // each lookup.)
        let chunk = orFail ? Self.firstScanInsertChunk : Self.insertChunk
        let full = inserts.count >= chunk ? try db.cachedStatement(sql: orFail ? Self.fullInsertOrFailSQL : Self.fullInsertSQL) : nil
        // The values of one statement's rows at a time, in one array used again: the whole
        // batch's at once (2,000 rows of a first scan, 48 values each) were 2–3 MB of the
        // scan's peak memory, for the same instructions.
        var rows: [SQLValue] = []
        rows.reserveCapacity(min(inserts.count, chunk) * width)
        var start = 0
        while start < order.count {
            let count = min(chunk, order.count - start)
            rows.removeAll(keepingCapacity: true)
            for k in start..<(start + count) {
                let i = inserts[order[k]]
                guard case .insert(let file, let hash, let fields) = batch[i.at] else { continue }
                rows.append(.int(i.id))
                // (Appended in place: an array of each row's values, then added to these,
                // cost 8k instructions a file.)
                Self.appendArguments(to: &rows, file, hash: hash, fields)
                rows.append(.real(now))
            }
            let statement = try full.flatMap { count == chunk ? $0 : nil } ?? db.cachedStatement(sql: Self.insertSQL(rows: count, orFail: orFail))
            try Self.execute(statement, rows[...])
            start += count
        }
    }

    /// A value bound to a statement by ``execute(_:_:)``.
    enum SQLValue {
        case int(Int64), real(Double), text(String), null

        init(_ v: Int64?) { self = v.map { .int($0) } ?? .null }
        init(_ v: Int?) { self = v.map { .int(Int64($0)) } ?? .null }
        init(_ v: Double?) { self = v.map { .real($0) } ?? .null }
        init(_ v: String?) { self = v.map { .text($0) } ?? .null }
    }

    /// Binds `values` to `statement` and runs it, through SQLite's C API: the scan's rows have
    /// tens of values each, and GRDB's arguments (an existential per value, converted, then
    /// bound) were a fifth of the writer's time. The texts are copied once, into one buffer that
    /// lives until the statement is reset, and bound from there without a copy (`SQLITE_STATIC`):
    /// a C string made for each and copied again by SQLite (`SQLITE_TRANSIENT`) were a third of
    /// the writer's instructions. Throws `DatabaseError` as GRDB does.
    private static func execute(_ statement: Statement, _ values: some Collection<SQLValue>) throws {
        let s = statement.sqliteStatement
        sqlite3_reset(s)
        var texts: [UInt8] = [0]  // never empty: a nil pointer would bind NULL, not ""
        // (Sized first and copied a string at a time: appended as a sequence of bytes, the texts
        // cost 4.5k instructions a file.)
        var length = 1
        for case .text(let t) in values { length += t.utf8.count }
        texts.reserveCapacity(length)
        for case .text(let t) in values {
            if t.utf8.withContiguousStorageIfAvailable({ texts.append(contentsOf: $0) }) == nil { texts.append(contentsOf: t.utf8) }
        }
        try texts.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var offset = 1
            var index: Int32 = 1
            for v in values {
                let rc: Int32
                switch v {
                case .int(let i): rc = sqlite3_bind_int64(s, index, i)
                case .real(let d): rc = sqlite3_bind_double(s, index, d)
                case .text(let t):
                    let count = t.utf8.count
                    rc = sqlite3_bind_text(s, index, base + offset, Int32(count), nil)
                    offset += count
                case .null: rc = sqlite3_bind_null(s, index)
                }
                if rc != SQLITE_OK {
                    sqlite3_clear_bindings(s)
                    throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: "binding value \(index)", sql: statement.sql)
                }
                index += 1
            }
            let rc = sqlite3_step(s)
            let message = rc == SQLITE_DONE ? nil : String(cString: sqlite3_errmsg(sqlite3_db_handle(s)))
            // Nothing may point into `texts` after this closure.
            sqlite3_reset(s)
            sqlite3_clear_bindings(s)
            if rc != SQLITE_DONE { throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: message, sql: statement.sql) }
        }
    }

    /// The id for a new row: the content hash, unless a row has it already (a duplicate of a
    /// file still present) or it is in `taken` (given to another file of the batch), then a
    /// hash of it with the path, again until free.
    /// `onlyTaken`: `taken` holds every id in the table (a first scan's), so the table is not asked.
    private static func freeID(_ db: Database, hash: UInt64, path: String, taken: Set<Int64>, onlyTaken: Bool = false) throws -> Int64 {
        var candidate = hash
        func isTaken(_ id: Int64) throws -> Bool {
            if taken.contains(id) { return true }
            if onlyTaken { return false }  // (looking the statement up cost as much as the rest)
            return try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM item WHERE id = ?)"), arguments: [id]) == true
        }
        while try isTaken(Int64(bitPattern: candidate)) {
            var h = FNV1a()
            withUnsafeBytes(of: candidate) { h.add($0) }
            Array(path.utf8).withUnsafeBytes { h.add($0) }
            candidate = h.value
        }
        return Int64(bitPattern: candidate)
    }

    private static func storeArtwork(_ db: Database, _ fields: ItemFields) throws {
        guard let art = fields.artwork, let hash = fields.artworkHash else { return }
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO artwork (hash, mimeType, data) VALUES (?, ?, ?)")
            .execute(arguments: [Int64(bitPattern: hash), art.mimeType, Data(art.data)])
    }

    /// The columns ``arguments(_:hash:_:)`` gives values for, in its order.
    private static let fileColumns = ["contentHash", "hashVersion", "path", "size", "mtime"]
    private static let fieldColumns = [
        "title", "artist", "album", "albumArtist", "composer", "genre", "trackNumber", "trackCount",
        "discNumber", "discCount", "year", "releaseDate", "duration", "container", "codec", "sampleRate",
        "channels", "bitsPerSample", "bitRate", "mediaType", "isCompilation", "bpm", "lyrics",
        "trackGain", "trackPeak", "albumGain", "albumPeak", "artworkHash",
    ] + Schema.derivedColumns
    /// A new row's columns: the id, ``fileColumns``, ``fieldColumns`` and the date added.
    private static let insertColumns = ["id"] + fileColumns + fieldColumns + ["dateAdded"]
    /// Rows per INSERT statement (50 × 48 values, well under SQLite's limit of 32,766).
    private static let insertChunk = 50
    /// Rows per INSERT statement of a first scan (no trigger, `OR FAIL`): a 2,000-file first
    /// scan took 298.7M instructions with 50 rows a statement, 295.1M and 294.9M with 10 and 20,
    /// 296.2M with 5, 300.0M with 1 and 310.1M with 200 (SQLite runs a multi-row VALUES as a
    /// co-routine that copies each row's values; a long one costs more per row).
    private static let firstScanInsertChunk = 20
    /// Files a first scan must have to build the indexes at the end (see ``run()``).
    static let bulkThreshold = 16
    /// Files to read from which the kernel is asked to read ahead of the readers (``ReadAhead``),
    /// and how far ahead.
    static let readAheadThreshold = 64
    static let readAheadDistance = 256
    /// How many times `batchSize` files a first scan's transactions hold (see ``run()``).
    static let bulkBatchFactor = 4
    /// Progress events a scan reports at most (besides the first and the last; see ``ScanEvent``).
    static let progressEvents = 100
    /// Files a reader reads before it hands their results to the writer (fewer in a small scan,
    /// so that every reader gets some).
    static let handOff = 16
    /// Files a reader takes at once (fewer when that would leave another reader without any).
    static let takenAtOnce = 4
    /// Hand-overs (of up to ``handOff`` results) waiting for the writer, per reader, at most.
    static let queuedPerReader = 4
    /// Rows per DELETE statement.
    private static let deleteChunk = 500
    /// Cover bytes a batch holds at most before it is written (a batch of files with large
    /// covers is written before it reaches its size).
    private static let batchArtworkLimit = 64 << 20

    /// The INSERT of ``insertChunk`` rows, and with `OR FAIL` of ``firstScanInsertChunk`` (made once: 120,000 instructions each time).
    private static let fullInsertSQL = insertSQL(rows: insertChunk)
    private static let fullInsertOrFailSQL = insertSQL(rows: firstScanInsertChunk, orFail: true)
    /// An INSERT of `rows` new rows (`orFail`: `INSERT OR FAIL`, see ``flush``).
    private static func insertSQL(rows: Int, orFail: Bool = false) -> String {
        let row = "(" + Array(repeating: "?", count: insertColumns.count).joined(separator: ", ") + ")"
        return "INSERT \(orFail ? "OR FAIL " : "")INTO item (\(insertColumns.joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    private static let updateSQL =
        "UPDATE item SET \((fileColumns + fieldColumns).map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"

    /// The values of ``fileColumns`` and ``fieldColumns``, in their order.
    private static func arguments(_ file: FoundFile, hash: UInt64, _ f: ItemFields) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(fileColumns.count + fieldColumns.count + 1)
        appendArguments(to: &values, file, hash: hash, f)
        return values
    }

    /// Appends the values of ``fileColumns`` and ``fieldColumns`` to `values`, in their order.
    private static func appendArguments(to values: inout [SQLValue], _ file: FoundFile, hash: UInt64, _ f: ItemFields) {
        values.append(.int(Int64(bitPattern: hash)))
        values.append(.int(Int64(ContentHash.version)))
        values.append(.text(file.path))
        values.append(.int(file.size))
        values.append(.int(file.mtime))
        values.append(.text(f.title))
        values.append(.init(f.artist))
        values.append(.init(f.album))
        values.append(.init(f.albumArtist))
        values.append(.init(f.composer))
        values.append(.init(f.genre))
        values.append(.init(f.trackNumber))
        values.append(.init(f.trackCount))
        values.append(.init(f.discNumber))
        values.append(.init(f.discCount))
        values.append(.init(f.year))
        values.append(.init(f.releaseDate))
        values.append(.real(f.duration))
        values.append(.text(f.format.container))
        values.append(.text(f.format.codec))
        values.append(.init(f.format.sampleRate))
        values.append(.init(f.format.channelCount))
        values.append(.init(f.format.bitsPerSample))
        values.append(.init(f.format.bitRate))
        values.append(.text(f.mediaType.rawValue))
        values.append(.int(f.isCompilation ? 1 : 0))
        values.append(.init(f.bpm))
        values.append(.init(f.lyrics))
        values.append(.init(f.replayGain.trackGain))
        values.append(.init(f.replayGain.trackPeak))
        values.append(.init(f.replayGain.albumGain))
        values.append(.init(f.replayGain.albumPeak))
        values.append(.init(f.artworkHash.map { Int64(bitPattern: $0) }))
        for d in f.derived { values.append(.text(d)) }
    }
}

// MARK: Thread plumbing

/// A set-once flag, read from any thread.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// Hands out 0, 1, 2, … to the reader threads.
final class Counter: @unchecked Sendable {
    private let condition = NSCondition()
    private var next = 0
    private var limit = Int.max

    func take(below limit: Int) -> Int? {
        take(1, below: limit)?.lowerBound
    }

    /// Up to `count` numbers at once (fewer at `limit`), or nil when none is left.
    func take(_ count: Int, below limit: Int) -> Range<Int>? {
        condition.withLock {
            guard next < limit else { return nil }
            let end = min(limit, next + max(1, count))
            defer { next = end; condition.broadcast() }
            return next..<end
        }
    }

    /// No more numbers will be taken (a reader stops: done or cancelled): waiters return.
    func close() {
        condition.withLock {
            limit = next
            condition.broadcast()
        }
    }

    /// Waits until `count` numbers are taken or none is left to take, and returns how many are taken.
    func wait(untilTaken count: Int) -> Int {
        condition.withLock {
            while next < count && next < limit { condition.wait() }
            return next
        }
    }
}

/// A queue of at most `capacity` items: readers push (waiting while it is full), the
/// coordinator pops (waiting while it is empty).
final class BlockingQueue<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Popped slots are nil (their values released at once) until the array is compacted.
    private var items: [T?] = []
    private var head = 0
    private let capacity: Int

    init(capacity: Int = .max) {
        self.capacity = max(1, capacity)
    }

    func push(_ item: T) {
        condition.withLock {
            while items.count - head >= capacity { condition.wait() }
            items.append(item)
            condition.broadcast()
        }
    }

    func pop() -> T {
        condition.withLock {
            while head == items.count { condition.wait() }
            let item = items[head].take()!
            head += 1
            // (Compacted once the popped half is large: the values kept in popped slots
            // until then held a whole scan's results when they came in batches.)
            if head >= 64 && 2 * head >= items.count { items.removeFirst(head); head = 0 }
            condition.broadcast()
            return item
        }
    }
}
