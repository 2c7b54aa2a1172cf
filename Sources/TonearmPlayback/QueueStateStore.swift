// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
#if canImport(Glibc)
import Glibc
#endif

/// A queue as saved between runs: the items, the play order (with repeat, shuffle and the
/// shuffle's random state), the position in the current item, and the volume.
public struct SavedQueue: Sendable, Codable, Equatable {
    public var items: [QueueItem]
    public var order: PlayOrder
    /// Seconds into the current item.
    public var position: Double
    public var volume: Float
    public var savedAt: Date

    public init(items: [QueueItem], order: PlayOrder, position: Double, volume: Float, savedAt: Date = Date()) {
        self.items = items
        self.order = order
        self.position = position
        self.volume = volume
        self.savedAt = savedAt
    }
}

/// Where a ``MusicPlayer`` keeps its queue between runs: one JSON file, by default
/// `$XDG_STATE_HOME/tonearm/queue.json` (`~/.local/state/tonearm/queue.json`).
///
/// Every save writes the new state into an unnamed file in the same folder (`O_TMPFILE`), gives
/// it a temporary name (`.queue.json.PID.tmp`) only once it is complete, and renames it into
/// place at once: a process killed at any moment leaves either the previous state or the new
/// one, never half a file, and at most for the instant between those two calls a temporary
/// file. Temporaries that a killed process left (their PID no longer runs) are removed by the
/// next save. ``close()`` waits for a save under way and ends saving, so that a process that
/// exits right after it leaves nothing behind.
///
/// Threading: `save`, `load` and `close` may be called from any thread; saves are serialised.
public final class QueueStateStore: Sendable {
    public let path: String
    /// Whether ``close()`` was called; guards the saves.
    private let closed = Mutex(false)
    /// Whether the folder has been made and old temporaries removed (false again after a
    /// failed save). Only used under `closed`'s lock.
    private let prepared = Mutex(false)

    public init(path: String) { self.path = path }

    /// The default location under the XDG state directory.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base: String
        if let s = environment["XDG_STATE_HOME"], s.hasPrefix("/") {
            base = s
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        }
        return base + "/tonearm/queue.json"
    }

    /// Writes `queue` atomically; after ``close()`` it does nothing.
    /// - Throws: ``TonearmError/writeFailed(path:reason:)`` when the directory cannot be made or
    ///   the file cannot be written (the previous state is then left as it was).
    public func save(_ queue: SavedQueue) throws(TonearmError) {
        let data: Data
        do { data = try JSONEncoder().encode(queue) } catch {
            throw .writeFailed(path: path, reason: "cannot encode the queue: \(error)")
        }
        try closed.withLock { isClosed throws(TonearmError) in
            if isClosed { return }
            try write(data)
        }
    }

    /// Waits for a save under way, then ends saving: later saves do nothing. Call it before the
    /// process exits while other threads may still save. Idempotent.
    public func close() {
        closed.withLock { $0 = true }
    }

    /// The name of this process's temporary file.
    private var temporaryPath: String {
        ((path as NSString).deletingLastPathComponent as NSString)
            .appendingPathComponent(".\((path as NSString).lastPathComponent).\(getpid()).tmp")
    }

    /// Writes `data` to ``path`` by way of an unnamed file (a named temporary when the file
    /// system has no unnamed files). Called with the save lock held.
    private func write(_ data: Data) throws(TonearmError) {
        let dir = (path as NSString).deletingLastPathComponent
        let temp = temporaryPath
        // The folder is made, and temporaries that dead processes left there are removed, at
        // the first save (and again when a save fails), not at every save.
        let wasPrepared = prepared.withLock { $0 }
        if !wasPrepared { try prepare(dir) }
        do { try writeFile(data, dir: dir, temp: temp) } catch {
            guard wasPrepared else { throw error }
            // The folder may have gone since it was made: make it again and try once more.
            try prepare(dir)
            try writeFile(data, dir: dir, temp: temp)
        }
    }

    /// Makes the folder and removes the temporaries that dead processes left in it.
    private func prepare(_ dir: String) throws(TonearmError) {
        prepared.withLock { $0 = false }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            throw .writeFailed(path: path, reason: "cannot make the folder \(dir): \(error.localizedDescription)")
        }
        removeAbandonedTemporaries(in: dir)
        prepared.withLock { $0 = true }
    }

    /// Writes `data` to `temp` in `dir` and renames it to ``path``.
    private func writeFile(_ data: Data, dir: String, temp: String) throws(TonearmError) {
        // O_TMPFILE (Linux): a file with no name until linkat gives it one.
        let fd = open(dir, Self.oTmpFile | O_WRONLY | O_CLOEXEC, 0o644)
        if fd >= 0 {
            defer { Glibc.close(fd) }
            try writeAll(data, to: fd)
            guard linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, temp, AT_SYMLINK_FOLLOW) == 0 else {
                throw .writeFailed(path: path, reason: "cannot name the new state \(temp): \(String(cString: strerror(errno)))")
            }
        } else {
            let named = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard named >= 0 else {
                throw .writeFailed(path: path, reason: "cannot create \(temp): \(String(cString: strerror(errno)))")
            }
            defer { Glibc.close(named) }
            do { try writeAll(data, to: named) } catch {
                unlink(temp)
                throw error
            }
        }
        guard rename(temp, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temp)
            throw .writeFailed(path: path, reason: reason)
        }
    }

    private func writeAll(_ data: Data, to fd: Int32) throws(TonearmError) {
        var failure: Int32 = 0
        data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { failure = errno; return }
                done += n
            }
        }
        if failure != 0 { throw .writeFailed(path: path, reason: String(cString: strerror(failure))) }
    }

    /// Removes the temporaries (`.queue.json.PID.tmp`) of processes that no longer run.
    private func removeAbandonedTemporaries(in dir: String) {
        let prefix = "." + (path as NSString).lastPathComponent + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            guard let pid = pid_t(name.dropFirst(prefix.count).dropLast(4)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink((dir as NSString).appendingPathComponent(name)) }
        }
    }

    /// `O_TMPFILE` as Linux defines it (`__O_TMPFILE | O_DIRECTORY`; the macro is not imported).
    private static let oTmpFile: Int32 = 0o20000000 | O_DIRECTORY

    /// The saved queue, or nil when there is none.
    /// - Throws: ``TonearmError/notReadable(path:reason:)`` when the file exists but is not a
    ///   saved queue.
    public func load() throws(TonearmError) -> SavedQueue? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let q = try JSONDecoder().decode(SavedQueue.self, from: data)
            guard q.order.count == q.items.count else {
                throw TonearmError.notReadable(path: path, reason: "the play order does not match the items")
            }
            return q
        } catch let e as TonearmError {
            throw e
        } catch {
            throw .notReadable(path: path, reason: "not a saved queue (\(error.localizedDescription))")
        }
    }
}

/// Writes `data` to `path` through a temporary file beside it renamed into place (making the
/// folder first), so that a process killed at any moment leaves the old file or the new one.
/// - Throws: ``TonearmError/writeFailed(path:reason:)``; the old file is then left as it was.
func writeAtomically(_ data: Data, to path: String) throws(TonearmError) {
    let dir = (path as NSString).deletingLastPathComponent
    let temp = dir + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
    do {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: temp))
    } catch {
        try? FileManager.default.removeItem(atPath: temp)
        throw .writeFailed(path: path, reason: "\(error.localizedDescription)")
    }
    guard rename(temp, path) == 0 else {
        let reason = String(cString: strerror(errno))
        try? FileManager.default.removeItem(atPath: temp)
        throw .writeFailed(path: path, reason: reason)
    }
}
