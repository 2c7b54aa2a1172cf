// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// The sound settings a resumed queue comes back with, kept beside it: the equaliser and the
/// speed. (The volume is the saved queue's own, ``SavedQueue/volume``.)
public struct SavedPlaybackSettings: Sendable, Codable, Equatable {
    /// The equaliser as the application names it (a preset's name, or its band spec).
    public var eq: String?
    /// The speed (1: normal).
    public var rate: Float?
    public var savedAt: Date

    public init(eq: String? = nil, rate: Float? = nil, savedAt: Date = Date()) {
        self.eq = eq
        self.rate = rate
        self.savedAt = savedAt
    }
}

/// Where ``SavedPlaybackSettings`` are kept: one small JSON file, by default
/// `$XDG_STATE_HOME/tonearm/settings.json` (beside ``QueueStateStore``'s `queue.json`), written
/// atomically (a temporary file renamed into place).
///
/// Threading: `save` and `load` may be called from any thread; saves are serialised.
public final class PlaybackSettingsStore: Sendable {
    public let path: String
    private let lock = NSLock()

    public init(path: String) { self.path = path }

    /// The default location, in the folder of ``QueueStateStore/defaultPath(environment:)``.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        (QueueStateStore.defaultPath(environment: environment) as NSString).deletingLastPathComponent + "/settings.json"
    }

    /// Writes `settings` atomically.
    /// - Throws: ``TonearmError/writeFailed(path:reason:)`` (the previous file is then left as it was).
    public func save(_ settings: SavedPlaybackSettings) throws(TonearmError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            data = try encoder.encode(settings)
        } catch {
            throw .writeFailed(path: path, reason: "cannot encode the settings: \(error)")
        }
        lock.lock()
        defer { lock.unlock() }
        try writeAtomically(data, to: path)
    }

    /// The saved settings, or nil when there are none.
    /// - Throws: ``TonearmError/notReadable(path:reason:)`` when the file exists but does not
    ///   hold them, or holds a speed outside 0.5…2.
    public func load() throws(TonearmError) -> SavedPlaybackSettings? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let s: SavedPlaybackSettings
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            s = try JSONDecoder().decode(SavedPlaybackSettings.self, from: data)
        } catch {
            throw .notReadable(path: path, reason: "not saved playback settings (\(error.localizedDescription))")
        }
        if let r = s.rate, !(0.5...2).contains(r) {
            throw .notReadable(path: path, reason: "the speed \(r) is outside 0.5…2")
        }
        return s
    }
}
