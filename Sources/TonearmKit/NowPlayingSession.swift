// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmNowPlaying
import TonearmPlayback
import TonearmSession

/// Joins a video ``Player`` to the audio session, the remote commands and Now Playing, so that a
/// music player and a video player in one app (or two apps) stop fighting over them — the
/// counterpart of `MPNowPlayingSession` (with `automaticallyPublishesNowPlayingInfo`), with
/// ownership given back by design.
///
/// While the player plays an item with video (``NowPlayingSessionMachine`` holds the rules):
/// - its ``audioSession`` is ``AudioSession/Category/playback`` with
///   ``AudioSession/Mode/moviePlayback`` and active: a non-mixable music session is interrupted
///   (its player pauses on ``AudioSession/Interruption/began``);
/// - it owns the ``commandCenter`` and the ``infoCenter`` (an owner pushed on each): play, pause,
///   play-pause, stop and position reach this player, and Now Playing (MPRIS) shows its item.
///
/// When the item ends or fails, another item without video replaces it, or the session is
/// closed — ``invalidate()``, a ``PlayerView`` window closing (``PlayerView/nowPlayingSession``),
/// or this object's deallocation — the session deactivates with `notifyOthersOnDeactivation`
/// (the music resumes, ``AudioSession/Interruption/ended(shouldResume:)`` with true) and both
/// owners are released: the commands and Now Playing belong to the music player again, as it is
/// then. The music player itself needs no code for this: it keeps its targets and info on the
/// centers' base owner.
///
/// The sessions meet on the D-Bus session bus (``AudioSession``); without a bus, the sessions of
/// one process still meet in the process, so a music player and a video player of one app
/// interrupt and resume each other all the same (another process's music is not reached then).
///
/// Threading: every member may be used from any thread. The player's and the session's events
/// are read on tasks of this object's; actions run in order, under its lock.
public final class NowPlayingSession: Sendable {
    public let player: Player
    /// The video player's own audio session (not the music player's).
    public let audioSession: AudioSession
    public let infoCenter: NowPlayingInfoCenter
    public let commandCenter: RemoteCommandCenter
    /// The owners' name (``RemoteCommandCenter/ownerNames``).
    public let name: String
    private let core: Core
    private let tasks: [Task<Void, Never>]

    /// A session for `player`. `audioSession`: the video's own session (default: a new one on
    /// the session bus named after the process and this object, never `AudioSession.shared`,
    /// which the music player uses); the centers default to the process's.
    public init(player: Player, audioSession: AudioSession? = nil, infoCenter: NowPlayingInfoCenter = .default,
                commandCenter: RemoteCommandCenter = .shared, name: String = "video") {
        let session = audioSession ?? AudioSession(identifier: "\(getpid()).\(name).\(Self.counter.add(1, ordering: .relaxed).newValue)")
        self.player = player
        self.audioSession = session
        self.infoCenter = infoCenter
        self.commandCenter = commandCenter
        self.name = name
        let core = Core(player: player, session: session, info: infoCenter, commands: commandCenter, name: name)
        self.core = core
        let playerEvents = player.events
        let interruptions = session.interruptions
        // What happened before the streams were made: the player may already play.
        core.feed(.item(hasVideo: Self.hasVideo(player.currentItem)))
        core.feed(.rate(playing: player.rate != 0))
        tasks = [
            Task.detached { [core] in
                for await e in playerEvents {
                    switch e {
                    case .currentItemChanged, .itemStatusChanged(.readyToPlay):
                        core.feed(.item(hasVideo: Self.hasVideo(core.player.currentItem)))
                    case .rateChanged(let r): core.feed(.rate(playing: r != 0))
                    case .seeked, .timedMetadata: core.feed(.itemUpdated)
                    case .didPlayToEndTime: core.feed(.playedToEnd)
                    case .itemStatusChanged(.failed), .failedToPlayToEndTime: core.feed(.failed)
                    default: break
                    }
                }
            },
            Task.detached { [core] in
                for await i in interruptions {
                    switch i {
                    case .began: core.feed(.interruptionBegan)
                    case .ended(let shouldResume): core.feed(.interruptionEnded(shouldResume: shouldResume))
                    }
                }
            },
        ]
    }

    deinit {
        tasks.forEach { $0.cancel() }
        core.feed(.closed)
    }

    private static let counter = Atomic<Int>(0)

    /// Whether `item` has video: nil while it loads, false without an item.
    static func hasVideo(_ item: PlayerItem?) -> Bool? {
        guard let item else { return false }
        switch item.status {
        case .readyToPlay: return !item.videoTracks.isEmpty
        case .failed: return false
        default: return nil
        }
    }

