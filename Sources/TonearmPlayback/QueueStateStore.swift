// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

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
/// `$XDG_STATE_HOME/tonearm/queue.json` (`~/.local/state/tonearm/queue.json`). Every save writes
/// a temporary file beside it and renames it into place, so a process killed at any moment
/// leaves either the previous state or the new one, never half a file.
///
/// Threading: `save` and `load` may be called from any thread; saves are serialised.
public final class QueueStateStore: Sendable {
    public let path: String
    private let lock = NSLock()

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

    /// Writes `queue` atomically.
    /// - Throws: ``TonearmError/writeFailed(path:reason:)`` when the directory cannot be made or
    ///   the file cannot be written (the previous state is then left as it was).
    public func save(_ queue: SavedQueue) throws(TonearmError) {
        let data: Data
        do { data = try JSONEncoder().encode(queue) } catch {
            throw .writeFailed(path: path, reason: "cannot encode the queue: \(error)")
        }
        lock.lock()
        defer { lock.unlock() }
        try writeAtomically(data, to: path)
    }

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
