// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
@testable import TonearmRender

/// A source rendering a counter (left) and its negative (right), period after period.
private final class CountingSource: AudioRenderSource, @unchecked Sendable {
    var next: Float = 0
    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        for i in 0..<frameCount {
            buffer[i * 2] = next
            buffer[i * 2 + 1] = -next
            next += 1
        }
        return RenderResult(framesRendered: frameCount, ended: false)
    }
}

/// The taps the render thread feeds (offline: no clock): what the clock output renders reaches
/// every enabled tap in order, a full ring drops whole periods and counts them, a disabled tap
/// gets nothing, a disabled clock output is silenced while the taps still get the audio, and a
/// writer on another thread reads what the render thread writes (TSan).
struct TapRingTests {
    @Test func theRenderThreadFeedsEnabledTapsAndDropsWhenFull() {
        let a = OutputTap(seconds: 0), b = OutputTap(seconds: 0)  // 4096 frames each
        a.isEnabled = true
        let hub = OutputHub(taps: [a, b])
        let source = TeeSource(source: CountingSource(), hub: hub, channels: 2, sampleRate: 44_100)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2048)
        defer { buffer.deallocate() }
        for _ in 0..<5 { _ = source.render(into: buffer, frameCount: 1024, timing: .offline) }
        #expect(a.ring.availableFrames == 4096 && a.dropped == 1024 && a.sampleRate == 44_100)
        #expect(b.ring.availableFrames == 0 && b.dropped == 0)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 8192)
        defer { out.deallocate() }
        #expect(a.ring.read(into: out, maxFrames: 4096) == 4096)
        #expect((0..<4096).allSatisfy { out[$0 * 2] == Float($0) && out[$0 * 2 + 1] == -Float($0) })
        hub.isClockEnabled = false
        _ = source.render(into: buffer, frameCount: 16, timing: .offline)
        #expect((0..<32).allSatisfy { buffer[$0] == 0 })
        #expect(a.ring.read(into: out, maxFrames: 16) == 16 && out[0] == 5120)
    }

    @Test func monoIsDoubledAndAWriterThreadReadsInOrder() throws {
        let tap = OutputTap(seconds: 2)  // holds all of it: nothing is dropped
        tap.isEnabled = true
        let hub = OutputHub(taps: [tap])
        let writer = TapWriter(tap: tap, outputRate: 48_000, name: "test-tap")
        let got = Mutex<[Float]>([])
        let done = DispatchSemaphore(value: 0)
        let total = 48_000
        try writer.start(deliver: { p, n in
            let finished = got.withLock { g in
                for i in 0..<n { g.append(p[i * 2]); g.append(p[i * 2 + 1]) }
                return g.count >= total * 2
            }
            if finished { done.signal() }
        }, idle: {})
        let mono = UnsafeMutablePointer<Float>.allocate(capacity: 480)
        defer { mono.deallocate() }
        var n: Float = 0
        for _ in 0..<(total / 480) {
            for i in 0..<480 { mono[i] = n; n += 1 }
            hub.feed(mono, frames: 480, channels: 1, sampleRate: 48_000)
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        writer.stop()
        let g = got.withLock { $0 }
        #expect(tap.dropped == 0 && g.count == total * 2)
        #expect((0..<total).allSatisfy { g[$0 * 2] == Float($0) && g[$0 * 2 + 1] == Float($0) })
    }

    /// 44.1 kHz in, 48 kHz out: a 1 kHz tone stays 1 kHz.
    @Test func theWriterBringsOtherRatesToItsOwn() {
        var r = LinearResampler()
        let input = (0..<44_100).flatMap { i -> [Float] in let v = Float(sin(2 * Double.pi * 1000 * Double(i) / 44_100)); return [v, v] }
        var out = [Float](repeating: 0, count: 2 * 50_000)
        let m = input.withUnsafeBufferPointer { i in
            out.withUnsafeMutableBufferPointer { r.process(i.baseAddress!, frames: 44_100, ratio: 44_100 / 48_000, into: $0.baseAddress!, capacity: 50_000) }
        }
        #expect(abs(m - 48_000) <= 2)
        let left = stride(from: 0, to: m * 2, by: 2).map { out[$0] }
        #expect(goertzelPowerLocal(left[24_000..<28_800], 1000, 48_000) > 100 * goertzelPowerLocal(left[24_000..<28_800], 1700, 48_000))
    }
}

private func goertzelPowerLocal(_ x: ArraySlice<Float>, _ f: Double, _ rate: Double) -> Double {
    let w = 2 * Double.pi * f / rate
    var s1 = 0.0, s2 = 0.0
    for v in x { let s = Double(v) + 2 * cos(w) * s1 - s2; s2 = s1; s1 = s }
    return s1 * s1 + s2 * s2 - 2 * cos(w) * s1 * s2
}
