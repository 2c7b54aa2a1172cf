// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import GRDB
import Synchronization
import TonearmCore

/// The media library (MPMediaLibrary): one SQLite file of items scanned from folders, with
/// queries (``MediaQuery``), play counts and ratings.
///
/// Threading: a `MediaLibrary` is Sendable and every method may be called from any thread or
/// task; reads run concurrently, writes one at a time (the database is in WAL mode, so several
/// processes may also open the same file). Methods block the caller for the time of their SQL;
/// ``scan(folders:readerThreads:batchSize:leavingIndexesForNextUse:)`` does its work on threads of its own.
///
/// Errors: every method throws ``TonearmError``: `.library(path:reason:)` for the database
/// (cannot be created, not a library, disk full), the file errors for folders to scan, and
/// `.invalidArgument` for values out of range or unknown items.
public final class MediaLibrary: Sendable {
    /// The database file.
    public let path: String
    let pool: DatabasePool
    /// Held by a scan's coordinator thread for the whole scan: scans of one library run one
    /// after the other.
    let scanLock = NSLock()
    /// Held while the indexes a first scan left (see
    /// ``scan(folders:readerThreads:batchSize:leavingIndexesForNextUse:)``) are made: one thread
    /// makes them, the others wait for it.
    private let indexBuild = Mutex(())

    /// `$XDG_DATA_HOME/tonearm/library.sqlite`, else `~/.local/share/tonearm/library.sqlite`.
    public static var defaultPath: String {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/tonearm/library.sqlite" }
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/tonearm/library.sqlite"
    }

    /// Opens the library at `path` (``defaultPath`` when nil), creating the file and its folder
    /// if needed, and brings its schema up to date.
    /// - Throws: `TonearmError.library(path:reason:)` when the folder cannot be created or
    ///   written, or the file is not a SQLite database.
    public convenience init(path: String? = nil) throws(TonearmError) {
        try self.init(path: path ?? Self.defaultPath, syncing: true)
    }

    /// Opens the library at `path` as ``init(path:)`` does; with `syncing` false, every
    /// connection runs with `synchronous = OFF` (a database being built in a temporary file by
    /// ``scanIntoNewDatabase(path:folders:readerThreads:batchSize:progress:)``, made durable
    /// once at its end).
    init(path: String, syncing: Bool) throws(TonearmError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            if let failure = Self.makeFolders(folder) {
                throw .library(path: path, reason: "cannot create the folder \(folder) (\(failure))")
            }
            if access(folder, W_OK) != 0 {
                throw .library(path: path, reason: "the folder \(folder) is not writable (\(String(cString: strerror(errno))))")
            }
        }
        var config = Configuration()
        config.busyMode = .timeout(10)
        // Statement journals (a multi-row INSERT into a table with a UNIQUE column needs one) and
        // sorts (building an index) in memory, not in files under /var/tmp: a first scan wrote
        // 20 such files and 70 MB to them.
        let pragmas = syncing ? "PRAGMA temp_store = MEMORY" : "PRAGMA temp_store = MEMORY; PRAGMA synchronous = OFF"
        config.prepareDatabase { db in try db.execute(sql: pragmas) }
        do {
            pool = try DatabasePool(path: path, configuration: config)
            // (GRDB sets `synchronous = NORMAL` on the writer after `prepareDatabase`.)
            if !syncing { try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") } }
            try Schema.prepare(pool)
            // Indexes a first scan left (it was killed, or left them on purpose) are made by the
            // first query that needs them, not here: opening the library to play a file, look an
            // item up or count a play does not wait for them.
        } catch {
            throw .library(path: path, reason: Self.underlying(error))
        }
    }

    // MARK: Scanning

