// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
import TonearmTestSupport

/// Every test starts its own private PulseAudio server and passes `server:` explicitly.
@Suite(.serialized)
struct PulseOutputTests {
    let format = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2)

    @Test func sineIsHeardWithTheRightFrequencyLevelAndLength() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString, applicationName: "TonearmTests", streamName: "sine")
        try out.open(format: format)
        defer { out.close() }
        let recording = try server.startRecording(to: "\(server.directory)/rec.wav")
        let source = SineSource(frequency: 440, amplitude: 0.5, seconds: 1.0)
        try out.start(source: source)
        // Once the source has ended the driver writes nothing more; drain waits until the server
        // has played what it holds.
        #expect(await source.waitUntilEnded(timeout: 10))
        let latency = out.latency
        out.drain(timeout: 5)
        // Drained: all but what sits in the sink's own short buffer (a few ms) has been played.
        #expect(out.framesPlayed >= 48_000 - 960, "played \(out.framesPlayed) frames")
        recording.stop()
        out.stop()
        #expect(source.callsAfterStop.load(ordering: .relaxed) == 0)

        let wav = try readWAV(recording.path)
        #expect(wav.sampleRate == 48_000)
        let mono = wav.mono
        let span = try #require(nonSilentSpan(mono, sampleRate: 48_000, threshold: 0.02))
        let length = Double(span.count) / 48_000
        #expect(abs(length - 1.0) < 0.05, "heard \(length) s")
        let middle = Array(mono[(span.lowerBound + 4_800)..<(span.upperBound - 4_800)])
        let level = rms(middle)
        #expect(abs(level - 0.5 / 2.0.squareRoot().float) < 0.02, "RMS \(level)")
        let f = try #require(dominantFrequency(middle, sampleRate: 48_000))
        #expect(abs(f - 440) < 1.5, "frequency \(f)")
        #expect(latency > 0 && latency < 1, "latency \(latency)")
    }

    /// The thread that renders into the stream (the connection's mainloop thread, named
    /// tonearm-pulse) runs SCHED_RR, asked for once as it starts, where the process may (here and
    /// in CI: root); the caller's thread is left as it was.
    @Test func theRenderThreadRunsRealTime() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString, applicationName: "TonearmTests", streamName: "rt")
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource(amplitude: 0.2)
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 2_401, pulling: source))
        let threads = ThreadScheduling.threads(named: "tonearm-pulse")
        #expect(!threads.isEmpty)
        if ThreadScheduling.mayRaise {
            #expect(threads.allSatisfy { $0.policy == 2 && $0.rtPriority == 10 }, "\(threads)")
        }
        #expect(ThreadScheduling.current()?.policy == 0)
        out.stop()
    }

    @Test func theFirstBufferIsSmallAndGrowsToTheTarget() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        // Grown by hand here (a start schedules it after `growAfter`: an hour, so not in this test).
        let out = PulseOutput(server: server.serverString, targetLatency: 0.3, startLatency: 0.02, growAfter: 3_600)
        #expect(PulseOutput().startLatency == 0.075 && PulseOutput().targetLatency == 0.075)
        #expect(PulseOutput(targetLatency: 0.01, startLatency: 0.02).startLatency == 0.01)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource(amplitude: 0.2)
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 2_401, pulling: source))
        let first = out.bufferLength
        #expect(first > 0 && first < 0.1, "first buffer \(first) s")
        out.growBuffer()
        let grown = out.bufferLength
        // The server fits the attributes to its sink (with ADJUST_LATENCY it may give less than
        // asked for), but far more than the first buffer.
        #expect(grown > 2 * first && grown <= 0.35, "grown from \(first) to \(grown) s")
        // Still playing, and pulling more than the small buffer held.
        #expect(await waitUntilPlayed(out, atLeast: out.framesPlayed + 4_800, pulling: source))
        out.stop()
    }

    /// The registry's steady buffering: 75 ms at the start, grown by itself to 250 ms after a
    /// second of play (the server's buffer attributes say so, and the server holds more than the
    /// short buffer could); a flush shrinks it back and drops what was queued — `framesPlayed`
    /// neither goes back nor runs over the dropped frames — and it grows again a second later.
    @Test func theSteadyBufferGrowsByItselfAndAFlushStartsItShortAgain() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let made = try PulseOutput.driverFactory.make(OutputDriverRequest(streamName: "steady", server: server.serverString,
                                                                           buffering: .steady))
        let out = try #require(made as? PulseOutput)
        #expect(out.startLatency == PulseOutput.shortLatency && out.targetLatency == PulseOutput.steadyLatency)
        let fixed = try #require(try PulseOutput.driverFactory.make(OutputDriverRequest(server: server.serverString)) as? PulseOutput)
        #expect(fixed.startLatency == fixed.targetLatency && fixed.targetLatency == PulseOutput.shortLatency)
        try out.open(format: format)
        defer { out.close() }
        let events = EventRecorder(out.events)
        let source = SineSource(amplitude: 0.2)
        try out.start(source: source)
        // Read at once (the growth comes a second later). The server splits a requested latency
        // between the sink and the stream's buffer (ADJUST_LATENCY): `tlength` is the stream's
        // part, so never more than asked for; a 75 ms request can never give more than 75 ms.
        let short = PulseOutput.shortLatency
        let first = out.bufferLength
        #expect(first > 0 && first <= short, "first buffer \(first) s")

        // Grown by its own timer (the event comes with the server's answer).
        #expect(await events.wait(timeout: 10) { if case .bufferChanged(let l) = $0 { l > short } else { false } })
        let grown = out.bufferLength
        #expect(grown > short && grown <= PulseOutput.steadyLatency, "grown to \(grown) s")
        // The server holds more than a 75 ms stream ever could (read once the client has filled
        // the longer buffer: after a few more requests).
        let calls = source.renderCalls
        _ = await source.waitFor(renderCallsAbove: calls + 3)
        let held = try sinkInputBufferLatency(server)
        #expect(held > PulseOutput.shortLatency, "the server holds \(held) s of the stream")

        // Flush: what was queued is dropped; the clock goes on from where it was.
        let renderedBefore = Int64(source.renderedFrames)
        let playedBefore = out.framesPlayed
        out.flush()
        let playedRightAfter = out.framesPlayed
        #expect(playedRightAfter >= playedBefore, "framesPlayed went back at the flush")
        #expect(await events.wait(timeout: 10) { if case .bufferChanged(let l) = $0 { l <= short } else { false } })
        #expect(out.bufferLength <= short, "after the flush the buffer is \(out.bufferLength) s")
        #expect(await waitUntilPlayed(out, atLeast: playedRightAfter + 9_600, pulling: source))
        let played = out.framesPlayed - playedBefore
        let rendered = Int64(source.renderedFrames) - renderedBefore
        // Played since the flush: no more than was rendered since (plus what the sink itself had
        // taken before it, which a flush cannot recall: at most its latency, a few tens of ms).
        #expect(played <= rendered + 4_800, "played \(played) frames since the flush, \(rendered) rendered since")
        // Grows again after another second of play.
        #expect(await events.waitForAll(timeout: 10) {
            $0.filter { if case .bufferChanged(let l) = $0 { l > short } else { false } }.count >= 2
        })
        #expect(out.bufferLength > short)
        out.stop()
    }

    /// "Buffer Latency" of the one sink input (what the server holds of the stream), in seconds.
    func sinkInputBufferLatency(_ server: PrivatePulseServer) throws -> Double {
        for line in try server.pactl("list", "sink-inputs").stdout.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("Buffer Latency:"), let v = t.dropFirst("Buffer Latency:".count).split(separator: " ").first,
               let usec = Double(v) {
                return usec / 1e6
            }
        }
        throw TestSupportError("no sink input's buffer latency in pactl list sink-inputs")
    }

    @Test func phoneStreamRequestsCorkThenUncork() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString, role: "music")
        try out.open(format: format)
        defer { out.close() }
        let events = EventRecorder(out.events)
        let source = SineSource(amplitude: 0.2)
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 2_401, pulling: source))

        let phone = "\(server.directory)/phone.wav"
        try writeWAV16(phone, channels: [sineWave(frequency: 880, amplitude: 0.3, seconds: 0.4, sampleRate: 48_000)],
                       sampleRate: 48_000)
        let paplay = try server.startPaplay(phone, role: "phone")
        defer { paplay.terminate() }
        #expect(await events.wait { $0 == .corkRequested })
        // The owner's duty: cork on request (PulseAudio only sends request-uncork to a corked stream).
        out.pause()
        #expect(await paplay.waitForExit(timeout: 10))
        #expect(paplay.succeeded)
        #expect(await events.wait { $0 == .uncorkRequested })
        out.resume()
        let resumedAt = out.framesPlayed
        #expect(await waitUntilPlayed(out, atLeast: resumedAt + 2_401, pulling: source))
        #expect(!events.events.contains { if case .deviceLost = $0 { true } else { false } })
    }

    @Test func streamVolumeLowersTheRecordedLevel() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString)
        try out.open(format: format)
        defer { out.close() }
        let recording = try server.startRecording(to: "\(server.directory)/rec.wav")
        let source = SineSource(frequency: 1_000, amplitude: 0.5)
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 28_800, pulling: source))
        out.setVolume(0.25)
        let mark = out.framesPlayed
        #expect(await waitUntilPlayed(out, atLeast: mark + 38_400, pulling: source))
        recording.stop()
        out.stop()

        let mono = try readWAV(recording.path).mono
        let span = try #require(nonSilentSpan(mono, sampleRate: 48_000, threshold: 0.02))
        let loud = rms(mono[(span.lowerBound + 2_400)..<(span.lowerBound + 16_800)])
        let quiet = rms(mono[(span.upperBound - 21_600)..<(span.upperBound - 4_800)])
        #expect(abs(loud - 0.3536) < 0.02, "full-volume RMS \(loud)")
        #expect(quiet / loud > 0.2 && quiet / loud < 0.3, "volume 0.25 gave ratio \(quiet / loud)")
    }

    @Test func removingTheSinkReportsDeviceLost() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString)
        try out.open(format: format)
        defer { out.close() }
        let events = EventRecorder(out.events)
        let source = SineSource(amplitude: 0.1)
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 1, pulling: source))
        let module = try #require(try server.nullSinkModuleIndex())
        try server.pactl("unload-module", module)
        #expect(await events.wait { if case .deviceLost = $0 { true } else { false } })
        out.stop()
    }

    @Test func serverDeathReportsDeviceLost() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString)
        try out.open(format: format)
        defer { out.close() }
        let events = EventRecorder(out.events)
        let source = SineSource(amplitude: 0.1)
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 1, pulling: source))
        server.stop()
        #expect(await events.wait { if case .deviceLost = $0 { true } else { false } })
        out.stop()
        #expect(throws: TonearmError.self) { try out.start(source: SineSource()) }
    }

    @Test func stopEndsPullingAndStartAgainWorks() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString)
        try out.open(format: format)
        defer { out.close() }
        let first = SineSource()
        try out.start(source: first)
        #expect(await first.waitFor(renderCallsAbove: 3, timeout: 10)) // the first requests can be 2 s apart
        out.stop()
        first.markStopped()
        let second = SineSource()
        try out.start(source: second)
        #expect(await waitUntilPlayed(out, atLeast: 4_801, pulling: second))
        out.stop()
        #expect(first.callsAfterStop.load(ordering: .relaxed) == 0)
        #expect(second.renderCalls > 0)
    }

    @Test func timingIsReadWithoutWaitingForTheWriteCallback() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString, streamName: "timing")
        try out.open(format: format)
        defer { out.close() }
        // The write callback (which holds the mainloop lock) stops inside the source's render.
        let held = SineSource(holdAfterFrames: 4_800)
        try out.start(source: held)
        #expect(await held.waitFor(renderedFramesAtLeast: 4_800, timeout: 10))
        let reads = DispatchSemaphore(value: 0)
        // Threads of their own: a reader that blocks must not take a thread from the pool that
        // runs this test.
        Thread {
            for _ in 0..<10_000 {
                _ = out.framesPlayed
                _ = out.latency
            }
            reads.signal()
        }.start()
        let returned = reads.wait(timeout: .now() + 10) == .success
        held.release()
        #expect(returned, "reading the timing waited for the write callback")
        if !returned { reads.wait() }
        out.stop()

        // Readers in a tight loop while playing: the callback goes on being called, and the
        // position they read only moves forward.
        let source = SineSource()
        try out.start(source: source)
        #expect(await source.waitFor(renderCallsAbove: 2, timeout: 10))
        let stop = Atomic<Bool>(false)
        let result = Mutex<(reads: Int, backwards: Int, last: Int64)>((0, 0, 0))
        let readerDone = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                var previous: Int64 = 0, reads = 0, backwards = 0
                while !stop.load(ordering: .relaxed) {
                    let f = out.framesPlayed
                    _ = out.latency
                    if f < previous { backwards += 1 }
                    previous = f
                    reads += 1
                }
                result.withLock { $0.reads += reads; $0.backwards += backwards; $0.last = max($0.last, previous) }
                readerDone.signal()
            }.start()
        }
        let calls = source.renderCalls
        #expect(await source.waitFor(renderCallsAbove: calls + 20, timeout: 20))
        stop.store(true, ordering: .relaxed)
        readerDone.wait()
        readerDone.wait()
        let r = result.withLock { $0 }
        #expect(r.reads > 1000)
        #expect(r.backwards == 0)
        #expect(r.last > 0 && r.last <= Int64(source.renderedFrames), "read \(r.last) frames played of \(source.renderedFrames) rendered")
        print("timing readers: \(r.last) of \(source.renderedFrames) frames, \(r.reads) reads, \(source.renderCalls - calls) callbacks, \(out.underrunCount) underruns")
        out.stop()
    }

    @Test func probeAndOpenFailures() async throws {
        PulseOutput.register()
        let server = try PrivatePulseServer()
        defer { server.stop() }
        #expect(PulseOutput.isServerAvailable(server: server.serverString))
        let choice = OutputSelection.automatic(server: server.serverString)
        #expect(choice.selection == .pulse(server: server.serverString))
        #expect(choice.notice == nil)

        let missing = "unix:\(server.directory)/no-such-socket"
        let t0 = ContinuousClock.now
        #expect(!PulseOutput.isServerAvailable(server: missing, timeout: 1))
        #expect(ContinuousClock.now - t0 < .seconds(2))
        let none = OutputSelection.automatic(server: missing, timeout: 1)
        #expect(none.selection == .null)
        #expect(none.notice?.contains("nothing will be heard") == true)

        #expect(throws: TonearmError.self) { try PulseOutput(server: missing).open(format: format) }
        #expect(throws: TonearmError.self) {
            try PulseOutput(server: server.serverString, device: "no_such_sink").open(format: format)
        }
    }
}

