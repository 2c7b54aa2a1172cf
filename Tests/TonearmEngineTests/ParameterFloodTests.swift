// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore
@testable import TonearmEngine

/// Parameter changes are never dropped on their way to the render thread: more of them than the
/// queue holds, posted while the render thread does not run (a slow or stalled device), all
/// arrive — the latest value of each — at the next render cycle.
@Suite struct ParameterFloodTests {
    /// A DSP that keeps the last value set for each parameter.
    struct Recorder: ParameterizedDSP {
        var values: [Double]
        init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) { self.values = values }
        mutating func setParameter(_ index: Int, _ value: Double) { values[index] = value }
    }

    @Test func moreChangesThanTheQueueHoldsAllArriveLatestFirst() {
        let slot = DSPSlot<Recorder>()
        let format = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2)
        slot.configure(format: format, maximumFrames: 512) { (Array(repeating: 0, count: 52), false) }
        // 60 rounds of all 52 parameters (3,120 changes; the queue holds 1,024), then a last word
        // on a few of them, as `eq.apply(.flat)` after a storm of presets.
        for round in 0..<60 {
            for i in 0..<52 { slot.post(ParameterMessage(index: Int32(i), value: Double(round * 100 + i))) }
        }
        slot.post(ParameterMessage(index: 5, value: 6))
        slot.post(ParameterMessage(index: 1, value: 0))
        slot.post(ParameterMessage(index: -1, value: 1))
        slot.applyPending()
        let values = slot.dsp!.values
        #expect(values[5] == 6)
        #expect(values[1] == 0)
        #expect(slot.bypassed)
        for i in 0..<52 where i != 5 && i != 1 { #expect(values[i] == Double(59 * 100 + i), "parameter \(i)") }
        // After the flood, changes take the queue again and still come in order.
        slot.post(ParameterMessage(index: 5, value: 7))
        slot.post(ParameterMessage(index: 5, value: 8))
        slot.applyPending()
        #expect(slot.dsp!.values[5] == 8)
    }
}
