// SPDX-License-Identifier: GPL-3.0-or-later
import CRubberBand
import Foundation
import TonearmCore

/// Changes the speed of audio without changing its pitch, and its pitch without changing its
/// speed (librubberband, real-time mode): the kernel behind `AudioPlayer.rate` (on a player's
/// decoder thread) and the engine's time-pitch node (on the render thread).
///
/// Output frame 0 is input frame 0: the start is padded and rubberband's delay dropped, so the
/// first call pulls more input than it returns.
///
/// Threading: one thread at a time. Buffers are allocated at creation for blocks of up to
/// `maxFrames`; ``render(into:frameCount:pull:)``, ``setRate(_:)`` and ``pitch`` allocate nothing
/// of ours (rubberband's real-time mode is made for a render thread).
///
/// `@unchecked Sendable` so that it can be handed to the one thread that uses it (built on the
/// control plane, then used by a decoder or render thread alone): its owner — a ``DSPSlot``
/// or a decoder — never lets two threads use it at once. A reference type, so a copy of it is
/// visibly the same stretcher.
public final class TimeStretcher: @unchecked Sendable {
    public let channels: Int
    public let sampleRate: Double
    /// The playback rate: 2 plays twice as fast (half as long), 0.5 half as fast.
    public private(set) var rate: Double = 1

    private let state: RubberBandState
    private let maxFrames: Int
    private let inPlanar: UnsafeMutablePointer<Float>
    private let outPlanar: UnsafeMutablePointer<Float>
    private let inPointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    private let outPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let inInterleaved: UnsafeMutablePointer<Float>
    private var toDrop = 0
    private var inputEnded = false
    /// Source frames consumed and output frames produced since the last reset.
    public private(set) var framesConsumed: Int64 = 0
    public private(set) var framesProduced: Int64 = 0

    /// The rates `AudioPlayer` accepts (as AVAudioPlayer: 0.5 … 2.0).
    public static let rateRange: ClosedRange<Double> = 0.5...2.0
    /// The rates the time-pitch node accepts (as AVAudioUnitTimePitch: 1/32 … 32).
    public static let nodeRateRange: ClosedRange<Double> = (1.0 / 32)...32
    /// The rates this stretcher accepts; others are clamped into it.
    public let rateLimits: ClosedRange<Double>

    /// The pitch changes accepted, in cents (two octaves either way).
    public static let centsRange: ClosedRange<Double> = -2400...2400

    /// The pitch change in cents (100 to a semitone, −2400 … 2400); may change between calls.
    public var pitch: Double = 0 {
        didSet {
            pitch = min(max(pitch.isNaN ? 0 : pitch, Self.centsRange.lowerBound), Self.centsRange.upperBound)
            rubberband_set_pitch_scale(state, pow(2, pitch / 1200))
        }
    }

    public init(sampleRate: Double, channels: Int, maxFrames: Int = 4096,
                rateLimits: ClosedRange<Double> = TimeStretcher.rateRange) {
        self.rateLimits = rateLimits
        self.channels = channels
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        let options = Int32(RubberBandOptionProcessRealTime.rawValue)
            | Int32(RubberBandOptionThreadingNever.rawValue)
            | Int32(RubberBandOptionPitchHighConsistency.rawValue)
            | Int32(RubberBandOptionEngineFiner.rawValue)
        state = rubberband_new(UInt32(sampleRate), UInt32(channels), options, 1.0, 1.0)
        rubberband_set_max_process_size(state, UInt32(maxFrames))
        inPlanar = .allocate(capacity: maxFrames * channels)
        inPlanar.initialize(repeating: 0, count: maxFrames * channels)
        outPlanar = .allocate(capacity: maxFrames * channels)
        outPlanar.initialize(repeating: 0, count: maxFrames * channels)
        inInterleaved = .allocate(capacity: maxFrames * channels)
        inInterleaved.initialize(repeating: 0, count: maxFrames * channels)
        inPointers = .allocate(capacity: channels)
        outPointers = .allocate(capacity: channels)
        for c in 0..<channels {
            inPointers[c] = UnsafePointer(inPlanar + c * maxFrames)
            outPointers[c] = outPlanar + c * maxFrames
        }
        reset(rate: 1)
    }

