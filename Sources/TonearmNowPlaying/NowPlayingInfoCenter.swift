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
/// Thread-safety: every member may be used from any thread; the state is kept under one
/// `Mutex`. Setting a property delivers one ``Change`` to every ``changes`` stream, after the
/// lock is released, on the setter's thread (the stream's consumer runs on its own task).
/// Setting a property to the value it already has delivers nothing.
public final class NowPlayingInfoCenter: Sendable {
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

    /// Everything at one instant, read under one lock.
    public struct Snapshot: Sendable, Hashable {
        public var nowPlayingInfo: NowPlayingInfo?
        /// When ``nowPlayingInfo``'s `elapsedTime` was last set.
        public var elapsedTimeSetAt: ContinuousClock.Instant
        public var playbackState: NowPlayingPlaybackState
        public var volume: Double
        public var repeatType: RepeatType
        public var shuffleType: ShuffleType

        /// The position at `instant`: the elapsed time, advanced by the rate while playing, and
        /// kept within 0…duration.
        public func elapsedTime(at instant: ContinuousClock.Instant) -> Double? {
            guard let info = nowPlayingInfo else { return nil }
            var t = info.elapsedTime
            if playbackState == .playing {
                let d = elapsedTimeSetAt.duration(to: instant)
                let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
                t += info.playbackRate * max(0, seconds)
            }
            if let duration = info.duration { t = min(t, duration) }
            return max(0, t)
        }
    }

    private let state: Mutex<Snapshot>
    private let broadcaster = EventBroadcaster<Change>()

    /// A new, empty center (no info, state unknown, volume 1, repeat none, shuffle off).
    public init() {
        state = Mutex(Snapshot(nowPlayingInfo: nil, elapsedTimeSetAt: .now, playbackState: .unknown, volume: 1,
                               repeatType: .none, shuffleType: .off))
    }

    /// What is playing now; nil when nothing is. Setting it restarts the elapsed-time clock.
    public var nowPlayingInfo: NowPlayingInfo? {
        get { state.withLock { $0.nowPlayingInfo } }
        set {
            let changed = state.withLock { s -> Bool in
                s.elapsedTimeSetAt = .now
                guard s.nowPlayingInfo != newValue else { return false }
                s.nowPlayingInfo = newValue
                return true
            }
            if changed { broadcaster.yield(.nowPlayingInfo(newValue)) }
        }
    }

    /// The playback state. Changing it folds the extrapolated position into the info's
    /// `elapsedTime`, so that the position stops advancing on pause and resumes from there.
    public var playbackState: NowPlayingPlaybackState {
        get { state.withLock { $0.playbackState } }
        set {
            let changed = state.withLock { s -> Bool in
                guard s.playbackState != newValue else { return false }
                let now = ContinuousClock.now
                if let t = s.elapsedTime(at: now) { s.nowPlayingInfo?.elapsedTime = t }
                s.elapsedTimeSetAt = now
                s.playbackState = newValue
                return true
            }
            if changed { broadcaster.yield(.playbackState(newValue)) }
        }
    }

    /// The player's volume, 0…1 (values outside are clamped).
    public var volume: Double {
        get { state.withLock { $0.volume } }
        set {
            let v = newValue.isNaN ? 0 : min(1, max(0, newValue))
            if update(\.volume, v) { broadcaster.yield(.volume(v)) }
        }
    }

    /// How the queue repeats.
    public var repeatType: RepeatType {
        get { state.withLock { $0.repeatType } }
        set { if update(\.repeatType, newValue) { broadcaster.yield(.repeatType(newValue)) } }
    }

    /// How the queue is shuffled.
    public var shuffleType: ShuffleType {
        get { state.withLock { $0.shuffleType } }
        set { if update(\.shuffleType, newValue) { broadcaster.yield(.shuffleType(newValue)) } }
    }

    /// Reports that the position jumped to `position` seconds (a seek, or a restart of the
    /// track): sets the info's elapsed time and delivers ``Change/seeked(to:)`` (MPRIS sends
    /// `Seeked`). Without info it does nothing.
    public func didSeek(to position: Double) {
        let moved = state.withLock { s -> Bool in
            guard s.nowPlayingInfo != nil else { return false }
            s.nowPlayingInfo?.elapsedTime = max(0, position)
            s.elapsedTimeSetAt = .now
            return true
        }
        if moved { broadcaster.yield(.seeked(to: max(0, position))) }
    }

    /// All the state at one instant.
    public func snapshot() -> Snapshot { state.withLock { $0 } }

    /// The position now (the elapsed time extrapolated with the rate while playing); nil
    /// without info.
    public var currentElapsedTime: Double? { snapshot().elapsedTime(at: .now) }

    /// The position at `instant`; nil without info.
    public func elapsedTime(at instant: ContinuousClock.Instant) -> Double? { snapshot().elapsedTime(at: instant) }

    /// A new stream of the changes made from now on. The stream buffers the newest 256 changes
    /// when its consumer falls behind; it ends when the consumer stops iterating.
    public var changes: AsyncStream<Change> { broadcaster.stream() }

    private func update<V: Equatable>(_ key: WritableKeyPath<Snapshot, V>, _ value: V) -> Bool {
        state.withLock { s -> Bool in
            guard s[keyPath: key] != value else { return false }
            s[keyPath: key] = value
            return true
        }
    }
}
