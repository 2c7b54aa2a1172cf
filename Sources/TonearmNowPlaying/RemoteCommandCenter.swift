// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore

/// What a command's target reports (`MPRemoteCommandHandlerStatus`).
public enum RemoteCommandHandlerStatus: Sendable, Hashable {
    /// The command was carried out.
    case success
    /// The content the command refers to does not exist (no next track, say).
    case noSuchContent
    /// Nothing is playing that the command could act on; also returned by
    /// ``RemoteCommandCenter/dispatch(_:_:)`` when the active owner has no target for the command.
    case noActionableNowPlayingItem
    /// The command could not be carried out; also returned for a disabled command.
    case commandFailed
}

/// The payload of the commands that carry none (play, pause, toggle, stop, next, previous).
public struct RemoteCommandEvent: Sendable, Hashable {
    public init() {}
}

/// Move the playhead to `positionTime` seconds (`MPChangePlaybackPositionCommandEvent`).
public struct ChangePlaybackPositionCommandEvent: Sendable, Hashable {
    public var positionTime: Double
    public init(positionTime: Double) { self.positionTime = positionTime }
}

/// Skip by `interval` seconds, forward or backward by the command (`MPSkipIntervalCommandEvent`).
public struct SkipIntervalCommandEvent: Sendable, Hashable {
    public var interval: Double
    public init(interval: Double) { self.interval = interval }
}

/// Begin or end a fast scan (`MPSeekCommandEvent`).
public struct SeekCommandEvent: Sendable, Hashable {
    public enum Phase: Sendable, Hashable { case beginSeeking, endSeeking }
    public var phase: Phase
    public init(_ phase: Phase) { self.phase = phase }
}

/// Change the repeat type (`MPChangeRepeatModeCommandEvent`).
public struct ChangeRepeatModeCommandEvent: Sendable, Hashable {
    public var repeatType: RepeatType
    public init(repeatType: RepeatType) { self.repeatType = repeatType }
}

/// Change the shuffle type (`MPChangeShuffleModeCommandEvent`).
public struct ChangeShuffleModeCommandEvent: Sendable, Hashable {
    public var shuffleType: ShuffleType
    public init(shuffleType: ShuffleType) { self.shuffleType = shuffleType }
}

/// Change the playback rate (`MPChangePlaybackRateCommandEvent`).
public struct ChangePlaybackRateCommandEvent: Sendable, Hashable {
    public var playbackRate: Double
    public init(playbackRate: Double) { self.playbackRate = playbackRate }
}

/// Change the player's volume, 0…1 (MPRIS `Volume`; Apple has no such command).
public struct ChangeVolumeCommandEvent: Sendable, Hashable {
    public var volume: Double
    public init(volume: Double) { self.volume = volume }
}

/// Open `url` — add it to what plays and play it (MPRIS `OpenUri`; Apple has no such command).
public struct OpenURLCommandEvent: Sendable, Hashable {
    public var url: URL
    public init(url: URL) { self.url = url }
}

/// Identifies a target added with ``RemoteCommand/addTarget(owner:_:)``; pass it to
/// ``RemoteCommand/removeTarget(_:)``.
public struct RemoteCommandTarget: Sendable, Hashable {
    let id: UInt64
}

/// A change to the commands, as delivered by ``RemoteCommandCenter/changes``: a command was
/// enabled or disabled, a target added or removed, or an owner pushed or released. Publishers
/// then re-read what is available (MPRIS recomputes `CanGoNext` and the others).
public struct RemoteCommandCenterChange: Sendable, Hashable {
    public init() {}
}

/// A handle on a place in the command center's owner stack, from
/// ``RemoteCommandCenter/pushOwner(_:)``.
///
/// While this owner is the top of the stack, only its targets receive commands.
/// ``OwnerHandle/release()`` (or the last reference going away) removes it wherever it is in the
/// stack, drops its targets, and gives the commands back to the owner below: an owner that
/// forgets to give the commands back loses them when its handle is deallocated.
///
/// Thread-safety: may be used and released from any thread.
public typealias RemoteCommandOwner = OwnerHandle<RemoteCommandCenter>