    /// Scans `folders` (recursively) into the library and reports progress, then a summary, on
    /// the returned stream; the work runs on a coordinator thread and `readerThreads` reader
    /// threads, whether or not the stream is iterated, until it is done or the stream's iteration
    /// is cancelled. See ``ScanSummary`` for what is counted. The stream throws
    /// `TonearmError.library` if the database fails midway (rows written before stay).
    /// - Throws: at once, `TonearmError.fileNotFound` for a folder that does not exist,
    ///   `.invalidArgument` for a path that is not a folder, `.notReadable` for one that cannot
    ///   be listed.
    /// Results are written in transactions of `batchSize` files. `readerThreads` nil:
    /// ``defaultReaderThreads``. A scan started while another of this library runs waits for it to end
    /// before it walks the folders.
    ///
    /// A first scan (of an empty library) fills a bare table and makes the listing indexes and
    /// the full-text index once at its end. With `leavingIndexesForNextUse`, it leaves them
    /// (recorded in the database) to the first query that needs them, in this process or
    /// another: a listing, a search, a playlist, a later scan. Looking an item up by its id or
    /// path, its cover, recording a play, rating and ``statistics()`` read the rows as they are
    /// and leave the indexes waiting. For a process that scans and exits (`tonearm library
    /// scan`): the scan ends sooner (at 10,000 files about a quarter of its instructions), and
    /// playing a file or counting the library afterwards does not make them either.
    public func scan(folders: [String], readerThreads: Int? = nil, batchSize: Int = 500,
                     leavingIndexesForNextUse: Bool = false) throws(TonearmError) -> AsyncThrowingStream<ScanEvent, any Error> {
        try scan(folders: folders, readerThreads: readerThreads, batchSize: batchSize,
                 leavingIndexesForNextUse: leavingIndexesForNextUse, threadStarted: nil)
    }

    /// ``scan(folders:readerThreads:batchSize:leavingIndexesForNextUse:)`` with `threadStarted`
    /// called on each of the scan's threads as it starts, with its name (tests).
    /// With `rereadingAll`, every file is read again, its size and modification time the same
    /// or not (``rescanToEnd(folders:)``).
    func scan(folders: [String], readerThreads: Int? = nil, batchSize: Int = 500, leavingIndexesForNextUse: Bool = false,
              rereadingAll: Bool = false,
              threadStarted: (@Sendable (String) -> Void)?) throws(TonearmError) -> AsyncThrowingStream<ScanEvent, any Error> {
        try Self.checkFolders(folders)
        let (stream, continuation) = AsyncThrowingStream<ScanEvent, any Error>.makeStream()
        // The database records what was left (`deferredSchema`): nothing to remember here.
        let leave: (@Sendable () -> Void)? = leavingIndexesForNextUse ? { @Sendable in } : nil
        Scanner(pool: pool, databasePath: path, folders: folders,
                readerThreads: readerThreads ?? Self.defaultReaderThreads,
                batchSize: max(1, batchSize), lock: scanLock, leaveIndexes: leave, rereadAll: rereadingAll, threadStarted: threadStarted,
                continuation: continuation).start()
        return stream
    }

    /// Reader threads of a scan: three per active processor, 4 to 8. Reading a file waits on
    /// the disk more than it computes (a cold first scan of 10,000 files here: 1.2 s with 2
    /// readers, 0.9 s with 6 or 8).
    public static var defaultReaderThreads: Int { min(8, max(4, 3 * ProcessInfo.processInfo.activeProcessorCount)) }

