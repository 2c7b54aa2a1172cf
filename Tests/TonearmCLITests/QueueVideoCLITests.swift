// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport
import TonearmWindow

/// `tonearm play song.flac clip.mp4 song2.flac` as a user runs it: one queue, the video's picture
/// in its turn — offline every frame of ffmpeg's decode with the sound of all three in order; in
/// real time the frames shown against the queue's sound; under Xvfb a window that opens for the
/// video, closes when the song after it plays, and whose q ends the run — and `--audio-track N`.
/// Real time (the null output's clock and a real X server): run one at a time.
@Suite(.serialized) struct QueueVideoCLITests {
    let dir: TempDir
    init() throws { dir = try TempDir("queue-video-cli") }

    /// A private state, config and data home, no sound server and no session bus.
    var environment: [String: String] {
        ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state"), "XDG_CONFIG_HOME": dir.file("config"),
         "PULSE_SERVER": "unix:\(dir.file("no-pulse"))", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.file("no-bus"))",
         "DISPLAY": "", "WAYLAND_DISPLAY": ""]
    }

    /// A mono FLAC song of `seconds` at `freq` Hz.
    func song(_ name: String, freq: Double, seconds: Double = 1) throws -> String {
        let path = dir.file(name)
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: seconds, channels: 1, freq: freq)
        return path
    }

    /// The dominant frequency of `wav` between `from` and `to` seconds.
    func frequency(_ wav: WAVContents, from: Double, to: Double) -> Double {
        let mono = wav.mono
        let a = Int(from * wav.sampleRate), b = min(mono.count, Int(to * wav.sampleRate))
        guard a < b else { return 0 }
        return dominantFrequency(Array(mono[a..<b]), sampleRate: wav.sampleRate) ?? 0
    }

    @Test func offlineAQueueWritesEveryFrameOfTheVideoAndTheSoundOfAllThreeInOrder() throws {
        defer { dir.remove() }
        let a = try song("a.flac", freq: 330), b = try song("b.flac", freq: 660)
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 2)  // 440 Hz beside the picture
        let expected = try VideoFixtures.frameMD5s(clip)
        let y4m = dir.file("out.y4m"), wav = dir.file("out.wav")
        let r = try run(try tonearmBinary(), ["play", "--plain", a, clip, b, "--video-output", "file:\(y4m)", "--output", "file:\(wav)"],
                        environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Video: \(expected.count) frames written to \(y4m)"), "\(r.stdout)")
        #expect(r.stdout.contains("Done: 3 played, 0 failed"), "\(r.stdout)")
        #expect(!r.stderr.contains("sound only"), "\(r.stderr)")
        let frames = try VideoFixtures.y4mFrames(y4m).map(FrameMD5.hex)
        #expect(frames == expected, "ffmpeg's frames of the video, each once, in order")
        // The sound: the song, the video's, the other song, one after another.
        let out = try readWAV(wav)
        #expect(abs(out.duration - 4) < 0.1, "\(out.duration) s")
        #expect(abs(frequency(out, from: 0.2, to: 0.8) - 330) < 3)
        #expect(abs(frequency(out, from: 1.4, to: 2.6) - 440) < 3)
        #expect(abs(frequency(out, from: 3.2, to: 3.8) - 660) < 3)
    }

    @Test func realTimeTheVideosFramesAreShownInOrderAgainstTheQueuesSound() throws {
        defer { dir.remove() }
        let a = try song("a.flac", freq: 330), b = try song("b.flac", freq: 660)
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 2)
        let expected = try VideoFixtures.frameMD5s(clip)
        let y4m = dir.file("shown.y4m")
        let r = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", "--video-output", "file:\(y4m)", a, clip, b],
                        environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let order = lines.filter { $0.hasPrefix("Playing ") }
        #expect(order.count == 3 && order[0].contains("1/3: a.flac") && order[1].contains("2/3: clip.mp4")
                && order[2].contains("3/3: b.flac"), "\(r.stdout)")
        #expect(r.stdout.contains("Done: 3 played, 0 failed"), "\(r.stdout)")
        let summary = try #require(lines.first { $0.hasPrefix("Video: ") }, "\(r.stdout)")
        let numbers = summary.split(whereSeparator: { " ,:".contains($0) }).compactMap { Double($0) }
        try #require(numbers.count >= 2, "\(summary)")
        let shown = Int(numbers[0])
        // The file holds the frames shown: ffmpeg's, in order, none twice, from the first.
        let written = try VideoFixtures.y4mFrames(y4m).map(FrameMD5.hex)
        #expect(written.count == shown, "\(summary)")
        let indices = written.map { expected.firstIndex(of: $0) ?? -1 }
        #expect(!indices.contains(-1), "frames that ffmpeg did not decode: \(indices)")
        #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "not in order or repeated: \(indices)")
        #expect(indices.first == 0, "the first frame: \(indices.prefix(3))")
        #expect(written.count >= expected.count / 2, "\(written.count) of \(expected.count) frames shown: \(indices)")
    }

    /// True when a top-level window titled `title` is on `display` (xwininfo finds it).
    func windowExists(_ title: String, on display: VirtualDisplay) throws -> Bool {
        try run("xwininfo", ["-display", display.display, "-name", title]).status == 0
    }

    @Test func underXvfbTheWindowOpensForTheVideoAndClosesForTheSongAfterIt() async throws {
        defer { dir.remove() }
        let a = try song("a.flac", freq: 330, seconds: 1), b = try song("b.flac", freq: 660, seconds: 6)
        let clip = dir.file("red.mp4")
        try VideoFixtures.colorClip(clip, colors: ["red"], segment: 3)
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        let env = environment.merging(display.childEnvironment) { $1 }
        #expect(try !windowExists("red.mp4", on: display))
        let child = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", a, clip, b], environment: env,
                                     captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate() }
        let shown = await child.waitForStandardOutput(timeout: 60) { $0.text.contains("Video: the first frame shown") || $0.childEnded }
        #expect(shown, "no frame was shown: \(child.standardOutputText) \(child.standardErrorText)")
        #expect(child.standardOutputText.contains("Playing 2/3: red.mp4"), "\(child.standardOutputText)")
        #expect(child.standardOutputText.contains("window of 160×90"), "\(child.standardOutputText)")
        #expect(try windowExists("red.mp4", on: display), "the video's window")
        let shot = try display.screenshot()
        var red = 0
        for y in 0..<shot.height { for x in 0..<shot.width where shot.color(x: x, y: y).isClose(to: .init(r: 255, g: 0, b: 0)) { red += 1 } }
        #expect(red >= 160 * 90 * 9 / 10 && red <= 160 * 90, "\(red) red pixels on the screen; the window holds 160×90")
        // The song after it: the window is gone (once the video's last frames, what the output
        // still held of its sound, were shown: at most 2 s; the line at 0:05 comes well after),
        // and the run goes on to its end.
        let third = await child.waitForStandardOutput(timeout: 30) { $0.text.contains("0:05 / 0:06") || $0.childEnded }
        #expect(third && child.standardOutputText.contains("Playing 3/3: b.flac"), "\(child.standardOutputText)")
        #expect(try !windowExists("red.mp4", on: display), "the window stays open while a song plays")
        #expect(await child.waitForExit(timeout: 30))
        #expect(child.succeeded, "status \(child.status ?? -1): \(child.standardErrorText)")
        #expect(child.standardOutputText.contains("Done: 3 played, 0 failed"), "\(child.standardOutputText)")
        #expect(!child.standardErrorText.contains("sound only"), "\(child.standardErrorText)")
    }

    @Test func qInTheVideosWindowEndsTheQueue() async throws {
        defer { dir.remove() }
        let a = try song("a.flac", freq: 330, seconds: 1), b = try song("b.flac", freq: 660, seconds: 1)
        let clip = dir.file("red.mp4")
        try VideoFixtures.colorClip(clip, colors: ["red"], segment: 20)
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        let env = environment.merging(display.childEnvironment) { $1 }
        let child = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", a, clip, b], environment: env,
                                     captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate() }
        let shown = await child.waitForStandardOutput(timeout: 60) { $0.text.contains("Video: the first frame shown") || $0.childEnded }
        #expect(shown, "no frame was shown: \(child.standardOutputText) \(child.standardErrorText)")
        try display.send(toWindowTitled: "red.mp4", ["key:q"])
        #expect(await child.waitForExit(timeout: 20), "q in the window did not end the command")
        #expect(child.succeeded, "status \(child.status ?? -1): \(child.standardErrorText)")
        #expect(!child.standardOutputText.contains("Playing 3/3"), "\(child.standardOutputText)")
    }

    /// A video with two audio tracks: 300 Hz, then 700 Hz.
    func twoTrackClip() throws -> String {
        let clip = dir.file("two.mp4")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:d=2",
                             "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=48000:duration=2",
                             "-f", "lavfi", "-i", "sine=frequency=700:sample_rate=48000:duration=2",
                             "-map", "0:v", "-map", "1:a", "-map", "2:a", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                             "-c:a", "aac", "-b:a", "96k", clip])
        return clip
    }

    @Test(arguments: [1, 2])
    func audioTrackPlaysThatTrack(track: Int) throws {
        defer { dir.remove() }
        let clip = try twoTrackClip()
        let wav = dir.file("out.wav")
        let r = try run(try tonearmBinary(), ["play", "--plain", "--audio-track", "\(track)", "--output", "file:\(wav)",
                                              "--video-output", "null", clip], environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        let out = try readWAV(wav)
        #expect(abs(frequency(out, from: 0.3, to: 1.7) - (track == 1 ? 300 : 700)) < 3)
    }

    /// `tonearm ARGUMENTS` on a 100×24 pseudo-terminal, its windows on `display` (X11), with the
    /// private homes, no sound server and no session bus.
    func liveScreen(on display: VirtualDisplay, _ arguments: [String]) throws -> PTYScreen {
        func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let env = "DISPLAY=\(display.display) WAYLAND_DISPLAY= SDL_VIDEODRIVER=x11 XDG_STATE_HOME=\(q(dir.file("state"))) "
            + "XDG_CONFIG_HOME=\(q(dir.file("config"))) XDG_DATA_HOME=\(q(dir.file("data"))) "
            + "PULSE_SERVER=\(q("unix:" + dir.file("no-pulse"))) DBUS_SESSION_BUS_ADDRESS=\(q("unix:path=" + dir.file("no-bus")))"
        return try PTYScreen("stty rows 24 cols 100; \(env) exec \(q(try tonearmBinary())) " + arguments.map(q).joined(separator: " "))
    }

    @Test func theWindowsKeysActOnTheQueueOnTheLiveScreen() throws {
        defer { dir.remove() }
        let a = try song("a.flac", freq: 330, seconds: 1), b = try song("b.flac", freq: 660, seconds: 1)
        let clip = dir.file("red.mp4")
        try VideoFixtures.colorClip(clip, colors: ["red"], segment: 30)
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        let screen = try liveScreen(on: display, ["play", "--output", "null", a, clip, b])
        try screen.waitFor("Video: the first frame shown in a window of 160×90", timeout: 60)
        /// Runs `action`, then waits until the screen draws `marker` after it.
        func drawn(_ marker: String, after action: () throws -> Void) throws {
            let from = screen.all.utf8.count
            try action()
            try screen.wait(for: "'\(marker)'") { String(decoding: Array($0.utf8).dropFirst(from), as: UTF8.self).contains(marker) }
        }
        try drawn("⏸ Paused") { try display.send(toWindowTitled: "red.mp4", ["key:space"]) }
        try drawn("▶ Playing") { try display.send(toWindowTitled: "red.mp4", ["key:space"]) }
        // → in the window seeks the queue's item 5 s on, as the terminal's → does.
        let from = screen.all.utf8.count
        try display.send(toWindowTitled: "red.mp4", ["key:Right"])
        try screen.wait(for: "the time past 0:05") { text in
            let after = String(decoding: Array(text.utf8).dropFirst(from), as: UTF8.self)
            return (5...9).contains { after.contains(" 0:0\($0) / 0:30") }
        }
        try display.send(toWindowTitled: "red.mp4", ["key:Escape"])
        #expect(try screen.waitForExit() == 0)
    }

    /// The queue's window has PlayerView's built-in controls: a mouse movement shows them (the
    /// screenshot finds the seek bar's white played part and grey track over the red picture), a
    /// click on the seek bar's middle seeks the queue's item there, and one on the play glyph
    /// pauses — as the live screen shows.
    @Test func theWindowsControlsShowAndTheirClicksActOnTheQueue() throws {
        defer { dir.remove() }
        let a = try song("a.flac", freq: 330, seconds: 1)
        let clip = dir.file("red.mp4")
        try VideoFixtures.colorClip(clip, colors: ["red"], segment: 30)
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        let screen = try liveScreen(on: display, ["play", "--output", "null", a, clip])
        try screen.waitFor("Video: the first frame shown in a window of 160×90", timeout: 60)
        // Where the controls are drawn in a 160×90 window (the overlay's own layout).
        let rects = ControlsOverlay.layout(ControlsState(isPlaying: true, currentTime: 1, duration: 30, volume: 1, isMuted: false),
                                           width: 160, height: 90)
        let track = try #require(rects.first { $0.part == .seekTrack })
        let glyph = try #require(rects.first { $0.part == .playPause && $0.width >= 4 })
        // The window's place on the screen: where its red picture is.
        let shot = try display.screenshot()
        var origin: (x: Int, y: Int)?
        search: for y in 0..<shot.height {
            for x in 0..<shot.width where shot.color(x: x, y: y).isClose(to: .init(r: 255, g: 0, b: 0)) {
                origin = (x, y)
                break search
            }
        }
        let (ox, oy) = try #require(origin, "the red picture is on the screen")
        // A movement shows the controls: the track's far end turns grey (nothing played there)
        // where the picture was red. (Another process draws it: screenshots until it shows, 10 s
        // at most.)
        try display.send(toWindowTitled: "red.mp4", ["motion:\(track.x + track.width - 2),\(track.y + track.height / 2)"])
        let grey = ContinuousClock.now + .seconds(10)
        var far = shot.color(x: ox + track.x + track.width - 3, y: oy + track.y + track.height / 2)
        while !far.isClose(to: .init(r: 160, g: 160, b: 160)) && ContinuousClock.now < grey {
            far = try display.screenshot().color(x: ox + track.x + track.width - 3, y: oy + track.y + track.height / 2)
        }
        #expect(far.isClose(to: .init(r: 160, g: 160, b: 160)), "the seek bar is drawn over the picture: \(far)")
        // A click on the middle of the bar: the item goes to about 0:15.
        let from = screen.all.utf8.count
        let middle = track.x + (track.width - 1) / 2
        try display.send(toWindowTitled: "red.mp4", ["motion:\(middle),\(track.y + track.height / 2)",
                                                     "click:\(middle),\(track.y + track.height / 2)"])
        try screen.wait(for: "the time near 0:15") { text in
            let after = String(decoding: Array(text.utf8).dropFirst(from), as: UTF8.self)
            return (14...18).contains { after.contains(" 0:\($0) / 0:30") }
        }
        let beforePause = screen.all.utf8.count
        try display.send(toWindowTitled: "red.mp4", ["motion:\(glyph.x + glyph.width / 2),\(glyph.y + glyph.height / 2)",
                                                     "click:\(glyph.x + glyph.width / 2),\(glyph.y + glyph.height / 2)"])
        try screen.wait(for: "'⏸ Paused'") { String(decoding: Array($0.utf8).dropFirst(beforePause), as: UTF8.self).contains("⏸ Paused") }
        try display.send(toWindowTitled: "red.mp4", ["key:Escape"])
        #expect(try screen.waitForExit() == 0)
    }

    @Test func audioTrackInRealTimeThroughPulseAudio() throws {
        defer { dir.remove() }
        let clip = try twoTrackClip()
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let recording = try server.startRecording(to: dir.file("heard.wav"))
        let r = try run(try tonearmBinary(), ["play", "--plain", "--audio-track", "2", "--output", "pulse", "--video-output", "null", clip],
                        environment: environment.merging(server.environment) { $1 })
        recording.stop()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Video: "), "the picture played too: \(r.stdout)")
        let heard = try readWAV(recording.path).mono
        // The sound heard (between its first and last loud sample): the second track's 700 Hz.
        let loud = heard.indices.filter { abs(heard[$0]) > 0.1 }
        let first = try #require(loud.first, "nothing was heard"), last = loud.last ?? first
        let middle = Array(heard[(first + (last - first) / 4)..<(last - (last - first) / 4)])
        let f = dominantFrequency(middle, sampleRate: try readWAV(recording.path).sampleRate) ?? 0
        #expect(abs(f - 700) < 5, "heard \(f) Hz")
    }

    @Test func audioTrackInAQueueAndInRealTime() throws {
        defer { dir.remove() }
        let clip = try twoTrackClip()
        let a = try song("a.flac", freq: 330)
        // A queue: the song's one track and the video's second would not both exist: said before anything plays.
        let mixed = try run(try tonearmBinary(), ["play", "--plain", "--audio-track", "2", "--output", "null:untimed", a, clip],
                            environment: environment)
        #expect(mixed.status == 1)
        #expect(mixed.stderr.contains("\(a): no usable track 2 (--audio-track 2: the file has 1 audio track)"), "\(mixed.stderr)")
        // The same video twice in a queue, its second track each time.
        let wav = dir.file("queue.wav")
        let q = try run(try tonearmBinary(), ["play", "--plain", "--audio-track", "2", "--output", "file:\(wav)", clip, clip],
                        environment: environment)
        #expect(q.status == 0, "\(q.stderr)")
        let out = try readWAV(wav)
        #expect(abs(out.duration - 4) < 0.1, "\(out.duration) s")
        #expect(abs(frequency(out, from: 0.3, to: 1.7) - 700) < 3)
        #expect(abs(frequency(out, from: 2.3, to: 3.7) - 700) < 3)
    }

    @Test func audioTrackOutOfRangeSaysHowManyThereAre() throws {
        defer { dir.remove() }
        let clip = try twoTrackClip()
        let r = try run(try tonearmBinary(), ["play", "--plain", "--audio-track", "3", "--output", "null:untimed", clip],
                        environment: environment)
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(clip): no usable track 3 (--audio-track 3: the file has 2 audio tracks)"), "\(r.stderr)")
        #expect(!r.stdout.contains("Done:"), "nothing played: \(r.stdout)")
        // info marks each audio track with the N that chooses it.
        let info = try run(try tonearmBinary(), ["info", clip], environment: environment)
        let audioLines = info.stdout.split(separator: "\n").filter { $0.contains(" audio ") }
        #expect(audioLines.count == 2 && audioLines[0].hasSuffix("--audio-track 1") && audioLines[1].hasSuffix("--audio-track 2"),
                "\(info.stdout)")
        let zero = try run(try tonearmBinary(), ["play", "--audio-track", "0", clip], environment: environment)
        #expect(zero.status == 64 && zero.stderr.contains("--audio-track counts from 1"), "\(zero.stderr)")
    }
}
