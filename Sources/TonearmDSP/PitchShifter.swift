// SPDX-License-Identifier: GPL-3.0-or-later
import CRubberBand
import Foundation
import TonearmCore

/// Shifts the pitch of audio without changing its duration (librubberband, real-time mode,
/// time ratio 1): N frames in, N frames out — the kernel of the time-pitch node inside a graph.
///
/// The output lags the input by ``latency`` frames (rubberband's analysis delay plus a reserve of
/// two blocks, at most 2048 frames, output as silence at the start), so that each block can
/// always be served in full. About 100 ms at 48 kHz with 1024-frame blocks.
///
/// Threading: one thread at a time (a render thread). Buffers are allocated at creation for
/// blocks of up to `maxFrames`; ``pitchScale`` may change between blocks (rubberband supports
/// that in real-time mode); processing allocates nothing of ours.
public final class PitchShifter: @unchecked Sendable {
    public let channels: Int
    public let sampleRate: Double
    public static let centsRange: ClosedRange<Double> = -2400...2400

    /// The pitch change in cents (100 to a semitone), −2400 … 2400.
    public var pitch: Double {
        didSet {
            pitch = min(max(pitch.isNaN ? 0 : pitch, Self.centsRange.lowerBound), Self.centsRange.upperBound)
            rubberband_set_pitch_scale(state, pow(2, pitch / 1200))
        }
    }
    /// Frames between an input frame and its output, known once output has started (0 before).
    public private(set) var latency: Int = 0

    private let state: RubberBandState
    private let maxFrames: Int
    private let planar: UnsafeMutablePointer<Float>
    private let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private var primed = false
    private var silentFrames = 0

    public init(sampleRate: Double, channels: Int, maxFrames: Int = 4096, pitch: Double = 0) {
        self.channels = channels
        self.sampleRate = sampleRate
        self.maxFrames = max(1, maxFrames)
        self.pitch = min(max(pitch, Self.centsRange.lowerBound), Self.centsRange.upperBound)
        let options = Int32(RubberBandOptionProcessRealTime.rawValue)
            | Int32(RubberBandOptionThreadingNever.rawValue)
            | Int32(RubberBandOptionPitchHighConsistency.rawValue)
            | Int32(RubberBandOptionEngineFiner.rawValue)
        state = rubberband_new(UInt32(sampleRate), UInt32(channels), options, 1.0, pow(2, self.pitch / 1200))
        rubberband_set_max_process_size(state, UInt32(self.maxFrames))
        planar = .allocate(capacity: self.maxFrames * channels)
        planar.initialize(repeating: 0, count: self.maxFrames * channels)
        pointers = .allocate(capacity: channels)
        for c in 0..<channels { pointers[c] = planar + c * self.maxFrames }
        reset()
    }

    deinit {
        rubberband_delete(state)
        planar.deallocate()
        pointers.deallocate()
    }

    /// Forgets buffered audio (call on seek); the next output starts after ``latency`` again.
    public func reset() {
        rubberband_reset(state)
        rubberband_set_pitch_scale(state, pow(2, pitch / 1200))
        primed = false
        silentFrames = 0
        latency = 0
    }

    /// Replaces `frames` interleaved frames in place by the pitch-shifted stream. Any `frames`.
    public func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int) {
        var done = 0
        let ch = channels
        while done < frames {
            let n = min(maxFrames, frames - done)
            let block = buffer + done * ch
            for f in 0..<n { for c in 0..<ch { planar[c * maxFrames + f] = block[f * ch + c] } }
            let inputs = UnsafeRawPointer(pointers).assumingMemoryBound(to: UnsafePointer<Float>?.self)
            rubberband_process(state, inputs, UInt32(n), 0)
            let available = Int(rubberband_available(state))
            if !primed && available >= n + min(2 * maxFrames, 2048) {
                // Start with a reserve (two blocks, at most 2048 frames), so later blocks are
                // always served in full.
                primed = true
                latency = silentFrames + (n - min(n, available)) + Int(rubberband_get_start_delay(state))
            }
            var got = 0
            if primed {
                got = Int(rubberband_retrieve(state, pointers, UInt32(min(n, max(0, available)))))
            }
            // Silence at the start (and, should rubberband ever fall short, in place of the missing frames).
            let silent = n - got
            if !primed { silentFrames += silent }
            for f in 0..<silent { for c in 0..<ch { block[f * ch + c] = 0 } }
            for f in 0..<got { for c in 0..<ch { block[(silent + f) * ch + c] = planar[c * maxFrames + f] } }
            done += n
        }
    }
}
