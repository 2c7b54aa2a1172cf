// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// One entry of a ``QueuePlayer`` or ``MusicPlayer`` queue: a local audio file (or an
/// `http(s)` address, played as a network stream) and its persistent ID (a number, never a string — MPMediaItem's persistentID is a UInt64 too, and the
/// seeds show the bugs string IDs cause).
public struct QueueItem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The file (a `file://` URL), or the network address.
    public var url: URL
    /// A stable number for the item: the library's ID when it comes from the library, otherwise
    /// derived from the file's path (the same path always gives the same ID).
    public var persistentID: UInt64
    /// The audio stream to play, by its index in the container (a video's second language, say);
    /// nil: the file's best audio stream. Local files only.
    public var audioStream: Int?
    /// The part of the item to play (MPD's `rangeid`; a cue sheet's track): from its start to
    /// its end, as a file of that length (its time, length and seeks are the part's). Nil: all.
    public var range: PlaybackRange?

    public init(url: URL, persistentID: UInt64? = nil) {
        if Self.isNetwork(url) {
            self.url = url
            self.persistentID = persistentID ?? QueueItem.persistentID(forPath: url.absoluteString)
        } else {
            self.url = url.standardizedFileURL
            self.persistentID = persistentID ?? QueueItem.persistentID(forPath: url.standardizedFileURL.path)
        }
    }

    /// An item for a command-line argument or a playlist entry: an `http://` or `https://`
    /// address is a network stream, anything else a file path.
    public init(pathOrURL text: String, persistentID: UInt64? = nil) {
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://"), let url = URL(userText: text) {
            self.init(url: url, persistentID: persistentID)
        } else {
            self.init(path: text, persistentID: persistentID)
        }
    }

    /// Whether the item is a network stream (`http` or `https`).
    public var isRemote: Bool { Self.isNetwork(url) }

    private static func isNetwork(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    public init(path: String, persistentID: UInt64? = nil) {
        self.init(url: URL(fileURLWithPath: path), persistentID: persistentID)
    }

    /// The file's path (for a network stream, the address).
    public var path: String { isRemote ? url.absoluteString : url.path }

    public var description: String { url.lastPathComponent }

    /// FNV-1a (64-bit) of the path's UTF-8 bytes, never 0.
    public static func persistentID(forPath path: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in path.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h == 0 ? 1 : h
    }
}

/// Where a queue's volume-levelling comes from (ReplayGain tags).
public enum ReplayGainMode: String, Sendable, Codable, CaseIterable {
    case off
    /// Each track at its own gain.
    case track
    /// Each album at its album gain (tracks keep their relative levels); falls back to the
    /// track gain when a file has no album gain.
    case album

    /// The linear gain for `tags` with `preamp` dB added, limited so that the tagged peak does
    /// not clip (the clipping guard); 1 when the mode is off or the file has no gain tag.
    public func linearGain(for tags: ReplayGain, preamp: Double) -> Float {
        let gain: Double?
        let peak: Double?
        switch self {
        case .off: return 1
        case .track: gain = tags.trackGain; peak = tags.trackPeak
        case .album:
            gain = tags.albumGain ?? tags.trackGain
            peak = tags.albumGain != nil ? (tags.albumPeak ?? tags.trackPeak) : tags.trackPeak
        }
        guard let g = gain else { return 1 }
        var linear = pow(10, (g + preamp) / 20)
        if let p = peak, p > 0 { linear = min(linear, 1 / p) }
        return Float(linear)
    }
}
