// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// Converts interleaved Float32 audio between sample rates and channel counts (libswresample):
/// what a source uses to deliver a file in the engine's format.
///
/// Threading: one thread at a time (a decoder thread). Allocates its context at creation; `convert`
/// allocates nothing of ours.
public final class FormatConverter: @unchecked Sendable {
    public let input: AudioFormat
    public let output: AudioFormat
    private var swr: OpaquePointer?

    /// Creates a converter. Throws ``TonearmError/invalidArgument(_:)`` for invalid formats.
    public init(from input: AudioFormat, to output: AudioFormat) throws {
        guard input.isValid, output.isValid else {
            throw TonearmError.invalidArgument("cannot convert \(input) to \(output)")
        }
        self.input = input
        self.output = output
        var inLayout = tonearm_layout_default(Int32(input.channelCount))
        var outLayout = tonearm_layout_default(Int32(output.channelCount))
        var ctx: OpaquePointer?
        let rc = swr_alloc_set_opts2(&ctx, &outLayout, AV_SAMPLE_FMT_FLT, Int32(output.sampleRate),
                                     &inLayout, AV_SAMPLE_FMT_FLT, Int32(input.sampleRate), 0, nil)
        av_channel_layout_uninit(&inLayout)
        av_channel_layout_uninit(&outLayout)
        guard rc >= 0, ctx != nil, swr_init(ctx) >= 0 else {
            if ctx != nil { swr_free(&ctx) }
            throw TonearmError.invalidArgument("libswresample refused \(input) → \(output)")
        }
        swr = ctx
    }

    deinit { if swr != nil { swr_free(&swr) } }

    /// The most output frames `inputFrames` more input can yield (size output buffers with it).
    public func maximumOutputFrames(forInput inputFrames: Int) -> Int {
        Int(swr_get_out_samples(swr, Int32(inputFrames))) + 16
    }

    /// Converts `frames` input frames (nil input flushes what the resampler holds) into `out`,
    /// which has room for `capacity` frames; returns the frames written.
    public func convert(_ inputSamples: UnsafePointer<Float>?, frames: Int,
                        into out: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        var outPlane: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(out).assumingMemoryBound(to: UInt8.self)
        var inPlane: UnsafeMutablePointer<UInt8>? = inputSamples.map {
            UnsafeMutableRawPointer(mutating: $0).assumingMemoryBound(to: UInt8.self)
        }
        let n = withUnsafeMutablePointer(to: &outPlane) { o in
            withUnsafeMutablePointer(to: &inPlane) { i in
                tonearm_swr_convert(swr, o, Int32(capacity), inputSamples == nil ? nil : i, Int32(frames))
            }
        }
        return max(0, Int(n))
    }

    /// Forgets buffered audio (after a seek).
    public func reset() {
        // Re-initialising drops the resampler's history.
        swr_init(swr)
    }
}