/// One remote command (`MPRemoteCommand`), whose payload is `Event`.
///
/// Thread-safety: every member may be used from any thread. Targets are called by
/// ``RemoteCommandCenter/dispatch(_:_:)`` synchronously, on the dispatching thread (for MPRIS,
/// the service's D-Bus thread), without any lock held: a target may add or remove targets,
/// read or set the ``NowPlayingInfoCenter``, but should return quickly (hand long work to the
/// player's own thread) and must not stop the MPRIS service that called it and wait for it.
public final class RemoteCommand<Event: Sendable>: Sendable {
    /// The command's name (`"play"`, `"nextTrack"`, …), for logs.
    public let name: String
    private let registry: CommandRegistry
    private let state: Mutex<State>

    private struct Target {
        let id: UInt64
        let owner: UInt64
        let handler: @Sendable (Event) -> RemoteCommandHandlerStatus
    }

    private struct State {
        var isEnabled = true
        var targets: [Target] = []
        var preferredIntervals: [Double] = [15]
        var supportedPlaybackRates: [Double] = [0.5, 0.75, 1, 1.25, 1.5, 2]
    }

    init(name: String, registry: CommandRegistry) {
        self.name = name
        self.registry = registry
        state = Mutex(State())
        registry.add(ownerDropper: { [weak self] owner in self?.removeTargets(of: owner) ?? false })
    }

    /// Whether the command may be dispatched (default true). A disabled command's targets are
    /// not called and publishers show it as unavailable.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set {
            let changed = state.withLock { s -> Bool in
                defer { s.isEnabled = newValue }
                return s.isEnabled != newValue
            }
            if changed { registry.changed() }
        }
    }

    /// Adds `handler` as a target of the command for `owner` (nil: the base owner, the
    /// application). Returns a token for ``removeTarget(_:)``. Adding a target for an owner
    /// that was already released does nothing useful: the target is never called.
    @discardableResult
    public func addTarget(owner: RemoteCommandOwner? = nil,
                          _ handler: @escaping @Sendable (Event) -> RemoteCommandHandlerStatus) -> RemoteCommandTarget {
        let id = registry.nextID()
        let ownerID = owner?.id ?? OwnerStack<Void>.base
        state.withLock { $0.targets.append(Target(id: id, owner: ownerID, handler: handler)) }
        registry.changed()
        return RemoteCommandTarget(id: id)
    }

    /// Removes a target added with ``addTarget(owner:_:)`` (no effect for an unknown token).
    public func removeTarget(_ target: RemoteCommandTarget) {
        let removed = state.withLock { s -> Bool in
            let before = s.targets.count
            s.targets.removeAll { $0.id == target.id }
            return s.targets.count != before
        }
        if removed { registry.changed() }
    }

    /// Removes every target of every owner.
    public func removeAllTargets() {
        let removed = state.withLock { s -> Bool in
            defer { s.targets.removeAll() }
            return !s.targets.isEmpty
        }
        if removed { registry.changed() }
    }

    /// Whether a dispatch would reach a target now: the command is enabled and the active
    /// (top) owner has a target for it.
    public var isAvailable: Bool {
        let owner = registry.activeOwner
        return state.withLock { s in s.isEnabled && s.targets.contains { $0.owner == owner } }
    }

    /// Calls the active owner's targets with `event`, in the order they were added, and returns
    /// `.success` if one succeeded, otherwise the first target's status. Returns
    /// `.commandFailed` for a disabled command and `.noActionableNowPlayingItem` when the active
    /// owner has no target. Runs the targets on the calling thread.
    func dispatch(_ event: Event) -> RemoteCommandHandlerStatus {
        let owner = registry.activeOwner
        let (enabled, handlers) = state.withLock { s in
            (s.isEnabled, s.targets.filter { $0.owner == owner }.map(\.handler))
        }
        guard enabled else { return .commandFailed }
        guard !handlers.isEmpty else { return .noActionableNowPlayingItem }
        var first: RemoteCommandHandlerStatus?
        for h in handlers {
            let status = h(event)
            if status == .success { first = .success } else if first == nil { first = status }
        }
        return first ?? .commandFailed
    }

    private func removeTargets(of owner: UInt64) -> Bool {
        state.withLock { s -> Bool in
            let before = s.targets.count
            s.targets.removeAll { $0.owner == owner }
            return s.targets.count != before
        }
    }

    fileprivate var preferredIntervalsStorage: [Double] {
        get { state.withLock { $0.preferredIntervals } }
        set { state.withLock { $0.preferredIntervals = newValue }; registry.changed() }
    }

    fileprivate var supportedPlaybackRatesStorage: [Double] {
        get { state.withLock { $0.supportedPlaybackRates } }
        set { state.withLock { $0.supportedPlaybackRates = newValue }; registry.changed() }
    }
}

