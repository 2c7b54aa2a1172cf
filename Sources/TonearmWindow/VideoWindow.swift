// SPDX-License-Identifier: GPL-3.0-or-later
import CSDL2
import CSDL2Lazy
import Foundation
import Synchronization
import TonearmCore

/// A window that shows video frames, through SDL2 (the picture of AVPlayerLayer, without the
/// player): the latest ``VideoFrame`` given to ``show(_:)`` is drawn with the window's
/// ``VideoGravity``, its rotation and pixel aspect honoured, black bars around it; it is drawn
/// again when the window is exposed or resized. What happens in the window (keys, the mouse,
/// resizes, a close request) comes out of ``events``.
///
/// Threads: one thread of the window's own owns SDL from start to end (SDL's video must be used
/// on the thread that started it); every method here may be called from any thread. ``show(_:)``
/// keeps only the latest frame (a frame not yet drawn is replaced, never queued) and wakes the
/// window thread with an SDL event; the window thread takes the frame out under a lock held for
/// an assignment, so it never waits on a producer, and ``close()`` always ends it.
///
/// SDL's video is one per process: one window is open at a time.
///
/// ```swift
/// let window: VideoWindow
/// do {
///     window = try VideoWindow(.init(title: "clip.mp4", width: 1280, height: 720))
/// } catch .noDisplay(let why) {
///     print("playing the sound only: \(why)")
///     return
/// }
/// try window.show(frame)                   // from the decoder's thread, each frame when due
/// for await event in window.events {       // keys, the mouse, resizes, a close request
///     if case .key(.f, _) = event { window.setFullScreen(!window.isFullScreen) }
/// }
/// ```
public final class VideoWindow: Sendable {
    /// How to open the window.
    public struct Configuration: Sendable, Hashable {
        public var title: String
        /// The drawable area's size, in pixels.
        public var width: Int
        public var height: Int
        public var resizable: Bool
        public var fullScreen: Bool
        public var gravity: VideoGravity
        /// `.automatic`: an accelerated renderer when SDL has one on a GPU, else SDL's software
        /// renderer (also when SDL's OpenGL is a software one, as on Xvfb: then drawing straight
        /// into the window, without OpenGL).
        public var renderer: Renderer
        /// SDL's video driver (`x11`, `wayland`, …; SDL_HINT_VIDEODRIVER); nil lets SDL choose
        /// (or the `SDL_VIDEODRIVER` environment variable).
        public var videoDriver: String?
        /// Whether a close request (the window's close button, the desktop) closes the window
        /// at once, after ``VideoWindowEvent/closeRequested`` — so closing works even when nobody
        /// answers the event. Otherwise the owner decides and calls ``close()``.
        public var closesOnRequest: Bool
        /// How long the built-in controls (``VideoWindow/setControls(_:)``) stay after the last
        /// mouse movement or key.
        public var controlsHideDelay: Double
        /// Whether a size larger than the screen is scaled down (its shape kept) to 90 % of the
        /// screen's usable area before the window opens (``VideoGeometry/windowSize(for:screen:fraction:)``).
        public var fitsScreen: Bool
        /// The size of the frames expected first, when known (`yuv420p`): the window thread makes
        /// their texture once the window is up, before the first frame comes (making a 1080p
        /// texture takes milliseconds that would otherwise delay that frame). Nil: made with the
        /// first frame. A first frame of another size or format gets a texture of its own.
        public var expectedFrameWidth: Int?
        public var expectedFrameHeight: Int?

        public enum Renderer: String, Sendable, Hashable {
            case automatic, software
        }

        public init(title: String = "Tonearm", width: Int = 640, height: Int = 360, resizable: Bool = true,
                    fullScreen: Bool = false, gravity: VideoGravity = .resizeAspect, renderer: Renderer = .automatic,
                    videoDriver: String? = nil, closesOnRequest: Bool = true, controlsHideDelay: Double = 3,
                    fitsScreen: Bool = true) {
            self.title = title
            self.width = width
            self.height = height
            self.resizable = resizable
            self.fullScreen = fullScreen
            self.gravity = gravity
            self.renderer = renderer
            self.videoDriver = videoDriver
            self.closesOnRequest = closesOnRequest
            self.controlsHideDelay = controlsHideDelay
            self.fitsScreen = fitsScreen
        }
    }

