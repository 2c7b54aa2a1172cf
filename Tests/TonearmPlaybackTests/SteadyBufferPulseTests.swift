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

        let server = try PrivatePulseServer()
        defer { server.stop() }
        let heardPath = dir.file("heard.wav")
        let recording = try server.startRecording(to: heardPath)
        defer { recording.stop() }
        let serverString = server.serverString
        let box = Box()
        let q = QueuePlayer(items: [a, b].map { QueueItem(path: $0) }, output: {
            let d = TappedOutput(try PulseOutput.driverFactory.make(
                OutputDriverRequest(streamName: "steady", server: serverString, buffering: .steady)))
            box.output.withLock { $0 = d }
            return d
        })
        defer { q.stop() }
        q.play()
        let out = try #require(box.output.withLock { $0 })
        #expect(await out.seen.wait(timeout: 10, until: out.grew(beyond: PulseOutput.shortLatency)), "the buffer did not grow: \(out.seen.value)")
        // The grown buffer filled and heard for a while: half a second more in the recording.
        let gapless = GaplessPulseTests()
        let soFar = try recordedFrames(heardPath)
        #expect(try gapless.waitForRecording(heardPath, atLeast: soFar + 24_000, endingInSilence: 0, timeout: 10))

        let rendered = q.renderedTime
        let heardAtSkip = q.currentTime
        q.advanceToNextItem()
        var times = [q.currentTime]
        // The clock in B, read as the recording grows (a signal: each write of the recorder).
        for _ in 1...4 {
            let now = try recordedFrames(heardPath)
            _ = try gapless.waitForRecording(heardPath, atLeast: now + 9_600, endingInSilence: 0, timeout: 10)
            times.append(q.currentTime)
        }
        let underruns = out.underrunCount
        q.stop()
        recording.stop()

        #expect(underruns == 0, "PulseAudio reported \(underruns) underrun(s): the recording's timeline is shifted, the checks below are not the flush's")
        // What the output held at the skip: the grown buffer (the server gives the stream's buffer
        // what the sink does not take; with the recorder's 20 ms sink, about 165 ms in all).
        let held = rendered - heardAtSkip
        #expect(held > PulseOutput.shortLatency && held < PulseOutput.steadyLatency + 0.1,
                "rendered \(rendered) s, heard \(heardAtSkip) s: the clock should lag by the grown buffer")
        #expect(times[0] < 0.1, "just after the skip the clock says \(times[0]) s into B")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "the clock went back in B: \(times)")

        let wav = try readWAV(heardPath)
        let left = wav.channels[0]
        let window = 240
        func present(_ f: Double, at i: Int) -> Bool {
            goertzelPower(left[i..<min(i + window, left.count)], frequency: f, sampleRate: Self.rate) > 0.01
        }
        let starts = Array(stride(from: 0, to: left.count - window, by: window))
        let aStart = try #require(starts.first { present(Self.aFrequency, at: $0) }, "A was not heard")
        let aEnd = try #require(starts.last { present(Self.aFrequency, at: $0) }) + window
        let bStart = try #require(starts.first { present(Self.bFrequency, at: $0) }, "B was not heard")
        let heardA = Double(aEnd - aStart) / Self.rate
        let afterSkip = heardA - heardAtSkip
        let report = "A heard for \(heardA) s (the clock said \(heardAtSkip) s at the skip, \(rendered) s rendered), B from \(Double(bStart - aEnd) / Self.rate) s after A's end"
        // A stops well under the grown buffer's length after the skip (measured: 2 ms with the
        // flush; 145 ms, all of what was held, without it).
        #expect(afterSkip < held / 2, "A went on \(afterSkip) s after the skip, with \(held) s held — \(report)")
        // ...and not before the clock said it was heard (the clock did not run ahead).
        #expect(afterSkip > -0.05, "A stopped \(-afterSkip) s before where the clock was — \(report)")
        // Of what was rendered of A, the end was dropped, never heard.
        #expect(heardA < rendered - held / 2, "\(report)")
        // B follows at once (the new audio after the short start buffer), never over A.
        #expect(bStart >= aEnd - window && Double(bStart - aEnd) / Self.rate < 0.15, "\(report)")
    }

    /// The same for ``AudioPlayer``: one file, tone A for its first 4 s and tone B after; a seek
    /// from A (after the buffer grew) to 5 s. A stops at once, and the clock (what is heard, also
    /// while paused after it) stays monotonic and lands on the seek.
    @Test func aSeekAfterTheBufferGrewStopsTheOldToneAtOnce() async throws {
        let dir = try TempDir("steady-pulse-player")
        defer { dir.remove() }
        let path = dir.file("ab.wav")
        let a = "0.5*sin(2*PI*\(Self.aFrequency)*t)", b = "0.5*sin(2*PI*\(Self.bFrequency)*t)"
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=if(lt(t\\,4)\\,\(a)\\,\(b))|if(lt(t\\,4)\\,\(a)\\,\(b)):s=48000:d=8",
                             "-c:a", "pcm_f32le", path])
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let heardPath = dir.file("heard.wav")
        let recording = try server.startRecording(to: heardPath)
        defer { recording.stop() }
        let serverString = server.serverString
        let box = Box()
        let p = try AudioPlayer(contentsOf: URL(fileURLWithPath: path), output: {
            let d = TappedOutput(try PulseOutput.driverFactory.make(
                OutputDriverRequest(streamName: "steady-player", server: serverString, buffering: .steady)))
            box.output.withLock { $0 = d }
            return d
        })
        defer { p.stop() }
        #expect(p.play())
        let out = try #require(box.output.withLock { $0 })
        #expect(await out.seen.wait(timeout: 10, until: out.grew(beyond: PulseOutput.shortLatency)), "the buffer did not grow")
        let gapless = GaplessPulseTests()
        let soFar = try recordedFrames(heardPath)
        #expect(try gapless.waitForRecording(heardPath, atLeast: soFar + 24_000, endingInSilence: 0, timeout: 10))

        let held = out.latency
        let heardAtSeek = p.currentTime
        p.currentTime = 5
        var times = [p.currentTime]
        for _ in 1...3 {
            let now = try recordedFrames(heardPath)
            _ = try gapless.waitForRecording(heardPath, atLeast: now + 9_600, endingInSilence: 0, timeout: 10)
            times.append(p.currentTime)
        }
        p.pause()
        times.append(p.currentTime)
        let underruns = out.underrunCount
        p.stop()
        recording.stop()

        #expect(underruns == 0, "PulseAudio reported \(underruns) underrun(s): the recording's timeline is shifted")
        #expect(held > PulseOutput.shortLatency, "the output held \(held) s at the seek")
        #expect(heardAtSeek < 4, "the seek came at \(heardAtSeek) s, after A")
        #expect(times[0] >= 5 && times[0] < 5.1, "just after the seek the clock says \(times[0]) s")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "the clock went back: \(times)")

        let left = try readWAV(heardPath).channels[0]
        let window = 240
        func present(_ f: Double, at i: Int) -> Bool {
            goertzelPower(left[i..<min(i + window, left.count)], frequency: f, sampleRate: Self.rate) > 0.01
        }
        let starts = Array(stride(from: 0, to: left.count - window, by: window))
        let aStart = try #require(starts.first { present(Self.aFrequency, at: $0) }, "A was not heard")
        let aEnd = try #require(starts.last { present(Self.aFrequency, at: $0) }) + window
        let bStart = try #require(starts.first { present(Self.bFrequency, at: $0) }, "B was not heard")
        let heardA = Double(aEnd - aStart) / Self.rate
        let afterSeek = heardA - heardAtSeek
        let report = "A heard for \(heardA) s (the clock said \(heardAtSeek) s at the seek, \(held) s held), B from \(Double(bStart - aEnd) / Self.rate) s after A's end"
        #expect(afterSeek < held / 2, "A went on \(afterSeek) s after the seek — \(report)")
        #expect(afterSeek > -0.05, "A stopped \(-afterSeek) s before where the clock was — \(report)")
        #expect(bStart >= aEnd - window && Double(bStart - aEnd) / Self.rate < 0.15, "\(report)")
    }

    /// The same for ``Player`` (AVPlayer's counterpart): its seek switches the renderer inside the
    /// output's flush too.
    @Test func aPlayerSeekAfterTheBufferGrewStopsTheOldToneAtOnce() async throws {
        let dir = try TempDir("steady-pulse-avplayer")
        defer { dir.remove() }
        let path = dir.file("ab.wav")
        let a = "0.5*sin(2*PI*\(Self.aFrequency)*t)", b = "0.5*sin(2*PI*\(Self.bFrequency)*t)"
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=if(lt(t\\,4)\\,\(a)\\,\(b))|if(lt(t\\,4)\\,\(a)\\,\(b)):s=48000:d=8",
                             "-c:a", "pcm_f32le", path])
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let heardPath = dir.file("heard.wav")
        let recording = try server.startRecording(to: heardPath)
        defer { recording.stop() }
        let serverString = server.serverString
        let box = Box()
        let p = Player(url: URL(fileURLWithPath: path), output: {
            let d = TappedOutput(try PulseOutput.driverFactory.make(
                OutputDriverRequest(streamName: "steady-avplayer", server: serverString, buffering: .steady)))
            box.output.withLock { $0 = d }
            return d
        })
        defer { p.pause() }
        let events = p.events
        p.play()
        _ = try await waitForEvent(events, timeout: 10, "playing") {
            if case .timeControlStatusChanged(.playing) = $0 { true } else { false }
        }
        let out = try #require(box.output.withLock { $0 })
        #expect(await out.seen.wait(timeout: 10, until: out.grew(beyond: PulseOutput.shortLatency)), "the buffer did not grow")
        let gapless = GaplessPulseTests()
        let soFar = try recordedFrames(heardPath)
        #expect(try gapless.waitForRecording(heardPath, atLeast: soFar + 24_000, endingInSilence: 0, timeout: 10))

        let held = out.latency
        let heardAtSeek = p.currentTime()
        #expect(await p.seek(to: 5))
        var times = [p.currentTime()]
        for _ in 1...3 {
            let now = try recordedFrames(heardPath)
            _ = try gapless.waitForRecording(heardPath, atLeast: now + 9_600, endingInSilence: 0, timeout: 10)
            times.append(p.currentTime())
        }
        p.pause()
        times.append(p.currentTime())
        let underruns = out.underrunCount
        recording.stop()

        #expect(underruns == 0, "PulseAudio reported \(underruns) underrun(s): the recording's timeline is shifted")
        #expect(held > PulseOutput.shortLatency, "the output held \(held) s at the seek")
        #expect(heardAtSeek < 4, "the seek came at \(heardAtSeek) s, after A")
        #expect(times[0] >= 5 && times[0] < 5.1, "just after the seek the clock says \(times[0]) s")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "the clock went back: \(times)")

        let left = try readWAV(heardPath).channels[0]
        let window = 240
        func present(_ f: Double, at i: Int) -> Bool {
            goertzelPower(left[i..<min(i + window, left.count)], frequency: f, sampleRate: Self.rate) > 0.01
        }
        let starts = Array(stride(from: 0, to: left.count - window, by: window))
        let aStart = try #require(starts.first { present(Self.aFrequency, at: $0) }, "A was not heard")
        let aEnd = try #require(starts.last { present(Self.aFrequency, at: $0) }) + window
        let bStart = try #require(starts.first { present(Self.bFrequency, at: $0) }, "B was not heard")
        let heardA = Double(aEnd - aStart) / Self.rate
        let afterSeek = heardA - heardAtSeek
        let report = "A heard for \(heardA) s (the clock said \(heardAtSeek) s at the seek, \(held) s held), B from \(Double(bStart - aEnd) / Self.rate) s after A's end"
        #expect(afterSeek < held / 2, "A went on \(afterSeek) s after the seek — \(report)")
        #expect(afterSeek > -0.05, "A stopped \(-afterSeek) s before where the clock was — \(report)")
        #expect(bStart >= aEnd - window && Double(bStart - aEnd) / Self.rate < 0.15, "\(report)")
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

        let server = try PrivatePulseServer()
        defer { server.stop() }
        let heardPath = dir.file("heard.wav")
        let recording = try server.startRecording(to: heardPath)
        defer { recording.stop() }
        let serverString = server.serverString
        let box = Box()
        let q = QueuePlayer(items: [a, b].map { QueueItem(path: $0) }, output: {
            let d = TappedOutput(try PulseOutput.driverFactory.make(
                OutputDriverRequest(streamName: "steady-announce", server: serverString, buffering: .steady)))
            box.output.withLock { $0 = d }
            return d
        })
        defer { q.stop() }
        let announced = AnnouncementBox()
        q.eventProbe = { [weak q] e in
            guard case .currentItemChanged(1?, _) = e, let q, let out = box.output.withLock({ $0 }) else { return }
            let played = out.framesPlayed, latency = out.latency
            announced.value.withLock { $0 = $0 ?? Announcement(played: played, latency: latency, clock: q.currentTime) }
        }
        let events = q.events
        q.play()
        let out = try #require(box.output.withLock { $0 })
        _ = try await waitForEvent(events, timeout: 15, "B to be announced") {
            if case .currentItemChanged(1?, _) = $0 { true } else { false }
        }
        var clocks = [q.currentTime]
        let gapless = GaplessPulseTests()
        for _ in 1...3 {
            let now = try recordedFrames(heardPath)
            _ = try gapless.waitForRecording(heardPath, atLeast: now + 9_600, endingInSilence: 0, timeout: 10)
            clocks.append(q.currentTime)
        }
        let underruns = out.underrunCount
        q.stop()
        q.eventProbe = nil

        #expect(underruns == 0, "PulseAudio reported \(underruns) underrun(s): the output's clock is not the queue's, the checks below are not the announcement's")
        #expect(out.grew(beyond: PulseOutput.shortLatency)(out.seen.value), "the buffer did not grow before the join: \(out.seen.value)")
        let at = try #require(announced.value.withLock { $0 }, "B was never announced")
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

    /// Frames of 16-bit stereo in the WAV that `parecord` is writing at `path`.
    func recordedFrames(_ path: String) throws -> Int {
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
