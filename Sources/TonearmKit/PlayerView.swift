// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCore
import TonearmNowPlaying
import TonearmPlayback
import TonearmVideo
import TonearmWindow

/// Why a ``PlayerView`` could not open.
public enum PlayerViewError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The player has no current item to show.
    case noItem
    /// The player's item could not be loaded.
    case itemFailed(TonearmError)
    /// The window could not open (``VideoWindowError/noDisplay(_:)`` without a display: play the
    /// sound only).
    case window(VideoWindowError)

    public var description: String {
        switch self {
        case .noItem: "the player has no item to show"
        case .itemFailed(let e): "the item cannot be played: \(e)"
        case .window(let e): "\(e)"
        }
    }
}

/// A player in a ready window with built-in controls (AVPlayerViewController): the video through
/// a ``PlayerLayer``, controls drawn over it (play/pause, a seek bar with what is buffered,
/// elapsed and remaining time, the volume) that appear on mouse movement or a key and hide after
/// a few seconds, and the keys of ``PlayerViewMachine`` (space, ←/→, ↑/↓, m, f, q/Esc).
///
/// Closing the window — q, Esc, the window's close button, or ``close()`` — pauses the player,
/// detaches it from the window and closes the window (the view owns it): ``run()`` returns then.
/// With a ``nowPlayingSession`` it also gives the audio session, the remote commands and Now
/// Playing back (to the music player the video interrupted).
///
/// Now Playing: with ``updatesNowPlayingInfoCenter`` (the default, as on AVPlayerViewController)
/// and no ``nowPlayingSession``, the view publishes its item's title, duration, position and
/// rate to its ``infoCenter`` by itself while ``run()`` runs — on an owner of its own pushed on
/// the center, so that closing the window shows what was there before again.
///
/// The controls are fed from the player while they are visible: the window asks for their state
/// every ``Options/controlsRefreshInterval`` from a key or mouse movement until they hide
/// (``VideoWindow/feedControls(every:_:)``; nothing runs while they are hidden), and the player's
/// events (play, pause, seeks, the end) update them at once.
///
/// ```swift
/// let player = Player(url: URL(fileURLWithPath: "clip.mp4"))
/// let view = try await PlayerView.open(for: player)   // at the video's size, fitting the screen
/// player.play()
/// await view.run()                                     // until the window is closed
/// ```
///
/// Threading: every member may be used from any thread; ``run()`` once.
public final class PlayerView: Sendable {
    /// How ``open(for:options:)`` opens the window.
    public struct Options: Sendable, Hashable {
        /// The window's title; nil: the item's title, else its file name.
        public var title: String?
        /// The drawable area's size; nil: the video's presentation size (scaled down to fit the
        /// screen), 640×360 when the item has no video.
        public var size: VideoSize?
        public var fullScreen: Bool
        public var gravity: VideoGravity
        /// SDL's video driver (nil: SDL's choice or `SDL_VIDEODRIVER`).
        public var videoDriver: String?
        /// Seconds the controls stay after the last key or mouse movement.
        public var controlsHideDelay: Double
        /// How often the controls' time is refreshed while they are visible and the player plays.
        public var controlsRefreshInterval: Double
        /// The video's presentation size when the caller knows it before the item has loaded
        /// (`tonearm play VIDEO` has probed the file): the window is then created while the item
        /// loads, not after, titled with the file name until the item's title is known. Nil:
        /// the window is created once the item has loaded.
        public var expectedPresentationSize: VideoSize?

        public init(title: String? = nil, size: VideoSize? = nil, fullScreen: Bool = false,
                    gravity: VideoGravity = .resizeAspect, videoDriver: String? = nil,
                    controlsHideDelay: Double = 3, controlsRefreshInterval: Double = 0.25,
                    expectedPresentationSize: VideoSize? = nil) {
            self.title = title
            self.size = size
            self.expectedPresentationSize = expectedPresentationSize
            self.fullScreen = fullScreen
            self.gravity = gravity
            self.videoDriver = videoDriver
            self.controlsHideDelay = controlsHideDelay
            self.controlsRefreshInterval = controlsRefreshInterval
        }
    }

    public let player: Player
    /// The layer the picture is drawn through (it owns ``window``).
    public let layer: PlayerLayer
    /// The window (the view's own; closed by ``close()``).
    public var window: VideoWindow { layer.window }
    /// The rules of keys, clicks and close requests.
    public let machine: PlayerViewMachine
    /// Where the view publishes Now Playing (see ``updatesNowPlayingInfoCenter``).
    public let infoCenter: NowPlayingInfoCenter

