// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport
@testable import TonearmWindow

/// Real windows on a private Xvfb display (SDL's x11 driver): a generated frame of four coloured
/// quadrants is shown, the screen is read back with `xwd`, and the colours are checked where the
/// gravity, the rotation and the pixel aspect put them, with black bars where they must be.
/// Waits are on the window's own presentations (with a deadline), never on time.
///
/// One window at a time (SDL's video is one per process), so the suite is serialized; it runs
/// in scripts/test's one-at-a-time phase.
@Suite(.serialized) struct VideoWindowTests {
    static let red = Screenshot.Color(r: 255, g: 0, b: 0)
    static let green = Screenshot.Color(r: 0, g: 255, b: 0)
    static let blue = Screenshot.Color(r: 0, g: 0, b: 255)
    static let white = Screenshot.Color(r: 255, g: 255, b: 255)
    static let black = Screenshot.Color(r: 0, g: 0, b: 0)

    /// Where a screenshot is kept for a person to look at (TONEARM_KEEP_SCREENSHOTS=DIR), else nowhere.
    static func keep(_ name: String) -> String? {
        guard let dir = ProcessInfo.processInfo.environment["TONEARM_KEEP_SCREENSHOTS"], !dir.isEmpty else { return nil }
        return "\(dir)/\(name).png"
    }

    /// Runs `body` with a window open on a private display of `screen` size; the window is
    /// closed (and must close) at the end.
    func withWindow(_ configuration: VideoWindow.Configuration, screen: (Int, Int) = (640, 480),
                    _ body: (VirtualDisplay, VideoWindow) throws -> Void) throws {
        let display = try VirtualDisplay(width: screen.0, height: screen.1)
        defer { display.stop() }
        try ProcessEnvironment.with(display.sdlEnvironment) {
            let window = try VideoWindow(configuration)
            defer {
                window.close()
                #expect(!window.isOpen)
            }
            try body(display, window)
        }
    }

