// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore

/// The now-playing state that the system shows (media widgets, media keys, MPRIS): the
/// counterpart of `MPNowPlayingInfoCenter`.
///
/// A player writes ``nowPlayingInfo``, ``playbackState``, ``volume``, ``repeatType`` and
/// ``shuffleType`` when they change, and calls ``didSeek(to:)`` when the position jumps;
/// publishers (the MPRIS service) read a consistent ``snapshot()`` and follow ``changes``.
///
/// Owners: the properties above are the application's (the base owner's). A temporary owner —
/// a video player showing a clip — calls ``pushOwner(_:)`` and sets its own state on the
/// returned ``NowPlayingInfoOwner``; while it is on top, ``snapshot()`` and ``changes`` (what
/// publishers show) are its state, and when it is released (or its handle deallocated) the
/// application's is shown again, as it is then — the counterpart of the command center's owners
/// (``RemoteCommandCenter/pushOwner(_:)``), so a video never keeps Now Playing after it closes.
///
/// Thread-safety: every member may be used from any thread; the state is kept under one
/// `Mutex`. Setting a property delivers one ``Change`` to every ``changes`` stream, after the
/// lock is released, on the setter's thread (the stream's consumer runs on its own task).
/// Setting a property to the value it already has delivers nothing.
public final class NowPlayingInfoCenter: Sendable, OwnerRegistry {
    /// The process's instance, like `MPNowPlayingInfoCenter.default()`. Players and the MPRIS
    /// service use it unless given another instance (tests inject their own).
    public static let `default` = NowPlayingInfoCenter()

    /// One change, as delivered by ``changes``.
    public enum Change: Sendable, Hashable {
        case nowPlayingInfo(NowPlayingInfo?)
        case playbackState(NowPlayingPlaybackState)
        case volume(Double)
        case repeatType(RepeatType)
        case shuffleType(ShuffleType)
        /// The position jumped to this many seconds (``didSeek(to:)``).
        case seeked(to: Double)
    }
    // `.playbackState` carries the state shown (``Snapshot/shownPlaybackState``): it also comes
    // when a new info's rate changes the state derived from it.

    /// Everything at one instant, read under one lock.
    public struct Snapshot: Sendable, Hashable {
        public var nowPlayingInfo: NowPlayingInfo?
        /// When ``nowPlayingInfo``'s `elapsedTime` was last set.
        public var elapsedTimeSetAt: ContinuousClock.Instant
        public var playbackState: NowPlayingPlaybackState
        public var volume: Double
        public var repeatType: RepeatType
        public var shuffleType: ShuffleType

        /// The state the system is shown: ``playbackState`` when it was set (not `.unknown`, as
        /// Tonearm's players and code written for macOS set it); otherwise, as iOS does — where
        /// `MPNowPlayingInfoCenter.playbackState` does not exist — derived from the info's
        /// playback rate: playing above 0, paused at 0 (`.unknown` without info). So code that
        /// sets only `MPNowPlayingInfoPropertyPlaybackRate` and the elapsed time (issue 23,
        /// seed 002) is shown playing and paused.
        public var shownPlaybackState: NowPlayingPlaybackState {
            if playbackState != .unknown { return playbackState }
            guard let info = nowPlayingInfo else { return .unknown }
            return info.playbackRate > 0 ? .playing : .paused
        }

        /// The position at `instant`: the elapsed time, advanced by the rate while playing
        /// (``shownPlaybackState``), and kept within 0…duration.
        public func elapsedTime(at instant: ContinuousClock.Instant) -> Double? {
            guard let info = nowPlayingInfo else { return nil }
            var t = info.elapsedTime
            if shownPlaybackState == .playing {
                let d = elapsedTimeSetAt.duration(to: instant)
                let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
                t += info.playbackRate * max(0, seconds)
            }
            if let duration = info.duration { t = min(t, duration) }
            return max(0, t)
        }
    }

    private let state: Mutex<NowPlayingOwnerStack>
    private let broadcaster = EventBroadcaster<Change>()

    /// A new, empty center (no info, state unknown, volume 1, repeat none, shuffle off).
    public init() {
        state = Mutex(NowPlayingOwnerStack(now: .now))
    }

