// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import GRDB
import TonearmCore

extension MediaLibrary {
    /// When there is no database at `path` (``defaultPath`` when nil): scans `folders` into a new
    /// one and returns the summary; nil, having done nothing, when a file is already there (scan
    /// it with ``scanToEnd(folders:readerThreads:batchSize:leavingIndexesForNextUse:progress:)``).
    ///
    /// The database is built in a temporary file beside `path` (`PATH.new-PID`) with
    /// `synchronous = OFF`, written to the disk once at the end (one `fdatasync`) and only then
    /// given its name: a scan interrupted at any point — an error, a cancelled task, a killed
    /// process, a power cut — leaves no database at `path`, never a partial or corrupt one. A
    /// scan into the file in place waited for the disk 8 times (6 while creating the
    /// database, 2 at its last checkpoint), 70–120 ms at 2,000 files on this machine's disk,
    /// about as long as the scan's own CPU. Temporary files left by a killed process are removed
    /// by the next call for the same path (those whose process has ended).
    ///
    /// The database is the one ``scanToEnd(folders:readerThreads:batchSize:leavingIndexesForNextUse:progress:)``
    /// makes with `leavingIndexesForNextUse` (its listing and full-text indexes are made by the
    /// first query that needs them).
    /// - Throws: as ``init(path:)`` and ``scanToEnd(folders:readerThreads:batchSize:leavingIndexesForNextUse:progress:)``
    ///   (nothing is left at `path` then); `TonearmError.library` when the file cannot be synced
    ///   or named.
    public static func scanIntoNewDatabase(path: String? = nil, folders: [String], readerThreads: Int? = nil, batchSize: Int = 500,
                                           progress: (ScanProgress) -> Void = { _ in }) async throws(TonearmError) -> ScanSummary? {
        try await scanIntoNewDatabase(path: path, folders: folders, readerThreads: readerThreads, batchSize: batchSize,
                                      threadStarted: nil, progress: progress)
    }

    /// ``scanIntoNewDatabase(path:folders:readerThreads:batchSize:progress:)`` with the scan's
    /// `threadStarted` hook (tests).
    static func scanIntoNewDatabase(path: String?, folders: [String], readerThreads: Int?, batchSize: Int,
                                    threadStarted: (@Sendable (String) -> Void)?,
                                    progress: (ScanProgress) -> Void) async throws(TonearmError) -> ScanSummary? {
        let path = path ?? defaultPath
        var st = stat()
        guard lstat(path, &st) != 0 && errno == ENOENT else { return nil }
        try checkFolders(folders)
        removeStaleTemporaryFiles(of: path)
        let temporary = temporaryPath(of: path, pid: getpid())
        removeDatabaseFiles(temporary)
        /// The error with the database's own path for the temporary one's.
        func named(_ error: TonearmError) -> TonearmError {
            if case .library(let at, let reason) = error, at == temporary { return .library(path: path, reason: reason) }
            return error
        }
        var library: MediaLibrary?
        defer {
            if library != nil { try? library?.pool.close() }
            removeDatabaseFiles(temporary)
        }
        let summary: ScanSummary
        do {
            library = try MediaLibrary(path: temporary, syncing: false)
            summary = try await library!.drain(
                try library!.scan(folders: folders, readerThreads: readerThreads, batchSize: batchSize,
                                  leavingIndexesForNextUse: true, threadStarted: threadStarted),
                progress: progress)
        } catch {
            throw named(error)
        }
        do {
            try closeDatabase(library!.pool)
            library = nil
        } catch {
            throw .library(path: path, reason: underlying(error))
        }
        if let failure = syncFile(temporary) { throw .library(path: path, reason: "cannot write \(temporary) to the disk (\(failure))") }
        // Named only if still free: a library made at `path` meanwhile (another process) is not
        // replaced; the caller then scans into it.
        if link(temporary, path) != 0 {
            if errno == EEXIST { return nil }
            // (A file system without hard links: renamed, after checking the name is free.)
            guard lstat(path, &st) != 0 && errno == ENOENT else { return nil }
            if rename(temporary, path) != 0 {
                throw .library(path: path, reason: "cannot name the new database (\(String(cString: strerror(errno))))")
            }
        }
        return summary
    }

    /// Copies the log into the database file and empties it, then closes every connection
    /// (which removes the log).
    private static func closeDatabase(_ pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try pool.close()
    }

    /// `PATH.new-PID`: where the process `pid` builds a new database for `path`.
    static func temporaryPath(of path: String, pid: pid_t) -> String { "\(path).new-\(pid)" }

    /// Removes the database file `path` and its log and shared-memory files.
    private static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    /// Removes the temporary databases of `path` (and their logs) whose process has ended: a
    /// scan killed while building a new database leaves one.
    private static func removeStaleTemporaryFiles(of path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".new-"
        guard let dir = opendir(folder.isEmpty ? "." : folder) else { return }
        defer { closedir(dir) }
        var stale: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix) else { continue }
            let digits = name.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
            guard let pid = pid_t(digits), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { stale.append(name) }
        }
        for name in stale { unlink(folder.isEmpty ? name : folder + "/" + name) }
    }

    /// `fdatasync` of the file at `path`; nil on success, else the system's reason.
    private static func syncFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { Glibc.close(fd) }
        return fdatasync(fd) == 0 ? nil : String(cString: strerror(errno))
    }
}