extension Double {
    var float: Float { Float(self) }
}


/// The stream clock across a buffer growth and a flush: the frames played move on with time,
/// never by the frames written at once when the buffer grows, and `written − latency` (what a
/// player's clock subtracts from what it rendered) is the frames played itself.
@Suite(.serialized)
struct PulseStreamClockTests {
    struct Sample {
        var nanos: UInt64
        var played: Int64
        var rendered: Int64
        var latency: Double
    }

    @Test func theStreamClockIsContinuousAcrossAGrowthAndAFlush() async throws {
        let rate = 48_000.0
        let server = try PrivatePulseServer()
        defer { server.stop() }
        // Grown by hand (the timer's hour never comes), so that the samples are taken around it.
        let out = PulseOutput(server: server.serverString, targetLatency: 0.25, startLatency: 0.075, growAfter: 3_600)
        try out.open(format: AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2))
        defer { out.close() }
        let source = SineSource(amplitude: 0.2)
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 24_000, pulling: source))
        var samples: [Sample] = []
        // One look after each render (the instant the rendered count moves) until `renders` more.
        func look(renders: Int) async {
            let until = source.renderCalls + renders
            while true {
                let calls = source.renderCalls
                // The rendered count first: a render in between raises the latency, not the count.
                let rendered = Int64(source.renderedFrames)
                samples.append(Sample(nanos: DispatchTime.now().uptimeNanoseconds, played: out.framesPlayed,
                                      rendered: rendered, latency: out.latency))
                if calls >= until { return }
                _ = await source.waitFor(renderCallsAbove: calls, timeout: 1)
            }
        }
        await look(renders: 5)
        out.growBuffer()
        await look(renders: 15)
        let grown = samples.count
        out.flush()
        await look(renders: 10)
        out.growBuffer()
        await look(renders: 15)
        out.stop()

        // Between two looks the frames played move by the time between them, give or take the
        // server's timing corrections and a stream time held at the frames written (20 ms) — not
        // by the ~170 ms that a growth writes at once.
        let slack = 0.02 * rate
        for (a, b) in zip(samples, samples.dropFirst()) {
            let moved = Double(b.played - a.played)
            let elapsed = Double(b.nanos - a.nanos) / 1e9 * rate
            #expect(moved >= 0 && moved <= elapsed * 1.03 + slack,
                    "frames played moved \(moved) in \(elapsed) frames of time (at \(a.played) → \(b.played))")
        }
        // A player's clock, what it rendered less the latency, is never ahead of the frames
        // played (up to the flush: the source's count includes the frames it drops).
        for x in samples[..<grown] {
            #expect(Double(x.rendered) - x.latency * rate <= Double(x.played) + slack,
                    "rendered \(x.rendered) − latency \(x.latency) s is ahead of \(x.played) played")
        }
    }
}