    private struct State {
        var closed = false
        var running = false
        var nowPlayingSession: NowPlayingSession?
        var updatesNowPlayingInfoCenter = true
        /// The view's own Now Playing owner, while it publishes.
        var infoOwner: NowPlayingInfoOwner?
        /// The subtitle file of the item (its `.file` selection, kept for `j`'s cycle once it
        /// has been stepped away from), by item.
        var subtitleFile: (item: ObjectIdentifier, path: String)?
    }

    private let state = Mutex(State())
    private let subtitleSteps = EventBroadcaster<SubtitleSelection?>()

    /// A view showing `player` in a window opened with `configuration` (its own), publishing Now
    /// Playing to `infoCenter` (the process's by default).
    public init(player: Player, configuration: VideoWindow.Configuration, machine: PlayerViewMachine = PlayerViewMachine(),
                controlsRefreshInterval: Double = 0.25, infoCenter: NowPlayingInfoCenter = .default) throws(VideoWindowError) {
        var configuration = configuration
        // The view decides what a close request does (it stops the player first); the window
        // still closes when nobody answers: run() is what answers.
        configuration.closesOnRequest = true
        self.player = player
        self.machine = machine
        self.infoCenter = infoCenter
        layer = try PlayerLayer(player: player, configuration: configuration)
        refreshControls()
        // Called on the window thread while the controls show (weak: the window is the view's).
        layer.window.feedControls(every: controlsRefreshInterval) { [weak self] in self?.controlsState() }
    }

    /// Waits until the player's current item has loaded, then opens a view for it: at the video's
    /// presentation size (scaled down to fit the screen), titled with the item's title or file
    /// name (see ``Options``).
    public static func open(for player: Player, options: Options = Options(),
                            infoCenter: NowPlayingInfoCenter = .default) async throws(PlayerViewError) -> PlayerView {
        guard let item = player.currentItem else { throw .noItem }
        let events = item.events  // before the status is read: no change is missed between
        // The picture is opened and decoded while the item loads and the window opens, not
        // after: a holder takes the player's frames until the layer is attached, then hands it
        // the latest. Added before the item is ready, so that the player starts the picture
        // as soon as it is (beside the sound's output, which it does not wait for).
        let early = EarlyFrames()
        player.addVideoRenderer(early)
        defer { player.removeVideoRenderer(early) }
        // With the size known before the item has loaded, the window is created meanwhile (on
        // a thread of its own: creating it waits for SDL and the display).
        var creating: Task<Result<PlayerView, VideoWindowError>, Never>?
        var earlyTitle: String?
        if item.status == .unknown, let expected = options.expectedPresentationSize, expected != .zero {
            var config = configuration(for: item, options: options)
            if options.size == nil { (config.width, config.height) = (expected.width, expected.height) }
            // The first frame's texture is made once the window is up, before that frame comes.
            (config.expectedFrameWidth, config.expectedFrameHeight) = (expected.width, expected.height)
            if options.title == nil {
                let name = item.url.lastPathComponent
                config.title = name.isEmpty ? (item.url.host ?? item.url.absoluteString) : name
            }
            earlyTitle = config.title
            let refresh = options.controlsRefreshInterval
            creating = Task.detached {
                do throws(VideoWindowError) {
                    return .success(try PlayerView(player: player, configuration: config, controlsRefreshInterval: refresh,
                                                   infoCenter: infoCenter))
                } catch {
                    return .failure(error)
                }
            }
        }
        if item.status == .unknown {
            for await event in events {
                if case .itemStatusChanged = event, item.status != .unknown { break }
                if item.status != .unknown { break }
            }
        }
        if case .failed(let e) = item.status {
            if case .success(let view)? = await creating?.value { view.close() }
            throw .itemFailed(e)
        }
        if let creating {
            switch await creating.value {
            case .success(let view):
                // The item's own title, now that its tags are read.
                let title = options.title ?? title(for: item)
                if title != earlyTitle { view.window.setTitle(title) }
                early.hand(to: view.layer)
                return view
            case .failure(let e):
                throw .window(e)
            }
        }
        do {
            let view = try PlayerView(player: player, configuration: configuration(for: item, options: options),
                                      controlsRefreshInterval: options.controlsRefreshInterval, infoCenter: infoCenter)
            early.hand(to: view.layer)
            return view
        } catch {
            throw .window(error)
        }
    }

    /// The window ``open(for:options:)`` opens for `item`.
    public static func configuration(for item: PlayerItem, options: Options = Options()) -> VideoWindow.Configuration {
        let size = options.size ?? (item.presentationSize == .zero ? VideoSize(width: 640, height: 360) : item.presentationSize)
        return VideoWindow.Configuration(title: options.title ?? title(for: item), width: size.width, height: size.height,
                                         fullScreen: options.fullScreen, gravity: options.gravity,
                                         videoDriver: options.videoDriver, controlsHideDelay: options.controlsHideDelay,
                                         fitsScreen: true)
    }

