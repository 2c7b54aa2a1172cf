// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmDSP
@testable import TonearmEngine
import TonearmTestSupport

/// The effect nodes inside an engine graph, rendered offline.
@Suite(.offThePool) struct EffectsTests {
    /// player (a generated mono-in-both-channels buffer) → effect → main mixer; renders
    /// `signal.count + extra` frames and returns the left and right channels.
    func run(_ node: AudioNode, signal: [Float], extra: Int = 0, block: Int = 1024) throws -> (left: [Float], right: [Float]) {
        let e = AudioEngine()
        let format = AudioFormat.standard(sampleRate: 48000, channels: 2)
        try e.enableManualRenderingMode(.offline, format: format, maximumFrameCount: block)
        let p = AudioPlayerNode()
        e.attach(p)
        e.attach(node)
        try e.connect(p, to: node, format: nil)
        try e.connect(node, to: e.mainMixerNode, format: nil)
        try e.start()
        let buf = AudioPCMBuffer(format: format, frameCapacity: signal.count)!
        buf.frameLength = signal.count
        for (i, v) in signal.enumerated() { buf.floatChannelData[0][i] = v; buf.floatChannelData[1][i] = v }
        p.scheduleBuffer(buf)
        p.play()
        let out = AudioPCMBuffer(format: format, frameCapacity: block)!
        var left: [Float] = [], right: [Float] = []
        let total = signal.count + extra
        while left.count < total {
            let n = min(block, total - left.count)
            _ = try e.renderOffline(n, to: out)
            left += out.channel(0)
            right += out.channel(1)
        }
        return (left, right)
    }