    deinit {
        rubberband_delete(state)
        inPlanar.deallocate()
        outPlanar.deallocate()
        inInterleaved.deallocate()
        inPointers.deallocate()
        outPointers.deallocate()
    }

    /// Forgets all buffered audio and starts a new stretch at `rate` (clamped to ``rateRange``).
    /// Call on every seek, so the output is aligned with the new position.
    public func reset(rate newRate: Double) {
        rate = min(max(newRate.isNaN ? 1 : newRate, rateLimits.lowerBound), rateLimits.upperBound)
        rubberband_reset(state)
        rubberband_set_pitch_scale(state, pow(2, pitch / 1200))
        rubberband_set_time_ratio(state, 1 / rate)
        inputEnded = false
        framesConsumed = 0
        framesProduced = 0
        // Pad the start with silence and drop the delay, so output frame 0 is input frame 0.
        var pad = Int(rubberband_get_preferred_start_pad(state))
        for c in 0..<channels { (inPlanar + c * maxFrames).update(repeating: 0, count: maxFrames) }
        while pad > 0 {
            let n = min(pad, maxFrames)
            rubberband_process(state, inPointers, UInt32(n), 0)
            pad -= n
        }
        toDrop = Int(rubberband_get_start_delay(state))
    }

    /// Changes the rate from the next call on without a reset (the audio already inside the
    /// stretcher keeps the old rate). Clamped to ``rateLimits``.
    public func setRate(_ newRate: Double) {
        let r = min(max(newRate.isNaN ? 1 : newRate, rateLimits.lowerBound), rateLimits.upperBound)
        guard r != rate else { return }
        rate = r
        rubberband_set_time_ratio(state, 1 / r)
    }

    /// Fills up to `frameCount` interleaved frames of stretched audio into `output`, pulling
    /// interleaved source frames with `pull(buffer, maxFrames) -> framesRead` (0 at the end).
    /// Returns the frames written; fewer than asked only when the source and the stretcher are
    /// both exhausted.
    public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int,
                       pull: (UnsafeMutablePointer<Float>, Int) -> Int) -> Int {
        var written = 0
        while written < frameCount {
            let available = Int(rubberband_available(state))
            if available > 0 {
                if toDrop > 0 {
                    let n = min(toDrop, available, maxFrames)
                    _ = rubberband_retrieve(state, outPointers, UInt32(n))
                    toDrop -= n
                    continue
                }
                var n = min(available, frameCount - written, maxFrames)
                if inputEnded {
                    // The stretch of N input frames is N / rate frames: drop the flushed tail beyond it.
                    let total = Int64((Double(framesConsumed) / rate).rounded())
                    n = Int(min(Int64(n), max(0, total - framesProduced)))
                    if n == 0 { break }
                }
                let got = Int(rubberband_retrieve(state, outPointers, UInt32(n)))
                let ch = channels
                for f in 0..<got {
                    for c in 0..<ch { output[(written + f) * ch + c] = outPlanar[c * maxFrames + f] }
                }
                written += got
                framesProduced += Int64(got)
                continue
            }
            if available < 0 { break }
            if inputEnded {
                // The source is over but the stretcher still holds its tail: push silence through
                // until the whole stretch (N input frames → N / rate output frames) is out.
                let total = Int64((Double(framesConsumed) / rate).rounded())
                if framesProduced >= total { break }
                let required = max(1, min(Int(rubberband_get_samples_required(state)), maxFrames))
                for c in 0..<channels { (inPlanar + c * maxFrames).update(repeating: 0, count: required) }
                rubberband_process(state, inPointers, UInt32(required), 0)
                continue
            }
            let required = max(1, min(Int(rubberband_get_samples_required(state)), maxFrames))
            let got = pull(inInterleaved, required)
            let ch = channels
            for f in 0..<got {
                for c in 0..<ch { inPlanar[c * maxFrames + f] = inInterleaved[f * ch + c] }
            }
            framesConsumed += Int64(got)
            if got == 0 {
                inputEnded = true
            } else {
                rubberband_process(state, inPointers, UInt32(got), 0)
            }
        }
        return written
    }
}