    /// The item's title (its tags), else its file name.
    public static func title(for item: PlayerItem) -> String {
        if let t = item.metadata.title?.trimmingCharacters(in: .whitespacesAndNewlines), !t.isEmpty { return t }
        let name = item.url.lastPathComponent
        return name.isEmpty ? (item.url.host ?? item.url.absoluteString) : name
    }

    /// Answers the window's keys, clicks and close requests and keeps the controls current, until
    /// the window is closed; then the player is paused and detached. Returns at once when the
    /// view is closed already.
    public func run() async {
        let go = state.withLock { s -> Bool in
            guard !s.running, !s.closed else { return false }
            s.running = true
            return true
        }
        guard go else { return }
        let playerEvents = player.events
        let follower = Task { [weak self] in
            for await event in playerEvents {
                guard let self else { return }
                switch event {
                case .timeControlStatusChanged, .rateChanged, .seeked, .currentItemChanged, .itemStatusChanged,
                     .didPlayToEndTime, .playbackStalled:
                    self.refreshControls()
                    self.publishNowPlaying()
                default:
                    break
                }
            }
        }
        defer { follower.cancel() }
        publishNowPlaying()
        for await event in window.events {
            if case .closed = event { break }
            for action in machine.handle(event, state: machineState()) { perform(action) }
        }
        finish()
    }

    /// Closes the view: pauses the player, detaches it and closes the window (``run()`` returns).
    public func close() {
        finish()
    }

    /// Whether the view is closed.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The session that joins this view's player to the audio session, the remote commands and
    /// Now Playing, if any: closing the window invalidates it, so the music player gets them back
    /// (set it after ``open(for:options:)``; set on a closed view, it is invalidated at once).
    public var nowPlayingSession: NowPlayingSession? {
        get { state.withLock { $0.nowPlayingSession } }
        set {
            let closed = state.withLock { s -> Bool in
                s.nowPlayingSession = newValue
                return s.closed
            }
            if closed { newValue?.invalidate() }
            publishNowPlaying()
        }
    }

    /// Whether the view publishes its item's title, duration, position and rate to
    /// ``infoCenter`` by itself (`AVPlayerViewController.updatesNowPlayingInfoCenter`; default
    /// true): while ``run()`` runs and no ``nowPlayingSession`` is set, on an owner of the view's
    /// own, released when the window closes, when this is set to false or when a session is set
    /// (the session publishes then).
    public var updatesNowPlayingInfoCenter: Bool {
        get { state.withLock { $0.updatesNowPlayingInfoCenter } }
        set {
            state.withLock { $0.updatesNowPlayingInfoCenter = newValue }
            publishNowPlaying()
        }
    }

    /// Whether the view shows its own Now Playing on ``infoCenter`` now.
    public var publishesNowPlaying: Bool { state.withLock { $0.infoOwner != nil } }

    /// The subtitle drawn after each `j` (``cycleSubtitle()``), from the moment of the call.
    public var subtitleChanges: AsyncStream<SubtitleSelection?> { subtitleSteps.stream(bufferingNewest: 16) }

    /// The subtitles `j` steps through for the current item: its subtitle file (the one selected
    /// when the view first saw it: the `.srt` beside the video or the file chosen), then its
    /// subtitle tracks (text and bitmap); "off" after the last.
    public func subtitleCycle() -> [SubtitleSelection] {
        guard let item = player.currentItem else { return [] }
        let id = ObjectIdentifier(item)
        let file = state.withLock { s -> String? in
            if case .file(let path) = item.selectedSubtitle { s.subtitleFile = (id, path) }
            return s.subtitleFile.flatMap { $0.item == id ? $0.path : nil }
        }
        return SubtitleSelection.cycle(file: file, tracks: item.subtitleTracks)
    }

    /// Draws the next subtitle of the current item (mpv's `j`; see ``subtitleCycle()``) and
    /// returns it (nil: none). Nothing changes for an item without subtitles.
    @discardableResult
    public func cycleSubtitle() -> SubtitleSelection? {
        guard let item = player.currentItem else { return nil }
        let cycle = subtitleCycle()
        guard !cycle.isEmpty else { return item.selectedSubtitle }
        let next = SubtitleSelection.next(after: item.selectedSubtitle, in: cycle)
        do { try item.select(subtitle: next) } catch { return item.selectedSubtitle }
        subtitleSteps.yield(next)
        return next
    }

    /// Whether the controls show and are kept current (a key or mouse movement less than the
    /// hide delay ago): ``isFeedingControls``.
    public var controlsAreLive: Bool { isFeedingControls }

