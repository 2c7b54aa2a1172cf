// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmDSP
import TonearmOutput
@testable import TonearmEngine
import TonearmTestSupport

/// What a ``TapOutput``'s render thread saw: cycles rendered, samples that were not finite, and
/// the last frames of channel 0. It can also hold the render thread (a stalled device) between
/// two cycles.
final class RenderTap: @unchecked Sendable {
    private struct State {
        var cycles = 0
        var nonFinite = 0
        var recent: [Float] = []
        var waiters: [(cycle: Int, signal: DispatchSemaphore)] = []
        var gate: DispatchSemaphore?
        var held: DispatchSemaphore?
    }
    private let state = Mutex(State())
    /// How many frames of channel 0 are kept.
    let keep: Int

    init(keep: Int) { self.keep = keep }

    var cycles: Int { state.withLock { $0.cycles } }
    var nonFinite: Int { state.withLock { $0.nonFinite } }
    /// The last `keep` frames of channel 0.
    var recent: [Float] { state.withLock { $0.recent } }

    /// Waits until `count` more cycles have been rendered (false after 20 s: the thread is stuck).
    func waitCycles(_ count: Int) -> Bool {
        let s = DispatchSemaphore(value: 0)
        state.withLock { $0.waiters.append(($0.cycles + count, s)) }
        return s.wait(timeout: .now() + 20) == .success
    }

    /// Stops the render thread before its next cycle; returns once it is stopped there.
    func hold() {
        let held = DispatchSemaphore(value: 0)
        state.withLock {
            $0.gate = DispatchSemaphore(value: 0)
            $0.held = held
        }
        _ = held.wait(timeout: .now() + 20)
    }

    /// Lets a held render thread go on.
    func release() {
        let g = state.withLock { s -> DispatchSemaphore? in
            let g = s.gate
            s.gate = nil
            return g
        }
        g?.signal()
    }

    /// Render thread, before the engine renders.
    fileprivate func beforeCycle() {
        let (gate, held) = state.withLock { s -> (DispatchSemaphore?, DispatchSemaphore?) in
            let h = s.held
            s.held = nil
            return (s.gate, h)
        }
        guard let gate else { return }
        held?.signal()
        gate.wait()
    }

    /// Render thread, after the engine rendered.
    fileprivate func afterCycle(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        var bad = 0
        for i in 0..<(frames * channels) where !buffer[i].isFinite { bad += 1 }
        let left = (0..<frames).map { buffer[$0 * channels] }
        let due = state.withLock { s -> [DispatchSemaphore] in
            s.cycles += 1
            s.nonFinite += bad
            s.recent.append(contentsOf: left)
            if s.recent.count > keep { s.recent.removeFirst(s.recent.count - keep) }
            let now = s.cycles
            let ready = s.waiters.filter { $0.cycle <= now }.map(\.signal)
            s.waiters.removeAll { $0.cycle <= now }
            return ready
        }
        due.forEach { $0.signal() }
    }
}

/// The real-time null output (its own thread, the device clock) with a ``RenderTap`` between it
/// and the engine.
final class TapOutput: AudioOutputDriver, @unchecked Sendable {
    private let inner: NullOutput
    let tap: RenderTap

    init(period: Double = 0.005, keep: Int = 9600) {
        inner = NullOutput(periodDuration: period)
        tap = RenderTap(keep: keep)
    }

    private final class Source: AudioRenderSource, @unchecked Sendable {
        let engine: any AudioRenderSource
        let tap: RenderTap
        let channels: Int
        init(engine: any AudioRenderSource, tap: RenderTap, channels: Int) {
            self.engine = engine
            self.tap = tap
            self.channels = channels
        }
        func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
            tap.beforeCycle()
            let r = engine.render(into: buffer, frameCount: frameCount, timing: timing)
            tap.afterCycle(buffer, frames: frameCount, channels: channels)
            return r
        }
    }

    var name: String { inner.name }
    var format: AudioFormat { inner.format }
    var isAudible: Bool { false }
    var events: AsyncStream<AudioOutputEvent> { inner.events }
    func open(format: AudioFormat) throws { try inner.open(format: format) }
    func start(source: any AudioRenderSource) throws {
        try inner.start(source: Source(engine: source, tap: tap, channels: inner.format.channelCount))
    }
    func pause() { inner.pause() }
    func resume() { inner.resume() }
    func stop() {
        tap.release()
        inner.stop()
    }
    func close() { inner.close() }
    func setVolume(_ volume: Float) {}
    var latency: Double { inner.latency }
    var framesPlayed: Int64 { inner.framesPlayed }
    var underrunCount: Int { 0 }
}

/// Graphs, nodes and players changed from other threads while a real render thread (the null
/// device's) renders them.
@Suite struct LiveGraphTests {
    static let format = AudioFormat.standard(sampleRate: 48000, channels: 2)

    /// A buffer of `frames` frames, the same value `value(frame)` in both channels.
    static func buffer(frames: Int, _ value: (Int) -> Float) -> AudioPCMBuffer {
        let b = AudioPCMBuffer(format: format, frameCapacity: frames)!
        b.frameLength = frames
        for f in 0..<frames {
            b.floatChannelData[0][f] = value(f)
            b.floatChannelData[1][f] = value(f)
        }
        return b
    }