/// The clock reading a video clock extrapolates from (``PulseOutput/clockReading``): the latency
/// and the instant it describes — that of the write, or of a timing update of the server's that
/// landed after it. At the start of every render call (the instant the latency of the previous
/// write is read last) the sound heard computed from the reading — what was rendered less the
/// latency, moved on by the time since the reading's instant — is the driver's own frames
/// played. Moved on from the previous render instead (the video clock before), it runs ahead
/// by the time from that render to a timing update in between.
@Suite(.serialized)
struct PulseClockReadingTests {
    /// Wraps a sine: at the start of each render call it notes the reading, the frames played
    /// and what will have been rendered after this call (the latency is raised by it already).
    final class ProbeSource: AudioRenderSource, @unchecked Sendable {
        struct Sample {
            var now: UInt64
            var reading: OutputClockReading
            var played: Int64
            var renderedAfter: Int64
            /// The end of the render call before (the instant the old video clock moved on from).
            var previousEnd: UInt64
        }

        let sine = SineSource(amplitude: 0.2)
        weak var output: PulseOutput?
        let samples = Mutex<[Sample]>([])
        private var rendered: Int64 = 0  // render thread only
        private var previousEnd: UInt64 = 0  // render thread only

        init() { samples.withLock { $0.reserveCapacity(4096) } }