    /// Whether the window is feeding the controls from the player (from a key or mouse movement
    /// until they hide; never while they are hidden): ``VideoWindow/isFeedingControls``.
    public var isFeedingControls: Bool { window.isFeedingControls }

    /// ``isFeedingControls`` as it changes, from the moment of the call.
    public var controlsFeedChanges: AsyncStream<Bool> { window.controlsFeedChanges }

    private func finish() {
        let (first, session, owner) = state.withLock { s in
            let first = !s.closed
            s.closed = true
            defer { s.infoOwner = nil }
            return (first, s.nowPlayingSession, s.infoOwner)
        }
        owner?.release()
        guard first else { return }
        window.feedControls(every: 1, nil)
        player.pause()
        session?.invalidate()
        layer.close()
    }

    /// Publishes the player's item to the view's own Now Playing owner when the view should
    /// (see ``updatesNowPlayingInfoCenter``): pushes the owner on first use, releases it when the
    /// view should not publish any more. The player is read outside the view's lock; a
    /// publication that loses a race with the release changes nothing (a released owner's
    /// edits are dropped by the center).
    private func publishNowPlaying() {
        let (owner, released) = state.withLock { s -> (NowPlayingInfoOwner?, NowPlayingInfoOwner?) in
            let wanted = s.running && !s.closed && s.updatesNowPlayingInfoCenter && s.nowPlayingSession == nil
            guard wanted else {
                defer { s.infoOwner = nil }
                return (nil, s.infoOwner)
            }
            if s.infoOwner == nil { s.infoOwner = infoCenter.pushOwner("video") }
            return (s.infoOwner, nil)
        }
        released?.release()
        if let owner { NowPlayingSession.publish(player, to: owner) }
    }

    private func machineState() -> PlayerViewMachine.State {
        PlayerViewMachine.State(isPlaying: player.rate != 0, currentTime: player.currentTime(),
                                duration: player.currentItem?.duration.seconds, volume: player.volume,
                                isMuted: player.isMuted, isFullScreen: window.isFullScreen)
    }

    private func perform(_ action: PlayerViewMachine.Action) {
        switch action {
        case .play: player.play()
        case .pause: player.pause()
        case .seek(let to): player.seek(to: to) { [weak self] _ in self?.refreshControls() }
        case .setVolume(let v): player.volume = v
        case .setMuted(let m): player.isMuted = m
        case .setFullScreen(let on): window.setFullScreen(on)
        case .cycleSubtitle: cycleSubtitle()
        case .showControls:
            // The window has shown them for the movement or key itself (and feeds them while they
            // show); asking again would also show them for the movement the window reports when
            // it opens under the pointer, before its controls were set (which it ignores).
            break
        case .close: finish()
        }
        refreshControls()
    }

    /// The controls drawn from the player as it is now.
    public func controlsState() -> ControlsState {
        let item = player.currentItem
        let ahead = item?.bufferedSecondsAhead ?? .infinity
        let now = player.currentTime()
        return ControlsState(isPlaying: player.rate != 0, currentTime: now, duration: item?.duration.seconds,
                             bufferedUntil: ahead.isFinite ? now + ahead : nil,
                             volume: Double(player.volume), isMuted: player.isMuted)
    }

    private func refreshControls() {
        guard !isClosed else { return }
        window.setControls(controlsState())
    }
}

/// `error.localizedDescription` is the same text as ``description`` (ported iOS code reports
/// errors that way; see TonearmCore's LocalizedErrors.swift).
extension PlayerViewError: LocalizedError {
    public var errorDescription: String? { description }
}

/// The player's renderer while a ``PlayerView``'s window opens: the player opens its video and
/// decodes (and presents) the first frame meanwhile; the latest frame presented is kept, and
/// drawn into the layer once the window is up (``hand(to:)``). Added before the layer, so that
/// each frame reaches it before the layer: the frame handed on is never older than one the
/// layer has drawn.
final class EarlyFrames: PlayerVideoRenderer, Sendable {
    private let state = Mutex<(latest: VideoFrame?, handed: Bool)>((nil, false))

    /// Player's video thread.
    func show(_ frame: VideoFrame) {
        state.withLock { s in
            guard !s.handed else { return }
            s.latest = frame
        }
    }

    /// Draws the latest frame into `layer` (whose window is up and attached to the player) and
    /// keeps no more. Under the holder's lock, so that a frame presented meanwhile (which
    /// reaches the holder first) cannot be drawn before the older one handed here; the window's
    /// `show` only queues the frame for its own thread (a short lock, no wait).
    func hand(to layer: PlayerLayer) {
        state.withLock { s in
            s.handed = true
            if let frame = s.latest { layer.show(frame) }
            s.latest = nil
        }
    }
}
