// SPDX-License-Identifier: GPL-3.0-or-later
import CSDL2
import Foundation
import TonearmCore

/// The window thread: SDL from SDL_Init to SDL_Quit, on one thread. It sleeps in SDL_WaitEvent
/// (woken by the window's own events and by ``Shared/submit(_:)``'s wake-up event), and after
/// each batch of events takes what callers asked for out of the shared state and draws.
struct WindowThread: ~Copyable {
    let shared: Shared
    let window: OpaquePointer
    let renderer: OpaquePointer
    let wakeType: UInt32
    var texture: OpaquePointer?
    var textureFormat: VideoFrame.PixelFormat?
    var textureWidth = 0
    var textureHeight = 0
    /// The frame drawn (its geometry, time and number; the pixels are in the texture).
    var frame: VideoFrame?
    var submission: UInt64 = 0
    var presentations = 0
    var framesTaken = 0
    /// The built-in controls' state (nil: none) and when they show.
    var controls: ControlsState?
    var overlay: ControlsOverlay
    /// What keeps them current while they show, whether it is being called, and when next.
    var feed: ControlsFeed?
    var feeding = false
    var nextFeed: Double?
    /// Full screen without a window manager: the window's own geometry before it covered the
    /// screen (nil when not in that state).
    var coveringScreenFrom: (x: Int32, y: Int32, width: Int32, height: Int32)?

    init(shared: Shared, window: OpaquePointer, renderer: OpaquePointer, wakeType: UInt32) {
        self.shared = shared
        self.window = window
        self.renderer = renderer
        self.wakeType = wakeType
        overlay = ControlsOverlay(hideDelay: shared.configuration.controlsHideDelay)
    }

    /// Whether `renderer` is one of SDL's OpenGL renderers on an OpenGL that draws in software
    /// (Mesa's llvmpipe, softpipe or swrast; Google's SwiftShader).
    static func isSoftwareOpenGL(_ renderer: OpaquePointer) -> Bool {
        var info = SDL_RendererInfo()
        guard SDL_GetRendererInfo(renderer, &info) == 0, let name = info.name,
              String(cString: name).hasPrefix("opengl"), let gl = csdl2_current_gl_renderer() else { return false }
        return isSoftwareOpenGL(named: String(cString: gl))
    }

    /// The device nodes a GPU shows itself by: `/dev/dri/*` (DRM: `card0`, `renderD128`) and
    /// `/dev/nvidia*` (NVIDIA's own driver), as paths.
    static func deviceNodes() -> [String] {
        let fm = FileManager.default
        let dri = ((try? fm.contentsOfDirectory(atPath: "/dev/dri")) ?? []).map { "/dev/dri/\($0)" }
        let dev = ((try? fm.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("nvidia") }.map { "/dev/\($0)" }
        return dri + dev
    }

    /// Whether `nodes` (``deviceNodes()``) include a GPU's: a DRM card or render node, or
    /// NVIDIA's control device. Without one, OpenGL can only draw in software.
    static func hasGPUDevice(_ nodes: [String]) -> Bool {
        nodes.contains { n in
            let name = n.split(separator: "/").last.map(String.init) ?? n
            return (n.hasPrefix("/dev/dri/") && (name.hasPrefix("card") || name.hasPrefix("renderD"))) || n == "/dev/nvidiactl"
        }
    }

    /// Whether an OpenGL renderer string (GL_RENDERER) names a software rasteriser.
    static func isSoftwareOpenGL(named gl: String) -> Bool {
        let g = gl.lowercased()
        return ["llvmpipe", "softpipe", "software rasterizer", "swrast", "swiftshader"].contains { g.contains($0) }
    }

    /// Seconds on SDL's monotonic clock.
    static var now: Double { Double(SDL_GetTicks64()) / 1000 }

    /// A new window thread, from start to end: SDL's video started, the window run, SDL stopped.
    static func run(_ shared: Shared, driver: String?) {
        shared.markWindowThread()
        if let failure = startVideo(driver: driver) {
            shared.started(.failure(failure))
            return
        }
        runWindow(shared)
    }

    /// Starts SDL's video on the calling thread (which then owns it: the window is made and
    /// run there). SDL's video `driver` hint when given. Nil once started; else the error
    /// (SDL stopped again).
    static func startVideo(driver: String?) -> VideoWindowError? {
        // The program's own signal handling stays (SDL would turn SIGINT into SDL_QUIT).
        SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "linear")
        SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0")
        // A close request is the window's (SDL_WINDOWEVENT_CLOSE), reported once: no SDL_QUIT after it.
        SDL_SetHint(SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE, "0")
        if let driver { SDL_SetHint(SDL_HINT_VIDEODRIVER, driver) }
        // Xlib's default error handler ends the process; a late request to a window that is
        // going away (SDL's cross-thread wake-up) must not end the player. Set before SDL starts,
        // so that SDL's own handler falls back to it and SDL_Quit puts it back.
        _ = csdl2_x11_survive_protocol_errors()
        guard SDL_InitSubSystem(SDL_INIT_VIDEO) == 0 else {
            let failure = VideoWindowError.noDisplay("SDL cannot start its video: \(String(cString: SDL_GetError()))")
            SDL_Quit()
            return failure
        }
        return nil
    }

