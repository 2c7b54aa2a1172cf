// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// The owners of a ``NowPlayingInfoCenter`` as a value: the application's state at the bottom,
/// one state per owner pushed above it; what the system is shown is the top's. Each operation
/// returns the ``NowPlayingInfoCenter/Change``s that what is shown went through, so the center
/// only broadcasts them: editing a hidden owner changes nothing shown; pushing or releasing the
/// top owner shows the next one's state, property by property, as it is then.
///
/// Pure (no locks, no clock of its own: the caller gives `now`), so every rule is tested alone.
struct NowPlayingOwnerStack: Sendable {
    typealias Snapshot = NowPlayingInfoCenter.Snapshot
    typealias Change = NowPlayingInfoCenter.Change

    /// The application's id (the bottom, never released).
    static var base: UInt64 { OwnerStack<Snapshot>.base }

    /// What an owner sets.
    enum Edit: Sendable, Equatable {
        case nowPlayingInfo(NowPlayingInfo?)
        case playbackState(NowPlayingPlaybackState)
        case volume(Double)
        case repeatType(RepeatType)
        case shuffleType(ShuffleType)
        /// The position jumped (``NowPlayingInfoCenter/didSeek(to:)``).
        case seek(Double)
    }

    private var owners: OwnerStack<Snapshot>

    init(now: ContinuousClock.Instant) {
        owners = OwnerStack(base: Self.empty(now))
    }

    /// A new owner's state: no info, state unknown, volume 1, repeat none, shuffle off.
    static func empty(_ now: ContinuousClock.Instant) -> Snapshot {
        Snapshot(nowPlayingInfo: nil, elapsedTimeSetAt: now, playbackState: .unknown, volume: 1, repeatType: .none,
                 shuffleType: .off)
    }

    /// The state shown: the top owner's.
    var shown: Snapshot { owners.topValue }
    /// The id of the owner shown.
    var top: UInt64 { owners.top }
    var names: [String] { owners.names }

    func snapshot(of id: UInt64) -> Snapshot? { owners.value(of: id) }

    func contains(_ id: UInt64) -> Bool { owners.contains(id) }

    /// Puts a new, empty owner on top; its id and what the switch changed.
    mutating func push(name: String, now: ContinuousClock.Instant) -> (id: UInt64, changes: [Change]) {
        let before = shown
        let id = owners.push(name: name, value: Self.empty(now))
        return (id, Self.difference(from: before, to: shown))
    }

    /// Removes owner `id` wherever it is (the base and unknown ids: nothing); when it was on top,
    /// the owner below is shown. A playing owner that comes back is shown at its position now.
    mutating func release(_ id: UInt64, now: ContinuousClock.Instant) -> [Change] {
        let before = shown
        guard owners.release(id) else { return [] }
        return Self.difference(from: before, to: shown)
    }

    /// Applies `edit` to owner `id`'s state; the changes shown (none when `id` is not on top,
    /// is unknown, or the value was already there).
    mutating func apply(_ edit: Edit, to id: UInt64, now: ContinuousClock.Instant) -> [Change] {
        let applied = owners.update(id) { s -> [Change] in
            var change: Change?
            let shownBefore = s.shownPlaybackState
            switch edit {
            case .nowPlayingInfo(let info):
                s.elapsedTimeSetAt = now
                change = s.nowPlayingInfo == info ? nil : .nowPlayingInfo(info)
                s.nowPlayingInfo = info
                // With no state set, the info's rate says playing or paused (as on iOS).
                if s.shownPlaybackState != shownBefore {
                    return [change, .playbackState(s.shownPlaybackState)].compactMap { $0 }
                }
            case .playbackState(let state):
                if s.playbackState != state {
                    if let t = s.elapsedTime(at: now) { s.nowPlayingInfo?.elapsedTime = t }
                    s.elapsedTimeSetAt = now
                    s.playbackState = state
                    change = s.shownPlaybackState == shownBefore ? nil : .playbackState(s.shownPlaybackState)
                } else {
                    change = nil
                }
            case .volume(let v):
                let clamped = v.isNaN ? 0 : min(1, max(0, v))
                change = s.volume == clamped ? nil : .volume(clamped)
                s.volume = clamped
            case .repeatType(let r):
                change = s.repeatType == r ? nil : .repeatType(r)
                s.repeatType = r
            case .shuffleType(let t):
                change = s.shuffleType == t ? nil : .shuffleType(t)
                s.shuffleType = t
            case .seek(let position):
                if s.nowPlayingInfo != nil {
                    s.nowPlayingInfo?.elapsedTime = max(0, position)
                    s.elapsedTimeSetAt = now
                    change = .seeked(to: max(0, position))
                } else {
                    change = nil
                }
            }
            return change.map { [$0] } ?? []
        }
        guard let applied, applied.isTop else { return [] }
        return applied.result
    }

