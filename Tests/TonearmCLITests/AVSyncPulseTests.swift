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
        /// When each flash ended (the pixel turned dark again).
        var flashEnds: [Double]
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
        var env = server.environment.merging(display.childEnvironment) { $1 }
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
        return Run(pairs: AVSync.offsets(flashes: flashes, beeps: beeps), flashes: flashes,
                   flashEnds: try sampler.whiteEnds(), beeps: beeps,
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
        if let f0 = r.flashes.first {
            print("AVSyncPulseTests: flashes \(r.flashes.map { String(format: "%.3f", $0 - f0) }), ends \(r.flashEnds.map { String(format: "%.3f", $0 - f0) }), beeps \(r.beeps.map { String(format: "%.3f", $0 - f0) })")
        }
        // Ten flashes, the last of which may fall in the end.
        #expect(r.beeps.count >= 9, "beeps heard: \(r.beeps.count)")
        let origin = try #require(r.beeps.first)
        let steady = r.pairs.filter { $0.beep >= origin + 1.5 }
        #expect(steady.count >= 6, "flashes paired with a beep from 2 s on: \(steady.count) (flashes \(r.flashes.count), beeps \(r.beeps.count)); \(r.output)")
        let s = AVSync.summary(steady)
        #expect(abs(s.median) <= 0.060, "\(describe(steady))")
        // Every flash (not only the median) within ffplay's frame-dup threshold of its beep.
        #expect(s.maxAbs <= 0.100, "\(describe(steady))")
        // The flash at 0 s is the first frame, shown at once when the window opens (a poster
        // frame, as AVPlayerLayer and ffplay show it: VideoSyncMachine), before its beep, whose
        // sound is still on its way through the output (up to 1.4 s on the private null sink),
        // or, when the window comes up after the sound has started, as soon as it is up: not
        // timed by the clock, so held only to the frame-dup threshold (never much late).
        let poster = try #require(r.flashes.first)
        #expect(poster <= origin + 0.100, "the first frame came \(poster - origin) s after its beep")
        // The frames after it are timed by the audio clock: the flash should end 0.1 s after
        // the first beep, and the flash at 1 s come with its beep.
        let end = r.flashEnds.first { $0 > poster }
        let atOne = r.pairs.filter { abs($0.beep - origin - 1) < 0.5 }
        print("AVSyncPulseTests: the start-up: the first flash ended \(end.map { String(format: "%+.1f ms", ($0 - origin - 0.1) * 1000) } ?? "never") from 0.1 s after its beep; the flash at 1 s: \(atOne.isEmpty ? "not seen" : describe(atOne))")
        // Once the known issue of the first second: on the idle null sink the stream's first
        // write is heard only after the silence the sink had rendered ahead (up to 2 s), and
        // libpulse's interpolated stream time said it was played at once, ~100–145 ms ahead of
        // the ear until the buffer grew — the first flash ended at the first beep and the flash
        // at 1 s came ~120 ms early or was dropped. PulseOutput now reads the server's read index
        // and sink latency itself.
        #expect(end.map { abs($0 - origin - 0.1) <= 0.060 } ?? false, "the first flash's end: \(end.map { $0 - origin } ?? -1) s after the first beep")
        #expect(atOne.count == 1 && atOne.allSatisfy { abs($0.offset) <= 0.060 }, "the flash at 1 s: \(describe(atOne))")
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
        // From the seek's first timed frame on (the buffer restarts short and grows 1 s later:
        // the flash then is judged with the rest).
        let after = r.pairs.filter { $0.flash > seekAt + 0.5 }
        let before = r.pairs.filter { $0.flash < seekAt }
        print("AVSyncPulseTests: before the seek \(describe(before)); after it \(describe(after))")
        #expect(after.count >= 3, "flashes paired after the seek: \(after.count); \(r.output)")
        let s = AVSync.summary(after)
        #expect(abs(s.median) <= 0.060, "after the seek: \(describe(after))")
        #expect(s.maxAbs <= 0.100, "after the seek: \(describe(after))")
    }
}