    /// What the window reports, as it happens; it ends after ``VideoWindowEvent/closed``.
    /// One consumer (an `AsyncStream`); the newest 256 events are kept for a slow one.
    public let events: AsyncStream<VideoWindowEvent>
    /// The name of SDL's renderer in use (`opengl`, `software`, …).
    public let rendererName: String

    private let shared: Shared
    /// Who has SDL's video (one window at a time; see ``prepare(videoDriver:)``).
    static let owner = Mutex<VideoOwner>(.free)

    /// Opens the window and waits until it is on screen (or failed). A video started ahead by
    /// ``prepare(videoDriver:)`` with the same driver is taken: its thread, already connected to
    /// the display, opens the window.
    /// - Throws: ``VideoWindowError/noDisplay(_:)`` without a display (the caller plays the sound
    ///   only), ``VideoWindowError/sdlNotInstalled(library:reason:)`` when SDL2 cannot be loaded,
    ///   ``VideoWindowError/cannotCreateWindow(_:)``, ``VideoWindowError/anotherWindowIsOpen``.
    public init(_ configuration: Configuration = Configuration()) throws(VideoWindowError) {
        if let error = Self.displayError(videoDriver: configuration.videoDriver) { throw error }
        // SDL is loaded here, the first time a window opens (CSDL2Lazy): not at the program's start.
        guard tonearm_sdl2_load() == 1 else {
            throw .sdlNotInstalled(library: String(cString: tonearm_sdl2_library),
                                   reason: tonearm_sdl2_load_error().map { String(cString: $0) } ?? "unknown error")
        }
        let prepared = try Self.claimVideo(driver: configuration.videoDriver)

        let (stream, continuation) = AsyncStream.makeStream(of: VideoWindowEvent.self, bufferingPolicy: .bufferingNewest(256))
        events = stream
        let shared = Shared(configuration: configuration, events: continuation)
        self.shared = shared
        if let prepared {
            prepared.hand(shared)
        } else {
            let thread = Thread {
                WindowThread.run(shared, driver: configuration.videoDriver)
                Self.owner.withLock { $0 = .free }
                shared.finish()
            }
            thread.name = "tonearm-window"
            thread.start()
        }
        switch shared.waitForStart() {
        case .success(let name): rendererName = name
        case .failure(let error): shared.waitForEnd(); throw error
        }
    }

    /// Why no window can open for `videoDriver` (SDL's hint; nil: `SDL_VIDEODRIVER` or SDL's
    /// choice): ``VideoWindowError/noDisplay(_:)`` when the driver needs a display and neither
    /// `DISPLAY` nor `WAYLAND_DISPLAY` is set; nil otherwise.
    static func displayError(videoDriver: String?) -> VideoWindowError? {
        let environment = ProcessInfo.processInfo.environment
        let driver = videoDriver ?? environment["SDL_VIDEODRIVER"]
        let needsDisplay = !["offscreen", "dummy", "evdev", "kmsdrm"].contains(driver ?? "")
        if needsDisplay, (environment["DISPLAY"] ?? "").isEmpty, (environment["WAYLAND_DISPLAY"] ?? "").isEmpty {
            return .noDisplay("neither DISPLAY nor WAYLAND_DISPLAY is set")
        }
        return nil
    }

    /// Takes SDL's video for a new window: the video prepared for `driver` when there is one
    /// (returned: its thread opens the window), else nothing (the window starts a thread of its
    /// own). A video prepared for another driver, or leaving, is waited out first.
    /// - Throws: ``VideoWindowError/anotherWindowIsOpen`` while a window has it.
    private static func claimVideo(driver: String?) throws(VideoWindowError) -> PreparedVideo? {
        enum Claim { case fresh, prepared(PreparedVideo), busy, waitFor(PreparedVideo) }
        while true {
            let claim = owner.withLock { o -> Claim in
                switch o {
                case .free:
                    o = .window
                    return .fresh
                case .window:
                    return .busy
                case .prepared(let p) where p.driver == driver:
                    o = .window
                    return .prepared(p)
                case .prepared(let p):
                    o = .leaving(p)
                    return .waitFor(p)
                case .leaving(let p):
                    return .waitFor(p)
                }
            }
            switch claim {
            case .fresh: return nil
            case .prepared(let p): return p
            case .busy: throw .anotherWindowIsOpen
            case .waitFor(let p):
                p.cancel()
                p.waitForEnd()
            }
        }
    }

    deinit { close() }

