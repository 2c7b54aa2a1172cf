// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// Plays audio faster or slower with its pitch following (a tape's varispeed): a resampler that
/// reads its source at ``rate`` source frames per output frame, with 4-point cubic (Hermite)
/// interpolation. Rate 2 is an octave up and half as long; 0.5 an octave down and twice as long.
///
/// It pulls its source (like ``TimeStretcher``), so it belongs where the source can be read at any
/// speed — a player's decoder thread — not inside a pull graph, where each node renders N frames
/// from N frames.
///
/// Threading: one thread at a time. The input window is allocated in `init`; ``render(into:frameCount:pull:)``
/// and setting ``rate`` allocate nothing. Above rate 1 no anti-alias filter is applied.
///
/// `@unchecked Sendable` so that it can be handed to the one thread that uses it (built on the
/// control plane, then used by a decoder or render thread alone): its owner — a ``DSPSlot``
/// or a decoder — never lets two threads use it at once. A reference type, so a copy of it is
/// visibly the same resampler.
public final class Varispeed: @unchecked Sendable {
    public static let rateRange: ClosedRange<Double> = 0.25...4
    public let channels: Int
    /// Source frames per output frame (0.25 … 4). May change between calls.
    public var rate: Double {
        didSet { rate = rate.isNaN ? 1 : min(max(rate, Self.rateRange.lowerBound), Self.rateRange.upperBound) }
    }

    private let capacity: Int
    private let window: UnsafeMutablePointer<Float>
    private var have = 0        // frames valid in window
    private var position = 1.0  // read position in window (frame index; window[0] is one frame of history)
    private var ended = false
    private var endFrames = 0   // zero frames appended after the end, for the interpolator's tail

    public init(channels: Int, rate: Double = 1, maxFrames: Int = 4096) {
        self.channels = channels
        self.rate = min(max(rate, Self.rateRange.lowerBound), Self.rateRange.upperBound)
        capacity = maxFrames + 8
        window = .allocate(capacity: capacity * channels)
        window.initialize(repeating: 0, count: capacity * channels)
        reset()
    }

    deinit { window.deallocate() }

    /// Forgets buffered audio (call on seek).
    public func reset() {
        window.update(repeating: 0, count: capacity * channels)
        have = 1
        position = 1
        ended = false
        endFrames = 0
    }

    /// Writes up to `frameCount` interleaved frames, pulling interleaved source frames with
    /// `pull(buffer, maxFrames) -> framesRead` (0 at the end). Returns fewer only at the end.
    public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int,
                       pull: (UnsafeMutablePointer<Float>, Int) -> Int) -> Int {
        let ch = channels
        var written = 0
        while written < frameCount {
            let i = Int(position)
            if i + 2 >= have {
                if ended && endFrames >= 3 { break }
                // Keep frames from i − 1 on, then refill.
                let keep = max(0, have - (i - 1))
                if i - 1 > 0 {
                    (window).update(from: window + (i - 1) * ch, count: keep * ch)
                    have = keep
                    position -= Double(i - 1)
                }
                let room = capacity - have
                if !ended {
                    let got = pull(window + have * ch, room)
                    if got == 0 { ended = true } else { have += got; continue }
                }
                // Ended: append silence so the last frames can be interpolated.
                let n = min(room, 4)
                (window + have * ch).update(repeating: 0, count: n * ch)
                have += n
                endFrames += n
                continue
            }
            let t = Float(position - Double(i))
            for c in 0..<ch {
                let y0 = window[(i - 1) * ch + c], y1 = window[i * ch + c]
                let y2 = window[(i + 1) * ch + c], y3 = window[(i + 2) * ch + c]
                let a = (y3 - y0) * 0.5 + (y1 - y2) * 1.5
                let b = y0 - y1 * 2.5 + y2 * 2 - y3 * 0.5
                let m = (y2 - y0) * 0.5
                output[written * ch + c] = ((a * t + b) * t + m) * t + y1
            }
            written += 1
            position += rate
        }
        return written
    }
}
