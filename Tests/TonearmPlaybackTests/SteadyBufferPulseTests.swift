// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// The steady buffer of media playback, heard for real: a queue plays through the registry's
/// `pulse` driver with ``OutputBuffering/steady`` (75 ms at the start, 250 ms after a second) on a
/// private PulseAudio server whose null sink's monitor is recorded. Tone A (440 Hz on the left)
/// plays until the buffer has grown; a skip goes to tone B (1500 Hz). The recording shows when A
/// stops and B starts; the queue's clock is read at the skip and after it.
@Suite(.serialized) struct SteadyBufferPulseTests {
    static let rate = 48_000.0
    static let aFrequency = 440.0, bFrequency = 1_500.0

    final class Box: Sendable {
        let output = Mutex<TappedOutput?>(nil)
    }

    /// One take: a private server, its null sink's monitor recorded, and the tapped `pulse` output
    /// (steady buffering) that the player under test makes.
    final class Stage {
        let server: PrivatePulseServer
        let heardPath: String
        let recording: PrivatePulseServer.Recording
        let box = Box()

        init(_ dir: TempDir, _ name: String) throws {
            server = try PrivatePulseServer()
            heardPath = dir.file("\(name).wav")
            do { recording = try server.startRecording(to: heardPath) } catch { server.stop(); throw error }
        }

        /// The output factory to give the player: the registry's `pulse` driver, tapped.
        func output(_ streamName: String) -> @Sendable () throws -> any AudioOutputDriver {
            let serverString = server.serverString, box = box
            return {
                let d = TappedOutput(try PulseOutput.driverFactory.make(
                    OutputDriverRequest(streamName: streamName, server: serverString, buffering: .steady)))
                box.output.withLock { $0 = d }
                return d
            }
        }

        /// The output the player made (it makes it when it starts).
        func madeOutput() throws -> TappedOutput {
            guard let out = box.output.withLock({ $0 }) else { throw TestSupportError("the player made no output") }
            return out
        }

        /// Waits until the output has grown its buffer and then half a second more was recorded
        /// (the grown buffer filled and heard for a while).
        func waitUntilTheBufferGrewAndWasHeard(_ out: TappedOutput) async throws {
            guard await out.seen.wait(timeout: 10, until: out.grew(beyond: PulseOutput.shortLatency)) else {
                throw TestSupportError("the buffer did not grow: \(out.seen.value)")
            }
            let soFar = try SteadyBufferPulseTests.recordedFrames(heardPath)
            guard try GaplessPulseTests().waitForRecording(heardPath, atLeast: soFar + 24_000, endingInSilence: 0, timeout: 10) else {
                throw TestSupportError("the recording did not grow by 0.5 s within 10 s")
            }
        }

        /// `read()` now and after each of the next `count` 200 ms of recording (a signal: each
        /// write of the recorder).
        func readings(_ count: Int, _ read: () -> Double) throws -> [Double] {
            var values = [read()]
            for _ in 0..<count {
                let now = try SteadyBufferPulseTests.recordedFrames(heardPath)
                _ = try GaplessPulseTests().waitForRecording(heardPath, atLeast: now + 9_600, endingInSilence: 0, timeout: 10)
                values.append(read())
            }
            return values
        }

        func stop() {
            recording.stop()
            server.stop()
        }
    }

    /// Where tone A and tone B were heard in a recording (left channel, 5 ms windows).
    struct ToneSpans {
        /// How long A was heard, in seconds.
        var heardA: Double
        /// The sample after A's last window, and B's first window.
        var aEnd: Int, bStart: Int
        /// Seconds from A's end to B's start.
        var gap: Double { Double(bStart - aEnd) / SteadyBufferPulseTests.rate }
        static let window = 240