    /// Shows `frame` and waits until it is on screen; returns the presentation.
    func showAndWait(_ window: VideoWindow, _ frame: VideoFrame) throws -> VideoPresentation {
        let number = try window.show(frame)
        return try #require(window.waitForPresentation(timeout: 20) { $0.submission >= number },
                            "frame \(number) was not presented within 20 s")
    }

    /// Checks the colour at (x, y) of the window's drawable area.
    func expectColor(_ shot: Screenshot, _ p: VideoPresentation, _ x: Double, _ y: Double, _ expected: Screenshot.Color,
                     _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let sx = p.windowX + Int(x.rounded(.down)), sy = p.windowY + Int(y.rounded(.down))
        let c = shot.color(x: sx, y: sy)
        #expect(c.isClose(to: expected), "\(what) at (\(Int(x)), \(Int(y))) of the window is \(c), not \(expected)",
                sourceLocation: sourceLocation)
    }

    /// Checks the four quadrants of the upright picture inside `rect` (their centres), listed
    /// top-left, top-right, bottom-left, bottom-right.
    func expectQuadrants(_ shot: Screenshot, _ p: VideoPresentation, in rect: VideoRect, _ colors: [Screenshot.Color],
                         sourceLocation: SourceLocation = #_sourceLocation) {
        let names = ["top-left", "top-right", "bottom-left", "bottom-right"]
        for (i, color) in colors.enumerated() {
            let x = rect.x + rect.width * (i % 2 == 0 ? 0.25 : 0.75)
            let y = rect.y + rect.height * (i < 2 ? 0.25 : 0.75)
            expectColor(shot, p, x, y, color, "the \(names[i]) quadrant", sourceLocation: sourceLocation)
        }
    }

    static let upright = [red, green, blue, white]

    @Test(arguments: VideoFrame.PixelFormat.allCases)
    func theFrameFillsAWindowOfItsShape(format: VideoFrame.PixelFormat) throws {
        try withWindow(.init(title: "fill \(format)", width: 320, height: 240)) { display, window in
            #expect(!window.isReadyForDisplay)
            #expect(!window.rendererName.isEmpty)
            print("VideoWindowTests: SDL renderer \(window.rendererName)")
            let p = try showAndWait(window, TestFrames.quadrants(format, width: 160, height: 120))
            #expect(window.isReadyForDisplay)
            #expect(p.outputWidth == 320 && p.outputHeight == 240)
            #expect(p.videoRect == VideoRect(x: 0, y: 0, width: 320, height: 240))
            #expect(window.videoRect == p.videoRect)
            let shot = try display.screenshot(keepingPNGAt: Self.keep("fill-\(format)"))
            expectQuadrants(shot, p, in: p.videoRect, Self.upright)
            // The window is where SDL says: just outside it is the empty (black) root window,
            // just inside the picture.
            expectColor(shot, p, 2, 2, Self.red, "the window's top-left corner")
            expectColor(shot, p, 317, 237, Self.white, "the window's bottom-right corner")
        }
    }

    /// Xvfb has no GPU: SDL's OpenGL there is Mesa's llvmpipe, which costs about twice the CPU
    /// of SDL's software renderer at 1080p (scripts/bench video). The automatic choice takes the
    /// software renderer, and it draws the frame.
    @Test func withoutAGPUTheAutomaticRendererIsSDLsSoftwareOne() throws {
        try withWindow(.init(title: "automatic", width: 320, height: 240)) { display, window in
            #expect(window.rendererName == "software", "SDL's \(window.rendererName) renderer on Xvfb")
            let p = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 160, height: 120))
            let shot = try display.screenshot()
            expectQuadrants(shot, p, in: p.videoRect, Self.upright)
            // Another frame replaces it (the window's framebuffer is presented again).
            var turned = TestFrames.quadrants(.rgba, width: 160, height: 120)
            turned.rotation = 180
            let q = try showAndWait(window, turned)
            expectQuadrants(try display.screenshot(), q, in: q.videoRect, [Self.white, Self.blue, Self.green, Self.red])
        }
    }

    /// An X protocol error in the process (here an XSendEvent the server refuses, on a connection
    /// of its own — what SDL's cross-thread wake-up does when it races a window's destruction,
    /// seen as "BadWindow … X_SendEvent" ending NowPlayingSessionTests' run) does not end it:
    /// Xlib's default handler prints "X Error of failed request" and calls exit(1), which ended
    /// this test run before the handler was replaced.
    @Test func anXErrorDoesNotEndTheProcess() throws {
        try withWindow(.init(title: "x-error", width: 160, height: 120)) { display, _ in
            try Self.sendRefusedEvent(to: display.display)
            #expect(Bool(true), "the process is still here while the window is open")
        }
        // After the window closed (SDL stopped and put back the handler it found): still here.
        let again = try VirtualDisplay(width: 160, height: 120)
        defer { again.stop() }
        try Self.sendRefusedEvent(to: again.display)
        #expect(Bool(true), "the process is still here after the window closed")
    }

    /// On a connection of its own, an XSendEvent of a ClientMessage to window 0x1F (nobody's)
    /// that the server refuses, read back with XSync.
    static func sendRefusedEvent(to display: String) throws {
        let x11 = try #require(dlopen("libX11.so.6", RTLD_LAZY | RTLD_NOLOAD), "libX11 is loaded (the window loaded it)")
        defer { dlclose(x11) }
        typealias Open = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
        typealias Send = @convention(c) (OpaquePointer?, UInt, Int32, Int, UnsafeMutableRawPointer?) -> Int32
        typealias Sync = @convention(c) (OpaquePointer?, Int32) -> Int32
        typealias Close = @convention(c) (OpaquePointer?) -> Int32
        let open = unsafeBitCast(try #require(dlsym(x11, "XOpenDisplay")), to: Open.self)
        let send = unsafeBitCast(try #require(dlsym(x11, "XSendEvent")), to: Send.self)
        let sync = unsafeBitCast(try #require(dlsym(x11, "XSync")), to: Sync.self)
        let close = unsafeBitCast(try #require(dlsym(x11, "XCloseDisplay")), to: Close.self)
        let connection = try #require(open(display), "a connection to \(display)")
        var event = [Int](repeating: 0, count: 24)  // an XEvent: 24 longs; type ClientMessage (33)
        event[0] = 33
        _ = event.withUnsafeMutableBytes { send(connection, 0x1F, 0, 0, $0.baseAddress) }
        _ = sync(connection, 0)
        _ = close(connection)
    }

    @Test func softwareOpenGLIsKnownByItsName() {
        #expect(WindowThread.isSoftwareOpenGL(named: "llvmpipe (LLVM 15.0.6, 256 bits)"))
        #expect(WindowThread.isSoftwareOpenGL(named: "softpipe"))
        #expect(WindowThread.isSoftwareOpenGL(named: "Software Rasterizer"))
        #expect(!WindowThread.isSoftwareOpenGL(named: "AMD Radeon RX 6600 (radeonsi, navi23, LLVM 15.0.6, DRM 3.49)"))
        #expect(!WindowThread.isSoftwareOpenGL(named: "Mesa Intel(R) UHD Graphics 620 (KBL GT2)"))
    }

    @Test func aGPUIsKnownByItsDeviceNodes() {
        #expect(!WindowThread.hasGPUDevice([]))
        #expect(!WindowThread.hasGPUDevice(["/dev/dri/by-path"]))
        #expect(WindowThread.hasGPUDevice(["/dev/dri/by-path", "/dev/dri/card0", "/dev/dri/renderD128"]))
        #expect(WindowThread.hasGPUDevice(["/dev/dri/renderD128"]))
        #expect(WindowThread.hasGPUDevice(["/dev/nvidia0", "/dev/nvidiactl"]))
        #expect(!WindowThread.hasGPUDevice(["/dev/nvidia-caps"]))
    }

    @Test(arguments: VideoFrame.PixelFormat.allCases)
    func sdlsSoftwareRendererDrawsTheSame(format: VideoFrame.PixelFormat) throws {
        try withWindow(.init(title: "software", width: 320, height: 240, renderer: .software)) { display, window in
            #expect(window.rendererName == "software")
            let p = try showAndWait(window, TestFrames.quadrants(format, width: 96, height: 96))
            #expect(p.videoRect == VideoRect(x: 40, y: 0, width: 240, height: 240))
            let shot = try display.screenshot()
            expectQuadrants(shot, p, in: p.videoRect, Self.upright)
            expectColor(shot, p, 20, 120, Self.black, "the left bar")
        }
    }

    @Test(arguments: VideoFrame.PixelFormat.allCases)
    func aspectPutsBarsBesideASquarePicture(format: VideoFrame.PixelFormat) throws {
        try withWindow(.init(title: "aspect", width: 320, height: 240, gravity: .resizeAspect)) { display, window in
            let p = try showAndWait(window, TestFrames.quadrants(format, width: 96, height: 96))
            let expected = VideoRect(x: 40, y: 0, width: 240, height: 240)
            #expect(p.videoRect == expected)
            let shot = try display.screenshot(keepingPNGAt: Self.keep("aspect-\(format)"))
            expectQuadrants(shot, p, in: expected, Self.upright)
            for (x, y) in [(20.0, 10.0), (20, 230), (300, 10), (300, 230)] {
                expectColor(shot, p, x, y, Self.black, "the bar")
            }
        }
    }

    @Test func aspectFillCutsTheOverflowAndLeavesNoBar() throws {
        try withWindow(.init(title: "fill", width: 320, height: 240, gravity: .resizeAspectFill)) { display, window in
            let p = try showAndWait(window, TestFrames.quadrants(.rgba, width: 96, height: 96))
            // 320×320, 40 pixels cut off at the top and at the bottom.
            #expect(p.videoRect == VideoRect(x: 0, y: -40, width: 320, height: 320))
            let shot = try display.screenshot(keepingPNGAt: Self.keep("aspect-fill"))
            expectQuadrants(shot, p, in: VideoRect(x: 0, y: 0, width: 320, height: 240), Self.upright)
            for (x, y) in [(3.0, 3.0), (316, 3), (3, 236), (316, 236)] {
                #expect(!shot.color(x: p.windowX + Int(x), y: p.windowY + Int(y)).isClose(to: Self.black, tolerance: 30))
            }
        }
    }

    @Test func resizeStretchesThePictureToTheWindow() throws {
        try withWindow(.init(title: "resize", width: 320, height: 240, gravity: .resize)) { display, window in
            let p = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 96, height: 96))
            #expect(p.videoRect == VideoRect(x: 0, y: 0, width: 320, height: 240))
            let shot = try display.screenshot()
            expectQuadrants(shot, p, in: p.videoRect, Self.upright)
            expectColor(shot, p, 20, 60, Self.red, "where resizeAspect would put a bar")
            expectColor(shot, p, 300, 180, Self.white, "where resizeAspect would put a bar")
        }
    }

    @Test func changingTheGravityRedraws() throws {
        try withWindow(.init(title: "gravity", width: 320, height: 240, gravity: .resizeAspect)) { display, window in
            let first = try showAndWait(window, TestFrames.quadrants(.rgba, width: 96, height: 96))
            #expect(first.videoRect.width == 240)
            window.gravity = .resize
            let p = try #require(window.waitForPresentation(timeout: 20) { $0.gravity == .resize })
            #expect(p.videoRect == VideoRect(x: 0, y: 0, width: 320, height: 240))
            expectColor(try display.screenshot(), p, 20, 60, Self.red, "the stretched picture")
        }
    }

    @Test(arguments: [90, 180, 270])
    func aTurnedPictureIsShownUpright(rotation: Int) throws {
        try withWindow(.init(title: "rotation", width: 320, height: 240)) { display, window in
            // Coded 160×120 landscape. A quarter turn shows it 120×160 upright: 180×240 in the
            // window, bars of 70; a half turn fills the window.
            var frame = TestFrames.quadrants(.yuv420p, width: 160, height: 120)
            frame.rotation = rotation
            let p = try showAndWait(window, frame)
            let expected = rotation == 180 ? VideoRect(x: 0, y: 0, width: 320, height: 240)
                                           : VideoRect(x: 70, y: 0, width: 180, height: 240)
            #expect(p.videoRect == expected)
            let shot = try display.screenshot(keepingPNGAt: Self.keep("rotation-\(rotation)"))
            // Turned clockwise, the coded bottom-left (blue) comes to the top-left; counter-clockwise
            // the coded top-right (green) does; upside down, the coded bottom-right (white).
            let colors = switch rotation {
            case 90: [Self.blue, Self.red, Self.white, Self.green]
            case 180: [Self.white, Self.blue, Self.green, Self.red]
            default: [Self.green, Self.white, Self.red, Self.blue]
            }
            expectQuadrants(shot, p, in: expected, colors)
            if rotation != 180 {
                expectColor(shot, p, 35, 120, Self.black, "the left bar")
                expectColor(shot, p, 285, 120, Self.black, "the right bar")
            }
        }
    }

    @Test func anamorphicPixelsAreShownWide() throws {
        try withWindow(.init(title: "anamorphic", width: 320, height: 240)) { display, window in
            // 120×120 coded with 4:3 pixels is 160×120: the whole 320×240 window, no bar (square
            // pixels would leave bars of 40 at each side).
            var frame = TestFrames.quadrants(.rgba, width: 120, height: 120)
            frame.pixelAspectRatio = .init(horizontal: 4, vertical: 3)
            let p = try showAndWait(window, frame)
            #expect(p.videoRect == VideoRect(x: 0, y: 0, width: 320, height: 240))
            let shot = try display.screenshot(keepingPNGAt: Self.keep("anamorphic"))
            expectQuadrants(shot, p, in: p.videoRect, Self.upright)
            expectColor(shot, p, 20, 60, Self.red, "where square pixels would leave a bar")
            expectColor(shot, p, 300, 180, Self.white, "where square pixels would leave a bar")
        }
    }

    @Test func aResizedWindowIsDrawnAgainAtItsNewSize() async throws {
        try await withWindow(.init(title: "resized", width: 320, height: 240)) { display, window in
            let frame = TestFrames.quadrants(.yuv420p, width: 96, height: 96)
            _ = try showAndWait(window, frame)
            window.setSize(width: 400, height: 200)
            let p = try #require(window.waitForPresentation(timeout: 20) { $0.outputWidth == 400 && $0.outputHeight == 200 })
            let expected = VideoRect(x: 100, y: 0, width: 200, height: 200)
            #expect(p.videoRect == expected)
            let shot = try display.screenshot(keepingPNGAt: Self.keep("resized"))
            expectQuadrants(shot, p, in: expected, Self.upright)
            expectColor(shot, p, 50, 100, Self.black, "the left bar")
            expectColor(shot, p, 350, 100, Self.black, "the right bar")
            let seen = await collect(window, timeout: 20) { $0.contains(.resized(width: 400, height: 200)) }
            #expect(seen.contains(.resized(width: 400, height: 200)), "\(seen)")
        }
    }

    @Test func aWindowLargerThanTheScreenOpensScaledDownUnlessAskedNotTo() throws {
        try withWindow(.init(title: "large", width: 1280, height: 720), screen: (640, 480)) { _, window in
            let p = try showAndWait(window, TestFrames.quadrants(.rgba, width: 32, height: 18))
            #expect(p.outputWidth == 576 && p.outputHeight == 324)  // 90 % of 640 wide, 16:9 kept
        }
        try withWindow(.init(title: "as asked", width: 700, height: 500, fitsScreen: false), screen: (640, 480)) { _, window in
            let p = try showAndWait(window, TestFrames.quadrants(.rgba, width: 32, height: 18))
            #expect(p.outputWidth == 700 && p.outputHeight == 500)
        }
    }

    @Test func anExposedWindowDrawsItselfAgain() throws {
        try withWindow(.init(title: "exposed", width: 320, height: 240)) { display, window in
            let p = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 160, height: 120))
            // Another window over the whole screen (grey), gone again: nothing is asked of the
            // window through its API, yet the picture is back.
            try display.send(toWindowTitled: "exposed", ["cover"])
            let again = try #require(window.waitForPresentation(timeout: 20) { $0.number > p.number })
            #expect(again.submission == p.submission)
            expectQuadrants(try display.screenshot(), again, in: again.videoRect, Self.upright)
        }
    }

    /// (Xvfb has no window manager: the window covers the screen itself, as it does on any X
    /// display without one; with one, SDL asks it.)
    @Test func fullScreenCoversTheScreenAndComesBack() throws {
        try withWindow(.init(title: "full screen", width: 320, height: 240), screen: (640, 480)) { display, window in
            _ = try showAndWait(window, TestFrames.quadrants(.rgba, width: 160, height: 120))
            window.setFullScreen(true)
            let full = try #require(window.waitForPresentation(timeout: 20) { $0.isFullScreen && $0.outputWidth == 640 })
            #expect(window.isFullScreen)
            #expect(full.outputHeight == 480 && full.windowX == 0 && full.windowY == 0)
            #expect(full.videoRect == VideoRect(x: 0, y: 0, width: 640, height: 480))
            let shot = try display.screenshot(keepingPNGAt: Self.keep("full-screen"))
            expectQuadrants(shot, full, in: full.videoRect, Self.upright)
            window.setFullScreen(false)
            let back = try #require(window.waitForPresentation(timeout: 20) { !$0.isFullScreen && $0.outputWidth == 320 })
            #expect(back.outputHeight == 240)
            #expect(back.windowX == 160 && back.windowY == 120)  // where it was, centred
            let small = try display.screenshot()
            expectQuadrants(small, back, in: back.videoRect, Self.upright)
            expectColor(small, back, -20, -20, Self.black, "the screen outside the window")
        }
    }

    @Test func aWindowCanOpenFullScreen() throws {
        try withWindow(.init(title: "opens full", width: 320, height: 240, fullScreen: true), screen: (480, 360)) { display, window in
            let p = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 160, height: 120))
            #expect(p.isFullScreen && p.outputWidth == 480 && p.outputHeight == 360)
            expectQuadrants(try display.screenshot(), p, in: VideoRect(x: 0, y: 0, width: 480, height: 360), Self.upright)
        }
    }

    @Test func aNewFrameSizeAndFormatReplacesTheTexture() throws {
        try withWindow(.init(title: "formats", width: 320, height: 240)) { display, window in
            _ = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 160, height: 120))
            // The same picture in the other format and a square size; then a plain colour.
            let p = try showAndWait(window, TestFrames.quadrants(.rgba, width: 64, height: 64))
            #expect(p.videoRect == VideoRect(x: 40, y: 0, width: 240, height: 240))
            expectQuadrants(try display.screenshot(), p, in: p.videoRect, Self.upright)
            let last = try showAndWait(window, TestFrames.solid(.yuv420p, width: 160, height: 120, Self.green))
            let shot = try display.screenshot()
            for (x, y) in [(40.0, 30.0), (280, 30), (40, 210), (280, 210)] {
                expectColor(shot, last, x, y, Self.green, "the plain frame")
            }
        }
    }

    @Test func framesComingFasterThanTheyAreDrawnReplaceEachOtherAndTheLastIsShown() throws {
        try withWindow(.init(title: "latest", width: 320, height: 240)) { display, window in
            // A 1280×720 picture takes the window thread milliseconds to take in and present;
            // giving it (the same planes, not copied) takes microseconds.
            let red = TestFrames.solid(.yuv420p, width: 1280, height: 720, Self.red)
            let count = 200
            var last: UInt64 = 0
            for i in 0..<count {
                var frame = i == count - 1 ? TestFrames.solid(.yuv420p, width: 1280, height: 720, Self.blue) : red
                frame.time = Double(i)
                last = try window.show(frame)
            }
            let p = try #require(window.waitForPresentation(timeout: 20) { $0.submission == last })
            #expect(p.frameTime == Double(count - 1))
            // Every frame was taken or replaced, none waits anywhere; and some were replaced:
            // the window kept the latest only.
            #expect(p.framesTaken + p.framesReplaced == count, "\(p.framesTaken) taken, \(p.framesReplaced) replaced")
            #expect(p.framesReplaced > 0)
            expectColor(try display.screenshot(), p, 160, 120, Self.blue, "the last frame")
        }
    }

    @Test func aMalformedFrameIsRefused() throws {
        try withWindow(.init(title: "malformed", width: 160, height: 120)) { _, window in
            var frame = TestFrames.quadrants(.yuv420p, width: 32, height: 32)
            frame.planes[1].bytes = []
            #expect(throws: VideoWindowError.self) { try window.show(frame) }
            #expect(window.lastPresentation?.submission ?? 0 == 0)
        }
    }

    @Test func closeEndsTheWindowThreadAndTheEvents() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        try await ProcessEnvironment.with(display.sdlEnvironment) {
            let window = try VideoWindow(.init(title: "close", width: 160, height: 120))
            _ = try showAndWait(window, TestFrames.quadrants(.rgba, width: 16, height: 16))
            #expect(window.isOpen)
            window.close()
            #expect(!window.isOpen)
            var seen: [VideoWindowEvent] = []
            for await event in window.events { seen.append(event) }
            #expect(seen.last == .closed)
            window.close()  // again: nothing
            // SDL is free again: another window opens.
            let again = try VideoWindow(.init(title: "again", width: 160, height: 120))
            #expect(again.isOpen)
            again.close()
        }
    }

    /// Opens a window on a private display for an async test (events), closing it at the end.
    func withWindow(_ configuration: VideoWindow.Configuration,
                    _ body: (VirtualDisplay, VideoWindow) async throws -> Void) async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        try await ProcessEnvironment.with(display.sdlEnvironment) {
            let window = try VideoWindow(configuration)
            defer { window.close() }
            try await body(display, window)
        }
    }

    /// The window's events until `done` holds for those seen (or the stream ends, or `timeout`
    /// seconds pass: a deadline, not a synchronisation).
    func collect(_ window: VideoWindow, timeout: Double,
                 until done: @escaping @Sendable ([VideoWindowEvent]) -> Bool) async -> [VideoWindowEvent] {
        let events = window.events
        return await withTaskGroup(of: [VideoWindowEvent]?.self) { group in
            group.addTask {
                var seen: [VideoWindowEvent] = []
                for await event in events {
                    seen.append(event)
                    if done(seen) { break }
                }
                return seen
            }
            group.addTask {
                // The deadline only: the events decide, this ends the wait when they do not come.
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            var result: [VideoWindowEvent] = []
            for await r in group {
                if let r { result = r }
                group.cancelAll()
            }
            return result
        }
    }

    @Test func keysAndTheMouseComeOutAsEvents() async throws {
        try await withWindow(.init(title: "keys", width: 320, height: 240)) { display, window in
            _ = try showAndWait(window, TestFrames.quadrants(.rgba, width: 32, height: 32))
            try display.send(toWindowTitled: "keys", ["key:space", "key:Left", "key:Right", "key:Up", "key:Down", "key:f",
                                                      "key:m", "key:a", "motion:100,50", "key:q", "key:Escape"])
            let seen = await collect(window, timeout: 20) { $0.contains(.key(.escape, isRepeat: false)) }
            let keys = seen.compactMap { e -> VideoWindowKey? in if case .key(let k, _) = e { k } else { nil } }
            // `a` is no key of a player's window: not reported.
            #expect(keys == [.space, .left, .right, .up, .down, .f, .m, .q, .escape], "\(seen)")
            #expect(seen.contains(.mouseMoved(x: 100, y: 50)), "\(seen)")
            #expect(window.isOpen)  // q and Escape are the owner's to answer
        }
    }

    @Test func theTitleCanChange() async throws {
        try await withWindow(.init(title: "before", width: 160, height: 120)) { display, window in
            window.setTitle("after")
            window.gravity = .resize  // a change that draws: the title is set before it is drawn
            _ = try #require(window.waitForPresentation(timeout: 20) { $0.gravity == .resize })
            #expect(throws: (any Error).self) { try display.send(toWindowTitled: "before", ["key:space"]) }
            try display.send(toWindowTitled: "after", ["key:space"])
            let seen = await collect(window, timeout: 20) { $0.contains(.key(.space, isRepeat: false)) }
            #expect(seen.contains(.key(.space, isRepeat: false)))
        }
    }

    @Test func aCloseRequestClosesTheWindowByItself() async throws {
        try await withWindow(.init(title: "close request", width: 320, height: 240)) { display, window in
            _ = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 32, height: 32))
            try display.send(toWindowTitled: "close request", ["close"])
            // Nobody answers the event: the window closes all the same.
            #expect(window.waitUntilClosed(timeout: 20))
            #expect(!window.isOpen)
            let seen = await collect(window, timeout: 20) { _ in false }
            #expect(Array(seen.suffix(2)) == [.closeRequested, .closed], "\(seen)")
        }
    }

    @Test func aCloseRequestCanBeLeftToTheOwner() async throws {
        try await withWindow(.init(title: "owner closes", width: 320, height: 240, closesOnRequest: false)) { display, window in
            _ = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 32, height: 32))
            try display.send(toWindowTitled: "owner closes", ["close"])
            let seen = await collect(window, timeout: 20) { $0.contains(.closeRequested) }
            #expect(seen.contains(.closeRequested))
            // Still open and drawing: a new frame is presented.
            #expect(window.isOpen)
            _ = try showAndWait(window, TestFrames.solid(.rgba, width: 8, height: 8, Self.green))
            window.close()
            #expect(!window.isOpen)
            // Reported once (not again as SDL's quit event).
            let rest = await collect(window, timeout: 20) { _ in false }
            #expect((seen + rest).filter { $0 == .closeRequested }.count == 1, "\(seen + rest)")
            #expect(rest.last == .closed)
        }
    }

    @Test func theControlsShowOnTheMouseAndHideAfterTheDelay() async throws {
        let config = VideoWindow.Configuration(title: "controls", width: 320, height: 240, controlsHideDelay: 0.5)
        try await withWindow(config) { display, window in
            let state = ControlsState(isPlaying: false, currentTime: 30, duration: 120, bufferedUntil: 90)
            window.setControls(state)
            let first = try showAndWait(window, TestFrames.solid(.rgba, width: 32, height: 24, Self.blue))
            #expect(!first.controlsVisible)  // nothing happened over the window yet
            // (Not to the window's centre: Xvfb's pointer starts at the screen's centre, which is
            // there, and a move to where the pointer is is no move.)
            try display.send(toWindowTitled: "controls", ["motion:100,80"])
            let shown = try #require(window.waitForPresentation(timeout: 20) { $0.controlsVisible })
            let shot = try display.screenshot(keepingPNGAt: Self.keep("controls"))
            let rects = ControlsOverlay.layout(state, width: 320, height: 240)
            func centre(_ part: OverlayRect.Part, at fraction: Double = 0.5) throws -> (Double, Double) {
                let r = try #require(rects.first { $0.part == part })
                return (Double(r.x) + Double(r.width) * fraction, Double(r.y) + Double(r.height) / 2)
            }
            // Played (a quarter of the bar: white), buffered (to three quarters: light grey),
            // the rest of the track (dark grey), the play glyph (paused: white), the panel over
            // the blue picture (darkened blue), and the picture above the panel untouched.
            let (px, py) = try centre(.seekPlayed)
            expectColor(shot, shown, px, py, Self.white, "the played part")
            let (tx, ty) = try centre(.seekTrack, at: 0.6)
            expectColor(shot, shown, tx, ty, .init(r: 160, g: 160, b: 160), "the buffered part")
            let (rx, ry) = try centre(.seekTrack, at: 0.9)
            expectColor(shot, shown, rx, ry, .init(r: 96, g: 96, b: 96), "the track")
            let glyph = try #require(rects.first { $0.part == .playPause && $0.width >= 10 })
            expectColor(shot, shown, Double(glyph.x + 2), Double(glyph.y), Self.white, "the play glyph")
            expectColor(shot, shown, 300, 205, .init(r: 0, g: 0, b: 95), "the panel over the picture")
            expectColor(shot, shown, 160, 100, Self.blue, "the picture above the panel")
            // No more activity: they hide, and the picture is whole again.
            let hidden = try #require(window.waitForPresentation(timeout: 20) { !$0.controlsVisible && $0.number > shown.number })
            expectColor(try display.screenshot(), hidden, px, py, Self.blue, "the picture where the bar was")
            // Shown again by the API; a click on the seek bar asks for a seek, one on the glyph
            // for play/pause (the mouse moves there first, which keeps them shown).
            window.showControls()
            _ = try #require(window.waitForPresentation(timeout: 20) { $0.controlsVisible && $0.number > hidden.number })
            let track = try #require(rects.first { $0.part == .seekTrack })
            let atHalf = track.x + (track.width - 1) / 2
            try display.send(toWindowTitled: "controls", ["motion:\(atHalf),\(track.y + 2)", "click:\(atHalf),\(track.y + 2)",
                                                          "motion:\(glyph.x + 3),\(glyph.y)", "click:\(glyph.x + 3),\(glyph.y)"])
            let seen = await collect(window, timeout: 20) { $0.contains(.controls(.playPause)) }
            let actions = seen.compactMap { e -> ControlsAction? in if case .controls(let a) = e { a } else { nil } }
            #expect(actions.count == 2, "\(seen)")
            if case .seek(let to) = actions.first {
                #expect(abs(to - 60) <= 120.0 / Double(track.width), "\(to)")
            } else {
                Issue.record("no seek from a click on the bar: \(seen)")
            }
            #expect(actions.last == .playPause)
        }
    }

    @Test func closingWorksWhileProducersFloodTheWindow() throws {
        try withWindow(.init(title: "flood", width: 320, height: 240)) { _, window in
            let frames = [TestFrames.quadrants(.yuv420p, width: 640, height: 360), TestFrames.quadrants(.rgba, width: 320, height: 180)]
            let started = DispatchSemaphore(value: 0), stopped = DispatchSemaphore(value: 0)
            // Two threads give frames as fast as they can until the window is closed.
            for k in 0..<2 {
                let t = Thread {
                    var shown = 0
                    while window.isOpen {
                        _ = try? window.show(frames[(shown + k) % 2])
                        shown += 1
                        if shown == 1 { started.signal() }
                    }
                    stopped.signal()
                }
                t.start()
            }
            started.wait()
            started.wait()
            #expect(window.waitForPresentation(timeout: 20) { $0.framesTaken > 0 } != nil)
            // From a third thread, concurrently with a close from this one.
            let other = Thread { window.close() }
            other.start()
            window.close()
            #expect(!window.isOpen)
            #expect(window.waitUntilClosed(timeout: 0))
            #expect(stopped.wait(timeout: .now() + 20) == .success)
            #expect(stopped.wait(timeout: .now() + 20) == .success)
        }
    }

    /// `prepare()` starts SDL's video (connected to the display) on a thread of its own ahead of
    /// the first window (`tonearm play VIDEO`, while it probes the file); the next window takes
    /// that thread and shows frames as any other; while it is open, preparing does nothing.
    @Test func aPreparedVideoIsTakenByTheNextWindow() throws {
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        try ProcessEnvironment.with(display.sdlEnvironment) {
            VideoWindow.prepare()
            #expect(VideoWindow.hasPreparedVideo)
            let window = try VideoWindow(.init(title: "prepared", width: 320, height: 240))
            defer { window.close() }
            #expect(!VideoWindow.hasPreparedVideo, "taken by the window")
            let p = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 160, height: 120))
            #expect(p.outputWidth == 320 && p.outputHeight == 240)
            expectQuadrants(try display.screenshot(keepingPNGAt: Self.keep("prepared")), p, in: p.videoRect, Self.upright)
            VideoWindow.prepare()
            #expect(!VideoWindow.hasPreparedVideo, "one video at a time: a window has it")
            #expect(throws: VideoWindowError.anotherWindowIsOpen) { _ = try VideoWindow(.init(title: "two")) }
        }
    }

    /// A prepared video that no window takes stops when cancelled (SDL quits on its thread), and
    /// one prepared for another driver is waited out by the window that needs its own: either
    /// way the next window opens and draws.
    @Test func aPreparedVideoNotTakenStopsAndGivesWay() throws {
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        try ProcessEnvironment.with(display.sdlEnvironment) {
            VideoWindow.prepare()
            #expect(VideoWindow.hasPreparedVideo)
            VideoWindow.cancelPrepared()
            #expect(!VideoWindow.hasPreparedVideo)
            VideoWindow.cancelPrepared()  // nothing to cancel
            VideoWindow.prepare(videoDriver: "offscreen")
            #expect(VideoWindow.hasPreparedVideo)
            let window = try VideoWindow(.init(title: "after", width: 160, height: 120))
            defer { window.close() }
            #expect(!VideoWindow.hasPreparedVideo)
            let p = try showAndWait(window, TestFrames.quadrants(.rgba, width: 160, height: 120))
            expectQuadrants(try display.screenshot(), p, in: p.videoRect, Self.upright)
        }
    }

    /// With the first frames' size known (`expectedFrameWidth`/`Height`: a player's window made
    /// while its item loads), the texture is made before the window says it is up, not when
    /// the first frame comes; that frame uses it, and a frame of another size gets its own.
    @Test func theExpectedFramesTextureIsMadeBeforeTheFirstFrame() throws {
        var config = VideoWindow.Configuration(title: "expected", width: 320, height: 240)
        (config.expectedFrameWidth, config.expectedFrameHeight) = (160, 120)
        try withWindow(config) { display, window in
            #expect(window.texturesMade == 1, "made with the window")
            let p = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 160, height: 120))
            #expect(window.texturesMade == 1, "the first frame used it")
            expectQuadrants(try display.screenshot(), p, in: p.videoRect, Self.upright)
            _ = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 80, height: 60))
            #expect(window.texturesMade == 2)
        }
        try withWindow(.init(title: "unknown", width: 160, height: 120)) { _, window in
            #expect(window.texturesMade == 0)
            _ = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 160, height: 120))
            #expect(window.texturesMade == 1)
        }
    }

    @Test func aSecondWindowAtOnceIsRefused() throws {
        try withWindow(.init(title: "one", width: 160, height: 120)) { _, _ in
            #expect(throws: VideoWindowError.anotherWindowIsOpen) { _ = try VideoWindow(.init(title: "two")) }
        }
    }

    @Test func sdlsOffscreenDriverNeedsNoDisplay() throws {
        try ProcessEnvironment.with(ProcessEnvironment.noDisplay) {
            let window = try VideoWindow(.init(title: "offscreen", width: 64, height: 48, renderer: .software, videoDriver: "offscreen"))
            defer { window.close() }
            let p = try showAndWait(window, TestFrames.quadrants(.yuv420p, width: 32, height: 32))
            #expect(p.outputWidth == 64 && p.videoRect == VideoRect(x: 8, y: 0, width: 48, height: 48))
            #expect(window.isReadyForDisplay)
        }
    }

    @Test func withoutADisplayOpeningSaysSo() throws {
        ProcessEnvironment.with(ProcessEnvironment.noDisplay) {
            do throws(VideoWindowError) {
                _ = try VideoWindow(.init(title: "headless"))
                Issue.record("a window opened without a display")
            } catch {
                guard case .noDisplay(let why) = error else {
                    Issue.record("\(error) is not noDisplay")
                    return
                }
                #expect(why.contains("DISPLAY"))
                #expect(error.description.hasPrefix("no display"))
            }
            // A display that is set but not there: SDL cannot start, and says why.
            setenv("DISPLAY", ":7999", 1)
            setenv("SDL_VIDEODRIVER", "x11", 1)
            #expect {
                _ = try VideoWindow(.init(title: "nowhere"))
            } throws: { error in
                guard let e = error as? VideoWindowError, case .noDisplay = e else { return false }
                return true
            }
        }
    }
}

