// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput

struct NullOutputTests {
    let format = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2)

    @Test func pullsAtRealTimeRate() async throws {
        let out = NullOutput(periodDuration: 0.01)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await waitUntil { source.renderCalls.load(ordering: .relaxed) > 0 })
        let f0 = source.renderedFrames.load(ordering: .relaxed)
        let t0 = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(500)) // the measurement window, not synchronisation
        let frames = source.renderedFrames.load(ordering: .relaxed) - f0
        let elapsed = (ContinuousClock.now - t0) / .seconds(1)
        out.stop()
        let seconds = Double(frames) / 48_000
        #expect(seconds > 0.3 && seconds < 0.8, "pulled \(seconds) s of audio in 0.5 s")
        #expect(seconds <= elapsed + 0.05, "pulled \(seconds) s in \(elapsed) s")
        #expect(source.offlineCalls.load(ordering: .relaxed) == 0)
        #expect(out.latency == 0.01)
        #expect(out.underrunCount == 0)
        #expect(!out.isAudible)
    }

    @Test func untimedRunsFasterThanRealTime() async throws {
        let out = NullOutput(periodDuration: 0.01, untimed: true)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        // 2 s of audio arrives well before 2 s pass when nothing paces the pulls.
        let t0 = ContinuousClock.now
        #expect(await waitUntil(timeout: 10) { source.renderedFrames.load(ordering: .relaxed) >= 96_000 })
        let elapsed = ContinuousClock.now - t0
        out.stop()
        #expect(elapsed < .milliseconds(1_900))
        // Offline timing: the source may wait for its decoder instead of rendering silence.
        #expect(source.offlineCalls.load(ordering: .relaxed) == source.renderCalls.load(ordering: .relaxed))
        #expect(out.framesPlayed >= 96_000)
        #expect(out.latency == 0)
    }

    @Test func untimedPacesOnceTheSourceHasNothingToPlay() async throws {
        let out = NullOutput(periodDuration: 0.01, untimed: true)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource(seconds: 0.5)
        try out.start(source: source)
        #expect(await waitUntil { source.hasEnded })
        let calls = source.renderCalls.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(300)) // an observation window
        let idleCalls = source.renderCalls.load(ordering: .relaxed) - calls
        out.stop()
        // About 30 periods of 10 ms in real time, not a spinning loop.
        #expect(idleCalls > 5 && idleCalls < 60, "\(idleCalls) pulls of an ended source in 0.3 s")
    }

    @Test func pauseHoldsAndResumeContinues() async throws {
        let out = NullOutput(periodDuration: 0.01)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await waitUntil { source.renderCalls.load(ordering: .relaxed) > 2 })
        out.pause()
        // At most the period in progress finishes after pause().
        #expect(await waitUntil {
            let a = source.renderCalls.load(ordering: .relaxed)
            return a > 0 && out.framesPlayed == Int64(source.renderedFrames.load(ordering: .relaxed))
        })
        let held = source.renderCalls.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(100)) // an observation window
        #expect(source.renderCalls.load(ordering: .relaxed) == held)
        out.resume()
        #expect(await waitUntil { source.renderCalls.load(ordering: .relaxed) > held + 2 })
    }

    @Test func stopReturnsAfterTheLastPull() async throws {
        let out = NullOutput(periodDuration: 0.005, untimed: false)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await waitUntil { source.renderCalls.load(ordering: .relaxed) > 2 })
        out.stop()
        source.markStopped()
        try await Task.sleep(for: .milliseconds(50)) // an observation window
        #expect(source.callsAfterStop.load(ordering: .relaxed) == 0)
        // Restart with a new source.
        let next = SineSource()
        try out.start(source: next)
        #expect(await waitUntil { next.renderCalls.load(ordering: .relaxed) > 0 })
        out.stop()
    }

    @Test func startBeforeOpenThrows() {
        #expect(throws: TonearmError.self) { try NullOutput().start(source: SineSource()) }
    }
}