        init(_ path: String) throws {
            let left = try readWAV(path).channels[0]
            let window = Self.window
            func present(_ f: Double, at i: Int) -> Bool {
                goertzelPower(left[i..<min(i + window, left.count)], frequency: f, sampleRate: SteadyBufferPulseTests.rate) > 0.01
            }
            let starts = Array(stride(from: 0, to: left.count - window, by: window))
            let aStart = try #require(starts.first { present(SteadyBufferPulseTests.aFrequency, at: $0) }, "A was not heard")
            aEnd = try #require(starts.last { present(SteadyBufferPulseTests.aFrequency, at: $0) }) + window
            bStart = try #require(starts.first { present(SteadyBufferPulseTests.bFrequency, at: $0) }, "B was not heard")
            heardA = Double(aEnd - aStart) / SteadyBufferPulseTests.rate
        }
    }

    /// Without the flush, A would be heard for the whole grown buffer (about 250 ms) after the
    /// skip; with it, A stops within the time the skip takes to re-open the item plus what the
    /// sink itself holds (its 20 ms, set by the recorder). The clock: before the skip it lags what
    /// was rendered by about the grown buffer (it is what is heard, not what was rendered), A is
    /// heard up to where it said (not less: it did not run ahead), and in B it starts near 0 and
    /// never goes back.
    @Test func aSkipAfterTheBufferGrewStopsTheOldToneAtOnce() async throws {
        let dir = try TempDir("steady-pulse")
        defer { dir.remove() }
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "pcm_f32le"], seconds: 8, freq: Self.aFrequency)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "pcm_f32le"], seconds: 4, freq: Self.bFrequency)

        struct Take { var rendered: Double, heardAtSkip: Double, times: [Double], heardPath: String }
        let (chosen, underruns) = try await firstUnstarvedTake("skip") { attempt in
            let stage = try Stage(dir, "heard-\(attempt)")
            defer { stage.stop() }
            let q = QueuePlayer(items: [a, b].map { QueueItem(path: $0) }, output: stage.output("steady"))
            defer { q.stop() }
            q.play()
            let out = try stage.madeOutput()
            try await stage.waitUntilTheBufferGrewAndWasHeard(out)
            let rendered = q.renderedTime
            let heardAtSkip = q.currentTime
            q.advanceToNextItem()
            // The clock in B, read as the recording grows.
            let times = try stage.readings(4) { q.currentTime }
            let underruns = out.underrunCount
            q.stop()
            stage.recording.stop()
            return (Take(rendered: rendered, heardAtSkip: heardAtSkip, times: times, heardPath: stage.heardPath), underruns)
        }
        let take = try #require(chosen, "PulseAudio reported underruns in every take (\(underruns)): the recordings' timelines are shifted, the flush cannot be judged")
        let (rendered, heardAtSkip, times) = (take.rendered, take.heardAtSkip, take.times)

        // What the output held at the skip: the grown buffer (the server gives the stream's buffer
        // what the sink does not take; with the recorder's 20 ms sink, about 165 ms in all).
        let held = rendered - heardAtSkip
        #expect(held > PulseOutput.shortLatency && held < PulseOutput.steadyLatency + 0.1,
                "rendered \(rendered) s, heard \(heardAtSkip) s: the clock should lag by the grown buffer")
        #expect(times[0] < 0.1, "just after the skip the clock says \(times[0]) s into B")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "the clock went back in B: \(times)")

        let spans = try ToneSpans(take.heardPath)
        let afterSkip = spans.heardA - heardAtSkip
        let report = "A heard for \(spans.heardA) s (the clock said \(heardAtSkip) s at the skip, \(rendered) s rendered), B from \(spans.gap) s after A's end"
        // A stops well under the grown buffer's length after the skip (measured: 2 ms with the
        // flush; 145 ms, all of what was held, without it).
        #expect(afterSkip < held / 2, "A went on \(afterSkip) s after the skip, with \(held) s held — \(report)")
        // ...and not before the clock said it was heard (the clock did not run ahead).
        #expect(afterSkip > -0.05, "A stopped \(-afterSkip) s before where the clock was — \(report)")
        // Of what was rendered of A, the end was dropped, never heard.
        #expect(spans.heardA < rendered - held / 2, "\(report)")
        // B follows at once (the new audio after the short start buffer), never over A.
        #expect(spans.bStart >= spans.aEnd - ToneSpans.window && spans.gap < 0.15, "\(report)")
    }

    /// One file, tone A for its first 4 s and tone B after.
    func abFile(_ dir: TempDir) throws -> String {
        let path = dir.file("ab.wav")
        let a = "0.5*sin(2*PI*\(Self.aFrequency)*t)", b = "0.5*sin(2*PI*\(Self.bFrequency)*t)"
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=if(lt(t\\,4)\\,\(a)\\,\(b))|if(lt(t\\,4)\\,\(a)\\,\(b)):s=48000:d=8",
                             "-c:a", "pcm_f32le", path])
        return path
    }

    /// What a seek from A to 5 s (after the buffer grew) left: what the output held, the clock at
    /// the seek, the clock as the recording grew and once paused, and the recording.
    struct SeekTake { var held: Double, heardAtSeek: Double, times: [Double], heardPath: String }

    /// The seek's checks, the same for ``AudioPlayer`` and ``Player``: A stops at once, and the
    /// clock (what is heard, also while paused after it) stays monotonic and lands on the seek.
    func checkSeek(_ take: SeekTake) throws {
        let (held, heardAtSeek, times) = (take.held, take.heardAtSeek, take.times)
        #expect(held > PulseOutput.shortLatency, "the output held \(held) s at the seek")
        #expect(heardAtSeek < 4, "the seek came at \(heardAtSeek) s, after A")
        #expect(times[0] >= 5 && times[0] < 5.1, "just after the seek the clock says \(times[0]) s")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "the clock went back: \(times)")

        let spans = try ToneSpans(take.heardPath)
        let afterSeek = spans.heardA - heardAtSeek
        let report = "A heard for \(spans.heardA) s (the clock said \(heardAtSeek) s at the seek, \(held) s held), B from \(spans.gap) s after A's end"
        #expect(afterSeek < held / 2, "A went on \(afterSeek) s after the seek — \(report)")
        #expect(afterSeek > -0.05, "A stopped \(-afterSeek) s before where the clock was — \(report)")
        #expect(spans.bStart >= spans.aEnd - ToneSpans.window && spans.gap < 0.15, "\(report)")
    }

    /// The same for ``AudioPlayer``: a seek from A (after the buffer grew) to 5 s.
    @Test func aSeekAfterTheBufferGrewStopsTheOldToneAtOnce() async throws {
        let dir = try TempDir("steady-pulse-player")
        defer { dir.remove() }
        let path = try abFile(dir)
        let (chosen, underruns) = try await firstUnstarvedTake("AudioPlayer seek") { attempt in
            let stage = try Stage(dir, "heard-\(attempt)")
            defer { stage.stop() }
            let p = try AudioPlayer(contentsOf: URL(fileURLWithPath: path), output: stage.output("steady-player"))
            defer { p.stop() }
            guard p.play() else { throw TestSupportError("play() refused") }
            let out = try stage.madeOutput()
            try await stage.waitUntilTheBufferGrewAndWasHeard(out)
            let held = out.latency
            let heardAtSeek = p.currentTime
            p.currentTime = 5
            var times = try stage.readings(3) { p.currentTime }
            p.pause()
            times.append(p.currentTime)
            let underruns = out.underrunCount
            p.stop()
            stage.recording.stop()
            return (SeekTake(held: held, heardAtSeek: heardAtSeek, times: times, heardPath: stage.heardPath), underruns)
        }
        try checkSeek(try #require(chosen, "PulseAudio reported underruns in every take (\(underruns)): the recordings' timelines are shifted"))
    }

    /// The same for ``Player`` (AVPlayer's counterpart): its seek switches the renderer inside the
    /// output's flush too.
    @Test func aPlayerSeekAfterTheBufferGrewStopsTheOldToneAtOnce() async throws {
        let dir = try TempDir("steady-pulse-avplayer")
        defer { dir.remove() }
        let path = try abFile(dir)
        let (chosen, underruns) = try await firstUnstarvedTake("Player seek") { attempt in
            let stage = try Stage(dir, "heard-\(attempt)")
            defer { stage.stop() }
            let p = Player(url: URL(fileURLWithPath: path), output: stage.output("steady-avplayer"))
            defer { p.pause() }
            let events = p.events
            p.play()
            _ = try await waitForEvent(events, timeout: 10, "playing") {
                if case .timeControlStatusChanged(.playing) = $0 { true } else { false }
            }
            let out = try stage.madeOutput()
            try await stage.waitUntilTheBufferGrewAndWasHeard(out)
            let held = out.latency
            let heardAtSeek = p.currentTime()
            guard await p.seek(to: 5) else { throw TestSupportError("the seek did not finish") }
            var times = try stage.readings(3) { p.currentTime() }
            p.pause()
            times.append(p.currentTime())
            let underruns = out.underrunCount
            stage.recording.stop()
            return (SeekTake(held: held, heardAtSeek: heardAtSeek, times: times, heardPath: stage.heardPath), underruns)
        }
        try checkSeek(try #require(chosen, "PulseAudio reported underruns in every take (\(underruns)): the recordings' timelines are shifted"))
    }

    /// What the output had played when the queue said B was current, and B's clock then.
    struct Announcement: Sendable {
        var played: Int64
        var latency: Double
        var clock: Double
    }

    final class AnnouncementBox: Sendable {
        let value = Mutex<Announcement?>(nil)
    }

    /// With the grown buffer (250 ms asked for; what the sink does not hold is the stream's), the
    /// next item is announced when the join is heard, not when it is rendered: the output's own
    /// count of frames played (PulseAudio's clock, `framesPlayed`) is at the join — A's 144,000
    /// frames — when `currentItemChanged` for B is said (read on the executor as it is said, so
    /// that the listener's own delay is not counted), within 10 ms before it (the two clocks'
    /// rounding) and less than the output's buffer after it (what waking up takes). B's clock
    /// then counts from B's first heard frame: at the announcement it agrees with the frames
    /// played since the join, and it moves on (not held at 0). Before the fix the announcement
    /// came a whole buffer early (about 165 ms with the recorder's 20 ms sink) with B's clock at 0.
    @Test func theNextItemIsAnnouncedWhenItsFirstFrameIsHeard() async throws {
        let dir = try TempDir("steady-pulse-announce")
        defer { dir.remove() }
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "pcm_f32le"], seconds: 3, freq: Self.aFrequency)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "pcm_f32le"], seconds: 3, freq: Self.bFrequency)
        let join = Int64(3 * Self.rate)

        struct Take { var announced: Announcement?, clocks: [Double], grew: Bool }
        let (chosen, underruns) = try await firstUnstarvedTake("announcement") { attempt in
            let stage = try Stage(dir, "heard-\(attempt)")
            defer { stage.stop() }
            let q = QueuePlayer(items: [a, b].map { QueueItem(path: $0) }, output: stage.output("steady-announce"))
            defer { q.stop() }
            let announced = AnnouncementBox()
            let box = stage.box
            q.eventProbe = { [weak q] e in
                guard case .currentItemChanged(1?, _) = e, let q, let out = box.output.withLock({ $0 }) else { return }
                let played = out.framesPlayed, latency = out.latency
                announced.value.withLock { $0 = $0 ?? Announcement(played: played, latency: latency, clock: q.currentTime) }
            }
            let events = q.events
            q.play()
            let out = try stage.madeOutput()
            _ = try await waitForEvent(events, timeout: 15, "B to be announced") {
                if case .currentItemChanged(1?, _) = $0 { true } else { false }
            }
            let clocks = try stage.readings(3) { q.currentTime }
            let underruns = out.underrunCount
            q.stop()
            q.eventProbe = nil
            let grew = out.grew(beyond: PulseOutput.shortLatency)(out.seen.value)
            return (Take(announced: announced.value.withLock { $0 }, clocks: clocks, grew: grew), underruns)
        }
        let take = try #require(chosen, "PulseAudio reported underruns in every take (\(underruns)): the output's clock is not the queue's, the announcement cannot be judged")
        let clocks = take.clocks

        #expect(take.grew, "the buffer did not grow before the join")
        let at = try #require(take.announced, "B was never announced")
        let early = join - at.played
        let report = "B announced with \(at.played) frames played (the join is at \(join)), \(at.latency) s held, B's clock at \(at.clock) s"
        // Not before the join is heard (10 ms for the clocks' rounding)...
        #expect(early <= Int64(0.010 * Self.rate), "\(Double(early) / Self.rate) s early — \(report)")
        // ...and not a buffer after it.
        #expect(-early < Int64(PulseOutput.steadyLatency * Self.rate), "\(Double(-early) / Self.rate) s late — \(report)")
        // B's clock from its first heard frame: what has been played since the join (never more).
        #expect(at.clock >= 0 && at.clock * Self.rate <= Double(-early) + 0.010 * Self.rate, "\(report)")
        // ...and moving on from there.
        #expect(zip(clocks, clocks.dropFirst()).allSatisfy { $0 < $1 } && clocks[0] >= at.clock, "B's clock: \(clocks) — \(report)")
    }

    /// An output that says when the queue's render has reached a frame (`signalAt`, counted from
    /// the first render) and when it ended — the render thread signals a semaphore, the test
    /// waits on it — so that a test can act while what was rendered is still in the output.
    final class RenderWatch: ForwardingOutputDriver, Sendable {
        let inner: any AudioOutputDriver
        let reached = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let signalAt: Int64
        init(_ inner: any AudioOutputDriver, signalAt: Int64) {
            self.inner = inner
            self.signalAt = signalAt
        }

        final class Counting: AudioRenderSource {
            let source: any AudioRenderSource
            let watch: RenderWatch
            let frames = Atomic<Int64>(0)
            let endSaid = Atomic<Bool>(false)
            init(_ source: any AudioRenderSource, _ watch: RenderWatch) {
                self.source = source
                self.watch = watch
            }

            func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
                let r = source.render(into: buffer, frameCount: frameCount, timing: timing)
                let before = frames.add(Int64(r.framesRendered), ordering: .relaxed).oldValue
                if before < watch.signalAt && before + Int64(r.framesRendered) >= watch.signalAt { watch.reached.signal() }
                if r.ended && !endSaid.exchange(true, ordering: .relaxed) { watch.ended.signal() }
                return r
            }
        }

        func start(source: any AudioRenderSource) throws { try inner.start(source: Counting(source, self)) }
    }

    /// Waits (off the test's task) for `semaphore`, at most 10 s.
    static func wait(_ semaphore: DispatchSemaphore) async -> Bool {
        await Task.detached { semaphore.wait(timeout: .now() + 10) == .success }.value
    }

    /// A restart inside the output's latency, for real: ReplayGain is set when the node has
    /// rendered 50 ms of B (the join into it is in the grown buffer, not heard yet), which
    /// re-schedules B. B is still announced when its first frame is heard (PulseAudio's count of
    /// frames played at the join, as in ``theNextItemIsAnnouncedWhenItsFirstFrameIsHeard()``),
    /// once; before the fix it was announced at the restart, about the buffer early. And once
    /// the node has rendered B's end, the queue still reads `playing` while the output holds
    /// what is left of B (before the fix: `stopped` at once); `itemPlayedToEnd` for B comes when
    /// the output has played it.
    @Test func aRestartInsideTheOutputsLatencyStillAnnouncesTheNextItemWhenHeard() async throws {
        let dir = try TempDir("steady-pulse-restart")
        defer { dir.remove() }
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "pcm_f32le"], seconds: 2, freq: Self.aFrequency)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "pcm_f32le"], seconds: 1, freq: Self.bFrequency)
        let join = Int64(2 * Self.rate), end = Int64(3 * Self.rate)

        struct Take {
            var announced: [Announcement], currentAtRestart: Int?, heldAtRestart: Double
            var stateAtEnd: PlaybackState?, heldAtEnd: Double, playedAtBsEnd: Int64?
        }
        final class Said: Sendable {
            let announced = Mutex<[Announcement]>([])
            let playedAtBsEnd = Mutex<Int64?>(nil)
        }
        let (chosen, underruns) = try await firstUnstarvedTake("restart in the latency") { attempt in
            let stage = try Stage(dir, "heard-\(attempt)")
            defer { stage.stop() }
            let made = Mutex<RenderWatch?>(nil)
            let tapped = stage.output("steady-restart")
            let q = QueuePlayer(items: [a, b].map { QueueItem(path: $0) }, output: {
                let w = RenderWatch(try tapped(), signalAt: join + Int64(0.05 * Self.rate))
                made.withLock { $0 = w }
                return w
            })
            defer { q.stop() }
            let said = Said()
            let box = stage.box
            q.eventProbe = { [weak q] e in
                guard let q, let out = box.output.withLock({ $0 }) else { return }
                switch e {
                case .currentItemChanged(1?, _):
                    let at = Announcement(played: out.framesPlayed, latency: out.latency, clock: q.currentTime)
                    said.announced.withLock { $0.append(at) }
                case .itemPlayedToEnd(1, _):
                    said.playedAtBsEnd.withLock { $0 = out.framesPlayed }
                default: break
                }
            }
            let events = q.events
            q.play()
            let out = try stage.madeOutput()
            let watch = try #require(made.withLock { $0 })
            guard await Self.wait(watch.reached) else { throw TestSupportError("the render never reached B") }
            let (currentAtRestart, heldAtRestart) = (q.currentIndex, out.latency)
            q.setReplayGain(.track)
            guard await Self.wait(watch.ended) else { throw TestSupportError("the render never ended") }
            let (stateAtEnd, heldAtEnd) = (q.playbackState, out.latency)
            _ = try await waitForEvent(events, timeout: 15, "the queue to finish") { $0 == .finished }
            let underruns = out.underrunCount
            q.eventProbe = nil
            return (Take(announced: said.announced.withLock { $0 }, currentAtRestart: currentAtRestart,
                         heldAtRestart: heldAtRestart, stateAtEnd: stateAtEnd, heldAtEnd: heldAtEnd,
                         playedAtBsEnd: said.playedAtBsEnd.withLock { $0 }), underruns)
        }
        let take = try #require(chosen, "PulseAudio reported underruns in every take (\(underruns))")
        let report = "B announced at \(take.announced.map { "\($0.played) frames played, \($0.latency) s held" }) (the join is at \(join)); at the restart item \(String(describing: take.currentAtRestart)) was current with \(take.heldAtRestart) s held"
        #expect(take.currentAtRestart == 0 && take.heldAtRestart > 0.05, "the restart came after the join was heard: \(report)")
        #expect(take.announced.count == 1, "\(report)")
        let at = try #require(take.announced.first, "\(report)")
        let early = join - at.played
        #expect(early <= Int64(0.010 * Self.rate), "\(Double(early) / Self.rate) s early — \(report)")
        #expect(-early < Int64(PulseOutput.steadyLatency * Self.rate), "\(Double(-early) / Self.rate) s late — \(report)")
        // The end: playing while the output holds it, and B played to its end when heard.
        #expect(take.stateAtEnd == .playing || take.heldAtEnd < 0.02,
                "the queue read \(String(describing: take.stateAtEnd)) with \(take.heldAtEnd) s of B still in the output")
        let played = try #require(take.playedAtBsEnd, "B was never played to its end")
        #expect(end - played <= Int64(0.010 * Self.rate), "B's end said \(Double(end - played) / Self.rate) s before it was heard")
    }

    /// Frames of 16-bit stereo in the WAV that `parecord` is writing at `path`.
    static func recordedFrames(_ path: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var offset = 12
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = Int(data[offset + 4]) | Int(data[offset + 5]) << 8 | Int(data[offset + 6]) << 16 | Int(data[offset + 7]) << 24
            if id == "data" { return (data.count - offset - 8) / 4 }
            offset += 8 + size + (size & 1)
        }
        return 0
    }
}