    static func sine(_ f: Double, frames: Int, amplitude: Float = 0.25) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * .pi * f * Double($0) / 48000)) }
    }

    // MARK: Reverb

    @Test func reverbAtWetZeroIsBitTransparent() throws {
        let noise = (0..<20_000).map { _ in Float.random(in: -0.5...0.5) }
        let r = AudioUnitReverb()
        r.loadFactoryPreset(.cathedral)
        r.wetDryMix = 0
        let out = try run(r, signal: noise)
        #expect(out.left == noise)
        #expect(out.right == noise)
    }

    @Test func reverbAddsADecayingDecorrelatedTail() throws {
        var impulse = [Float](repeating: 0, count: 96_000)
        impulse[0] = 1
        let r = AudioUnitReverb()
        r.loadFactoryPreset(.largeHall)
        #expect(r.preset == .largeHall)
        let out = try run(r, signal: impulse)
        let early = rms(out.left[4800..<24_000]), late = rms(out.left[72_000..<96_000])
        #expect(early > 1e-3, "early tail \(early)")
        #expect(late < early / 10, "early \(early), late \(late)")
        #expect(out.left != out.right)
    }

    // MARK: Delay

    @Test func delayRepeatsAnImpulseAtTheDelayTimeWithFeedbackAmplitudes() throws {
        var impulse = [Float](repeating: 0, count: 4000)
        impulse[100] = 1
        let d = AudioUnitDelay()
        d.delayTime = 0.01        // 480 frames at 48 kHz
        d.feedback = 50
        d.lowPassCutoff = 24000   // above Nyquist: the loop filter is off
        d.wetDryMix = 50
        let out = try run(d, signal: impulse).left
        var expected = [Float](repeating: 0, count: 4000)
        expected[100] = 0.5                                        // dry
        for k in 0..<8 where 100 + 480 * (k + 1) < 4000 {
            expected[100 + 480 * (k + 1)] = 0.5 * pow(0.5, Float(k)) // wet · feedbackᵏ
        }
        let maxError = zip(out, expected).map { abs($0 - $1) }.max() ?? 1
        #expect(maxError < 1e-6, "max error \(maxError)")
        #expect(abs(out[580] - 0.5) < 1e-6 && abs(out[1060] - 0.25) < 1e-6 && abs(out[1540] - 0.125) < 1e-6)
    }

    /// Two effects in a row work in one buffer (the plan renders the player into the first
    /// delay's buffer and that into the second's): each still sees exactly its input.
    @Test func twoDelaysInARowEachSeeTheirOwnInput() throws {
        var impulse = [Float](repeating: 0, count: 2000)
        impulse[100] = 1
        let first = AudioUnitDelay(), second = AudioUnitDelay()
        for (d, time) in [(first, 0.01), (second, 0.005)] {  // 480 and 240 frames
            d.delayTime = time
            d.feedback = 0
            d.lowPassCutoff = 24000
            d.wetDryMix = 50
        }
        let e = AudioEngine()
        let format = AudioFormat.standard(sampleRate: 48000, channels: 2)
        try e.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 256)
        let p = AudioPlayerNode()
        for n in [p, first, second] { e.attach(n) }
        try e.connect(p, to: first, format: nil)
        try e.connect(first, to: second, format: nil)
        try e.connect(second, to: e.mainMixerNode, format: nil)
        try e.start()
        let buf = AudioPCMBuffer(format: format, frameCapacity: impulse.count)!
        buf.frameLength = impulse.count
        for (i, v) in impulse.enumerated() { buf.floatChannelData[0][i] = v; buf.floatChannelData[1][i] = v }
        p.scheduleBuffer(buf)
        p.play()
        let out = AudioPCMBuffer(format: format, frameCapacity: 256)!
        var left: [Float] = []
        while left.count < impulse.count {
            _ = try e.renderOffline(min(256, impulse.count - left.count), to: out)
            left += out.channel(0)
        }
        // The first delay: ½ at 100 and 580; the second splits each into ½ now and ½ 240 later.
        var expected = [Float](repeating: 0, count: impulse.count)
        for t in [100, 340, 580, 820] { expected[t] = 0.25 }
        let maxError = zip(left, expected).map { abs($0 - $1) }.max() ?? 1
        #expect(maxError < 1e-6, "max error \(maxError)")
    }

    @Test func negativeFeedbackAlternatesTheSign() throws {
        var impulse = [Float](repeating: 0, count: 2000)
        impulse[0] = 1
        let d = AudioUnitDelay()
        try d.setValue(0.005, forParameter: "delayTime")  // 240 frames
        try d.setValue(-50, forParameter: "feedback")
        try d.setValue(24000, forParameter: "lowPassCutoff")
        let out = try run(d, signal: impulse).left
        #expect(out[0] == 0)     // fully wet
        #expect(abs(out[240] - 1) < 1e-6 && abs(out[480] + 0.5) < 1e-6 && abs(out[720] - 0.25) < 1e-6)
    }

    @Test func theLoopLowPassDarkensTheRepeats() throws {
        var burst = [Float](repeating: 0, count: 12_000)
        for i in 0..<512 { burst[i] = Float.random(in: -0.5...0.5) }
        func repeatPower(cutoff: Float, frequency: Double) throws -> Double {
            let d = AudioUnitDelay()
            d.delayTime = 0.1      // 4800 frames
            d.feedback = 0
            d.lowPassCutoff = cutoff
            let out = try run(d, signal: burst).left
            return goertzelPower(out[4800..<6848], frequency: frequency, sampleRate: 48000)
        }
        let brightHigh = try repeatPower(cutoff: 24000, frequency: 12000)
        let darkHigh = try repeatPower(cutoff: 1000, frequency: 12000)
        #expect(10 * log10(darkHigh / brightHigh) < -15, "12 kHz: \(brightHigh) → \(darkHigh)")
    }

    @Test func movingTheDelayTimeDoesNotClick() throws {
        let input = Self.sine(300, frames: 96_000, amplitude: 0.25)
        let d2 = AudioUnitDelay()
        d2.delayTime = 0.2
        d2.feedback = 0
        d2.lowPassCutoff = 24000
        var changed: [Float] = []
        let eng = AudioEngine()
        let format = AudioFormat.standard(sampleRate: 48000, channels: 2)
        try eng.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 1024)
        let p = AudioPlayerNode()
        eng.attach(p); eng.attach(d2)
        try eng.connect(p, to: d2, format: nil)
        try eng.connect(d2, to: eng.mainMixerNode, format: nil)
        try eng.start()
        let buf = AudioPCMBuffer(format: format, frameCapacity: input.count)!
        buf.frameLength = input.count
        for (i, v) in input.enumerated() { buf.floatChannelData[0][i] = v; buf.floatChannelData[1][i] = v }
        p.scheduleBuffer(buf)
        p.play()
        let out = AudioPCMBuffer(format: format, frameCapacity: 1024)!
        while changed.count < input.count {
            _ = try eng.renderOffline(1024, to: out)
            changed += out.channel(0)
            if changed.count == 48 * 1024 { d2.delayTime = 0.35 }
        }
        // A 300 Hz sine at 0.25 moves at most 0.0098 per frame. The glide (40 ms time constant)
        // bends the pitch briefly — reading up to 0.15 s / 40 ms = 3.75 frames per frame faster,
        // so at most 2.75× the frequency — but never jumps: a jump to the new tap would be a step
        // of up to 0.5.
        let steps = zip(changed[12_000...].dropFirst(), changed[12_000...]).map { abs($0 - $1) }
        let maxStep = steps.max() ?? 0
        #expect(maxStep < 0.0098 * 3, "largest step \(maxStep)")
        // And it settles on the new delay: the output is the input 0.35 s (16 800 frames) earlier.
        let settled = (90_000..<96_000).map { abs(changed[$0] - input[$0 - 16_800]) }.max() ?? 1
        #expect(settled < 1e-5, "after the glide: \(settled)")
    }

    // MARK: Time-pitch and varispeed

    func span(_ x: [Float]) -> Range<Int>? { nonSilentSpan(x, sampleRate: 48000, threshold: 0.02) }

    @Test(arguments: [128, 1024, 4096])
    func plusAnOctaveDoublesTheFrequencyAndKeepsTheDuration(block: Int) throws {
        let tone = Self.sine(440, frames: 96_000)
        let tp = AudioUnitTimePitch()
        tp.pitch = 1200
        let out = try run(tp, signal: tone, extra: 24_000, block: block).left
        // No dropouts once sounding: every 10 ms block of the steady part carries the tone.
        let steady = (span(out)?.lowerBound ?? 0) + 4800
        for b in stride(from: steady, to: steady + 80_000, by: 480) {
            #expect(rms(out[b..<(b + 480)]) > 0.1, "dropout at frame \(b) (block \(block))")
        }
        let span = try #require(nonSilentSpan(out, sampleRate: 48000, threshold: 0.02))
        #expect(span.lowerBound < 480, "output frame 0 is input frame 0: starts at \(span.lowerBound)")
        #expect(abs(span.count - tone.count) <= 1920, "sounding \(span.count) frames for \(tone.count) in")
        let middle = Array(out[(span.lowerBound + 9600)..<(span.upperBound - 9600)])
        let f = try #require(dominantFrequency(middle, sampleRate: 48000))
        #expect(abs(f - 880) < 5, "dominant \(f) Hz")
    }

    @Test(arguments: [(1.5, 128), (1.5, 4096), (0.5, 1024), (3.0, 1024)])
    func varispeedChangesSpeedAndPitchTogether(rate: Double, block: Int) throws {
        let tone = Self.sine(440, frames: 72_000)
        let v = AudioUnitVarispeed()
        v.rate = Float(rate)
        let out = try run(v, signal: tone, extra: 72_000, block: block).left
        // The tone is read `rate` times as fast: it lasts 72 000 / rate frames at 440 × rate Hz.
        let s = try #require(span(out))
        let expected = Int((72_000 / rate).rounded())
        #expect(s.lowerBound == 0)
        #expect(abs(s.count - expected) <= 4, "sounding \(s.count) frames, expected \(expected)")
        let middle = Array(out[(s.count / 4)..<(s.count * 3 / 4)])
        let f = try #require(dominantFrequency(middle, sampleRate: 48000))
        #expect(abs(f - 440 * rate) < 4, "dominant \(f) Hz at rate \(rate)")
    }

    @Test(arguments: [(2.0, 1024), (2.0, 128), (0.5, 1024), (8.0, 4096), (1.0 / 4, 512)])
    func timePitchRateChangesTheLengthAndKeepsThePitch(rate: Double, block: Int) throws {
        let tone = Self.sine(440, frames: 48_000)
        let tp = AudioUnitTimePitch()
        tp.rate = Float(rate)
        let expected = Int((48_000 / rate).rounded())
        let out = try run(tp, signal: tone, extra: expected + 24_000 - 48_000 + 24_000, block: block).left
        let s = try #require(span(out))
        #expect(s.lowerBound < 480, "starts at \(s.lowerBound)")
        #expect(abs(s.count - expected) <= max(960, expected / 50), "sounding \(s.count) frames, expected \(expected)")
        let middle = Array(out[(s.lowerBound + s.count / 4)..<(s.lowerBound + s.count * 3 / 4)])
        let f = try #require(dominantFrequency(middle, sampleRate: 48000))
        #expect(abs(f - 440) < 5, "dominant \(f) Hz at rate \(rate)")
    }

    @Test func timePitchRateAndPitchTogether() throws {
        let tone = Self.sine(440, frames: 48_000)
        let tp = AudioUnitTimePitch()
        tp.rate = 2
        tp.pitch = -1200
        let out = try run(tp, signal: tone, extra: 24_000).left
        let s = try #require(span(out))
        #expect(abs(s.count - 24_000) <= 960, "sounding \(s.count) frames")
        let f = try #require(dominantFrequency(Array(out[6_000..<18_000]), sampleRate: 48000))
        #expect(abs(f - 220) < 4, "dominant \(f) Hz")
    }

    /// The rate changes while the graph runs: the part before the change at the old speed, the
    /// rest at the new one, nothing dropped or repeated beyond the stretcher's smoothing.
    @Test func timePitchRateChangesWhilePlaying() throws {
        let e = AudioEngine()
        let format = AudioFormat.standard(sampleRate: 48000, channels: 2)
        try e.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 1024)
        let p = AudioPlayerNode()
        let tp = AudioUnitTimePitch()
        e.attach(p)
        e.attach(tp)
        try e.connect(p, to: tp, format: nil)
        try e.connect(tp, to: e.mainMixerNode, format: nil)
        try e.start()
        let buf = AudioPCMBuffer(format: format, frameCapacity: 96_000)!
        buf.frameLength = 96_000
        for i in 0..<96_000 { buf.floatChannelData[0][i] = 0.25; buf.floatChannelData[1][i] = 0.25 }
        p.scheduleBuffer(buf)
        p.play()
        let out = AudioPCMBuffer(format: format, frameCapacity: 1024)!
        var rendered = 0
        var sounding = 0
        while rendered < 150_000 {
            if rendered == 24_576 { tp.rate = 2 }
            _ = try e.renderOffline(1024, to: out)
            sounding += out.channel(0).filter { abs($0) > 0.1 }.count
            rendered += 1024
        }
        // 24 576 frames at rate 1, then the remaining ≈ 71 424 input frames at rate 2.
        let expected = 24_576 + (96_000 - 24_576) / 2
        #expect(abs(sounding - expected) <= 2400, "sounding \(sounding) frames, expected about \(expected)")
        // The player node has consumed its whole buffer (its time counts source frames).
        let last = try #require(p.lastRenderTime)
        let t = try #require(p.playerTime(forNodeTime: last))
        #expect(t.sampleTime >= 96_000)
    }

    // MARK: Parameters as data

    /// One host for every effect: the variable-rate part is a capability of the DSP. A kernel
    /// whose DSP reads its input at another speed is a ``VariableRateKernel`` (a plan makes it
    /// pull its input); the others, the equaliser's too, are not, and are rendered frame for frame.
    @Test func onlyAVariableRateDSPMakesItsKernelPullItsInput() {
        #expect(AudioUnitTimePitch().kernel is any VariableRateKernel)
        #expect(AudioUnitVarispeed().kernel is any VariableRateKernel)
        #expect(!(AudioUnitReverb().kernel is any VariableRateKernel))
        #expect(!(AudioUnitDelay().kernel is any VariableRateKernel))
        #expect(!(AudioUnitEQ(numberOfBands: 3).kernel is any VariableRateKernel))
        #expect(AudioUnitEQ(numberOfBands: 3).kernel is EffectKernel<EQDSP>)
        #expect(AudioUnitVarispeed().kernel is EffectKernel<VarispeedDSP>)
    }

    @Test func parametersAreListedAndSetByIdentifier() throws {
        let nodes: [(AudioUnitEffect, [String])] = [
            (AudioUnitReverb(), ["wetDryMix", "preset"]),
            (AudioUnitDelay(), ["delayTime", "feedback", "lowPassCutoff", "wetDryMix"]),
            (AudioUnitTimePitch(), ["rate", "pitch", "overlap"]),
            (AudioUnitVarispeed(), ["rate"]),
        ]
        for (node, ids) in nodes {
            #expect(node.parameterDescriptors.map(\.identifier) == ids)
            for d in node.parameterDescriptors {
                #expect(node.value(forParameter: d.identifier) == d.defaultValue)
                #expect(throws: TonearmError.self) { try node.setValue(d.range.upperBound + 1, forParameter: d.identifier) }
                #expect(throws: TonearmError.self) { try node.setValue(d.range.lowerBound - 1, forParameter: d.identifier) }
            }
            #expect(throws: TonearmError.self) { try node.setValue(0, forParameter: "noSuchThing") }
            #expect(node.value(forParameter: "noSuchThing") == nil)
        }
        let d = AudioUnitDelay()
        try d.setValue(0.25, forParameter: "delayTime")
        #expect(d.delayTime == 0.25)
        let r = AudioUnitReverb()
        try r.setValue(Double(ReverbPreset.cathedral.rawValue), forParameter: "preset")
        #expect(r.preset == .cathedral)
        #expect(throws: TonearmError.self) { try r.setValue(2.5, forParameter: "preset") }  // indexed: whole only
        #expect(r.parameterDescriptors[1].valueNames.count == 13)
        let tp = AudioUnitTimePitch()
        try tp.setValue(2, forParameter: "rate")
        #expect(tp.rate == 2)
        #expect(throws: TonearmError.self) { try tp.setValue(33, forParameter: "rate") }
        try tp.setValue(-700, forParameter: "pitch")
        #expect(tp.pitch == -700)
        let v = AudioUnitVarispeed()
        v.rate = 10
        #expect(v.rate == 4)   // properties clamp
    }
}