    @Test func theLastOfAStormOfGraphChangesAlwaysTakesEffect() throws {
        let out = TapOutput()
        let e = AudioEngine(output: { out })
        let p = AudioPlayerNode()
        e.attach(p)
        try e.start()
        defer { e.stop() }
        p.scheduleBuffer(Self.buffer(frames: 4800) { _ in 0.5 }, options: .loops)
        p.play()
        for _ in 0..<3 {
            // The device stalls while four threads change the graph, every change leaving the
            // player unconnected; then the last change connects it.
            out.tap.hold()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<40 {
                    let m = AudioMixerNode()
                    e.attach(m)
                    try? e.connect(p, to: m, format: nil)
                    try? e.connect(m, to: e.mainMixerNode, format: nil)
                    e.disconnectNodeOutput(p)
                    e.detach(m)
                }
            }
            try e.connect(p, to: e.mainMixerNode, format: nil)
            out.tap.release()
            #expect(out.tap.waitCycles(3))
            #expect(out.tap.recent.last == 0.5, "the last change (connecting the player) was lost")
            // And the other way: a storm that leaves the player connected, then the last change
            // disconnects it.
            out.tap.hold()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<40 {
                    let m = AudioMixerNode()
                    e.attach(m)
                    try? e.connect(m, to: e.mainMixerNode, format: nil)
                    e.detach(m)
                }
            }
            e.disconnectNodeOutput(p)
            out.tap.release()
            #expect(out.tap.waitCycles(3))
            #expect(out.tap.recent.last == 0, "the last change (disconnecting the player) was lost")
        }
        #expect(out.tap.nonFinite == 0)
    }

    @Test func playStopAndScheduleFromManyThreadsLeaveANodeConsistent() throws {
        let out = TapOutput()
        let e = AudioEngine(output: { out })
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        defer { e.stop() }
        let short = Self.buffer(frames: 240) { _ in 0.25 }  // 5 ms
        let calls = Mutex<[Int: Int]>([:])
        @Sendable func handler(_ id: Int, _ done: DispatchSemaphore? = nil) -> AudioPlayerNode.CompletionHandler {
            { _ in
                calls.withLock { $0[id, default: 0] += 1 }
                done?.signal()
            }
        }

        // Without stop: every buffer scheduled plays, and its completion is called exactly once.
        let threads = 4, each = 30
        let allDone = DispatchSemaphore(value: 0)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<each {
                p.scheduleBuffer(short, completionHandler: handler(t * each + i, allDone))
                if i % 2 == 0 { p.play() } else { p.pause() }
            }
        }
        p.play()
        for _ in 0..<(threads * each) { #expect(allDone.wait(timeout: .now() + 20) == .success) }
        #expect(calls.withLock { $0.count } == threads * each)
        #expect(calls.withLock { $0.values.allSatisfy { $0 == 1 } })

        // With stop in the storm: what a stop discards is never completed, nothing twice; and the
        // node ends consistent — what is scheduled afterwards plays.
        calls.withLock { $0.removeAll() }
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<each {
                switch i % 3 {
                case 0: p.stop()
                case 1: p.play()
                default: p.scheduleBuffer(short, completionHandler: handler(1000 + t * each + i))
                }
            }
        }
        let last = DispatchSemaphore(value: 0)
        p.scheduleBuffer(short, completionHandler: handler(-1, last))
        p.play()
        #expect(p.isPlaying)
        #expect(last.wait(timeout: .now() + 20) == .success, "the node was left on a stale generation")
        #expect(calls.withLock { $0.values.allSatisfy { $0 == 1 } })

        // While the device stalls, more changes than a command queue could hold: the newest state
        // still arrives whole once it renders again.
        out.tap.hold()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<100 {
                p.play()
                p.pause()
            }
        }
        p.stop()
        let afterStall = DispatchSemaphore(value: 0)
        p.scheduleBuffer(short, completionHandler: handler(-2, afterStall))
        p.play()
        out.tap.release()
        #expect(afterStall.wait(timeout: .now() + 20) == .success, "the stop or play after the stall was lost")
        #expect(out.tap.nonFinite == 0)
    }

    @Test func anEqualizerChangedAndRewiredWhileRenderingSettlesOnItsResponse() throws {
        let out = TapOutput(keep: 4800)
        let e = AudioEngine(output: { out })
        let p = AudioPlayerNode()
        let eq = AudioUnitEQ(preset: .flat)
        e.attach(p)
        e.attach(eq)
        try e.connect(p, to: eq, format: nil)
        try e.connect(eq, to: e.mainMixerNode, format: nil)
        try e.start()
        defer { e.stop() }
        // 1 kHz, 48 samples a period: 4800 frames loop seamlessly.
        let amplitude: Float = 0.25
        p.scheduleBuffer(Self.buffer(frames: 4800) { amplitude * Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) },
                         options: .loops)
        p.play()
        #expect(out.tap.waitCycles(2))
        let presets: [EQPreset] = [.rock, .pop, .jazz, .classical, .flat]
        DispatchQueue.concurrentPerform(iterations: 3) { t in
            for i in 0..<60 {
                switch t {
                case 0: eq.apply(presets[i % presets.count])
                case 1:
                    eq.bands[i % 10].gain = Double(i % 25) - 12
                    eq.globalGain = Double(i % 7) - 3
                default:
                    // Re-wire: a mixer between the player and the equaliser, then out again.
                    let m = AudioMixerNode()
                    e.attach(m)
                    try? e.connect(p, to: m, format: nil)
                    try? e.connect(m, to: eq, format: nil)
                    try? e.connect(p, to: eq, format: nil)
                    e.detach(m)
                }
            }
        }
        // Settle on +6 dB at 1 kHz (band 5 is centred there; the others flat).
        eq.apply(.flat)
        eq.globalGain = 0
        eq.bands[5].gain = 6
        #expect(out.tap.waitCycles(40))  // 200 ms: far beyond the 15 ms smoothing
        let tail = out.tap.recent
        let gainDB = 20 * log10(Double(rms(tail[...])) / (Double(amplitude) / 2.0.squareRoot()))
        #expect(abs(gainDB - 6) < 0.1, "measured \(gainDB) dB")
        #expect(out.tap.nonFinite == 0)
    }
}