    /// Gives everything back for good (idempotent): the session deactivates, notifying the
    /// others, and the owners are released. The player is left as it is.
    public func invalidate() { core.feed(.closed) }

    /// Whether this session holds the remote commands and Now Playing now.
    public var ownsRemoteControl: Bool { core.ownsRemoteControl }

    /// Publishes `player`'s item, position and rate as `owner`'s Now Playing (also used by a
    /// ``PlayerView`` that updates Now Playing by itself).
    static func publish(_ player: Player, to owner: NowPlayingInfoOwner) {
        let item = player.currentItem
        let rate = Double(player.rate)
        owner.nowPlayingInfo = item.map { item in
            let seconds = item.duration.seconds
            return NowPlayingInfo(title: item.metadata.title ?? item.url.lastPathComponent,
                                  artist: item.metadata.artist, album: item.metadata.album,
                                  duration: seconds.flatMap { $0 > 0 && $0.isFinite ? $0 : nil },
                                  elapsedTime: player.currentTime(), playbackRate: rate,
                                  persistentID: UInt64(UInt(bitPattern: ObjectIdentifier(item).hashValue)),
                                  trackURL: item.url, defaultPlaybackRate: Double(player.defaultRate))
        }
        owner.playbackState = item == nil ? .stopped : (rate != 0 ? .playing : .paused)
        owner.volume = Double(player.volume)
    }

    /// The machine and what it drives.
    final class Core: Sendable {
        let player: Player
        let session: AudioSession
        let info: NowPlayingInfoCenter
        let commands: RemoteCommandCenter
        let name: String

        private struct State {
            var machine = NowPlayingSessionMachine()
            var infoOwner: NowPlayingInfoOwner?
            var commandOwner: RemoteCommandOwner?
        }

        private let state = Mutex(State())

        init(player: Player, session: AudioSession, info: NowPlayingInfoCenter, commands: RemoteCommandCenter, name: String) {
            self.player = player
            self.session = session
            self.info = info
            self.commands = commands
            self.name = name
        }

        var ownsRemoteControl: Bool { state.withLock { $0.machine.ownsRemoteControl } }

        /// Runs `input` through the machine and carries out its actions, in order, under the
        /// lock (none of them calls back into this object).
        func feed(_ input: NowPlayingSessionMachine.Input) {
            state.withLock { s in
                for action in s.machine.handle(input) {
                    switch action {
                    case .setMoviePlaybackCategory:
                        // The app's playback options (mixWithOthers, duckOthers) are kept.
                        try? session.setCategory(.playback, mode: .moviePlayback,
                                                 options: session.category == .playback ? session.categoryOptions : [])
                    case .activateSession:
                        try? session.setActive(true)
                    case .deactivateSession:
                        try? session.setActive(false, options: .notifyOthersOnDeactivation)
                    case .takeRemoteControl:
                        let c = commands.pushOwner(name)
                        addTargets(owner: c)
                        s.commandOwner = c
                        s.infoOwner = info.pushOwner(name)
                    case .giveBackRemoteControl:
                        s.infoOwner?.release()
                        s.commandOwner?.release()
                        s.infoOwner = nil
                        s.commandOwner = nil
                    case .publishNowPlaying:
                        if let owner = s.infoOwner { publish(to: owner) }
                    case .pausePlayer:
                        player.pause()
                    case .resumePlayer:
                        player.play()
                    }
                }
            }
        }

        /// The player's transport on the pushed owner (the commands without a target here —
        /// next, previous, repeat… — are unavailable while the video owns the center).
        private func addTargets(owner: RemoteCommandOwner) {
            let p = player
            commands.play.addTarget(owner: owner) { _ in p.play(); return .success }
            commands.pause.addTarget(owner: owner) { _ in p.pause(); return .success }
            commands.togglePlayPause.addTarget(owner: owner) { _ in
                if p.rate != 0 { p.pause() } else { p.play() }
                return .success
            }
            commands.stop.addTarget(owner: owner) { _ in p.pause(); return .success }
            commands.changePlaybackPosition.addTarget(owner: owner) { e in
                guard p.currentItem != nil else { return .noActionableNowPlayingItem }
                p.seek(to: e.positionTime, toleranceBefore: 0, toleranceAfter: 0) { _ in }
                return .success
            }
        }

        private func publish(to owner: NowPlayingInfoOwner) { NowPlayingSession.publish(player, to: owner) }
    }
}
