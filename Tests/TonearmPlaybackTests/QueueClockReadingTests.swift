// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// The queue's clock reading (``QueuePlayer/clockReading``), what the picture of a video item in a
/// queue extrapolates from: the time heard at the instant the output's latency describes. Moved on
/// from that instant, it keeps in step with the output's own frames played at every look — also
/// between two render calls and after a PulseAudio timing update that landed between them — where
/// a clock moved on from when a new time was first seen (the CLI's before) or from the last render
/// runs ahead by up to a write interval.
@Suite(.serialized) struct QueueClockReadingTests {
    final class Box: Sendable {
        let output = Mutex<(any AudioOutputDriver)?>(nil)
    }

    @Test func theReadingKeepsInStepWithTheFramesPlayed() async throws {
        let dir = try TempDir("queue-clock")
        defer { dir.remove() }
        let a = dir.file("a.wav")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "pcm_f32le"], seconds: 6)
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let serverString = server.serverString
        let box = Box()
        let q = QueuePlayer(items: [QueueItem(path: a)], output: {
            let d = try PulseOutput.driverFactory.make(OutputDriverRequest(streamName: "clock", server: serverString, buffering: .steady))
            box.output.withLock { $0 = d }
            return d
        })
        defer { q.stop() }
        q.play()
        let out = try #require(box.output.withLock { $0 })
        let rate = out.format.sampleRate
        // Looks at a cadence unrelated to the output's periods (measurement, not synchronisation):
        // from 1.5 s on (the buffer has grown) to 4 s.
        var offsets: [Double] = []
        let deadline = ContinuousClock.now + .seconds(30)  // a bound, not a synchronisation
        while offsets.count < 150 {
            guard ContinuousClock.now < deadline else {
                Issue.record("only \(offsets.count) looks in 30 s: the output played \(Double(out.framesPlayed) / rate) s")
                break
            }
            try await Task.sleep(for: .milliseconds(13))  // the sampling period of a measurement, not a wait for a state
            guard Double(out.framesPlayed) / rate > 1.5 else { continue }
            let reading = q.clockReading
            let now = DispatchTime.now().uptimeNanoseconds
            let heard = reading.time(at: now, rate: 1)
            let played = Double(out.framesPlayed) / rate
            #expect(reading.hostNanos > 0 && reading.hostNanos <= now)
            #expect(heard <= reading.rendered)
            offsets.append(heard - played)
        }
        q.stop()
        // The item started at some output frame: the offset is constant, whatever it is, but for
        // the output's own timing corrections (its frames played never go back: 3 ms) — and for
        // a look that falls inside a write, between the output raising its latency and the node
        // moving its position (a write's length behind, never ahead). A clock moved on from when
        // a new time was first seen lags by up to the time between two looks, differently at
        // each (13 ms here): most looks would be off.
        let sorted = offsets.sorted()
        let median = sorted[sorted.count / 2]
        let ahead = (offsets.max() ?? 0) - median
        let inStep = offsets.filter { abs($0 - median) <= 0.003 }.count
        print("QueueClockReadingTests: heard − played \(String(format: "%.1f", median * 1000)) ms, \(inStep) of \(offsets.count) looks within 3 ms of it, at most \(String(format: "%.1f", ahead * 1000)) ms ahead")
        #expect(ahead <= 0.003, "the clock ran ahead of the frames played by \(ahead) s: \(offsets)")
        #expect(Double(inStep) >= 0.9 * Double(offsets.count), "looks in step: \(inStep) of \(offsets.count): \(offsets)")
    }
}
