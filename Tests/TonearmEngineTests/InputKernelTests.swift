// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore
import TonearmRender
@testable import TonearmEngine

/// The input node's kernel against a ring filled by the test (the capture thread's part),
/// offline: it waits for its margin before it plays, plays what the source delivered in order,
/// renders what came late as silence and counts an underrun, and drops what piled up beyond its
/// maximum back to its margin.
@Suite struct InputKernelTests {
    static let channels = 2

    /// `frames` stereo frames counting up from `start` (left = n, right = -n).
    static func ramp(_ start: Int, _ frames: Int) -> [Float] {
        (0..<frames).flatMap { [Float(start + $0), -Float(start + $0)] }
    }

    func render(_ k: InputKernel, _ frames: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: frames * Self.channels)
        out.withUnsafeMutableBufferPointer { o in
            k.render(inputs: UnsafeBufferPointer(start: nil, count: 0), output: o.baseAddress!, frames: frames,
                     channels: Self.channels, timing: .realtime)
        }
        return out
    }

    @Test func itPrimesPlaysInOrderCountsUnderrunsAndCapsWhatIsQueued() {
        let ring = CaptureRing(capacityFrames: 4_096, channels: Self.channels)
        let k = InputKernel()
        k.prime = 100
        k.maximumQueued = 1_000
        // No ring yet: silence, no underrun.
        #expect(render(k, 64).allSatisfy { $0 == 0 })
        k.ringGeneration.add(1, ordering: .releasing)
        k.ringSlot.store(Unmanaged.passUnretained(ring).toOpaque(), ordering: .releasing)

        var fed = 0
        func feed(_ n: Int) {
            let r = Self.ramp(fed, n)
            r.withUnsafeBytes { #expect(ring.write($0.baseAddress, frames: n) == n) }
            fed += n
        }
        // Less than the margin plus a period: silence, and no underrun (it has not started).
        feed(150)
        #expect(render(k, 64).allSatisfy { $0 == 0 })
        #expect(k.underruns.load(ordering: .relaxed) == 0)
        // Enough: the frames in order, from the first.
        feed(50)
        #expect(render(k, 64) == Self.ramp(0, 64))
        #expect(render(k, 64) == Self.ramp(64, 64))
        // The source is late: what there is (72 frames), then silence, and one underrun.
        let short = render(k, 100)
        #expect(Array(short[0..<144]) == Self.ramp(128, 72))
        #expect(short[144...].allSatisfy { $0 == 0 })
        #expect(k.underruns.load(ordering: .relaxed) == 1)
        // It waits for its margin again before playing on, from where the source goes on.
        feed(100)
        #expect(render(k, 64).allSatisfy { $0 == 0 })
        feed(100)
        #expect(render(k, 64) == Self.ramp(200, 64))
        // Too much queued (a source whose clock runs ahead, a pause): back to the margin, the
        // newest frames kept, the rest counted as dropped.
        feed(2_000)
        let queued = fed - 264
        let out = render(k, 64)
        let keptFrom = fed - (100 + 64)
        #expect(out == Self.ramp(keptFrom, 64))
        #expect(k.dropped.load(ordering: .relaxed) == Int64(queued - (100 + 64)))
        #expect(k.underruns.load(ordering: .relaxed) == 1)
        // A new ring (a restart) starts unprimed.
        k.ringGeneration.add(1, ordering: .releasing)
        feed(10)
        #expect(render(k, 64).allSatisfy { $0 == 0 })
        #expect(k.underruns.load(ordering: .relaxed) == 1)
    }
}
