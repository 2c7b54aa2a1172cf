// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// A/V sync measured end to end, not from the player's own clock: `tonearm play` shows a clip
/// with a white flash and a beep at the same instants in a window on a private Xvfb, and plays
/// its sound to a private PulseAudio null sink. One pixel of the screen is read every
/// millisecond (xsampler.py) and the sink's monitor is recorded with PulseAudio's stream timing
/// (pamonitor.py: each sample timed when it leaves the sink, the sink's latency included), both
/// stamped with CLOCK_MONOTONIC; each flash is paired with its beep.
///
/// The bound asserted is generous (a median within 60 ms; the issue's target of ±15 ms is
/// printed, not asserted: the machine is shared and loaded), but it fails when sync breaks: a
/// picture on its own clock, or one that ignores the output's latency, is off by the sink's and
/// the stream's buffering (0.1–0.3 s). A clip whose beep comes 150 ms after its flash checks the
/// instruments themselves (they must see −150 ms). Real time: run one at a time.
@Suite(.serialized) struct AVSyncPulseTests {
    let dir: TempDir
    init() throws { dir = try TempDir("av-sync") }

    struct Run {
        var pairs: [AVSync.Pair]
        var flashes: [Double]
        var beeps: [Double]
        /// When the seek key was sent (CLOCK_MONOTONIC s), if one was.
        var seekAt: Double?
        var output: String
    }