    /// Shows `frame` as soon as the window thread can (replacing a frame given before and not
    /// yet drawn). Returns the frame's number, which ``VideoPresentation/submission`` names.
    /// - Throws: ``VideoWindowError/malformedFrame(_:)`` when its planes do not hold its picture.
    @discardableResult
    public func show(_ frame: VideoFrame) throws(VideoWindowError) -> UInt64 {
        if let problem = frame.layoutProblem { throw .malformedFrame(problem) }
        return shared.submit { state in
            state.submissions += 1
            if state.pendingFrame != nil { state.framesReplaced += 1 }
            state.pendingFrame = (frame, state.submissions)
            return state.submissions
        }
    }

    /// How the picture fills the window.
    public var gravity: VideoGravity {
        get { shared.read { $0.gravity } }
        set { shared.submit { $0.gravity = newValue; $0.needsRedraw = true } }
    }

    /// Full screen on the window's display (SDL's desktop full screen), or back.
    public func setFullScreen(_ on: Bool) { shared.submit { $0.fullScreenRequest = on } }

    /// Whether the window is full screen (as SDL last said).
    public var isFullScreen: Bool { shared.read { $0.isFullScreen } }

    /// Resizes the window's drawable area.
    public func setSize(width: Int, height: Int) { shared.submit { $0.sizeRequest = (width, height) } }

    public func setTitle(_ title: String) { shared.submit { $0.titleRequest = title } }

    /// Built-in controls drawn over the video from `state` (a seek bar with the played and
    /// buffered parts, play/pause, elapsed and remaining time, the volume): they show when the
    /// mouse moves or a key is pressed over the window, or on ``showControls()``, and hide
    /// ``Configuration/controlsHideDelay`` seconds after. A click on them comes out as
    /// ``VideoWindowEvent/controls(_:)``. Call again whenever the state changes; nil removes them.
    public func setControls(_ state: ControlsState?) {
        shared.submit { $0.controls = state; $0.controlsChanged = true }
    }

    /// Shows the built-in controls now (they hide after the delay).
    public func showControls() { shared.submit { $0.showControlsRequest = true } }

    /// Keeps the built-in controls current while they show: the window thread calls `state` when
    /// they appear and every `interval` seconds until they hide (nil: keep what is drawn), and
    /// never while they are hidden — so a player's time moves on the seek bar without anything
    /// running while nobody looks. ``setControls(_:)`` still draws a change at once. `state` is
    /// called on the window thread: it must not wait for a lock held while calling this window.
    /// Nil stops it.
    public func feedControls(every interval: Double, _ state: (@Sendable () -> ControlsState?)?) {
        shared.submit { s in
            s.controlsFeed = state.map { ControlsFeed(interval: max(0.01, interval), state: $0) }
            s.controlsFeedChanged = true
        }
    }

    /// Whether ``feedControls(every:_:)``'s `state` is being called (set, and the controls show).
    public var isFeedingControls: Bool { shared.read { $0.feeding } }

    /// ``isFeedingControls`` as it changes, from the moment of the call.
    public var controlsFeedChanges: AsyncStream<Bool> { shared.feedingChanges.stream(bufferingNewest: 16) }

    /// Whether a frame has been drawn (AVPlayerLayer's `isReadyForDisplay`).
    public var isReadyForDisplay: Bool { shared.read { $0.lastPresentation?.frameTime != nil } }

    /// Where the picture is in the window, in pixels (AVPlayerLayer's `videoRect`), as last drawn.
    public var videoRect: VideoRect { shared.read { $0.lastPresentation?.videoRect ?? .zero } }

    /// The last presentation, if any.
    public var lastPresentation: VideoPresentation? { shared.read { $0.lastPresentation } }

    /// How many textures the window has made so far (a new one for each new frame size or
    /// format, and one ahead of the first frame with ``Configuration/expectedFrameWidth``).
    var texturesMade: Int { shared.read { $0.texturesMade } }

    /// Whether the window is still open (false once closed, by ``close()`` or a close request).
    public var isOpen: Bool { shared.read { !$0.ended } }

    /// Waits until a presentation satisfies `condition` (the last one so far counts) or the
    /// window closes, at most `timeout` seconds; returns it, or nil.
    public func waitForPresentation(timeout: Double, where condition: (VideoPresentation) -> Bool) -> VideoPresentation? {
        shared.waitForPresentation(deadline: Date(timeIntervalSinceNow: timeout), condition)
    }

    /// Waits until the window thread has ended (after ``close()`` or a close request), at most
    /// `timeout` seconds; true when it has.
    public func waitUntilClosed(timeout: Double) -> Bool {
        shared.waitForEnd(deadline: Date(timeIntervalSinceNow: timeout))
    }

