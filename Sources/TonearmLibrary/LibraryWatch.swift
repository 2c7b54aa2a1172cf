// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import TonearmCore

/// What one applied batch of a watch did to the library (``MediaLibrary/watch(folders:debounce:initialScan:)``):
/// the paths added, updated, moved and removed, and the files skipped with the reason. Paths are
/// sorted.
public struct LibraryChange: Sendable, Hashable {
    /// Why the library was scanned.
    public enum Cause: Sendable, Hashable {
        /// The full scan made when watching starts.
        case initialScan
        /// Files made, written, moved or deleted in the watched folders: those paths only.
        case changes
        /// The system's queue of events overflowed, so some were lost: a full scan.
        case rescan
    }

    /// A file found at a new path with the content of a row whose file was gone: the item
    /// follows it (same persistentID, play count, rating).
    public struct Move: Sendable, Hashable {
        public var from: String
        public var to: String

        public init(from: String, to: String) {
            self.from = from
            self.to = to
        }
    }

    public var cause: Cause
    /// New files, now items.
    public var added: [String] = []
    /// Files read again: their size or modification time changed (same persistentID).
    public var updated: [String] = []
    public var moved: [Move] = []
    /// Items whose files are gone, deleted.
    public var removed: [String] = []
    /// Files looked at that are not playable media, with the reason.
    public var skipped: [SkippedFile] = []
    /// The scan's own counts (with the unchanged files and the files read).
    public var summary: ScanSummary

    public init(cause: Cause, summary: ScanSummary) {
        self.cause = cause
        self.summary = summary
    }

    /// Whether the batch changed nothing and skipped nothing.
    public var isEmpty: Bool { added.isEmpty && updated.isEmpty && moved.isEmpty && removed.isEmpty && skipped.isEmpty }
}

/// A batch of a watch as it is applied (``MediaLibrary/watch(folders:debounce:initialScan:batches:)``).
public enum LibraryWatchBatch: Sendable, Hashable {
    /// A batch is about to be scanned (the library is not changed yet).
    case applying(LibraryChange.Cause)
    /// The batch was applied: what it did (possibly nothing).
    case applied(LibraryChange)
}

extension MediaLibrary {
    /// Keeps the library up to date with `folders` (recursively) as files are added, written,
    /// moved, renamed and deleted, through the kernel's inotify, until the returned stream's
    /// iteration ends (a `break` that drops the stream, or the task cancelled): then the
    /// watching thread stops and its descriptors are closed.
    ///
    /// With `initialScan`, the folders are first scanned in full (the first element, cause
    /// `.initialScan`), so that the library matches them when watching starts; changes made
    /// meanwhile are not missed, as the folders are watched before. Then events are gathered
    /// until `debounce` passes without one (but no longer than ten times that, or a second,
    /// during a long burst) and applied together with the scanner's logic, restricted to the
    /// paths concerned: a file renamed or moved within the folders keeps its item
    /// (persistentID, play count, rating); rows outside the paths are left alone. Each batch
    /// that changed or skipped something is one ``LibraryChange``.
    ///
    /// A file is read once it is closed after writing (`IN_CLOSE_WRITE`), never while the
    /// events say it is being written (`IN_MODIFY` only marks it so). A folder that appears is
    /// watched at once and the files already in it are read too (one that was still being
    /// written, with no write after its folder was watched, is read again once closed). When
    /// the system drops events (its queue overflowed), the folders are scanned in full (cause
    /// `.rescan`). Hidden files and folders are ignored, as by
    /// ``scan(folders:readerThreads:batchSize:leavingIndexesForNextUse:)``; symbolic links to folders are not followed.
    ///
    /// The stream throws `TonearmError.watchFailed(path:failure:)` when a watched folder is
    /// deleted or moved away (after applying what came before; the items of a folder moved
    /// away stay, so that a scan of its new place keeps them) or when a new folder cannot be
    /// watched (the limit of watches), and `.library` when the database fails.
    /// - Throws: at once, as ``scan(folders:readerThreads:batchSize:leavingIndexesForNextUse:)`` for the folders,
    ///   `.invalidArgument` for a negative `debounce` or no folder, and `.watchFailed` with
    ///   ``WatchFailure/watchLimit(limit:)`` when the folders have more subfolders than the
    ///   system lets a user watch (`fs.inotify.max_user_watches`) or
    ///   ``WatchFailure/instanceLimit(limit:)``.
    public func watch(folders: [String], debounce: Duration = .milliseconds(300),
                      initialScan: Bool = true) throws(TonearmError) -> AsyncThrowingStream<LibraryChange, any Error> {
        try startWatching(folders: folders, debounce: debounce, initialScan: initialScan).stream
    }