    /// Plays `clip` with `tonearm play --plain --output pulse` in a window that fills a screen
    /// of the clip's size (320×240: the window is there wherever it is placed), watching the
    /// screen's centre and the sink. With `seekAfter`, sends → (5 s on) to the window once the
    /// progress line of that time is printed.
    func measure(_ clip: String, seekAfter: String? = nil) async throws -> Run {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let display = try VirtualDisplay(width: 320, height: 240)
        defer { display.stop() }
        let recorder = try MonitorRecorder(server: server, directory: dir)
        let sampler = try ScreenSampler(display: display, x: 160, y: 120, directory: dir)
        var env = server.environment
        env["DISPLAY"] = display.display
        env["WAYLAND_DISPLAY"] = ""
        env["SDL_VIDEODRIVER"] = "x11"
        env["XDG_DATA_HOME"] = dir.file("data")
        env["XDG_STATE_HOME"] = dir.file("state")
        env["XDG_CONFIG_HOME"] = dir.file("config")
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(dir.file("no-bus"))"
        let child = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "pulse", clip], environment: env,
                                     captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate() }
        var seekAt: Double?
        if let seekAfter {
            let reached = await child.waitForStandardOutput(timeout: 60) { $0.text.contains(seekAfter) || $0.childEnded }
            try #require(reached, "no progress line '\(seekAfter)': \(child.standardOutputText) \(child.standardErrorText)")
            seekAt = AVSync.now()
            try display.send(toWindowTitled: URL(fileURLWithPath: clip).lastPathComponent, ["key:Right"])
        }
        let ended = await child.waitForExit(timeout: 90)
        #expect(ended, "tonearm did not end: \(child.standardOutputText)")
        #expect(child.succeeded, "status \(child.status ?? -1): \(child.standardErrorText)")
        sampler.stop()
        recorder.stop()
        let flashes = try sampler.whiteOnsets(), beeps = try recorder.onsets()
        return Run(pairs: AVSync.offsets(flashes: flashes, beeps: beeps), flashes: flashes, beeps: beeps,
                   seekAt: seekAt, output: child.standardOutputText)
    }

    func describe(_ pairs: [AVSync.Pair]) -> String {
        let s = AVSync.summary(pairs)
        return String(format: "median %+.1f ms, max |A−V| %.1f ms over %d flashes: ", s.median * 1000, s.maxAbs * 1000, pairs.count)
            + pairs.map(\.description).joined(separator: ", ")
    }

    @Test func eachFlashIsSeenWithItsBeep() async throws {
        defer { dir.remove() }
        let clip = dir.file("flash.mp4")
        try AVSync.flashBeepClip(clip, seconds: 10)
        let r = try await measure(clip)
        print("AVSyncPulseTests: A−V (video minus audio, at the screen and at the sink's output): \(describe(r.pairs))")
        // Ten flashes, the last of which may fall in the end. The first two seconds are the
        // start-up: judged apart (below).
        #expect(r.beeps.count >= 9, "beeps heard: \(r.beeps.count)")
        let origin = try #require(r.beeps.first)
        let start = r.pairs.filter { $0.beep < origin + 1.5 }
        let steady = r.pairs.filter { $0.beep >= origin + 1.5 }
        print("AVSyncPulseTests: the start-up (the flashes at 0 s and 1 s): \(start.isEmpty ? "none seen" : describe(start))")
        #expect(steady.count >= 6, "flashes paired with a beep from 2 s on: \(steady.count) (flashes \(r.flashes.count), beeps \(r.beeps.count)); \(r.output)")
        let s = AVSync.summary(steady)
        #expect(abs(s.median) <= 0.060, "\(describe(steady))")
        // Every flash (not only the median) within ffplay's frame-dup threshold of its beep.
        #expect(s.maxAbs <= 0.100, "\(describe(steady))")
        // Known, in the start-up: the first frame is shown at once when the window opens (by
        // design, VideoSyncMachine: the picture of the place started at), so the flash at 0 s
        // comes 0.13–0.36 s before its beep, whose sound is still on its way through the
        // output. And at 1 s the flash is dropped (9 flashes of 10 seen) or shown ~130 ms early;
        // most likely because PulseOutput grows its buffer from 75 to 250 ms then (growAfter): the
        // engine renders the 175 ms asked for at once, while the latency the video clock
        // subtracts (rendered − latency) is the one of the last timing update, so the clock
        // jumps ~175 ms ahead until the next (the same would follow 1 s after every seek, a
        // flush shrinking the buffer).
        // A Player/PulseOutput matter, reported.
        withKnownIssue("the picture runs early in the first seconds", isIntermittent: true) {
            #expect(start.allSatisfy { abs($0.offset) <= 0.060 }, "the start-up: \(describe(start))")
        }
    }

    @Test func theInstrumentsSeeAKnownOffset() async throws {
        defer { dir.remove() }
        // The beep 150 ms after its flash: the picture is 150 ms early relative to its sound.
        let clip = dir.file("offset.mp4")
        try AVSync.flashBeepClip(clip, seconds: 8, beepDelay: 0.150)
        let r = try await measure(clip)
        print("AVSyncPulseTests: a clip with its beeps 150 ms late: \(describe(r.pairs))")
        #expect(r.pairs.count >= 5, "flashes paired: \(r.pairs.count); \(r.output)")
        let s = AVSync.summary(r.pairs)
        #expect(abs(s.median + 0.150) <= 0.060, "the instruments see \(describe(r.pairs)), not −150 ms")
    }

    @Test func syncHoldsAfterASeek() async throws {
        defer { dir.remove() }
        let clip = dir.file("seek.mp4")
        try AVSync.flashBeepClip(clip, seconds: 16)
        // At the 0:05 progress line (the plain lines come every 5 s of playback), → jumps 5 s
        // on, to 0:10; six flashes follow.
        let r = try await measure(clip, seekAfter: "0:05 / 0:16")
        let seekAt = try #require(r.seekAt)
        let after = r.pairs.filter { $0.flash > seekAt + 0.5 }
        let before = r.pairs.filter { $0.flash < seekAt }
        print("AVSyncPulseTests: before the seek \(describe(before)); after it \(describe(after))")
        #expect(after.count >= 3, "flashes paired after the seek: \(after.count); \(r.output)")
        let s = AVSync.summary(after)
        #expect(abs(s.median) <= 0.060, "after the seek: \(describe(after))")
        #expect(s.maxAbs <= 0.100, "after the seek: \(describe(after))")
    }
}
