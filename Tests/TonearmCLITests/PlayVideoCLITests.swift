// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play VIDEO` as a user runs it: under Xvfb a window titled with the file name shows
/// the picture (the screen read back) and q in the window ends the command with status 0;
/// without a display the sound plays and the command says so once; `--no-video` and
/// `--video-output null|file:` choose where the picture goes. Real time (the null output's
/// clock and a real X server): run one at a time.
@Suite(.serialized) struct PlayVideoCLITests {
    let dir: TempDir
    init() throws { dir = try TempDir("play-video-cli") }

    var environment: [String: String] {
        ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state"), "XDG_CONFIG_HOME": dir.file("config"),
         "PULSE_SERVER": "unix:\(dir.file("no-pulse"))", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.file("no-bus"))"]
    }

    /// Red throughout, 160×90, with a sine.
    func redClip(seconds: Double) throws -> String {
        let clip = dir.file("red.mp4")
        try VideoFixtures.colorClip(clip, colors: ["red"], segment: seconds)
        return clip
    }

    @Test func aWindowTitledWithTheFileNameShowsThePictureAndQEndsTheCommand() async throws {
        defer { dir.remove() }
        let clip = try redClip(seconds: 20)
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        let env = environment.merging(display.childEnvironment) { $1 }
        let child = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", clip], environment: env,
                                     captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate() }
        let shown = await child.waitForStandardOutput(timeout: 60) { $0.text.contains("Video: the first frame shown") || $0.childEnded }
        #expect(shown, "no frame was shown: \(child.standardOutputText) \(child.standardErrorText)")
        #expect(child.standardOutputText.contains("window of 160×90"), "\(child.standardOutputText)")
        let shot = try display.screenshot(keepingPNGAt: ProcessInfo.processInfo.environment["TONEARM_KEEP_SCREENSHOTS"]
            .map { "\($0)/play-video-window.png" })
        var red = 0
        for y in 0..<shot.height { for x in 0..<shot.width where shot.color(x: x, y: y).isClose(to: .init(r: 255, g: 0, b: 0)) { red += 1 } }
        #expect(red >= 160 * 90 * 9 / 10 && red <= 160 * 90, "\(red) red pixels on the screen; the window holds 160×90")
        // q in the window titled with the file name ends the command.
        try display.send(toWindowTitled: "red.mp4", ["key:q"])
        #expect(await child.waitForExit(timeout: 20), "q in the window did not end the command")
        #expect(child.succeeded, "status \(child.status ?? -1): \(child.standardErrorText)")
        #expect(!child.standardErrorText.contains("no display"))
    }

    @Test func theTerminalsKeysWorkBesideTheWindowsOnTheLiveScreen() throws {
        defer { dir.remove() }
        let clip = try redClip(seconds: 30)
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let env = "DISPLAY=\(display.display) WAYLAND_DISPLAY= SDL_VIDEODRIVER=x11 XDG_STATE_HOME=\(q(dir.file("state"))) "
            + "XDG_CONFIG_HOME=\(q(dir.file("config"))) XDG_DATA_HOME=\(q(dir.file("data")))"
        let screen = try PTYScreen("stty rows 24 cols 100; \(env) exec \(q(try tonearmBinary())) play --output null \(q(clip))")
        try screen.waitFor("Video: the first frame shown in a window of 160×90", timeout: 60)
        /// Runs `action`, then waits until the screen draws `marker` after it.
        func drawn(_ marker: String, after action: () throws -> Void) throws {
            let from = screen.all.utf8.count
            try action()
            try screen.wait(for: "'\(marker)'") { String(decoding: Array($0.utf8).dropFirst(from), as: UTF8.self).contains(marker) }
        }
        try drawn("⏸ Paused") { screen.type(" ") }
        try drawn("▶ Playing") { try display.send(toWindowTitled: "red.mp4", ["key:space"]) }
        try drawn("⏸ Paused") { try display.send(toWindowTitled: "red.mp4", ["key:space"]) }
        screen.type("q")
        #expect(try screen.waitForExit() == 0)
    }

    @Test func fullscreenFillsTheScreenWithThePicture() async throws {
        defer { dir.remove() }
        let clip = try redClip(seconds: 20)
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        let env = environment.merging(display.childEnvironment) { $1 }
        let child = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", "--fullscreen", clip],
                                     environment: env, captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate() }
        let shown = await child.waitForStandardOutput(timeout: 60) { $0.text.contains("Video: the first frame shown") || $0.childEnded }
        #expect(shown, "no frame was shown: \(child.standardOutputText) \(child.standardErrorText)")
        #expect(child.standardOutputText.contains("window of 640×480"), "\(child.standardOutputText)")
        let shot = try display.screenshot()
        // 16:9 across the whole width: 640×360, bars of 60 above and below.
        #expect(shot.color(x: 320, y: 240).isClose(to: .init(r: 255, g: 0, b: 0)))
        #expect(shot.color(x: 4, y: 64).isClose(to: .init(r: 255, g: 0, b: 0)))
        #expect(shot.color(x: 320, y: 20).isClose(to: .init(r: 0, g: 0, b: 0)))
        try display.send(toWindowTitled: "red.mp4", ["key:Escape"])
        #expect(await child.waitForExit(timeout: 20), "Esc in the window did not end the command")
        #expect(child.succeeded, "status \(child.status ?? -1): \(child.standardErrorText)")
    }

    /// SDL2 is loaded when the window opens (CSDL2Lazy), not at the start: a libSDL2 that cannot
    /// be loaded (here an empty file found first on LD_LIBRARY_PATH) is the window's error, said
    /// once, and the sound plays. (Linked, the program would not start at all.)
    @Test func whenSDL2CannotBeLoadedTheSoundPlaysAndTheCommandSaysWhy() throws {
        defer { dir.remove() }
        let clip = try redClip(seconds: 1)
        let libraries = dir.file("broken-libs")
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: "\(libraries)/libSDL2-2.0.so.0", contents: Data()))
        var env = environment
        // A display is named (none is there: SDL would be the one to find that out, after loading).
        env["DISPLAY"] = ":4242"
        env["WAYLAND_DISPLAY"] = ""
        env["LD_LIBRARY_PATH"] = libraries
        let r = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", clip], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let said = "SDL2 is not installed (libSDL2-2.0.so.0): \(libraries)/libSDL2-2.0.so.0: file too short: playing the sound only"
        #expect((r.stdout + r.stderr).components(separatedBy: said).count == 2, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("Done: 1 played"), "\(r.stdout)")
    }

    @Test func withoutADisplayTheSoundPlaysAndTheCommandSaysSoOnce() throws {
        defer { dir.remove() }
        let clip = try redClip(seconds: 1)
        var env = environment
        env["DISPLAY"] = ""
        env["WAYLAND_DISPLAY"] = ""
        let r = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", clip], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "no display: playing the sound only").count == 2, "\(r.stderr)")
        #expect(r.stdout.contains("Done: 1 played"), "\(r.stdout)")
        // --no-video: the sound only, without a word about displays.
        let n = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", "--no-video", clip], environment: env)
        #expect(n.status == 0 && !n.stderr.contains("no display"), "\(n.stderr)")
        #expect(n.stdout.contains("Done: 1 played"), "\(n.stdout)")
        // A video output that is not a window needs no display; the plain progress lines carry
        // the A−V difference and the frames dropped (the one at 0:05 has frames behind it; the
        // lines come every 5 s of playback, from a tick a second).
        let long = dir.file("long.mp4")
        try VideoFixtures.colorClip(long, colors: ["red"], segment: 8)
        let null = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", "--video-output", "null", long], environment: env)
        #expect(null.status == 0 && !null.stderr.contains("no display"), "\(null.stderr)")
        #expect(null.stdout.contains("H264 160×90 · "), "\(null.stdout)")
        let line = null.stdout.split(separator: "\n").first { $0.contains("0:05 / 0:08") }.map(String.init) ?? ""
        #expect(line.contains(", A-V: ") && line.contains(", dropped: "), "\(null.stdout)")
        // A display that does not answer: said once, and the sound plays to the end.
        var unreachable = environment
        unreachable["DISPLAY"] = ":\(Int32.max)"
        unreachable["SDL_VIDEODRIVER"] = "x11"
        let gone = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", clip], environment: unreachable)
        #expect(gone.status == 0, "\(gone.stderr)")
        #expect(gone.stdout.components(separatedBy: "playing the sound only").count == 2, "\(gone.stdout)")
        #expect(gone.stdout.contains("Done: 1 played"), "\(gone.stdout)")
        // Videos in a queue with other items, without a display: their sound, said once.
        let queue = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", clip, long], environment: env)
        #expect(queue.status == 0, "\(queue.stderr)")
        #expect(queue.stderr.components(separatedBy: "no display: playing the sound only").count == 2, "\(queue.stderr)")
        #expect(queue.stdout.contains("Done: 2 played"), "\(queue.stdout)")
        let bad = try run(try tonearmBinary(), ["play", "--video-output", "screen", clip], environment: env)
        #expect(bad.status != 0 && bad.stderr.contains("--video-output must be window, null or file:OUT.y4m"), "\(bad.stderr)")
    }

    @Test func videoOutputFileWritesTheFramesShownInOrder() throws {
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 2)
        let out = dir.file("out.y4m")
        var env = environment
        env["DISPLAY"] = ""
        let r = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", "--video-output", "file:\(out)", clip], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let ours = try VideoFixtures.y4mFrames(out)
        let raw = dir.file("ffmpeg.yuv")
        try Fixtures.ffmpeg(["-i", clip, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        let all = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let size = 160 * 90 * 3 / 2
        let theirs = stride(from: 0, to: all.count, by: size).map { Array(all[$0..<min($0 + size, all.count)]) }
        #expect(!ours.isEmpty)
        // Each frame written is one of ffmpeg's (testsrc's frames all differ), in order, none
        // repeated: the indices rise. Frames late on a busy machine are dropped by rule; and the
        // player stops its video when the sound's end is heard, by the output's drain, which does
        // not yet wait for the clock to pass the last frames (the last output latency of frames,
        // ~0.25 s of the null output's, is not shown: a Player matter, reported).
        let index = Dictionary(theirs.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let indices = ours.map { index[$0] ?? -1 }
        #expect(!indices.contains(-1), "frames written that ffmpeg did not decode, at \(indices.enumerated().filter { $1 < 0 }.map(\.offset))")
        #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "not in order or repeated: \(indices)")
        #expect(indices.first == 0, "the first frame: \(indices.prefix(3))")
        #expect(ours.count >= theirs.count / 2, "\(ours.count) of \(theirs.count) frames written: \(indices)")
        // Existing: refused without --force.
        let again = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", "--video-output", "file:\(out)", clip],
                            environment: env)
        #expect(again.status == 1 && again.stderr.contains("already exists"), "\(again.stderr)")
    }
}