    /// ``watch(folders:debounce:initialScan:)``, and `batches` told of every batch on the
    /// watch's task: before it is applied (`.applying`) and after (`.applied`, also when it
    /// changed nothing) — an MPD server shows the batch as an update job while it runs.
    public func watch(folders: [String], debounce: Duration = .milliseconds(300), initialScan: Bool = true,
                      batches: @escaping @Sendable (LibraryWatchBatch) -> Void) throws(TonearmError) -> AsyncThrowingStream<LibraryChange, any Error> {
        try startWatching(folders: folders, debounce: debounce, initialScan: initialScan, batches: batches).stream
    }

    /// ``watch(folders:debounce:initialScan:)``, with its watcher (for tests) and, for tests, a
    /// limit of watches smaller than the system's.
    func startWatching(folders: [String], debounce: Duration, initialScan: Bool, maxWatches: Int? = nil,
                       batches: (@Sendable (LibraryWatchBatch) -> Void)? = nil) throws(TonearmError)
        -> (stream: AsyncThrowingStream<LibraryChange, any Error>, watcher: FolderWatcher) {
        guard debounce >= .zero else { throw .invalidArgument("debounce must be 0 or more, not \(debounce)") }
        guard !folders.isEmpty else { throw .invalidArgument("no folder to watch") }
        try Self.checkFolders(folders)
        var roots: [String] = []
        for f in folders {
            let root = URL(fileURLWithPath: f).standardizedFileURL.path
            if !roots.contains(root) { roots.append(root) }
        }
        let watcher = try FolderWatcher(roots: roots, debounce: debounce, maxWatches: maxWatches)
        let (stream, continuation) = AsyncThrowingStream<LibraryChange, any Error>.makeStream()
        let task = Task {
            do {
                /// A batch applied, with `batches` told before and after.
                func applying(_ scope: Set<String>?, cause: LibraryChange.Cause) async throws -> LibraryChange {
                    batches?(.applying(cause))
                    let change = try await apply(scope, roots: roots, cause: cause)
                    batches?(.applied(change))
                    return change
                }
                if initialScan { continuation.yield(try await applying(nil, cause: .initialScan)) }
                for await signal in watcher.signals {
                    if case .failed(let error) = signal { throw error }
                    guard let batch = watcher.take() else { continue }
                    if batch.fullRescan || !batch.paths.isEmpty {
                        let change = try await applying(batch.fullRescan ? nil : batch.paths, cause: batch.fullRescan ? .rescan : .changes)
                        if batch.fullRescan || !change.isEmpty { continuation.yield(change) }
                    }
                    if let root = batch.rootsGone.first { throw TonearmError.watchFailed(path: root, failure: .folderGone) }
                }
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in
            task.cancel()
            watcher.stop()
        }
        return (stream, watcher)
    }

    /// Scans `scope` (all of `roots` when nil) and says what changed, from the rows before and
    /// after. Throws `CancellationError` when the task is cancelled midway.
    private func apply(_ scope: Set<String>?, roots: [String], cause: LibraryChange.Cause) async throws -> LibraryChange {
        let before = try rowStates(scope)
        let (events, sink) = AsyncThrowingStream<ScanEvent, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        Scanner(pool: pool, databasePath: path, folders: roots, changed: scope, readerThreads: 2, batchSize: 200,
                lock: scanLock, continuation: sink).start()
        var summary: ScanSummary?
        for try await event in events {
            if case .finished(let s) = event { summary = s }
        }
        guard let summary else { throw CancellationError() }
        let after = try rowStates(scope)
        var change = LibraryChange(cause: cause, summary: summary)
        for (id, a) in after {
            if let b = before[id] {
                if b.path != a.path {
                    change.moved.append(.init(from: b.path, to: a.path))
                } else if b.size != a.size || b.mtime != a.mtime || b.hash != a.hash {
                    change.updated.append(a.path)
                }
            } else {
                change.added.append(a.path)
            }
        }
        change.removed = before.filter { after[$0.key] == nil }.map(\.value.path)
        change.added.sort()
        change.updated.sort()
        change.moved.sort { $0.to < $1.to }
        change.removed.sort()
        change.skipped = summary.skipped
        return change
    }

    private struct RowState {
        var path: String
        var size: Int64
        var mtime: Int64
        var hash: Int64
    }

    /// The rows at or under `scope` (all when nil), by id.
    private func rowStates(_ scope: Set<String>?) throws(TonearmError) -> [Int64: RowState] {
        try read { db in
            var rows: [Int64: RowState] = [:]
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, path, size, mtime, contentHash FROM item")
            while let row = try cursor.next() {
                let path: String = row["path"]
                guard scope?.covers(path) ?? true else { continue }
                rows[row["id"]] = RowState(path: path, size: row["size"], mtime: row["mtime"], hash: row["contentHash"])
            }
            return rows
        }
    }
}
