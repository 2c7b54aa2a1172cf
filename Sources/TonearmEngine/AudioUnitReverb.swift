// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmDSP

/// An algorithmic reverb node (the counterpart of `AVAudioUnitReverb`): the ``Reverb`` kernel, a
/// stereo Schroeder–Moorer design with 13 factory rooms.
///
/// Parameters: `wetDryMix` (0 … 100 %, default 100) and `preset` (indexed, the
/// ``ReverbPreset`` cases, default mediumHall). At `wetDryMix` 0 the node is bit-transparent.
///
/// Threading: as every ``AudioUnitEffect`` — set from any thread; changes reach the render
/// thread through a lock-free queue; the delay lines (for the largest room) are allocated when
/// the engine starts, and nothing is allocated while rendering.
///
/// `@unchecked Sendable`: no state of its own; see ``AudioUnitEffect``.
public final class AudioUnitReverb: AudioUnitEffect, @unchecked Sendable {
    public static let descriptors: [ParameterDescriptor] = [
        ParameterDescriptor(identifier: "wetDryMix", name: "Wet/dry mix", range: 0...100, unit: .percent, defaultValue: 100),
        ParameterDescriptor(identifier: "preset", name: "Room", range: 0...Double(ReverbPreset.allCases.count - 1),
                            unit: .indexed, defaultValue: Double(ReverbPreset.mediumHall.rawValue),
                            valueNames: ReverbPreset.allCases.map { String(describing: $0) }),
    ]

    public init() {
        super.init(kernel: EffectKernel<ReverbDSP>(), descriptors: Self.descriptors)
    }

    /// Dry (0) → wet (100) in percent. Smoothed over 15 ms.
    public var wetDryMix: Float {
        get { Float(self[parameter: 0]) }
        set { self[parameter: 0] = Double(newValue) }
    }

    /// The decay to −60 dB plus the pre-delay (nothing when fully dry).
    override public var tailTime: Double {
        wetDryMix <= 0 ? 0 : preset.settings.decayTime + preset.settings.preDelay
    }

    /// The room last loaded.
    public var preset: ReverbPreset { ReverbPreset(rawValue: Int(self[parameter: 1])) ?? .mediumHall }

    /// Switches to a factory room (the tail is cleared).
    public func loadFactoryPreset(_ preset: ReverbPreset) {
        self[parameter: 1] = Double(preset.rawValue)
    }
}

struct ReverbDSP: EffectDSP, ~Copyable {
    var reverb: Reverb
    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) {
        reverb = Reverb(preset: ReverbPreset(rawValue: Int(values[1])) ?? .mediumHall, wetDryMix: values[0],
                        sampleRate: sampleRate, channels: channels)
    }
    mutating func setParameter(_ index: Int, _ value: Double) {
        if index == 0 {
            if reverb.wetDryMix != value { reverb.wetDryMix = value }
        } else if let p = ReverbPreset(rawValue: Int(value)) {
            reverb.apply(p)
        }
    }
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        reverb.process(buffer, frames: frames, channels: channels)
    }
}
