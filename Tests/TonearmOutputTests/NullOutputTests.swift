// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
import TonearmTestSupport

struct NullOutputTests {
    let format = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2)

    @Test func pullsAtRealTimeRate() async throws {
        let out = NullOutput(periodDuration: 0.01)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await source.waitFor(renderCallsAbove: 0))
        let f0 = source.renderedFrames
        let t0 = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(500)) // the measurement window, not synchronisation
        let frames = source.renderedFrames - f0
        let elapsed = (ContinuousClock.now - t0) / .seconds(1)
        out.stop()
        // Paced by the clock: about as much audio as the window lasted (measured, so a late
        // wake-up of this test cannot fail it), never more than a period ahead of it.
        let seconds = Double(frames) / 48_000
        #expect(seconds > 0.6 * elapsed, "pulled \(seconds) s of audio in \(elapsed) s")
        #expect(seconds <= elapsed + 0.05, "pulled \(seconds) s in \(elapsed) s")
        #expect(source.offlineCalls.load(ordering: .relaxed) == 0)
        #expect(out.latency == 0.01)
        #expect(out.underrunCount == 0)
        #expect(!out.isAudible)
    }

    @Test func untimedRunsFasterThanRealTime() async throws {
        // An untimed and a paced output pull side by side; the paced one is the clock. While it
        // delivers 0.5 s of audio, the untimed one delivers many times more: no fixed time limit,
        // so a slow or busy machine slows both alike.
        let untimed = NullOutput(periodDuration: 0.01, untimed: true)
        let paced = NullOutput(periodDuration: 0.01)
        try untimed.open(format: format)
        defer { untimed.close() }
        try paced.open(format: format)
        defer { paced.close() }
        let source = SineSource()
        let clock = SineSource()
        try untimed.start(source: source)
        try paced.start(source: clock)
        #expect(await clock.waitFor(renderCallsAbove: 0))
        let (u0, p0) = (source.renderedFrames, clock.renderedFrames)
        #expect(await clock.waitFor(renderedFramesAtLeast: p0 + 24_000))
        let (u1, p1) = (source.renderedFrames, clock.renderedFrames)
        untimed.stop()
        paced.stop()
        let ratio = Double(u1 - u0) / Double(p1 - p0)
        #expect(ratio > 4, "untimed pulled \(u1 - u0) frames while paced pulled \(p1 - p0)")
        // Offline timing: the source may wait for its decoder instead of rendering silence.
        #expect(source.offlineCalls.load(ordering: .relaxed) == source.renderCalls)
        #expect(clock.offlineCalls.load(ordering: .relaxed) == 0)
        #expect(untimed.framesPlayed == Int64(source.renderedFrames))
        #expect(untimed.latency == 0)
    }

    @Test func untimedPacesOnceTheSourceHasNothingToPlay() async throws {
        let out = NullOutput(periodDuration: 0.01, untimed: true)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource(seconds: 0.5)
        try out.start(source: source)
        #expect(await source.waitUntilEnded())
        let calls = source.renderCalls
        let t0 = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(300)) // an observation window
        let idleCalls = source.renderCalls - calls
        let elapsed = (ContinuousClock.now - t0) / .seconds(1)
        out.stop()
        // About one pull per 10 ms period of the (measured) window, not a spinning loop, and
        // still pulling (the source may get something to play again).
        let periods = elapsed / 0.01
        #expect(Double(idleCalls) > 0.3 * periods && Double(idleCalls) < 2 * periods + 2,
                "\(idleCalls) pulls of an ended source in \(elapsed) s")
    }

    @Test func periodsGrowAfterSteadyPlayAndLatencySaysWhichIsUsed() async throws {
        // 10 ms periods for the first 50 ms of play, then 40 ms ones.
        let out = NullOutput(periodDuration: 0.01, steadyPeriodDuration: 0.04, growAfter: 0.05)
        try out.open(format: format)
        defer { out.close() }
        #expect(out.latency == 0.01)
        let source = SineSource()
        try out.start(source: source)
        #expect(await source.waitFor(renderCallsAbove: 0))
        let first = source.progress.value
        #expect(first.renderedFrames == 480 * first.renderCalls || first.renderCalls > 5,
                "the first pulls are short: \(first.renderedFrames) frames in \(first.renderCalls) pulls")
        // Five short periods, then at least three long ones.
        #expect(await source.waitFor(renderedFramesAtLeast: 2_400 + 3 * 1_920))
        out.stop()
        let p = source.progress.value
        let long = (p.renderedFrames - 480 * p.renderCalls) / (1_920 - 480)
        #expect(long >= 3, "\(p.renderedFrames) frames in \(p.renderCalls) pulls: \(long) long periods")
        #expect(p.renderCalls - long >= 5, "\(p.renderCalls - long) short periods before growing")
        #expect(out.latency == 0.04)
        #expect(out.framesPlayed == Int64(p.renderedFrames))
    }

    @Test func aFlushDropsThePendingPeriodCountsOnlyItsElapsedPartAndStartsShortAgain() async throws {
        // One-second periods: the first is pulled at once and then waits a second to be "played".
        let out = NullOutput(periodDuration: 1, steadyPeriodDuration: 1)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await source.waitFor(renderCallsAbove: 0))
        #expect(out.framesPlayed == 0)
        let callsInReplace = Atomic<Int>(-1)
        out.flush { callsInReplace.store(source.renderCalls, ordering: .relaxed) }
        // The period pulled before the flush is dropped and the next one pulled at once: its pull
        // comes while less than a period has been counted as played (without the flush it comes
        // only once the whole first second has been counted).
        #expect(await source.waitFor(renderCallsAbove: 1))
        let played = out.framesPlayed
        #expect(played < 48_000, "\(played) frames counted for a period dropped before its end")
        let callsSeenByReplace = callsInReplace.load(ordering: .relaxed)
        #expect(callsSeenByReplace == 1, "replace ran while the render thread was not rendering")
        out.stop()
        #expect(out.framesPlayed >= played, "framesPlayed went back")
    }

    @Test func aFlushMakesGrownPeriodsShortAgain() async throws {
        let out = NullOutput(periodDuration: 0.01, steadyPeriodDuration: 0.04, growAfter: 0.05)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        // Grown: five short periods, then long ones.
        #expect(await source.waitFor(renderedFramesAtLeast: 2_400 + 2 * 1_920))
        #expect(out.latency == 0.04)
        let before = source.progress.value
        out.flush()
        #expect(await source.waitFor(renderCallsAbove: before.renderCalls))
        let after = source.progress.value
        // The first pull after the flush is a short period again.
        #expect(after.renderedFrames - before.renderedFrames == 480, "\(after.renderedFrames - before.renderedFrames) frames pulled first after the flush")
        out.stop()
    }

    @Test func periodsStayWithoutASteadyDuration() async throws {
        let out = NullOutput(periodDuration: 0.005)
        #expect(out.steadyPeriodDuration == 0.005)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await source.waitFor(renderCallsAbove: 30))
        out.stop()
        let p = source.progress.value
        #expect(p.renderedFrames == 240 * p.renderCalls)
        #expect(out.latency == 0.005)
    }

    @Test func theRegistrysRealTimeNullOutputGrowsItsPeriods() throws {
        let out = try #require(try OutputDriverRegistry().makeDriver(named: "null") as? NullOutput)
        #expect(out.periodDuration == 0.05 && out.steadyPeriodDuration == 0.25 && !out.untimed)
        let fast = try #require(try OutputDriverRegistry().makeDriver(named: "null", request: OutputDriverRequest(argument: "untimed")) as? NullOutput)
        #expect(fast.untimed && fast.steadyPeriodDuration == fast.periodDuration)
    }

    @Test func pauseHoldsAndResumeContinues() async throws {
        let out = NullOutput(periodDuration: 0.01)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await source.waitFor(renderCallsAbove: 2))
        out.pause()
        let atPause = source.renderCalls
        try await Task.sleep(for: .milliseconds(100)) // an observation window: ten periods
        // At most the period in progress when pause() was called completes after it.
        let held = source.renderCalls
        #expect(held <= atPause + 1, "\(held - atPause) pulls after pause()")
        out.resume()
        #expect(await source.waitFor(renderCallsAbove: held + 2))
        out.stop()
        // Every pulled period was counted as played, the one in progress at pause() included.
        #expect(out.framesPlayed == Int64(source.renderedFrames))
    }

    @Test func stopReturnsAfterTheLastPull() async throws {
        let out = NullOutput(periodDuration: 0.005, untimed: false)
        try out.open(format: format)
        defer { out.close() }
        let source = SineSource()
        try out.start(source: source)
        #expect(await source.waitFor(renderCallsAbove: 2))
        out.stop()
        source.markStopped()
        try await Task.sleep(for: .milliseconds(50)) // an observation window
        #expect(source.callsAfterStop.load(ordering: .relaxed) == 0)
        // Restart with a new source.
        let next = SineSource()
        try out.start(source: next)
        #expect(await next.waitFor(renderCallsAbove: 0))
        out.stop()
    }

    @Test func startBeforeOpenThrows() {
        #expect(throws: TonearmError.self) { try NullOutput().start(source: SineSource()) }
    }
}
