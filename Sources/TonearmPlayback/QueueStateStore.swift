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
    /// Which save of the queue this is: a ``SavedPlace`` beside it counts only with the same
    /// number (nil in states saved before places were saved apart).
    var generation: UInt64?

    public init(items: [QueueItem], order: PlayOrder, position: Double, volume: Float, savedAt: Date = Date()) {
        self.items = items
        self.order = order
        self.position = position
        self.volume = volume
        self.savedAt = savedAt
    }

    /// Equal when they say the same (whichever save wrote them).
    public static func == (a: SavedQueue, b: SavedQueue) -> Bool {
        a.items == b.items && a.order == b.order && a.position == b.position && a.volume == b.volume && a.savedAt == b.savedAt
    }
}

/// What changes as a queue plays — the place in the play order, the seconds into the item, the
/// volume — saved apart from the queue (a few dozen bytes), for the ``SavedQueue`` of the same
/// generation.
struct SavedPlace: Sendable, Codable, Equatable {
    var generation: UInt64
    /// Index into the play order (``PlayOrder/position``).
    var orderPosition: Int
    var position: Double
    var volume: Float
    var savedAt: Date
}

/// Where a ``MusicPlayer`` keeps its queue between runs: one JSON file, by default
/// `$XDG_STATE_HOME/tonearm/queue.json` (`~/.local/state/tonearm/queue.json`).
///
/// A save writes only what changed since the last one: when the items and the play order (but
/// for its place) are those already saved, only the place — the current item, the seconds into
/// it, the volume — goes to a small file beside it (`queue.json.place`), read back with the
/// queue it belongs to (the same generation; a place of an older queue is ignored). A song
/// change of a 10,000-song queue writes about a hundred bytes, not the queue.
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
    /// What the last save wrote (nil: nothing yet, or it failed): the queue as saved, its place
    /// at position 0, and the place last written. Only used under `closed`'s lock.
    private let written = Mutex<(queue: SavedQueue, place: SavedPlace)?>(nil)
    private let counters = Mutex<(saves: Int, bytes: Int)>((0, 0))

    public init(path: String) { self.path = path }

    /// The file of the place (``SavedPlace``) beside the queue's.
    var placePath: String { path + ".place" }

    /// Files written and their bytes so far (tests).
    var writeCount: (files: Int, bytes: Int) { counters.withLock { ($0.saves, $0.bytes) } }

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
        try closed.withLock { isClosed throws(TonearmError) in
            if isClosed { return }
            var body = queue
            body.order = queue.order.at(position: 0)
            body.position = 0
            body.volume = 0
            body.savedAt = Date(timeIntervalSince1970: 0)
            if let last = written.withLock({ $0 }), last.queue.items == body.items, last.queue.order == body.order {
                // The same queue: its place only, when that changed.
                let place = SavedPlace(generation: last.place.generation, orderPosition: queue.order.position,
                                       position: queue.position, volume: queue.volume, savedAt: queue.savedAt)
                var unchanged = last.place
                unchanged.savedAt = place.savedAt
                if unchanged == place { return }
                // Written when it can be, beside the queue; otherwise (the folder or the queue's
                // file went, say) the whole queue is.
                if access(path, F_OK) == 0, let data = try? JSONEncoder().encode(place), (try? write(data, to: placePath)) != nil {
                    written.withLock { $0?.place = place }
                    return
                }
            }
            // Another queue: all of it, under a new generation (the old place no longer counts).
            var full = queue
            let generation = (written.withLock { $0?.place.generation } ?? UInt64.random(in: 1...UInt64.max / 2)) &+ 1
            full.generation = generation
            let data: Data
            do { data = try JSONEncoder().encode(full) } catch {
                throw .writeFailed(path: path, reason: "cannot encode the queue: \(error)")
            }
            written.withLock { $0 = nil }
            try write(data, to: path)
            body.generation = generation
            let place = SavedPlace(generation: generation, orderPosition: queue.order.position, position: queue.position,
                                   volume: queue.volume, savedAt: queue.savedAt)
            written.withLock { $0 = (body, place) }
        }
    }

    /// Waits for a save under way, then ends saving: later saves do nothing. Call it before the
    /// process exits while other threads may still save. Idempotent.
    public func close() {
        closed.withLock { $0 = true }
    }

    /// The name of this process's temporary file for `target`.
    private func temporaryPath(_ target: String) -> String {
        ((target as NSString).deletingLastPathComponent as NSString)
            .appendingPathComponent(".\((target as NSString).lastPathComponent).\(getpid()).tmp")
    }

    /// Writes `data` to `target` (``path`` or ``placePath``) by way of an unnamed file (a named
    /// temporary when the file system has no unnamed files). Called with the save lock held.
    private func write(_ data: Data, to target: String) throws(TonearmError) {
        let dir = (path as NSString).deletingLastPathComponent
        let temp = temporaryPath(target)
        counters.withLock { c in
            c.saves += 1
            c.bytes += data.count
        }
        // The folder is made, and temporaries that dead processes left there are removed, at
        // the first save (and again when a save fails), not at every save.
        let wasPrepared = prepared.withLock { $0 }
        if !wasPrepared { try prepare(dir) }
        do { try writeFile(data, dir: dir, temp: temp, target: target) } catch {
            guard wasPrepared else { throw error }
            // The folder may have gone since it was made: make it again and try once more.
            try prepare(dir)
            try writeFile(data, dir: dir, temp: temp, target: target)
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

    /// Writes `data` to `temp` in `dir` and renames it to `target`.
    private func writeFile(_ data: Data, dir: String, temp: String, target path: String) throws(TonearmError) {
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

    /// Removes the temporaries (`.queue.json.PID.tmp`, `.queue.json.place.PID.tmp`) of
    /// processes that no longer run.
    private func removeAbandonedTemporaries(in dir: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for target in [placePath, path] {
            let prefix = "." + (target as NSString).lastPathComponent + "."
            for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
                guard let pid = pid_t(name.dropFirst(prefix.count).dropLast(4)), pid != getpid() else { continue }
                if kill(pid, 0) != 0 && errno == ESRCH { unlink((dir as NSString).appendingPathComponent(name)) }
            }
        }
    }

    /// `O_TMPFILE` as Linux defines it (`__O_TMPFILE | O_DIRECTORY`; the macro is not imported).
    private static let oTmpFile: Int32 = 0o20000000 | O_DIRECTORY

    /// The saved queue at its last saved place, or nil when there is none.
    /// - Throws: ``TonearmError/notReadable(path:reason:)`` when the file exists but is not a
    ///   saved queue (a damaged place file is ignored: the queue's own place counts).
    public func load() throws(TonearmError) -> SavedQueue? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            var q = try JSONDecoder().decode(SavedQueue.self, from: data)
            guard q.order.count == q.items.count else {
                throw TonearmError.notReadable(path: path, reason: "the play order does not match the items")
            }
            if let generation = q.generation, let placeData = FileManager.default.contents(atPath: placePath),
               let place = try? JSONDecoder().decode(SavedPlace.self, from: placeData), place.generation == generation {
                q.order = q.order.at(position: place.orderPosition)
                q.position = place.position
                q.volume = place.volume
                q.savedAt = place.savedAt
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