    /// Throws unless every one of `folders` is a folder that can be listed (see ``scan(folders:readerThreads:batchSize:leavingIndexesForNextUse:)``).
    static func checkFolders(_ folders: [String]) throws(TonearmError) {
        for folder in folders {
            var st = stat()
            guard stat(folder, &st) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { throw .fileNotFound(path: folder) }
                throw .notReadable(path: folder, reason: String(cString: strerror(errno)))
            }
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .invalidArgument("\(folder): not a folder") }
            guard access(folder, R_OK | X_OK) == 0 else {
                throw .notReadable(path: folder, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Scans `folders` to the end, calling `progress` for each progress event (on the caller's
    /// task), and returns the summary. Throws as ``scan(folders:readerThreads:batchSize:leavingIndexesForNextUse:)`` and its stream.
    @discardableResult
    public func scanToEnd(folders: [String], readerThreads: Int? = nil, batchSize: Int = 500,
                          leavingIndexesForNextUse: Bool = false,
                          progress: (ScanProgress) -> Void = { _ in }) async throws(TonearmError) -> ScanSummary {
        let stream = try scan(folders: folders, readerThreads: readerThreads, batchSize: batchSize,
                              leavingIndexesForNextUse: leavingIndexesForNextUse)
        return try await drain(stream, progress: progress)
    }

    /// Scans `folders` to the end as ``scanToEnd(folders:readerThreads:batchSize:leavingIndexesForNextUse:progress:)``
    /// does, but reads every file again, also those whose size and modification time are the
    /// same (MPD's `rescan`: a tag edited in place, a reader that now reads more): each is
    /// `updated` in the summary. Items keep their persistentIDs.
    @discardableResult
    public func rescanToEnd(folders: [String]) async throws(TonearmError) -> ScanSummary {
        try await drain(try scan(folders: folders, rereadingAll: true, threadStarted: nil), progress: { _ in })
    }

    func drain(_ stream: AsyncThrowingStream<ScanEvent, any Error>,
                       progress: (ScanProgress) -> Void) async throws(TonearmError) -> ScanSummary {
        do {
            for try await event in stream {
                switch event {
                case .progress(let p): progress(p)
                case .finished(let s): return s
                }
            }
        } catch let e as TonearmError {
            throw e
        } catch {
            throw .library(path: path, reason: Self.underlying(error))
        }
        throw .library(path: path, reason: "the scan ended without a summary")
    }

    // MARK: Items

    /// The item with `persistentID`, or nil.
    public func item(persistentID: UInt64) throws(TonearmError) -> MediaItem? {
        try read(needsIndexes: false) { db in
            try Row.fetchOne(db, sql: "SELECT * FROM item WHERE id = ?", arguments: [Int64(bitPattern: persistentID)])
                .map(MediaItem.init(row:))
        }
    }

    /// The item of the file at `path`, or nil when it is not in the library. A relative path is
    /// taken from the current directory; the path is matched made absolute and standardized (as
    /// a scan records it), then with symbolic links resolved.
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func item(atPath path: String) throws(TonearmError) -> MediaItem? {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var candidates = [absolute]
        let resolved = (absolute as NSString).resolvingSymlinksInPath
        if resolved != absolute { candidates.append(resolved) }
        return try read(needsIndexes: false) { db in
            for candidate in candidates {
                if let row = try Row.fetchOne(db, sql: "SELECT * FROM item WHERE path = ?", arguments: [candidate]) {
                    return MediaItem(row: row)
                }
            }
            return nil
        }
    }

    /// The persistent IDs of the items at `paths` (absolute, as scanned), by path; paths the
    /// library does not hold are left out. Reads only: nothing is scanned.
    public func persistentIDs(forPaths paths: [String]) throws(TonearmError) -> [String: UInt64] {
        guard !paths.isEmpty else { return [:] }
        return try read(needsIndexes: false) { db in
            var found: [String: UInt64] = [:]
            // SQLite takes at most 32,766 parameters per statement: ask in pieces.
            var start = 0
            while start < paths.count {
                let piece = Array(paths[start..<min(paths.count, start + 500)])
                start += piece.count
                let marks = Array(repeating: "?", count: piece.count).joined(separator: ",")
                for row in try Row.fetchAll(db, sql: "SELECT id, path FROM item WHERE path IN (\(marks))",
                                            arguments: StatementArguments(piece)) {
                    let id: Int64 = row["id"], path: String = row["path"]
                    found[path] = UInt64(bitPattern: id)
                }
            }
            return found
        }
    }

    /// The cover art of `item`, or nil when it has none.
    public func artwork(for item: MediaItem) throws(TonearmError) -> Artwork? {
        guard let id = item.artworkID else { return nil }
        return try read(needsIndexes: false) { db in
            try Row.fetchOne(db, sql: "SELECT mimeType, data FROM artwork WHERE hash = ?", arguments: [Int64(bitPattern: id)])
                .map { Artwork(data: [UInt8]($0["data"] as Data), mimeType: $0["mimeType"]) }
        }
    }

    // MARK: Play counts and ratings

    /// What ``recordPlay(of:playedSeconds:at:)`` counted.
    public enum PlayRecord: Sendable, Hashable {
        case played
        case skipped
        /// Too short for a play, and left by stopping rather than skipping: nothing counted.
        case notCounted
    }

    /// Records that the item was played for `playedSeconds`: a play (play count + 1, last played
    /// date = `date`) when that is at least half its duration or 4 minutes, whichever is less;
    /// otherwise a skip (skip count + 1) when `skipped` (the listener went to another item),
    /// nothing when not (playback stopped or the program ended). Called by a player when it
    /// leaves an item (``LibraryPlayRecorder`` in the Tonearm module does it for a MusicPlayer).
    /// - Throws: `TonearmError.invalidArgument` for an unknown item or a negative time.
    @discardableResult
    public func recordPlay(of persistentID: UInt64, playedSeconds: Double, at date: Date = Date(),
                           skipped: Bool = true) throws(TonearmError) -> PlayRecord {
        guard playedSeconds >= 0, playedSeconds.isFinite else {
            throw .invalidArgument("playedSeconds must be 0 or more, not \(playedSeconds)")
        }
        let id = Int64(bitPattern: persistentID)
        let result: PlayRecord? = try write(needsIndexes: false) { db in
            guard let duration = try Double.fetchOne(db, sql: "SELECT duration FROM item WHERE id = ?", arguments: [id]) else {
                return nil
            }
            if playedSeconds >= min(duration / 2, 240) {
                try db.execute(sql: "UPDATE item SET playCount = playCount + 1, lastPlayedDate = ? WHERE id = ?",
                               arguments: [date.timeIntervalSince1970, id])
                return .played
            }
            guard skipped else { return .notCounted }
            try db.execute(sql: "UPDATE item SET skipCount = skipCount + 1 WHERE id = ?", arguments: [id])
            return .skipped
        }
        guard let result else { throw .invalidArgument("no item with persistentID \(persistentID) in \(path)") }
        return result
    }

    /// Sets the item's rating, 0 (none) to 5.
    /// - Throws: `TonearmError.invalidArgument` for a rating out of range or an unknown item.
    public func setRating(_ rating: Int, of persistentID: UInt64) throws(TonearmError) {
        guard (0...5).contains(rating) else { throw .invalidArgument("a rating is 0 to 5, not \(rating)") }
        let changed = try write(needsIndexes: false) { db in
            try db.execute(sql: "UPDATE item SET rating = ? WHERE id = ?", arguments: [rating, Int64(bitPattern: persistentID)])
            return db.changesCount
        }
        if changed == 0 { throw .invalidArgument("no item with persistentID \(persistentID) in \(path)") }
    }

    /// Sets the rating, 0 (none) to 5, of every item in `persistentIDs`: all of them or, when one
    /// is not in the library, none.
    /// - Throws: `TonearmError.invalidArgument` for a rating out of range or naming the first
    ///   unknown item; `.library` when the database cannot be written.
    public func setRating(_ rating: Int, of persistentIDs: [UInt64]) throws(TonearmError) {
        guard (0...5).contains(rating) else { throw .invalidArgument("a rating is 0 to 5, not \(rating)") }
        try write(needsIndexes: false) { db in
            for pid in persistentIDs {
                try db.execute(sql: "UPDATE item SET rating = ? WHERE id = ?", arguments: [rating, Int64(bitPattern: pid)])
                if db.changesCount == 0 { throw TonearmError.invalidArgument("no item with persistentID \(pid) in \(self.path)") }
            }
        }
    }

    // MARK: Statistics

    /// Counts over the whole library.
    public struct Statistics: Sendable, Hashable, Codable {
        public var items = 0
        public var songs = 0
        public var podcasts = 0
        public var audiobooks = 0
        public var albums = 0
        public var artists = 0
        public var genres = 0
        public var artworks = 0
        /// Seconds of audio.
        public var totalDuration: Double = 0
        /// Bytes of files.
        public var totalSize: Int64 = 0
    }

    /// Counts of items by type, albums, artists, genres and covers; total duration and size.
    /// Counts the rows as they are: indexes a first scan left stay left (every count reads
    /// the whole table either way).
    public func statistics() throws(TonearmError) -> Statistics {
        try read(needsIndexes: false) { db in
            var s = Statistics()
            let row = try Row.fetchOne(db, sql: """
                SELECT count(*) AS n, total(duration) AS d, total(size) AS z,
                       sum(mediaType = 'music') AS m, sum(mediaType = 'podcast') AS p, sum(mediaType = 'audiobook') AS a
                FROM item
                """)!
            s.items = row["n"]
            s.totalDuration = row["d"]
            s.totalSize = Int64((row["z"] as Double).rounded())
            s.songs = row["m"] ?? 0
            s.podcasts = row["p"] ?? 0
            s.audiobooks = row["a"] ?? 0
            s.albums = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM (SELECT DISTINCT albumKey, \(MediaQuery.albumIdentity) FROM item
                WHERE albumKey != '' AND mediaType = 'music')
                """) ?? 0
            s.artists = try Int.fetchOne(db, sql: "SELECT count(DISTINCT artistKey) FROM item WHERE artistKey != '' AND mediaType = 'music'") ?? 0
            s.genres = try Int.fetchOne(db, sql: "SELECT count(DISTINCT genreKey) FROM item WHERE genreKey != ''") ?? 0
            s.artworks = try Int.fetchOne(db, sql: "SELECT count(*) FROM artwork") ?? 0
            return s
        }
    }

    // MARK: Database access

    /// Runs `body` in a read transaction. A `TonearmError` thrown by `body` passes through as it
    /// is; any other error becomes `.library`. `needsIndexes`: the indexes a first scan left
    /// are made first (found in the database, so also those another process's scan left);
    /// false for reads by id or path, which the table's own keys serve.
    func read<T>(needsIndexes: Bool = true, _ body: (Database) throws -> T) throws(TonearmError) -> T {
        do {
            guard needsIndexes else { return try pool.read(body) }
            // One transaction when nothing is left (the check is one row of an empty table).
            let outcome = try pool.read { db -> IndexedRead<T> in
                try Schema.hasDeferredSchema(db) ? .indexesLeft : .value(try body(db))
            }
            if case .value(let value) = outcome { return value }
            try makeLeftIndexes()
            return try pool.read(body)
        } catch let e as TonearmError { throw e } catch {
            throw .library(path: path, reason: Self.underlying(error))
        }
    }

    private enum IndexedRead<T> {
        case value(T)
        case indexesLeft
    }

    /// Runs `body` in a write transaction (rolled back if it throws). A `TonearmError` thrown by
    /// `body` passes through as it is; any other error becomes `.library`. `needsIndexes`: as
    /// for ``read(needsIndexes:_:)``.
    func write<T>(needsIndexes: Bool = true, _ body: (Database) throws -> T) throws(TonearmError) -> T {
        do {
            guard needsIndexes else { return try pool.write(body) }
            if try pool.read(Schema.hasDeferredSchema) { try makeLeftIndexes() }
            return try pool.write(body)
        } catch let e as TonearmError { throw e } catch {
            throw .library(path: path, reason: Self.underlying(error))
        }
    }

    /// Makes the indexes a first scan left, if they are still left (one thread of this
    /// library at a time; another process's is kept out by SQLite's write lock).
    /// While this library scans, its scan decides: a first scan makes them at its end (or
    /// leaves them), and until then reads see the bare table, as they did before it ended.
    /// (A thread that comes while another makes them waits for it, then finds nothing left.)
    private func makeLeftIndexes() throws {
        try indexBuild.withLock { _ in
            guard scanLock.try() else { return }
            defer { scanLock.unlock() }
            try pool.write(Schema.restoreDeferredSchema)
        }
    }

    /// Creates `folder` and its parents (`mkdir -p`); nil on success, else the system's reason.
    private static func makeFolders(_ folder: String) -> String? {
        var prefix = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { return String(cString: strerror(errno)) }
        }
        return nil
    }

    static func underlying(_ error: any Error) -> String {
        if let e = error as? DatabaseError { return e.message ?? e.description }
        if let e = error as? CocoaError, let u = e.userInfo[NSUnderlyingErrorKey] as? NSError {
            return u.localizedDescription
        }
        return (error as NSError).localizedDescription
    }
}
