// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import GRDB
import TonearmCore

/// One scan of some folders into the database: walks them, compares with the rows, reads what
/// is new or changed on `readerCount` reader threads, and writes the results in transactions
/// of `batchSize` rows from its own coordinator thread, which holds `lock` for the whole scan.
/// Removals come in a last transaction.
///
/// Every transaction leaves the database consistent: a scan killed at any point loses at most
/// the batch in progress, and the next scan finds those files new (or changed) and completes it.
/// Moves: a file new at its path whose content hash is that of a row whose file is gone takes
/// that row (its persistentID, play count, rating) instead of a new one.
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

    init(pool: DatabasePool, databasePath: String, folders: [String], changed: Set<String>? = nil, readerThreads: Int,
         batchSize: Int, lock: NSLock, continuation: AsyncThrowingStream<ScanEvent, any Error>.Continuation) {
        self.pool = pool
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

    /// A row as the scan needs it.
    private struct Known {
        var id: Int64
        var path: String
        var size: Int64
        var mtime: Int64
        var hash: UInt64
    }

    private func run() throws -> ScanSummary {
        var summary = ScanSummary()
        let found = changed.map { walk(changed: $0) } ?? walk(folders)
        let known = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, path, size, mtime, contentHash FROM item").map {
                Known(id: $0["id"], path: $0["path"], size: $0["size"], mtime: $0["mtime"],
                      hash: UInt64(bitPattern: $0["contentHash"]))
            }
        }.filter { changed?.covers($0.path) ?? true }
        let byPath = Dictionary(known.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        let foundPaths = Set(found.map(\.path))
        // Rows whose file is gone: candidates for moves, removed at the end when unclaimed.
        var missing = known.filter { !foundPaths.contains($0.path) && !Self.exists($0.path) }
        let movedHashes = Set(missing.map(\.hash))

        var work: [(FoundFile, existing: Int64?)] = []
        for f in found {
            if let k = byPath[f.path] {
                if k.size == f.size && k.mtime == f.mtime { summary.unchanged += 1 } else { work.append((f, k.id)) }
            } else {
                work.append((f, nil))
            }
        }
        var done = summary.unchanged
        continuation.yield(.progress(ScanProgress(filesDone: done, filesTotal: found.count, currentFile: nil)))

        let results = BlockingQueue<(Int, ReadOutcome)>()
        let next = Counter()
        let jobs = work
        for _ in 0..<min(readerCount, max(1, work.count)) {
            let reader = Thread { [cancelled] in
                while !cancelled.isSet, let i = next.take(below: jobs.count) {
                    let (file, existing) = jobs[i]
                    results.push((i, FileReader.read(file, mayBeMove: existing == nil, movedHashes: movedHashes)))
                }
                results.push((-1, .skipped(SkippedFile(path: "", reason: ""))))  // this reader is done
            }
            reader.name = "tonearm-scan-reader"
            reader.start()
        }

        var batch: [Write] = []
        var readersLeft = min(readerCount, max(1, work.count))
        while readersLeft > 0 {
            let (i, outcome) = results.pop()
            if i < 0 { readersLeft -= 1; continue }
            if cancelled.isSet { continue }
            let existing = work[i].existing
            switch outcome {
            case .skipped(let s):
                summary.skipped.append(s)
            case .read(let file, let hash, let fields):
                summary.filesRead += 1
                if let existing {
                    batch.append(.update(id: existing, file, hash: hash, fields))
                    summary.updated += 1
                } else if let m = missing.firstIndex(where: { $0.hash == hash }) {
                    batch.append(.update(id: missing.remove(at: m).id, file, hash: hash, fields))
                    summary.moved += 1
                } else {
                    batch.append(.insert(file, hash: hash, fields))
                    summary.added += 1
                }
            case .hashed(let file, let hash):
                if let m = missing.firstIndex(where: { $0.hash == hash }) {
                    batch.append(.move(id: missing.remove(at: m).id, file))
                    summary.moved += 1
                } else {
                    // Another file took that row (a copy of a moved file): read this one as new.
                    switch FileReader.fields(file) {
                    case .success(let fields):
                        summary.filesRead += 1
                        batch.append(.insert(file, hash: hash, fields))
                        summary.added += 1
                    case .failure(let why):
                        summary.skipped.append(SkippedFile(path: file.path, reason: why.text))
                    }
                }
            }
            done += 1
            continuation.yield(.progress(ScanProgress(filesDone: done, filesTotal: found.count, currentFile: work[i].0.path)))
            if batch.count >= batchSize {
                try flush(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if cancelled.isSet { throw CancellationError() }
        try flush(batch)
        let gone = missing.map(\.id)
        try pool.write { db in
            for id in gone { try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id]) }
            try db.execute(sql: "DELETE FROM artwork WHERE hash NOT IN (SELECT artworkHash FROM item WHERE artworkHash IS NOT NULL)")
        }
        summary.removed = gone.count
        summary.skipped.sort { $0.path < $1.path }
        return summary
    }

    // MARK: Walking

    /// Every regular file under the folders (symbolic links followed, hidden entries skipped),
    /// sorted by path, each once.
    private func walk(_ folders: [String]) -> [FoundFile] {
        var files: [String: FoundFile] = [:]
        for folder in folders {
            let root = URL(fileURLWithPath: folder).standardizedFileURL
            guard let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil,
                                                         options: [.skipsHiddenFiles]) else { continue }
            for case let url as URL in e {
                let path = url.standardizedFileURL.path
                var st = stat()
                guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
                files[path] = FoundFile(path: path, size: Int64(st.st_size), mtime: mtime)
            }
        }
        return files.values.sorted { $0.path < $1.path }
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
        case move(id: Int64, FoundFile)
    }

    /// Writes a batch in one transaction.
    private func flush(_ batch: [Write]) throws {
        guard !batch.isEmpty else { return }
        let now = Date().timeIntervalSince1970
        try pool.write { db in
            for w in batch {
                switch w {
                case .insert(let file, let hash, let fields):
                    let id = try Self.freeID(db, hash: hash, path: file.path)
                    try Self.storeArtwork(db, fields)
                    var args = Self.arguments(file, hash: hash, fields)
                    args["id"] = id
                    args["dateAdded"] = now
                    try db.execute(sql: """
                        INSERT INTO item (id, contentHash, path, size, mtime, \(Self.fieldColumns.joined(separator: ", ")), dateAdded)
                        VALUES (:id, :contentHash, :path, :size, :mtime, \(Self.fieldColumns.map { ":" + $0 }.joined(separator: ", ")), :dateAdded)
                        """, arguments: StatementArguments(args))
                case .update(let id, let file, let hash, let fields):
                    try Self.storeArtwork(db, fields)
                    var args = Self.arguments(file, hash: hash, fields)
                    args["id"] = id
                    let sets = (["contentHash", "path", "size", "mtime"] + Self.fieldColumns).map { "\($0) = :\($0)" }
                    try db.execute(sql: "UPDATE item SET \(sets.joined(separator: ", ")) WHERE id = :id",
                                   arguments: StatementArguments(args))
                case .move(let id, let file):
                    try db.execute(sql: "UPDATE item SET path = ?, size = ?, mtime = ? WHERE id = ?",
                                   arguments: [file.path, file.size, file.mtime, id])
                }
            }
        }
    }

    /// The id for a new row: the content hash, unless a row has it already (a duplicate of a
    /// file still present), then a hash of it with the path, again until free.
    private static func freeID(_ db: Database, hash: UInt64, path: String) throws -> Int64 {
        var candidate = hash
        while try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item WHERE id = ?)",
                                arguments: [Int64(bitPattern: candidate)]) == true {
            var h = FNV1a()
            withUnsafeBytes(of: candidate) { h.add($0) }
            Array(path.utf8).withUnsafeBytes { h.add($0) }
            candidate = h.value
        }
        return Int64(bitPattern: candidate)
    }

    private static func storeArtwork(_ db: Database, _ fields: ItemFields) throws {
        guard let art = fields.artwork, let hash = fields.artworkHash else { return }
        try db.execute(sql: "INSERT OR IGNORE INTO artwork (hash, mimeType, data) VALUES (?, ?, ?)",
                       arguments: [Int64(bitPattern: hash), art.mimeType, Data(art.data)])
    }

    private static let fieldColumns = [
        "title", "artist", "album", "albumArtist", "composer", "genre", "trackNumber", "trackCount",
        "discNumber", "discCount", "year", "releaseDate", "duration", "container", "codec", "sampleRate",
        "channels", "bitsPerSample", "bitRate", "mediaType", "isCompilation", "bpm", "lyrics",
        "trackGain", "trackPeak", "albumGain", "albumPeak", "artworkHash",
        "titleKey", "artistKey", "albumKey", "albumArtistKey", "composerKey", "genreKey",
    ]

    private static func arguments(_ file: FoundFile, hash: UInt64, _ f: ItemFields) -> [String: (any DatabaseValueConvertible)?] {
        [
            "contentHash": Int64(bitPattern: hash), "path": file.path, "size": file.size, "mtime": file.mtime,
            "title": f.title, "artist": f.artist, "album": f.album, "albumArtist": f.albumArtist,
            "composer": f.composer, "genre": f.genre, "trackNumber": f.trackNumber, "trackCount": f.trackCount,
            "discNumber": f.discNumber, "discCount": f.discCount, "year": f.year, "releaseDate": f.releaseDate,
            "duration": f.duration, "container": f.format.container, "codec": f.format.codec,
            "sampleRate": f.format.sampleRate, "channels": f.format.channelCount,
            "bitsPerSample": f.format.bitsPerSample, "bitRate": f.format.bitRate,
            "mediaType": f.mediaType.rawValue, "isCompilation": f.isCompilation, "bpm": f.bpm, "lyrics": f.lyrics,
            "trackGain": f.replayGain.trackGain, "trackPeak": f.replayGain.trackPeak,
            "albumGain": f.replayGain.albumGain, "albumPeak": f.replayGain.albumPeak,
            "artworkHash": f.artworkHash.map { Int64(bitPattern: $0) },
            "titleKey": SearchKey.fold(f.title), "artistKey": SearchKey.fold(f.artist),
            "albumKey": SearchKey.fold(f.album), "albumArtistKey": SearchKey.fold(f.albumArtist ?? f.artist),
            "composerKey": SearchKey.fold(f.composer), "genreKey": SearchKey.fold(f.genre),
        ]
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
    private let lock = NSLock()
    private var next = 0
    func take(below limit: Int) -> Int? {
        lock.withLock {
            guard next < limit else { return nil }
            defer { next += 1 }
            return next
        }
    }
}

/// An unbounded queue: readers push, the coordinator pops (waiting while it is empty).
final class BlockingQueue<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [T] = []
    private var head = 0

    func push(_ item: T) {
        condition.withLock {
            items.append(item)
            condition.signal()
        }
    }

    func pop() -> T {
        condition.withLock {
            while head == items.count { condition.wait() }
            defer {
                head += 1
                if head > 1024 { items.removeFirst(head); head = 0 }
            }
            return items[head]
        }
    }
}
