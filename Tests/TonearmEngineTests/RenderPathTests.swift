// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmEngine
import TonearmTestSupport

/// The decoder thread → block ring → renderer path, driven offline by the test itself acting as
/// the output's render thread.
@Suite struct RenderPathTests {
    final class Rig: @unchecked Sendable {
        let source: RampSource
        let ring: PCMBlockRing
        let renderer: StreamRenderer
        let decoder: StreamDecoder
        init(frames: AudioFramePosition, channels: Int = 2, blockCount: Int = 8) {
            source = RampSource(frames: frames, channels: channels)
            ring = PCMBlockRing(blockFrames: 1024, channels: channels, blockCount: blockCount)
            let wake = DispatchSemaphore(value: 0), data = DispatchSemaphore(value: 0)
            renderer = StreamRenderer(ring: ring, spaceSignal: wake, dataSignal: data)
            decoder = StreamDecoder(source: source, ring: ring, wake: wake, dataSignal: data,
                                    onWarnings: { _ in }, onError: { _ in })
            decoder.start(name: "test.decoder")
        }
        func start(generation: UInt64, at frame: AudioFramePosition, loops: Int = 0) {
            renderer.requestGeneration(generation, startFrame: frame)
            renderer.commands.push(.running(true))
            decoder.schedule(.init(generation: generation, startFrame: frame, loops: loops, endFrame: nil))
        }
        /// Renders offline until the end (or `limit` frames); returns the interleaved audio.
        func renderAll(period: Int = 700, limit: Int = 10_000_000) -> [Float] {
            let ch = ring.channels
            var out: [Float] = []
            let buf = UnsafeMutablePointer<Float>.allocate(capacity: period * ch)
            defer { buf.deallocate() }
            while out.count / ch < limit {
                let r = renderer.render(into: buf, frameCount: period, timing: .offline)
                out.append(contentsOf: UnsafeBufferPointer(start: buf, count: r.framesRendered * ch))
                if r.ended { break }
            }
            return out
        }
        deinit { decoder.shutdown() }
    }

    /// Array equality without Swift Testing printing both arrays on failure.
    func same(_ a: [Float], _ b: [Float]) -> Bool {
        guard a.count == b.count else { print("lengths differ: \(a.count) vs \(b.count)"); return false }
        if let i = a.indices.first(where: { a[$0] != b[$0] }) { print("first difference at \(i): \(a[i]) vs \(b[i])"); return false }
        return true
    }

    static func expected(from start: AudioFramePosition, count: Int, channels: Int) -> [Float] {
        var e: [Float] = []
        e.reserveCapacity(count * channels)
        for f in 0..<count {
            for c in 0..<channels { e.append(RampSource.value(frame: start + AudioFramePosition(f), channel: c)) }
        }
        return e
    }

    @Test func everyFrameArrivesOnceInOrder() {
        let rig = Rig(frames: 100_000)
        rig.start(generation: 1, at: 0)
        let out = rig.renderAll()
        #expect(out.count == 200_000)
        #expect(same(out, Self.expected(from: 0, count: 100_000, channels: 2)))
        #expect(rig.renderer.positionFrame.load(ordering: .relaxed) == 100_000)
        var endedEvents = 0
        while let e = rig.renderer.events.pop() { if case .ended(let g) = e, g == 1 { endedEvents += 1 } }
        #expect(endedEvents == 1)
    }

    @Test func startingMidStreamIsSampleExact() {
        let rig = Rig(frames: 50_000, channels: 3)
        rig.start(generation: 1, at: 12_345)
        let out = rig.renderAll()
        #expect(same(out, Self.expected(from: 12_345, count: 50_000 - 12_345, channels: 3)))
    }

    @Test func loopsAreSeamless() {
        let rig = Rig(frames: 3000, channels: 1)
        rig.start(generation: 1, at: 0, loops: 2)
        let out = rig.renderAll()
        let pass = Self.expected(from: 0, count: 3000, channels: 1)
        #expect(same(out, pass + pass + pass))
    }

    @Test func loopsChangedWhilePlayingApplyToTheCurrentPass() {
        let rig = Rig(frames: 50_000, channels: 1)
        rig.start(generation: 1, at: 0, loops: 0)
        // The ring holds 8 blocks: the decoder cannot reach the end before the update arrives.
        rig.decoder.updateLoops(1)
        let out = rig.renderAll()
        let pass = Self.expected(from: 0, count: 50_000, channels: 1)
        #expect(same(out, pass + pass))
    }

    @Test func aSeekDropsStaleAudioAndItsEnd() {
        let rig = Rig(frames: 200_000, channels: 2, blockCount: 16)
        rig.start(generation: 1, at: 0)
        let ch = 2
        let buf = UnsafeMutablePointer<Float>.allocate(capacity: 512 * ch)
        defer { buf.deallocate() }
        _ = rig.renderer.render(into: buf, frameCount: 512, timing: .offline)
        // The ring now holds blocks of generation 1 ahead of playback; switch to generation 2.
        rig.start(generation: 2, at: 150_000)
        let out = rig.renderAll()
        #expect(same(out, Self.expected(from: 150_000, count: 50_000, channels: 2)))
        var ends: [UInt64] = []
        while let e = rig.renderer.events.pop() { if case .ended(let g) = e { ends.append(g) } }
        #expect(ends == [2])
    }