extension RemoteCommand where Event == SkipIntervalCommandEvent {
    /// The skip intervals in seconds that the player offers (default `[15]`); publishers
    /// send the first one.
    public var preferredIntervals: [Double] {
        get { preferredIntervalsStorage }
        set { preferredIntervalsStorage = newValue }
    }
}

extension RemoteCommand where Event == ChangePlaybackRateCommandEvent {
    /// The rates the player supports (default 0.5…2); MPRIS publishes their minimum and maximum.
    public var supportedPlaybackRates: [Double] {
        get { supportedPlaybackRatesStorage }
        set { supportedPlaybackRatesStorage = newValue.filter { $0 > 0 && $0.isFinite }.sorted() }
    }
}

/// The remote commands (`MPRemoteCommandCenter`): media keys, desktop widgets and MPRIS
/// clients reach the player through them.
///
/// The application (the base owner) adds targets; a temporary owner — a video player showing
/// a clip, say — calls ``pushOwner(_:)``, adds its own targets with `owner:`, and while it is on
/// top only its targets receive commands. Releasing its handle gives the commands back to the
/// owner below, even when the temporary owner forgets to (the handle releases itself when it
/// is deallocated). Apple's center has no such stack, and a video player that took the
/// commands kept them.
///
/// Thread-safety: every member may be used from any thread. See ``RemoteCommand`` for the
/// thread targets run on.
public final class RemoteCommandCenter: Sendable {
    /// The process's instance, like `MPRemoteCommandCenter.shared()`. Players and the MPRIS
    /// service use it unless given another instance (tests inject their own).
    public static let shared = RemoteCommandCenter()

    private let registry = CommandRegistry()

    public let play: RemoteCommand<RemoteCommandEvent>
    public let pause: RemoteCommand<RemoteCommandEvent>
    public let togglePlayPause: RemoteCommand<RemoteCommandEvent>
    public let stop: RemoteCommand<RemoteCommandEvent>
    public let nextTrack: RemoteCommand<RemoteCommandEvent>
    public let previousTrack: RemoteCommand<RemoteCommandEvent>
    public let changePlaybackPosition: RemoteCommand<ChangePlaybackPositionCommandEvent>
    public let skipForward: RemoteCommand<SkipIntervalCommandEvent>
    public let skipBackward: RemoteCommand<SkipIntervalCommandEvent>
    public let seekForward: RemoteCommand<SeekCommandEvent>
    public let seekBackward: RemoteCommand<SeekCommandEvent>
    public let changeRepeatMode: RemoteCommand<ChangeRepeatModeCommandEvent>
    public let changeShuffleMode: RemoteCommand<ChangeShuffleModeCommandEvent>
    public let changePlaybackRate: RemoteCommand<ChangePlaybackRateCommandEvent>
    public let changeVolume: RemoteCommand<ChangeVolumeCommandEvent>
    /// Open a file or stream and play it (MPRIS `OpenUri`; Apple has no such command).
    public let openURL: RemoteCommand<OpenURLCommandEvent>
    /// End the player (MPRIS `Quit`, published as `CanQuit` while available; Apple has no such command).
    public let quit: RemoteCommand<RemoteCommandEvent>