    /// What the application (the base owner) plays; nil when nothing. Setting it restarts the
    /// elapsed-time clock. While an owner pushed with ``pushOwner(_:)`` is on top, this is kept
    /// but not shown: ``snapshot()`` and ``changes`` follow the owner on top.
    public var nowPlayingInfo: NowPlayingInfo? {
        get { state.withLock { $0.snapshot(of: NowPlayingOwnerStack.base)?.nowPlayingInfo } }
        set { edit(.nowPlayingInfo(newValue), of: NowPlayingOwnerStack.base) }
    }

    /// The application's playback state. Changing it folds the extrapolated position into the
    /// info's `elapsedTime`, so that the position stops advancing on pause and resumes from there.
    public var playbackState: NowPlayingPlaybackState {
        get { state.withLock { $0.snapshot(of: NowPlayingOwnerStack.base)?.playbackState ?? .unknown } }
        set { edit(.playbackState(newValue), of: NowPlayingOwnerStack.base) }
    }

    /// The application's player volume, 0…1 (values outside are clamped).
    public var volume: Double {
        get { state.withLock { $0.snapshot(of: NowPlayingOwnerStack.base)?.volume ?? 1 } }
        set { edit(.volume(newValue), of: NowPlayingOwnerStack.base) }
    }

    /// How the application's queue repeats.
    public var repeatType: RepeatType {
        get { state.withLock { $0.snapshot(of: NowPlayingOwnerStack.base)?.repeatType ?? .none } }
        set { edit(.repeatType(newValue), of: NowPlayingOwnerStack.base) }
    }

    /// How the application's queue is shuffled.
    public var shuffleType: ShuffleType {
        get { state.withLock { $0.snapshot(of: NowPlayingOwnerStack.base)?.shuffleType ?? .off } }
        set { edit(.shuffleType(newValue), of: NowPlayingOwnerStack.base) }
    }

    /// Reports that the application's position jumped to `position` seconds (a seek, or a
    /// restart of the track): sets the info's elapsed time and delivers ``Change/seeked(to:)``
    /// (MPRIS sends `Seeked`) when shown. Without info it does nothing.
    public func didSeek(to position: Double) { edit(.seek(position), of: NowPlayingOwnerStack.base) }

    /// What is shown now — the state of the owner on top — at one instant.
    public func snapshot() -> Snapshot { state.withLock { $0.shown } }

    /// The position shown now (the elapsed time extrapolated with the rate while playing); nil
    /// without info.
    public var currentElapsedTime: Double? { snapshot().elapsedTime(at: .now) }

    /// The position shown at `instant`; nil without info.
    public func elapsedTime(at instant: ContinuousClock.Instant) -> Double? { snapshot().elapsedTime(at: instant) }

    // MARK: Owners

    /// Puts a temporary owner named `name` on top — a video player showing a clip, say — and
    /// returns its handle. Until it is released, what is shown (``snapshot()``, ``changes``,
    /// MPRIS) is that owner's state, which starts empty; the application's and the lower
    /// owners' are kept and shown again, as they are then, when the owners above them are
    /// released (``OwnerHandle/release()``, or the handle's deallocation).
    public func pushOwner(_ name: String) -> NowPlayingInfoOwner {
        let (id, changes) = state.withLock { $0.push(name: name, now: .now) }
        for c in changes { broadcaster.yield(c) }
        return NowPlayingInfoOwner(name: name, id: id, center: self, registry: self)
    }

    /// The names of the owners, bottom first (`"application"` is the base owner).
    public var ownerNames: [String] { state.withLock { $0.names } }

    func edit(_ e: NowPlayingOwnerStack.Edit, of owner: UInt64) {
        let changes = state.withLock { $0.apply(e, to: owner, now: .now) }
        for c in changes { broadcaster.yield(c) }
    }

    func releaseOwner(_ owner: UInt64) {
        let changes = state.withLock { $0.release(owner, now: .now) }
        for c in changes { broadcaster.yield(c) }
    }

    func snapshot(of owner: UInt64) -> Snapshot? { state.withLock { $0.snapshot(of: owner) } }

    func ownerIsInStack(_ owner: UInt64) -> Bool { state.withLock { $0.contains(owner) } }

    func isShown(_ owner: UInt64) -> Bool { state.withLock { $0.top == owner } }

    /// A new stream of the changes made from now on. The stream buffers the newest 256 changes
    /// when its consumer falls behind; it ends when the consumer stops iterating.
    public var changes: AsyncStream<Change> { broadcaster.stream() }
}