    @Test func gainRampAndPanApply() {
        let rig = Rig(frames: 4096, channels: 2)
        rig.renderer.commands.push(.gain(target: 0.5, frames: 0))
        rig.renderer.commands.push(.pan(1))  // hard right: left silent
        rig.start(generation: 1, at: 0)
        let out = rig.renderAll()
        let e = Self.expected(from: 0, count: 4096, channels: 2)
        #expect(out.count == e.count)
        for i in stride(from: 0, to: e.count, by: 2) {
            #expect(out[i] == 0)
            #expect(out[i + 1] == e[i + 1] * 0.5)
        }
    }

    @Test func realtimeRenderWithNoDataIsSilenceAndCountsUnderrun() {
        let ring = PCMBlockRing(blockFrames: 256, channels: 2, blockCount: 4)
        let r = StreamRenderer(ring: ring, spaceSignal: DispatchSemaphore(value: 0), dataSignal: DispatchSemaphore(value: 0))
        r.requestGeneration(1, startFrame: 0)
        r.commands.push(.running(true))
        let buf = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { buf.deallocate() }
        buf.update(repeating: 9, count: 512)
        // Before the first block, silence is not an underrun (the stream has not started).
        var res = r.render(into: buf, frameCount: 256, timing: .realtime)
        #expect(res.framesRendered == 0 && !res.ended)
        #expect((0..<512).allSatisfy { buf[$0] == 0 })
        #expect(r.underruns.load(ordering: .relaxed) == 0)
        // One block arrives, is played, then data is late: an underrun is counted.
        let w = ring.writableBlock()!
        w.update(repeating: 0.25, count: 512)
        ring.commit(PCMBlockInfo(generation: 1, sourceFrame: 0, frameCount: 256, endOfStream: false))
        res = r.render(into: buf, frameCount: 256, timing: .realtime)
        #expect(res.framesRendered == 256)
        res = r.render(into: buf, frameCount: 256, timing: .realtime)
        #expect(res.framesRendered == 0)
        #expect(r.underruns.load(ordering: .relaxed) == 1)
    }

    /// A block of an old generation committed while a render call runs (a player node's decoder
    /// checks that its item is current, fills a block, then commits it: a stop can come in
    /// between) is never played, even when it arrives between the call's drop of old blocks and
    /// its read of the next one. Before, such a block was played: a queue's ReplayGain restarts
    /// under ThreadSanitizer wrote 1,024 frames from ahead of the restart point. A producer
    /// commits only old blocks (1.0) as fast as it can while the renderer, on generation 2,
    /// renders: nothing but silence may come out. Bounded by a count of calls, not a clock.
    @Test func anOldGenerationsBlockCommittedDuringARenderIsNeverPlayed() {
        let ring = PCMBlockRing(blockFrames: 4, channels: 1, blockCount: 8)
        let r = StreamRenderer(ring: ring, spaceSignal: DispatchSemaphore(value: 0), dataSignal: DispatchSemaphore(value: 0))
        r.requestGeneration(2, startFrame: 0)
        r.commands.push(.running(true))
        let stop = Atomic<Bool>(false)
        let producer = Thread {
            while !stop.load(ordering: .relaxed) {
                guard let w = ring.writableBlock() else { continue }
                w.update(repeating: 1, count: 4)
                ring.commit(PCMBlockInfo(generation: 1, sourceFrame: 0, frameCount: 4, endOfStream: false))
            }
        }
        producer.start()
        let buf = UnsafeMutablePointer<Float>.allocate(capacity: 4)
        defer { buf.deallocate() }
        var played = 0
        for _ in 0..<1_000_000 {
            _ = r.render(into: buf, frameCount: 4, timing: .realtime)
            if buf[0] != 0 || buf[3] != 0 { played += 1 }
        }
        stop.store(true, ordering: .relaxed)
        #expect(played == 0, "\(played) render calls played an old generation's block")
    }

    @Test func metersMeasurePeakAndMeanSquarePerChannel() {
        let ring = PCMBlockRing(blockFrames: 480, channels: 2, blockCount: 4)
        let r = StreamRenderer(ring: ring, spaceSignal: DispatchSemaphore(value: 0), dataSignal: DispatchSemaphore(value: 0))
        r.meteringEnabled.store(true, ordering: .relaxed)
        r.requestGeneration(1, startFrame: 0)
        r.commands.push(.running(true))
        let w = ring.writableBlock()!
        for f in 0..<480 {
            w[f * 2] = 0.5 * sin(2 * .pi * 1000 * Float(f) / 48000)  // left: sine, amplitude 0.5
            w[f * 2 + 1] = 0.25                                      // right: constant 0.25
        }
        ring.commit(PCMBlockInfo(generation: 1, sourceFrame: 0, frameCount: 480, endOfStream: true))
        let buf = UnsafeMutablePointer<Float>.allocate(capacity: 960)
        defer { buf.deallocate() }
        _ = r.render(into: buf, frameCount: 480, timing: .realtime)
        let s = r.meters.pop()!
        #expect(s.frames == 480)
        #expect(abs(s.peak.0 - 0.5) < 1e-3 && s.peak.1 == 0.25)
        #expect(abs(s.meanSquare.0 - 0.125) < 1e-3)   // sine: A²/2
        #expect(abs(s.meanSquare.1 - 0.0625) < 1e-6)
    }
}