    /// A new center: every command enabled, no targets, only the base owner.
    public init() {
        let r = registry
        play = RemoteCommand(name: "play", registry: r)
        pause = RemoteCommand(name: "pause", registry: r)
        togglePlayPause = RemoteCommand(name: "togglePlayPause", registry: r)
        stop = RemoteCommand(name: "stop", registry: r)
        nextTrack = RemoteCommand(name: "nextTrack", registry: r)
        previousTrack = RemoteCommand(name: "previousTrack", registry: r)
        changePlaybackPosition = RemoteCommand(name: "changePlaybackPosition", registry: r)
        skipForward = RemoteCommand(name: "skipForward", registry: r)
        skipBackward = RemoteCommand(name: "skipBackward", registry: r)
        seekForward = RemoteCommand(name: "seekForward", registry: r)
        seekBackward = RemoteCommand(name: "seekBackward", registry: r)
        changeRepeatMode = RemoteCommand(name: "changeRepeatMode", registry: r)
        changeShuffleMode = RemoteCommand(name: "changeShuffleMode", registry: r)
        changePlaybackRate = RemoteCommand(name: "changePlaybackRate", registry: r)
        changeVolume = RemoteCommand(name: "changeVolume", registry: r)
        openURL = RemoteCommand(name: "openURL", registry: r)
        quit = RemoteCommand(name: "quit", registry: r)
    }

    /// Sends `event` to `command`'s targets of the active owner, on the calling thread, and
    /// returns their status (see ``RemoteCommandHandlerStatus`` for the statuses of a disabled
    /// command or a missing target).
    @discardableResult
    public func dispatch<Event>(_ command: RemoteCommand<Event>, _ event: Event) -> RemoteCommandHandlerStatus {
        command.dispatch(event)
    }

    /// Sends a payload-free command.
    @discardableResult
    public func dispatch(_ command: RemoteCommand<RemoteCommandEvent>) -> RemoteCommandHandlerStatus {
        command.dispatch(RemoteCommandEvent())
    }

    /// Puts a temporary owner named `name` on top of the owner stack and returns its handle.
    /// Until the handle is released, only targets added with `owner: handle` receive commands.
    public func pushOwner(_ name: String) -> RemoteCommandOwner {
        let id = registry.pushOwner(name)
        return RemoteCommandOwner(name: name, id: id, center: self, registry: registry)
    }

    /// The names of the owners in the stack, bottom first (`"application"` is the base owner).
    public var ownerNames: [String] { registry.ownerNames }

    /// A new stream of changes (enabling, targets, owners) made from now on.
    public var changes: AsyncStream<RemoteCommandCenterChange> { registry.broadcaster.stream() }
}

/// The state the commands share: the owner stack, the id counter and the change broadcaster.
final class CommandRegistry: Sendable, OwnerRegistry {
    private struct State {
        var owners = OwnerStack<Void>(base: ())
        var nextID: UInt64 = 1
        var ownerDroppers: [@Sendable (UInt64) -> Bool] = []
    }

    private let state = Mutex(State())
    let broadcaster = EventBroadcaster<RemoteCommandCenterChange>()

    /// A new target id.
    func nextID() -> UInt64 {
        state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
    }

    func add(ownerDropper: @escaping @Sendable (UInt64) -> Bool) {
        state.withLock { $0.ownerDroppers.append(ownerDropper) }
    }

    var activeOwner: UInt64 { state.withLock { $0.owners.top } }

    var ownerNames: [String] { state.withLock { $0.owners.names } }

    func ownerIsInStack(_ id: UInt64) -> Bool { state.withLock { $0.owners.contains(id) } }

    func pushOwner(_ name: String) -> UInt64 {
        let id = state.withLock { $0.owners.push(name: name, value: ()) }
        changed()
        return id
    }

    func releaseOwner(_ id: UInt64) {
        let droppers = state.withLock { s -> [@Sendable (UInt64) -> Bool]? in
            s.owners.release(id) ? s.ownerDroppers : nil
        }
        guard let droppers else { return }
        for drop in droppers { _ = drop(id) }
        changed()
    }

    func changed() { broadcaster.yield(RemoteCommandCenterChange()) }
}