    /// The changes that take what is shown from `a` to `b`, in the order publishers read them.
    static func difference(from a: Snapshot, to b: Snapshot) -> [Change] {
        var changes: [Change] = []
        if a.nowPlayingInfo != b.nowPlayingInfo {
            changes.append(.nowPlayingInfo(b.nowPlayingInfo))
        }
        if a.shownPlaybackState != b.shownPlaybackState { changes.append(.playbackState(b.shownPlaybackState)) }
        if a.volume != b.volume { changes.append(.volume(b.volume)) }
        if a.repeatType != b.repeatType { changes.append(.repeatType(b.repeatType)) }
        if a.shuffleType != b.shuffleType { changes.append(.shuffleType(b.shuffleType)) }
        return changes
    }
}

/// A handle on a place in a ``NowPlayingInfoCenter``'s owners, from
/// ``NowPlayingInfoCenter/pushOwner(_:)``: the now-playing state of a temporary owner (a video
/// player), shown while it is on top. ``OwnerHandle/release()`` — or the last reference going
/// away — removes it wherever it is, and the owner below is shown again as it is then.
///
/// Thread-safety: may be used and released from any thread; setting a property delivers the
/// change to the center's ``NowPlayingInfoCenter/changes`` only while this owner is shown.
public typealias NowPlayingInfoOwner = OwnerHandle<NowPlayingInfoCenter>

extension OwnerHandle where Center == NowPlayingInfoCenter {
    /// Whether this owner's state is what is shown (it is on top).
    public var isShown: Bool { center.isShown(id) }

    /// What this owner plays (see ``NowPlayingInfoCenter/nowPlayingInfo``); nil once released.
    public var nowPlayingInfo: NowPlayingInfo? {
        get { center.snapshot(of: id)?.nowPlayingInfo }
        set { center.edit(.nowPlayingInfo(newValue), of: id) }
    }

    /// This owner's playback state (``NowPlayingInfoCenter/playbackState``).
    public var playbackState: NowPlayingPlaybackState {
        get { center.snapshot(of: id)?.playbackState ?? .unknown }
        set { center.edit(.playbackState(newValue), of: id) }
    }

    /// This owner's volume, 0…1.
    public var volume: Double {
        get { center.snapshot(of: id)?.volume ?? 1 }
        set { center.edit(.volume(newValue), of: id) }
    }

    /// This owner's repeat mode.
    public var repeatType: RepeatType {
        get { center.snapshot(of: id)?.repeatType ?? .none }
        set { center.edit(.repeatType(newValue), of: id) }
    }

    /// This owner's shuffle mode.
    public var shuffleType: ShuffleType {
        get { center.snapshot(of: id)?.shuffleType ?? .off }
        set { center.edit(.shuffleType(newValue), of: id) }
    }

    /// This owner's position jumped (``NowPlayingInfoCenter/didSeek(to:)``).
    public func didSeek(to position: Double) { center.edit(.seek(position), of: id) }
}
