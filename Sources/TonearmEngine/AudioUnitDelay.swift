// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmDSP

/// A feedback delay node (the counterpart of `AVAudioUnitDelay`): the ``Delay`` kernel.
///
/// Parameters: `delayTime` (0 … 2 s, default 1), `feedback` (−100 … 100 %, default 50),
/// `lowPassCutoff` (10 Hz … 24 kHz, default 15 kHz; a one-pole low-pass in the loop, off at or
/// above the engine's Nyquist frequency), `wetDryMix` (0 … 100 %, default 100). Changing
/// `delayTime` glides with an interpolated read, so it does not click.
///
/// Threading: as every ``AudioUnitEffect`` — set from any thread; changes reach the render
/// thread through a lock-free queue; the 2 s line is allocated when the engine starts, and
/// nothing is allocated while rendering.
///
/// `@unchecked Sendable`: no state of its own; see ``AudioUnitEffect``.
public final class AudioUnitDelay: AudioUnitEffect, @unchecked Sendable {
    public static let descriptors: [ParameterDescriptor] = [
        ParameterDescriptor(identifier: "delayTime", name: "Delay time", range: Delay.delayTimeRange, unit: .seconds, defaultValue: 1),
        ParameterDescriptor(identifier: "feedback", name: "Feedback", range: Delay.feedbackRange, unit: .percent, defaultValue: 50),
        ParameterDescriptor(identifier: "lowPassCutoff", name: "Low-pass cutoff", range: Delay.cutoffRange, unit: .hertz, defaultValue: 15000),
        ParameterDescriptor(identifier: "wetDryMix", name: "Wet/dry mix", range: 0...100, unit: .percent, defaultValue: 100),
    ]

    public init() {
        super.init(kernel: EffectKernel<DelayDSP>(), descriptors: Self.descriptors)
    }

    /// Seconds to the first repeat (0 … 2).
    /// Until the repeats have fallen by 60 dB (at most 10 s); nothing when fully dry.
    override public var tailTime: Double {
        guard wetDryMix > 0 else { return 0 }
        let fb = Double(abs(feedback)) / 100
        let repeats = fb <= 0.001 ? 1 : min(1000, (log(0.001) / log(fb)).rounded(.up) + 1)
        return min(10, delayTime * repeats)
    }

    public var delayTime: Double {
        get { self[parameter: 0] }
        set { self[parameter: 0] = newValue }
    }
    /// Percent of each repeat fed back (−100 … 100).
    public var feedback: Float {
        get { Float(self[parameter: 1]) }
        set { self[parameter: 1] = Double(newValue) }
    }
    /// Cutoff of the loop's low-pass, in Hz.
    public var lowPassCutoff: Float {
        get { Float(self[parameter: 2]) }
        set { self[parameter: 2] = Double(newValue) }
    }
    /// Dry (0) → wet (100) in percent.
    public var wetDryMix: Float {
        get { Float(self[parameter: 3]) }
        set { self[parameter: 3] = Double(newValue) }
    }
}

struct DelayDSP: EffectDSP, ~Copyable {
    var delay: Delay
    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) {
        delay = Delay(delayTime: values[0], feedback: values[1], lowPassCutoff: values[2], wetDryMix: values[3],
                      sampleRate: sampleRate, channels: channels)
    }
    mutating func setParameter(_ index: Int, _ value: Double) {
        switch index {
        case 0: delay.delayTime = value
        case 1: delay.feedback = value
        case 2: delay.lowPassCutoff = value
        default: delay.wetDryMix = value
        }
    }
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        delay.process(buffer, frames: frames, channels: channels)
    }
}