    /// Stops SDL's video, started by ``startVideo(driver:)`` on this thread.
    static func stopVideo() {
        SDL_QuitSubSystem(SDL_INIT_VIDEO)
        SDL_Quit()
    }

    /// With SDL's video started on this thread (``startVideo(driver:)``): opens the window of
    /// `shared`'s configuration and runs it until it closes; SDL's video is stopped at the end.
    static func runWindow(_ shared: Shared) {
        defer { stopVideo() }
        let c = shared.configuration
        var flags = SDL_WINDOW_SHOWN.rawValue
        if c.resizable { flags |= SDL_WINDOW_RESIZABLE.rawValue }
        var size = (width: max(1, c.width), height: max(1, c.height))
        var usable = SDL_Rect()
        if c.fitsScreen, SDL_GetDisplayUsableBounds(0, &usable) == 0 {
            size = VideoGeometry.windowSize(for: size, screen: (Int(usable.w), Int(usable.h)))
        }
        guard let window = SDL_CreateWindow(c.title, CSDL2_WINDOWPOS_CENTERED, CSDL2_WINDOWPOS_CENTERED,
                                            Int32(clamping: size.width), Int32(clamping: size.height), flags) else {
            shared.started(.failure(.cannotCreateWindow(String(cString: SDL_GetError()))))
            return
        }
        defer { SDL_DestroyWindow(window) }
        var renderer: OpaquePointer?
        var softwareOpenGL = false
        if c.renderer == .automatic {
            // Without a GPU (Xvfb, a virtual machine) OpenGL is Mesa drawing in software: at
            // 1080p its texture upload, conversion and buffer swap cost about twice the CPU of
            // SDL's software renderer drawing straight into the window, and starting it delays
            // the first frame by ~50 ms (scripts/bench video). With no GPU device at all it is
            // not tried; with one, the OpenGL renderer is asked what it draws with (Xvfb on a
            // machine with a GPU still has only Mesa's software OpenGL).
            if !Self.hasGPUDevice(Self.deviceNodes()) {
                softwareOpenGL = true
            } else {
                renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_ACCELERATED.rawValue)
                if let r = renderer, Self.isSoftwareOpenGL(r) {
                    SDL_DestroyRenderer(r)
                    renderer = nil
                    softwareOpenGL = true
                }
            }
        }
        if renderer == nil {
            // SDL would otherwise show the software renderer's surface through an OpenGL texture
            // (its "framebuffer acceleration"): the same software OpenGL again. The window's own
            // framebuffer (shared memory with the X server) instead — where the video driver has
            // one; where it has not, SDL's default again.
            if softwareOpenGL { SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0") }
            renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue)
            if renderer == nil, softwareOpenGL {
                SDL_ResetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION)
                renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue)
            }
        }
        guard let renderer else {
            shared.started(.failure(.cannotCreateWindow("no renderer: \(String(cString: SDL_GetError()))")))
            return
        }
        defer { SDL_DestroyRenderer(renderer) }
        var info = SDL_RendererInfo()
        let name = SDL_GetRendererInfo(renderer, &info) == 0 && info.name != nil ? String(cString: info.name) : "unknown"
        let wakeType = SDL_RegisterEvents(1)
        guard wakeType != UInt32.max else {
            shared.started(.failure(.cannotCreateWindow("no SDL user event: \(String(cString: SDL_GetError()))")))
            return
        }
        shared.update { $0.wakeType = wakeType }
        var thread = WindowThread(shared: shared, window: window, renderer: renderer, wakeType: wakeType)
        // Full screen once the window is there (and the window manager, if any, is known).
        if c.fullScreen { thread.setFullScreen(true) }
        // The first frame's texture, when its size is known: made now, while the frame is
        // still being decoded, not when it comes.
        if let w = c.expectedFrameWidth, let h = c.expectedFrameHeight { thread.makeTexture(.yuv420p, width: w, height: h) }
        shared.started(.success(name))
        thread.loop()
        // No wake-up event may be pushed from here on (SDL is about to stop); no feed is called.
        shared.update { $0.wakeType = nil; $0.feeding = false }
        if thread.feeding { shared.feedingChanges.yield(false) }
        if let t = thread.texture { SDL_DestroyTexture(t) }
    }

    mutating func loop() {
        var redraw = true
        var event = SDL_Event()
        while true {
            feedControls(redraw: &redraw)
            if redraw {
                draw()
                redraw = false
            }
            // Asleep until an event, or until the controls are due to hide (then drawn without
            // them) or to be fed again.
            if let wake = nextWake() {
                let ms = Int32(clamping: Int(((wake - Self.now) * 1000).rounded(.up)) + 1)
                if SDL_WaitEventTimeout(&event, max(1, ms)) == 0 {
                    redraw = true
                    continue
                }
            } else {
                guard SDL_WaitEvent(&event) == 1 else { return }
            }
            var closing = false
            repeat {
                if handle(&event, redraw: &redraw) { closing = true }
            } while SDL_PollEvent(&event) == 1
            if applyRequests(redraw: &redraw) || closing { return }
        }
    }

    /// One SDL event; true when the window is to close.
    mutating func handle(_ event: inout SDL_Event, redraw: inout Bool) -> Bool {
        let type = event.type
        switch type {
        case wakeType:
            shared.update { $0.wakePending = false }
        case SDL_QUIT.rawValue:
            return closeRequested()
        case SDL_WINDOWEVENT.rawValue:
            switch UInt32(event.window.event) {
            case SDL_WINDOWEVENT_EXPOSED.rawValue:
                redraw = true
            case SDL_WINDOWEVENT_SIZE_CHANGED.rawValue:
                redraw = true
                shared.events.yield(.resized(width: Int(event.window.data1), height: Int(event.window.data2)))
            case SDL_WINDOWEVENT_CLOSE.rawValue:
                return closeRequested()
            default:
                break
            }
        case SDL_KEYDOWN.rawValue:
            if let key = Self.key(event.key.keysym.sym) {
                shared.events.yield(.key(key, isRepeat: event.key.repeat != 0))
            }
            revealControls(redraw: &redraw)
        case SDL_MOUSEMOTION.rawValue:
            shared.events.yield(.mouseMoved(x: Int(event.motion.x), y: Int(event.motion.y)))
            revealControls(redraw: &redraw)
        case SDL_MOUSEBUTTONDOWN.rawValue:
            if event.button.button == UInt8(SDL_BUTTON_LEFT) {
                let x = Int(event.button.x), y = Int(event.button.y)
                shared.events.yield(.clicked(x: x, y: y))
                if let controls, overlay.isVisible(at: Self.now) {
                    var w: Int32 = 0, h: Int32 = 0
                    SDL_GetRendererOutputSize(renderer, &w, &h)
                    if let action = ControlsOverlay.hit(x: x, y: y, state: controls, width: Int(w), height: Int(h)) {
                        shared.events.yield(.controls(action))
                    }
                }
                revealControls(redraw: &redraw)
            }
        default:
            break
        }
        return false
    }

    /// Activity over the window: the controls (when there are any) show from now.
    mutating func revealControls(redraw: inout Bool) {
        guard controls != nil else { return }
        // Shown after being hidden: fed at once (their state may be old).
        if !overlay.isVisible(at: Self.now) { nextFeed = nil }
        overlay.activity(at: Self.now)
        redraw = true
    }

    /// When the loop must wake without an event: the controls hide, or are fed again.
    func nextWake() -> Double? {
        guard controls != nil, let hide = overlay.hideTime(after: Self.now) else { return nil }
        guard feeding, let next = nextFeed else { return hide }
        return min(hide, next)
    }

    /// Calls the feed while the controls show (when it is due), and says when that starts and stops.
    mutating func feedControls(redraw: inout Bool) {
        let now = Self.now
        let wanted = feed != nil && controls != nil && overlay.isVisible(at: now)
        if wanted != feeding {
            feeding = wanted
            shared.update { $0.feeding = wanted }
            shared.feedingChanges.yield(wanted)
        }
        guard wanted, let feed else {
            nextFeed = nil
            return
        }
        if let next = nextFeed, now < next { return }
        if let state = feed.state() {
            controls = state
            redraw = true
        }
        nextFeed = now + feed.interval
    }

    func closeRequested() -> Bool {
        shared.events.yield(.closeRequested)
        return shared.configuration.closesOnRequest
    }

    static func key(_ code: SDL_Keycode) -> VideoWindowKey? {
        switch UInt32(bitPattern: code) {
        case SDLK_SPACE.rawValue: .space
        case SDLK_LEFT.rawValue: .left
        case SDLK_RIGHT.rawValue: .right
        case SDLK_UP.rawValue: .up
        case SDLK_DOWN.rawValue: .down
        case SDLK_f.rawValue: .f
        case SDLK_m.rawValue: .m
        case SDLK_q.rawValue: .q
        case SDLK_ESCAPE.rawValue: .escape
        case SDLK_j.rawValue: .j
        default: nil
        }
    }

    /// Takes the callers' requests out of the shared state (under the lock only to copy them)
    /// and carries them out; true when the window is to close.
    mutating func applyRequests(redraw: inout Bool) -> Bool {
        typealias Requests = (frame: (VideoFrame, UInt64)?, fullScreen: Bool?, size: (Int, Int)?, title: String?,
                              redraw: Bool, close: Bool, controls: ControlsState??, showControls: Bool,
                              feed: ControlsFeed??)
        let r: Requests = shared.update { s in
            defer {
                s.pendingFrame = nil
                s.fullScreenRequest = nil
                s.sizeRequest = nil
                s.titleRequest = nil
                s.needsRedraw = false
                s.controlsChanged = false
                s.showControlsRequest = false
                s.controlsFeedChanged = false
            }
            return (s.pendingFrame, s.fullScreenRequest, s.sizeRequest, s.titleRequest, s.needsRedraw, s.closeRequest,
                    s.controlsChanged ? .some(s.controls) : .none, s.showControlsRequest,
                    s.controlsFeedChanged ? .some(s.controlsFeed) : .none)
        }
        if r.close { return true }
        if let f = r.feed {
            feed = f
            nextFeed = nil
        }
        if let state = r.controls {
            // Drawn again only when the change shows (visible now, or removed while visible).
            if overlay.isVisible(at: Self.now) { redraw = true }
            controls = state
        }
        if r.showControls { revealControls(redraw: &redraw) }
        if let title = r.title { SDL_SetWindowTitle(window, title) }
        if let on = r.fullScreen {
            setFullScreen(on)
            redraw = true
        }
        if let (w, h) = r.size {
            SDL_SetWindowSize(window, Int32(clamping: max(1, w)), Int32(clamping: max(1, h)))
            redraw = true
        }
        if let (frame, number) = r.frame {
            upload(frame)
            framesTaken += 1
            self.frame = frame
            submission = number
            redraw = true
        }
        if r.redraw { redraw = true }
        return false
    }

    /// Full screen as the desktop does it (SDL's desktop full screen, which on X11 asks the window
    /// manager); on an X display without a window manager, which would not answer, the window
    /// itself goes borderless over the whole of its screen, and back.
    mutating func setFullScreen(_ on: Bool) {
        if on {
            guard !isFullScreenNow else { return }
            if csdl2_x11_window_manager_present(window) == 0 {
                var x: Int32 = 0, y: Int32 = 0, w: Int32 = 0, h: Int32 = 0
                SDL_GetWindowPosition(window, &x, &y)
                SDL_GetWindowSize(window, &w, &h)
                var bounds = SDL_Rect()
                guard SDL_GetDisplayBounds(max(0, SDL_GetWindowDisplayIndex(window)), &bounds) == 0 else { return }
                coveringScreenFrom = (x, y, w, h)
                SDL_SetWindowBordered(window, SDL_FALSE)
                SDL_SetWindowPosition(window, bounds.x, bounds.y)
                SDL_SetWindowSize(window, bounds.w, bounds.h)
                SDL_RaiseWindow(window)
            } else {
                SDL_SetWindowFullscreen(window, SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue)
            }
        } else if let saved = coveringScreenFrom {
            coveringScreenFrom = nil
            SDL_SetWindowBordered(window, SDL_TRUE)
            SDL_SetWindowSize(window, saved.width, saved.height)
            SDL_SetWindowPosition(window, saved.x, saved.y)
        } else {
            SDL_SetWindowFullscreen(window, 0)
        }
    }

    var isFullScreenNow: Bool {
        coveringScreenFrom != nil
            || SDL_GetWindowFlags(window) & SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue == SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue
    }

    /// Puts the frame's pixels into the texture, making a texture of the frame's format and
    /// size first when the current one is not.
    mutating func upload(_ frame: VideoFrame) {
        if texture == nil || textureFormat != frame.pixelFormat || textureWidth != frame.width || textureHeight != frame.height {
            makeTexture(frame.pixelFormat, width: frame.width, height: frame.height)
        }
        guard let texture else { return }
        switch frame.pixelFormat {
        case .yuv420p:
            let y = frame.planes[0], u = frame.planes[1], v = frame.planes[2]
            y.bytes.withUnsafeBufferPointer { yp in
                u.bytes.withUnsafeBufferPointer { up in
                    v.bytes.withUnsafeBufferPointer { vp in
                        _ = SDL_UpdateYUVTexture(texture, nil, yp.baseAddress, Int32(y.bytesPerRow),
                                                 up.baseAddress, Int32(u.bytesPerRow), vp.baseAddress, Int32(v.bytesPerRow))
                    }
                }
            }
        case .rgba:
            let p = frame.planes[0]
            p.bytes.withUnsafeBufferPointer { bp in
                _ = SDL_UpdateTexture(texture, nil, bp.baseAddress, Int32(p.bytesPerRow))
            }
        }
    }

    /// A streaming texture of `format` and size in place of the current one (none when SDL
    /// cannot make it).
    mutating func makeTexture(_ format: VideoFrame.PixelFormat, width: Int, height: Int) {
        if let t = texture { SDL_DestroyTexture(t) }
        let sdlFormat = format == .yuv420p ? SDL_PIXELFORMAT_IYUV.rawValue : SDL_PIXELFORMAT_RGBA32.rawValue
        texture = SDL_CreateTexture(renderer, sdlFormat, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue),
                                    Int32(clamping: max(1, width)), Int32(clamping: max(1, height)))
        textureFormat = texture == nil ? nil : format
        textureWidth = width
        textureHeight = height
        if texture != nil { shared.update { $0.texturesMade += 1 } }
    }

    /// Black, the picture where the gravity puts it (turned as the frame says), presented.
    mutating func draw() {
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &w, &h)
        let gravity = shared.read { $0.gravity }
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        SDL_RenderClear(renderer)
        var rect = VideoRect.zero
        if let frame, let texture {
            rect = VideoGeometry.videoRect(of: frame, in: VideoRect(x: 0, y: 0, width: Double(w), height: Double(h)),
                                           gravity: gravity).integral
            let (destination, angle) = VideoGeometry.placement(videoRect: rect, rotation: frame.rotation)
            var d = SDL_FRect(x: Float(destination.x), y: Float(destination.y),
                              w: Float(destination.width), h: Float(destination.height))
            if angle == 0 {
                SDL_RenderCopyF(renderer, texture, nil, &d)
            } else {
                SDL_RenderCopyExF(renderer, texture, nil, &d, angle, nil, SDL_FLIP_NONE)
            }
        }
        var controlsVisible = false
        if let controls {
            let rects = overlay.rectangles(for: controls, width: Int(w), height: Int(h), at: Self.now)
            controlsVisible = !rects.isEmpty
            SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
            for r in rects {
                SDL_SetRenderDrawColor(renderer, r.color.r, r.color.g, r.color.b, r.color.a)
                var rect = SDL_Rect(x: Int32(r.x), y: Int32(r.y), w: Int32(r.width), h: Int32(r.height))
                SDL_RenderFillRect(renderer, &rect)
            }
            SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
        }
        SDL_RenderPresent(renderer)
        presentations += 1
        var x: Int32 = 0, y: Int32 = 0
        SDL_GetWindowPosition(window, &x, &y)
        let fullScreen = isFullScreenNow
        let presentation = VideoPresentation(
            number: presentations, submission: submission, framesTaken: framesTaken, framesReplaced: 0, frameTime: texture == nil ? nil : frame?.time,
            outputWidth: Int(w), outputHeight: Int(h), windowX: Int(x), windowY: Int(y), videoRect: rect,
            gravity: gravity, isFullScreen: fullScreen, controlsVisible: controlsVisible)
        shared.update {
            var p = presentation
            p.framesReplaced = $0.framesReplaced
            $0.lastPresentation = p
            $0.isFullScreen = fullScreen
        }
    }
}
