// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// A feedback delay (the DSP of `AVAudioUnitDelay`) over interleaved Float32 audio.
///
/// Per channel: `wet[n] = LP(line[n − D])`, `line[n] = x[n] + feedback · wet[n]`,
/// `out[n] = (1 − mix) · x[n] + mix · wet[n]`, where LP is a one-pole low-pass in the loop (off —
/// exactly unity — when the cutoff is at or above Nyquist). So an impulse comes back at D, 2D, 3D…
/// with amplitudes mix · feedbackᵏ (k = 0, 1, 2…), each repeat a little darker when the cutoff is low.
///
/// - ``delayTime`` changes glide (exponentially, ~40 ms time constant) and the line is read with
///   linear interpolation, so moving it does not click (it bends the pitch briefly, like tape).
/// - ``wetDryMix`` is smoothed over 15 ms.
///
/// Threading: a noncopyable value, so it has one owner — one thread — at a time: it is moved
/// (to a render thread), never shared. The line is allocated in `init` for
/// ``maximumDelayTime``; processing and setting parameters allocate nothing.
///
/// `@unchecked Sendable`: its line and filter state live in a class instance that no other value
/// can reach — the type is `~Copyable`, so no copy can share it — and moving the delay to another
/// thread moves that storage with it.
public struct Delay: ~Copyable, @unchecked Sendable {
    /// The longest delay, in seconds.
    public static let maximumDelayTime = 2.0
    public static let delayTimeRange: ClosedRange<Double> = 0...2
    public static let feedbackRange: ClosedRange<Double> = -100...100
    public static let cutoffRange: ClosedRange<Double> = 10...24000

    public let sampleRate: Double
    public let channels: Int
    /// Seconds between the input and its first repeat (0 … 2). Glides.
    public var delayTime: Double { didSet { delayTime = Self.delayTimeRange.clamp(delayTime); targetDelay = Self.frames(delayTime, sampleRate) } }
    /// Percent of each repeat fed back (−100 … 100).
    public var feedback: Double { didSet { feedback = Self.feedbackRange.clamp(feedback) } }
    /// Cutoff of the loop's low-pass, in Hz (10 … Nyquist; at or above Nyquist the filter is off).
    public var lowPassCutoff: Double { didSet { lowPassCutoff = Self.cutoffRange.clamp(lowPassCutoff); designFilter() } }
    /// Dry → wet crossfade in percent. Smoothed.
    public var wetDryMix: Double {
        didSet {
            wetDryMix = (0...100).clamp(wetDryMix)
            mixTarget = Float(wetDryMix / 100)
            mixRamp = smoothingFrames
            mixDelta = (mixTarget - mixCurrent) / Float(smoothingFrames)
        }
    }

    private let storage: Storage
    private let capacity: Int
    private var writeIndex = 0
    private var currentDelay: Double
    private var targetDelay: Double
    private let glide: Double
    private var filterA: Float = 1
    private var mixCurrent: Float
    private var mixTarget: Float
    private var mixDelta: Float = 0
    private var mixRamp = 0
    private let smoothingFrames: Int

    public init(delayTime: Double = 1, feedback: Double = 50, lowPassCutoff: Double = 15000, wetDryMix: Double = 100,
                sampleRate: Double, channels: Int) {
        precondition(sampleRate > 0 && channels > 0, "invalid delay format")
        self.sampleRate = sampleRate
        self.channels = channels
        self.delayTime = Self.delayTimeRange.clamp(delayTime)
        self.feedback = Self.feedbackRange.clamp(feedback)
        self.lowPassCutoff = Self.cutoffRange.clamp(lowPassCutoff)
        self.wetDryMix = (0...100).clamp(wetDryMix)
        capacity = Int((Self.maximumDelayTime * sampleRate).rounded(.up)) + 4
        storage = Storage(count: capacity * channels, channels: channels)
        currentDelay = Self.frames(self.delayTime, sampleRate)
        targetDelay = currentDelay
        glide = 1 - exp(-1 / (0.04 * sampleRate))
        smoothingFrames = max(1, Int(0.015 * sampleRate))
        mixTarget = Float(self.wetDryMix / 100)
        mixCurrent = mixTarget
        designFilter()
    }

    /// `seconds` in frames, snapped to a whole frame when within 1e-6 of one (0.01 s · 48 kHz is 480.00000000000006).
    static func frames(_ seconds: Double, _ sampleRate: Double) -> Double {
        let f = seconds * sampleRate
        return abs(f - f.rounded()) < 1e-6 ? f.rounded() : f
    }

    /// Clears the line and the filters and ends any glide (call on seek).
    public mutating func resetState() {
        storage.line.update(repeating: 0, count: capacity * channels)
        storage.filter.update(repeating: 0, count: channels)
        currentDelay = targetDelay
        mixCurrent = mixTarget
        mixRamp = 0
    }

    private mutating func designFilter() {
        filterA = lowPassCutoff >= sampleRate / 2 ? 1 : Float(1 - exp(-2 * Double.pi * lowPassCutoff / sampleRate))
    }

    /// Delays `frames` interleaved frames in place. Allocates nothing.
    public mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        precondition(channels == self.channels, "delay made for \(self.channels) channels, given \(channels)")
        let ch = channels
        let line = storage.line
        let lp = storage.filter
        let fb = Float(feedback / 100)
        let a = filterA
        let cap = capacity
        for f in 0..<frames {
            if currentDelay != targetDelay {
                currentDelay += (targetDelay - currentDelay) * glide
                if abs(targetDelay - currentDelay) < 1e-4 { currentDelay = targetDelay }
            }
            if mixRamp > 0 {
                mixRamp -= 1
                mixCurrent = mixRamp == 0 ? mixTarget : mixCurrent + mixDelta
            }
            // Read position D frames back; D ≥ 1 in the line (a 0 delay reads the current input).
            let whole = Int(currentDelay)
            let frac = Float(currentDelay - Double(whole))
            var r0 = writeIndex - whole
            if r0 < 0 { r0 += cap }
            var r1 = r0 - 1
            if r1 < 0 { r1 += cap }
            let frame = buffer + f * ch
            let wet = mixCurrent
            for c in 0..<ch {
                let x = frame[c]
                // Frame r0 is the newest of the two; at a zero delay it is this frame's input.
                let s0 = whole == 0 ? x : line[r0 * ch + c]
                let s1 = line[r1 * ch + c]
                let tap = frac == 0 ? s0 : s0 + (s1 - s0) * frac
                let y: Float
                if a == 1 { y = tap } else { y = lp[c] + (tap - lp[c]) * a + 1e-25; lp[c] = y }
                line[writeIndex * ch + c] = x + fb * y
                frame[c] = wet == 0 ? x : x * (1 - wet) + y * wet
            }
            writeIndex += 1
            if writeIndex == cap { writeIndex = 0 }
        }
    }

    /// The line and the filter states: held by exactly one (noncopyable) ``Delay``.
    final class Storage {
        let line: UnsafeMutablePointer<Float>
        let filter: UnsafeMutablePointer<Float>
        init(count: Int, channels: Int) {
            line = .allocate(capacity: count)
            line.initialize(repeating: 0, count: count)
            filter = .allocate(capacity: channels)
            filter.initialize(repeating: 0, count: channels)
        }
        deinit { line.deallocate(); filter.deallocate() }
    }
}

extension ClosedRange where Bound == Double {
    /// `value` limited to the range (NaN becomes the lower bound).
    func clamp(_ value: Double) -> Double {
        value.isNaN ? lowerBound : Swift.min(Swift.max(value, lowerBound), upperBound)
    }
}
