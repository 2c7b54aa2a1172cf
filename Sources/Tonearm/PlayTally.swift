// SPDX-License-Identifier: GPL-3.0-or-later

/// How long each item of a queue was heard, as a state machine: it takes what the player did
/// (an item became current, playback started or stopped), each with the time it happened, and
/// says when an item was left and after how many seconds of playing. Time paused or seeking
/// over does not count. An item that never played is left without a word (a queue moving
/// through items while stopped, or resetting to its first item at the end, skips nothing);
/// an item announced again while current stays current (a repeated item counts once per
/// stretch). Pure value, no clock of its own: ``LibraryPlayRecorder`` feeds it the player's
/// events and turns what it returns into play and skip counts.
public struct PlayTally: Sendable, Hashable {
    /// What the player did.
    public enum Event: Sendable, Hashable {
        /// Another item (by its persistentID; nil: none) is current: the previous one was left
        /// for it (at its end, or by a skip).
        case itemChanged(UInt64?)
        /// Audio is playing.
        case playing
        /// Audio stopped flowing for a while (paused, interrupted).
        case paused
        /// Playback stopped, or the program is ending: the current item is left, not for
        /// another one.
        case stopped
        /// The current item was played to its last frame (whatever the clock says: an output
        /// faster than real time plays a whole item in no time).
        case playedToEnd
    }

    /// An item left.
    public struct Leaving: Sendable, Hashable {
        public var persistentID: UInt64
        /// Seconds it was playing while current.
        public var playedSeconds: Double
        /// True when another item took its place; false when playback stopped.
        public var forAnotherItem: Bool
        /// True when it was played to its end.
        public var completed: Bool

        public init(persistentID: UInt64, playedSeconds: Double, forAnotherItem: Bool, completed: Bool = false) {
            self.persistentID = persistentID
            self.playedSeconds = playedSeconds
            self.forAnotherItem = forAnotherItem
            self.completed = completed
        }
    }

    /// The current item, if any.
    public private(set) var current: UInt64?
    private var played: Double = 0
    private var playingSince: Double?

    public init() {}

    /// Takes an event that happened at `time` (seconds on a monotonic clock, never going back)
    /// and returns the item it left, if any.
    public mutating func handle(_ event: Event, at time: Double) -> Leaving? {
        switch event {
        case .itemChanged(let next):
            if next != nil && next == current { return nil }
            let left = leave(at: time, forAnotherItem: next != nil)
            current = next
            if playingSince != nil { playingSince = time }
            return left
        case .playing:
            if playingSince == nil { playingSince = time }
            return nil
        case .paused:
            if let since = playingSince { played += max(0, time - since) }
            playingSince = nil
            return nil
        case .playedToEnd:
            let left = leave(at: time, forAnotherItem: false, completed: true)
            current = nil
            if playingSince != nil { playingSince = time }
            return left
        case .stopped:
            let left = leave(at: time, forAnotherItem: false)
            playingSince = nil
            current = nil
            return left
        }
    }

    private mutating func leave(at time: Double, forAnotherItem: Bool, completed: Bool = false) -> Leaving? {
        defer { played = 0 }
        guard let id = current else { return nil }
        let total = played + (playingSince.map { max(0, time - $0) } ?? 0)
        let everPlayed = total > 0 || playingSince != nil || completed
        guard everPlayed else { return nil }
        return Leaving(persistentID: id, playedSeconds: total, forAnotherItem: forAnotherItem, completed: completed)
    }
}