        func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
            if let output, previousEnd > 0 {
                let reading = output.clockReading
                let played = output.framesPlayed
                let now = DispatchTime.now().uptimeNanoseconds
                let s = Sample(now: now, reading: reading, played: played, renderedAfter: rendered + Int64(frameCount),
                               previousEnd: previousEnd)
                samples.withLock { if $0.count < $0.capacity { $0.append(s) } }
            }
            let r = sine.render(into: buffer, frameCount: frameCount, timing: timing)
            rendered += Int64(frameCount)
            previousEnd = DispatchTime.now().uptimeNanoseconds
            return r
        }
    }

    @Test func theSoundHeardIsExtrapolatedFromTheReadingsInstant() async throws {
        let rate = 48_000.0
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let out = PulseOutput(server: server.serverString, targetLatency: 0.25, startLatency: 0.075, growAfter: 1)
        try out.open(format: AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2))
        defer { out.close() }
        let source = ProbeSource()
        source.output = out
        try out.start(source: source)
        // Past the start and the growth, then five seconds: the server's timing updates come
        // at doubling intervals (10 ms to 1.5 s), so a few land between two writes.
        #expect(await waitUntilPlayed(out, atLeast: Int64(1.5 * rate), pulling: source.sine))
        let from = source.samples.withLock { $0.count }
        #expect(await waitUntilPlayed(out, atLeast: Int64(6.5 * rate), pulling: source.sine))
        out.stop()
        let samples = source.samples.withLock { Array($0[from...]) }
        #expect(samples.count >= 10, "render calls seen: \(samples.count)")

        // The frames played never run backwards (a timing update a little behind the
        // extrapolation is held), so the two may differ by such a correction: 2 ms. (With
        // libpulse's interpolated stream time they differed by up to 96 ms.)
        let slack = 0.002
        var updatesBetweenWrites = 0
        var worstOld = 0.0
        for s in samples {
            let played = Double(s.played) / rate
            let heard = s.reading.heard(rendered: Double(s.renderedAfter) / rate, renderHost: s.previousEnd, rate: 1, now: s.now)
            #expect(abs(heard - played) <= slack,
                    "heard − played \((heard - played) * 1000) ms at \(played) s (reading \(s.reading.latency) s at \(Double(s.now &- s.reading.hostNanos) / 1e6) ms ago, previous render \(Double(s.now &- s.previousEnd) / 1e6) ms ago)")
            // A timing update after the previous write: the reading's instant is later than it.
            if s.reading.hostNanos > s.previousEnd + 2_000_000 {
                updatesBetweenWrites += 1
                let old = OutputClockReading(latency: s.reading.latency, hostNanos: 0)
                    .heard(rendered: Double(s.renderedAfter) / rate, renderHost: s.previousEnd, rate: 1, now: s.now)
                worstOld = max(worstOld, old - played)
            }
        }
        print("PulseClockReadingTests: \(samples.count) render calls, \(updatesBetweenWrites) after a timing update between writes; moved on from the render instead, the clock ran ahead by up to \(String(format: "%.1f", worstOld * 1000)) ms")
        // The case this is about happened, and there the old clock was off.
        #expect(updatesBetweenWrites > 0)
        #expect(worstOld > slack, "moved on from the render, the clock was off by \(worstOld) s only")
    }
}
