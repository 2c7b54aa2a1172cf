// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmDSP

/// A pitch-shifting node (the counterpart of `AVAudioUnitTimePitch`): librubberband through
/// ``PitchShifter``, duration unchanged.
///
/// Parameters: `pitch` (−2400 … 2400 cents, default 0), `rate` and `overlap`.
///
/// - `rate` is fixed at 1 inside a graph (its descriptor's range is 1…1): this engine pulls N
///   output frames from N input frames, so a node cannot consume its input at another speed.
///   Change speed with pitch kept through `AudioPlayer.rate` (a ``TimeStretcher`` on the player's
///   decoder thread). `AudioPlayerNode` has no rate yet.
/// - `overlap` (3 … 32, default 8) is accepted for compatibility and stored; rubberband chooses
///   its own windows, so it has no audible effect.
/// - The output lags the input by rubberband's analysis delay plus a reserve of two render
///   blocks, at most 2048 frames (silence at the start, see ``PitchShifter/latency``; about
///   100 ms with 1024-frame blocks), and is not bit-transparent even at 0 cents.
///
/// Threading: as every ``AudioUnitEffect`` — set from any thread; changes reach the render
/// thread through a lock-free queue; rubberband and its buffers are created when the engine
/// starts; the render thread only calls rubberband's real-time processing.
public final class AudioUnitTimePitch: AudioUnitEffect, @unchecked Sendable {
    public static let descriptors: [ParameterDescriptor] = [
        ParameterDescriptor(identifier: "rate", name: "Rate (fixed at 1 in a graph)", range: 1...1, unit: .ratio, defaultValue: 1),
        ParameterDescriptor(identifier: "pitch", name: "Pitch", range: PitchShifter.centsRange, unit: .cents, defaultValue: 0),
        ParameterDescriptor(identifier: "overlap", name: "Overlap (no effect)", range: 3...32, unit: .ratio, defaultValue: 8),
    ]

    public init() {
        super.init(kernel: EffectKernel<PitchDSP>(), descriptors: Self.descriptors)
    }

    /// Always 1 inside a graph (see the type's documentation).
    public var rate: Float { 1 }

    /// The shifter's latency: what is still inside it when the input ends.
    override public var tailTime: Double { 0.25 }
    /// The pitch change in cents (100 to a semitone, ±2400).
    public var pitch: Float {
        get { Float(self[parameter: 1]) }
        set { self[parameter: 1] = Double(newValue) }
    }
    /// Stored for compatibility; no effect.
    public var overlap: Float {
        get { Float(self[parameter: 2]) }
        set { self[parameter: 2] = Double(newValue) }
    }
}

/// A varispeed node (the counterpart of `AVAudioUnitVarispeed`): `rate` 0.25 … 4 (default 1).
///
/// Inside a graph a node renders N frames from N frames, so the speed half of varispeed cannot
/// happen here: the node applies the pitch half — a shift of 1200·log₂(rate) cents (rate 2 = an
/// octave up) with the duration unchanged, through ``PitchShifter``. For true varispeed (speed and
/// pitch together, the length changing) use the ``Varispeed`` resampler where the source is read,
/// on a decoder thread; neither `AudioPlayer` nor `AudioPlayerNode` exposes it yet.
///
/// Threading: as every ``AudioUnitEffect``.
public final class AudioUnitVarispeed: AudioUnitEffect, @unchecked Sendable {
    public static let descriptors: [ParameterDescriptor] = [
        ParameterDescriptor(identifier: "rate", name: "Rate", range: Varispeed.rateRange, unit: .ratio, defaultValue: 1),
    ]

    public init() {
        super.init(kernel: EffectKernel<VarispeedPitchDSP>(), descriptors: Self.descriptors)
    }

    /// The playback rate, 0.25 … 4 (applied as its pitch change, see above).
    public var rate: Float {
        get { Float(self[parameter: 0]) }
        set { self[parameter: 0] = Double(newValue) }
    }
}

struct PitchDSP: EffectDSP {
    let shifter: PitchShifter
    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) {
        shifter = PitchShifter(sampleRate: sampleRate, channels: channels, maxFrames: maximumFrames, pitch: values[1])
    }
    mutating func setParameter(_ index: Int, _ value: Double) {
        if index == 1 && shifter.pitch != value { shifter.pitch = value }
    }
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        shifter.process(buffer, frames: frames)
    }
}

struct VarispeedPitchDSP: EffectDSP {
    let shifter: PitchShifter
    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) {
        shifter = PitchShifter(sampleRate: sampleRate, channels: channels, maxFrames: maximumFrames,
                               pitch: 1200 * log2(values[0]))
    }
    mutating func setParameter(_ index: Int, _ value: Double) {
        let cents = 1200 * log2(value)
        if shifter.pitch != cents { shifter.pitch = cents }
    }
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        shifter.process(buffer, frames: frames)
    }
}