/// Generated frames: four coloured quadrants (red, green / blue, white), or one colour, in
/// either pixel format (Y′CbCr from R′G′B′ with BT.601's limited-range matrix, as SDL shows
/// frames of this size).
enum TestFrames {
    static func quadrants(_ format: VideoFrame.PixelFormat, width: Int, height: Int, time: Double = 0) -> VideoFrame {
        frame(format, width: width, height: height, time: time) { x, y in
            switch (x < width / 2, y < height / 2) {
            case (true, true): VideoWindowTests.red
            case (false, true): VideoWindowTests.green
            case (true, false): VideoWindowTests.blue
            case (false, false): VideoWindowTests.white
            }
        }
    }

    static func solid(_ format: VideoFrame.PixelFormat, width: Int, height: Int, _ color: Screenshot.Color,
                      time: Double = 0) -> VideoFrame {
        frame(format, width: width, height: height, time: time) { _, _ in color }
    }

    static func frame(_ format: VideoFrame.PixelFormat, width: Int, height: Int, time: Double,
                      _ color: (Int, Int) -> Screenshot.Color) -> VideoFrame {
        switch format {
        case .rgba:
            let stride = width * 4 + 12  // padding at the end of each row, as decoders leave it
            var bytes = [UInt8](repeating: 0x55, count: stride * height)
            for y in 0..<height {
                for x in 0..<width {
                    let c = color(x, y), o = y * stride + x * 4
                    bytes[o] = UInt8(c.r)
                    bytes[o + 1] = UInt8(c.g)
                    bytes[o + 2] = UInt8(c.b)
                    bytes[o + 3] = 255
                }
            }
            return VideoFrame(pixelFormat: .rgba, width: width, height: height,
                              planes: [.init(bytes: bytes, bytesPerRow: stride, width: width, height: height)], time: time)
        case .yuv420p:
            func yuv(_ c: Screenshot.Color) -> (UInt8, UInt8, UInt8) {
                let r = Double(c.r) / 255, g = Double(c.g) / 255, b = Double(c.b) / 255
                let y = 16 + 65.481 * r + 128.553 * g + 24.966 * b
                let cb = 128 - 37.797 * r - 74.203 * g + 112 * b
                let cr = 128 + 112 * r - 93.786 * g - 18.214 * b
                return (UInt8(y.rounded()), UInt8(cb.rounded()), UInt8(cr.rounded()))
            }
            let cw = (width + 1) / 2, ch = (height + 1) / 2
            let yStride = width + 8, cStride = cw + 8
            var yb = [UInt8](repeating: 0, count: yStride * height)
            var ub = [UInt8](repeating: 128, count: cStride * ch)
            var vb = [UInt8](repeating: 128, count: cStride * ch)
            for y in 0..<height {
                for x in 0..<width { yb[y * yStride + x] = yuv(color(x, y)).0 }
            }
            for y in 0..<ch {
                for x in 0..<cw {
                    let (_, u, v) = yuv(color(x * 2, y * 2))
                    ub[y * cStride + x] = u
                    vb[y * cStride + x] = v
                }
            }
            return VideoFrame(pixelFormat: .yuv420p, width: width, height: height, planes: [
                .init(bytes: yb, bytesPerRow: yStride, width: width, height: height),
                .init(bytes: ub, bytesPerRow: cStride, width: cw, height: ch),
                .init(bytes: vb, bytesPerRow: cStride, width: cw, height: ch),
            ], time: time)
        }
    }
}