    /// Closes the window and waits until its thread has let SDL go. Idempotent; from the window's
    /// own thread (never the case for callers of this API) it only asks.
    public func close() {
        shared.submit { $0.closeRequest = true }
        if !shared.isWindowThread { shared.waitForEnd() }
    }
}

/// The state the window thread and its callers share, under one lock (an `NSCondition`, for the
/// waits of ``VideoWindow/init(_:)``, ``VideoWindow/close()`` and the tests).
final class Shared: @unchecked Sendable {
    struct State {
        var pendingFrame: (VideoFrame, UInt64)?
        var submissions: UInt64 = 0
        /// Frames given to ``VideoWindow/show(_:)`` and replaced by a later one before drawn.
        var framesReplaced = 0
        var gravity: VideoGravity
        var needsRedraw = false
        var fullScreenRequest: Bool?
        var sizeRequest: (Int, Int)?
        var titleRequest: String?
        var closeRequest = false
        var controls: ControlsState?
        var controlsChanged = false
        var showControlsRequest = false
        var controlsFeed: ControlsFeed?
        var controlsFeedChanged = false
        /// The window thread calls the feed now (``VideoWindow/isFeedingControls``).
        var feeding = false
        var isFullScreen: Bool
        var lastPresentation: VideoPresentation?
        /// SDL is started and the wake-up event registered: ``Shared/submit(_:)`` may push it.
        var wakeType: UInt32?
        /// A wake-up event is in SDL's queue and not yet handled.
        var wakePending = false
        var start: Result<String, VideoWindowError>?
        var ended = false
        /// Textures the window thread has made (for tests: one for frames of one size and format).
        var texturesMade = 0
    }

    let configuration: VideoWindow.Configuration
    let events: AsyncStream<VideoWindowEvent>.Continuation
    let feedingChanges = EventBroadcaster<Bool>()
    private let condition = NSCondition()
    private var state: State
    private var windowThread: Thread?

    init(configuration: VideoWindow.Configuration, events: AsyncStream<VideoWindowEvent>.Continuation) {
        self.configuration = configuration
        self.events = events
        state = State(gravity: configuration.gravity, isFullScreen: configuration.fullScreen)
    }

    var isWindowThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        return windowThread == Thread.current
    }

    func read<T>(_ body: (State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(state)
    }

    /// Changes the state and wakes the window thread (one wake-up event in SDL's queue at most).
    /// SDL_PushEvent is safe from any thread; it is called under the lock so that it never
    /// races the window thread's SDL_Quit (which clears `wakeType` under the lock first).
    @discardableResult
    func submit<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        let result = body(&state)
        if let type = state.wakeType, !state.wakePending {
            var event = SDL_Event()
            event.type = type
            if SDL_PushEvent(&event) == 1 { state.wakePending = true }
        }
        return result
    }

    /// The window thread's side: changes the state without waking anyone.
    @discardableResult
    func update<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        let result = body(&state)
        condition.broadcast()
        return result
    }

    func started(_ result: Result<String, VideoWindowError>) {
        update {
            $0.start = result
        }
    }

    func markWindowThread() {
        condition.lock()
        windowThread = Thread.current
        condition.unlock()
    }

    func waitForStart() -> Result<String, VideoWindowError> {
        condition.lock()
        defer { condition.unlock() }
        while state.start == nil && !state.ended { condition.wait() }
        return state.start ?? .failure(.cannotCreateWindow("the window thread ended"))
    }

    func finish() {
        events.yield(.closed)
        events.finish()
        update { $0.ended = true; $0.wakeType = nil }
    }

    func waitForEnd() {
        condition.lock()
        defer { condition.unlock() }
        while !state.ended { condition.wait() }
    }

    func waitForEnd(deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !state.ended { if !condition.wait(until: deadline) { break } }
        return state.ended
    }

    func waitForPresentation(deadline: Date, _ test: (VideoPresentation) -> Bool) -> VideoPresentation? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let p = state.lastPresentation, test(p) { return p }
            if state.ended { return nil }
            if !condition.wait(until: deadline) {
                if let p = state.lastPresentation, test(p) { return p }
                return nil
            }
        }
    }
}

/// What keeps the built-in controls current while they show (``VideoWindow/feedControls(every:_:)``).
struct ControlsFeed: Sendable {
    var interval: Double
    var state: @Sendable () -> ControlsState?
}
