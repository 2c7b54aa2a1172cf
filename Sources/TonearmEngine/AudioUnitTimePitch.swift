// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmDSP

/// A time-stretching and pitch-shifting node (the counterpart of `AVAudioUnitTimePitch`):
/// librubberband through ``TimeStretcher``.
///
/// Parameters: `rate` (1/32 … 32, default 1: 2 plays twice as fast with the pitch kept), `pitch`
/// (−2400 … 2400 cents, default 0, the speed kept) and `overlap`.
///
/// - The node reads its input at `rate` input frames per output frame: it pulls what feeds it on
///   demand (see ``VariableRateKernel``), so a player node upstream is played faster or slower.
///   A player node's own times (``AudioPlayerNode/playerTime(forNodeTime:)``) count the frames it
///   rendered, i.e. source time.
/// - Output frame 0 is input frame 0 (no silence at the start): the first cycle pulls
///   rubberband's start delay in addition. Rate and pitch may change while it plays.
/// - `overlap` (3 … 32, default 8) is accepted for compatibility and stored; rubberband chooses
///   its own windows, so it has no audible effect.
/// - Not bit-transparent, even at rate 1 and 0 cents (bypass it for that).
///
/// Threading: as every ``AudioUnitEffect`` — set from any thread; changes reach the render
/// thread through a lock-free queue; rubberband and its buffers are created when the engine
/// starts; the render thread only calls rubberband's real-time processing.
///
/// `@unchecked Sendable`: no state of its own; see ``AudioUnitEffect``.
public final class AudioUnitTimePitch: AudioUnitEffect, @unchecked Sendable {
    public static let descriptors: [ParameterDescriptor] = [
        ParameterDescriptor(identifier: "rate", name: "Rate", range: TimeStretcher.nodeRateRange, unit: .ratio, defaultValue: 1),
        ParameterDescriptor(identifier: "pitch", name: "Pitch", range: TimeStretcher.centsRange, unit: .cents, defaultValue: 0),
        ParameterDescriptor(identifier: "overlap", name: "Overlap (no effect)", range: 3...32, unit: .ratio, defaultValue: 8),
    ]

    public init() {
        super.init(kernel: EffectKernel<TimePitchDSP>(), descriptors: Self.descriptors)
    }

    /// The playback rate, 1/32 … 32 (pitch kept).
    public var rate: Float {
        get { Float(self[parameter: 0]) }
        set { self[parameter: 0] = Double(newValue) }
    }

    /// What is still inside the stretcher when the input ends (it reads ahead by its start
    /// delay, about 0.15 s), at the slowest the rate lets it out. An engine that ends with its
    /// source renders this after the cycle in which the source ended, so a render through this
    /// node ends with up to this much silence.
    override public var tailTime: Double { 0.25 / min(1, max(Double(rate), TimeStretcher.nodeRateRange.lowerBound)) }

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

/// A varispeed node (the counterpart of `AVAudioUnitVarispeed`): `rate` 0.25 … 4 (default 1)
/// plays faster or slower with the pitch following, as a tape does (rate 2: twice as fast, an
/// octave up). The node reads its input at `rate` input frames per output frame (see
/// ``VariableRateKernel``) through the ``Varispeed`` resampler (cubic interpolation; above rate 1
/// no anti-alias filter is applied). The rate may change while it plays.
///
/// Threading: as every ``AudioUnitEffect``.
///
/// `@unchecked Sendable`: no state of its own; see ``AudioUnitEffect``.
public final class AudioUnitVarispeed: AudioUnitEffect, @unchecked Sendable {
    public static let descriptors: [ParameterDescriptor] = [
        ParameterDescriptor(identifier: "rate", name: "Rate", range: Varispeed.rateRange, unit: .ratio, defaultValue: 1),
    ]

    public init() {
        super.init(kernel: EffectKernel<VarispeedDSP>(), descriptors: Self.descriptors)
    }

    /// The playback rate, 0.25 … 4 (pitch follows).
    public var rate: Float {
        get { Float(self[parameter: 0]) }
        set { self[parameter: 0] = Double(newValue) }
    }

    /// What the resampler has read ahead when its input ends (up to a 4096-frame window), at
    /// the slowest the rate lets it out.
    override public var tailTime: Double { 0.1 / min(1, max(Double(rate), Varispeed.rateRange.lowerBound)) }
}

struct TimePitchDSP: VariableRateDSP {
    let stretcher: TimeStretcher

    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) {
        stretcher = TimeStretcher(sampleRate: sampleRate, channels: channels, maxFrames: maximumFrames,
                                  rateLimits: TimeStretcher.nodeRateRange)
        stretcher.pitch = values[1]
        stretcher.reset(rate: values[0])
    }

    mutating func setParameter(_ index: Int, _ value: Double) {
        switch index {
        case 0: stretcher.setRate(value)
        case 1: if stretcher.pitch != value { stretcher.pitch = value }
        default: break
        }
    }

    mutating func render(into output: UnsafeMutablePointer<Float>, frames: Int,
                         pull: (UnsafeMutablePointer<Float>, Int) -> Void) {
        var done = 0
        while done < frames {
            // The graph's input never ends (silence after its sources), so the stretcher always fills.
            let got = stretcher.render(into: output + done * stretcher.channels, frameCount: frames - done) { buffer, count in
                pull(buffer, count)
                return count
            }
            if got == 0 { break }
            done += got
        }
        if done < frames { (output + done * stretcher.channels).update(repeating: 0, count: (frames - done) * stretcher.channels) }
    }
}

struct VarispeedDSP: VariableRateDSP {
    let resampler: Varispeed

    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double]) {
        resampler = Varispeed(channels: channels, rate: values[0], maxFrames: maximumFrames)
    }

    mutating func setParameter(_ index: Int, _ value: Double) {
        if index == 0 { resampler.rate = value }
    }

    mutating func render(into output: UnsafeMutablePointer<Float>, frames: Int,
                         pull: (UnsafeMutablePointer<Float>, Int) -> Void) {
        let got = resampler.render(into: output, frameCount: frames) { buffer, count in
            pull(buffer, count)
            return count
        }
        if got < frames { (output + got * resampler.channels).update(repeating: 0, count: (frames - got) * resampler.channels) }
    }
}
