// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCodecs
import TonearmCore
import TonearmEngine

/// The overlap of a crossfade as one source: the last `frames` frames of the outgoing file
/// fading out, mixed with the start of the incoming file fading in (equal-power curves, each
/// side at its own ReplayGain). A queue schedules it between the outgoing file's body and the
/// incoming file's rest, on the same player node, so the whole transition stays on one gapless
/// timeline.
///
/// The source is in the outgoing file's format. An incoming file of another sample rate or
/// channel count (a 48 kHz Opus after a 44.1 kHz MP3) is converted to it as it is read, by a
/// resampler made with the source; the overlap then covers ``incomingFrameLength`` frames of
/// the incoming file, where its rest begins. One of another channel layout is put onto the
/// outgoing file's by position first (``ChannelMix``, as the player node does for its rest).
///
/// Threading: as every ``PlaybackSource``: only the node's decoder thread reads it (the
/// conversion runs there too, in buffers allocated once, at creation).
final class CrossfadeSource: PlaybackSource, @unchecked Sendable {
    let sourceFormat: AudioFormat
    /// The overlap's length, in frames of the outgoing file (this source's frames).
    let frameLength: AudioFramePosition
    /// The frames of the incoming file the overlap plays: its rest starts there.
    let incomingFrameLength: AudioFramePosition
    private let outgoing: AudioFile
    private let incoming: AudioFile
    private let outStart: AudioFramePosition
    private let outGain: Float
    private let inGain: Float
    private var position: AudioFramePosition = 0
    private var scratch: [Float] = []
    private let resampler: IncomingResampler?

    /// - Parameters: `outgoing`/`incoming`: files opened for this source alone (it seeks them);
    ///   `frames`: the overlap in frames of the outgoing file, shortened to what both files hold.
    /// - Throws: ``TonearmError/invalidArgument(_:)`` when the incoming file cannot be converted
    ///   to the outgoing file's format.
    init(outgoing: AudioFile, outGain: Float, incoming: AudioFile, inGain: Float, frames: AudioFramePosition) throws {
        self.outgoing = outgoing
        self.incoming = incoming
        self.outGain = outGain
        self.inGain = inGain
        sourceFormat = outgoing.processingFormat
        let ratio = incoming.processingFormat.sampleRate / sourceFormat.sampleRate
        let incomingAvailable = AudioFramePosition((Double(incoming.length) / ratio).rounded(.down))
        frameLength = max(0, min(frames, outgoing.length, incomingAvailable))
        incomingFrameLength = min(incoming.length, AudioFramePosition((Double(frameLength) * ratio).rounded()))
        outStart = outgoing.length - frameLength
        let inFormat = incoming.processingFormat
        let mix = ChannelMix(from: inFormat, to: sourceFormat)
        if inFormat.sampleRate != sourceFormat.sampleRate || inFormat.channelCount != sourceFormat.channelCount || mix != nil {
            resampler = try IncomingResampler(from: inFormat, to: sourceFormat, mix: mix)
        } else {
            resampler = nil
        }
    }

    func seek(toFrame frame: AudioFramePosition) throws {
        position = min(max(0, frame), frameLength)
        try outgoing.seek(toFrame: outStart + position)
        let ratio = incoming.processingFormat.sampleRate / sourceFormat.sampleRate
        try incoming.seek(toFrame: min(incoming.length, AudioFramePosition((Double(position) * ratio).rounded())))
        resampler?.reset()
    }

    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int {
        let n = Int(min(AudioFramePosition(frameCount), frameLength - position))
        guard n > 0 else { return 0 }
        let ch = sourceFormat.channelCount
        let a = try outgoing.readInterleaved(into: buffer, frameCount: n)
        if a < n { (buffer + a * ch).update(repeating: 0, count: (n - a) * ch) }
        if scratch.count < n * ch { scratch = Array(repeating: 0, count: n * ch) }
        let b = try scratch.withUnsafeMutableBufferPointer { s in
            if let resampler { return try resampler.read(from: incoming, into: s.baseAddress!, frameCount: n) }
            return try incoming.readInterleaved(into: s.baseAddress!, frameCount: n)
        }
        if b < n { for i in (b * ch)..<(n * ch) { scratch[i] = 0 } }
        let total = Double(frameLength)
        for f in 0..<n {
            let t = (Double(position) + Double(f) + 0.5) / total
            let fadeOut = Float(cos(t * .pi / 2)) * outGain
            let fadeIn = Float(sin(t * .pi / 2)) * inGain
            for c in 0..<ch { buffer[f * ch + c] = buffer[f * ch + c] * fadeOut + scratch[f * ch + c] * fadeIn }
        }
        position += AudioFramePosition(n)
        return n
    }

    func takeWarnings() -> [AudioWarning] { outgoing.takeWarnings() + incoming.takeWarnings() }
}

/// Reads a file converted to another sample rate and channel count (libswresample; a layout
/// that differs is first mixed onto the output's by a ``ChannelMix``; mono, though, is mapped as
/// the player node maps it, `remapChannels`: on every channel at full level, so that the overlap
/// and the item's rest after it match), in pieces of a fixed size: the input and output buffers
/// are allocated once, at creation.
///
/// Threading: one thread at a time (the node's decoder thread).
private final class IncomingResampler {
    /// Converts the rate, and the channels unless the input is mono (nil: nothing to convert).
    private let converter: FormatConverter?
    /// Input frames read from the file per conversion.
    private let piece = 1024
    private let input: UnsafeMutablePointer<Float>
    /// The input put onto the output's layout (with a mix).
    private let mix: ChannelMix?
    private let mixed: UnsafeMutablePointer<Float>?
    /// Converted frames, `convertedChannels` each.
    private let output: UnsafeMutablePointer<Float>
    private let outputCapacity: Int
    /// 1 for a mono input without a mix (mapped on every channel afterwards), else the output's.
    private let convertedChannels: Int
    private let outChannels: Int
    /// Converted frames in `output` not handed out yet: `pending` frames from `start`.
    private var start = 0, pending = 0
    private var ended = false

    init(from input: AudioFormat, to output: AudioFormat, mix: ChannelMix?) throws {
        // What the converter takes: the mix's result (the output's channels) or the file's own.
        let inChannels = mix == nil ? input.channelCount : output.channelCount
        let cc = mix == nil && input.channelCount == 1 ? 1 : output.channelCount
        let c = input.sampleRate == output.sampleRate && cc == inChannels ? nil
            : try FormatConverter(from: .interleavedFloat(sampleRate: input.sampleRate, channels: inChannels),
                                  to: .interleavedFloat(sampleRate: output.sampleRate, channels: cc))
        converter = c
        convertedChannels = cc
        outChannels = output.channelCount
        outputCapacity = (c?.maximumOutputFrames(forInput: piece) ?? piece) + 64
        self.input = .allocate(capacity: piece * input.channelCount)
        self.mix = mix
        mixed = mix == nil ? nil : .allocate(capacity: piece * output.channelCount)
        self.output = .allocate(capacity: outputCapacity * max(cc, inChannels, input.channelCount))
    }

    deinit {
        input.deallocate()
        mixed?.deallocate()
        output.deallocate()
    }

    /// Forgets what was converted (after the file was seeked).
    func reset() {
        converter?.reset()
        start = 0
        pending = 0
        ended = false
    }

    /// Up to `frameCount` converted frames of `file` from where it is; fewer only at its end.
    func read(from file: AudioFile, into out: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int {
        var done = 0
        while done < frameCount {
            if pending > 0 {
                let n = min(pending, frameCount - done)
                remapChannels(output + start * convertedChannels, channels: convertedChannels, into: out + done * outChannels,
                              channels: outChannels, frames: n)
                start += n
                pending -= n
                done += n
                continue
            }
            if ended { break }
            start = 0
            guard let converter else {
                // The same rate (and, after the mix, the same channels): no conversion.
                if let mix {
                    let got = try file.readInterleaved(into: input, frameCount: piece)
                    mix.apply(input, into: output, frames: got)
                    pending = got
                } else {
                    pending = try file.readInterleaved(into: output, frameCount: piece)
                }
                if pending == 0 { ended = true }
                continue
            }
            let got = try file.readInterleaved(into: input, frameCount: piece)
            if got == 0 {
                ended = true
                pending = converter.convert(nil, frames: 0, into: output, capacity: outputCapacity)
            } else if let mix, let mixed {
                mix.apply(input, into: mixed, frames: got)
                pending = converter.convert(mixed, frames: got, into: output, capacity: outputCapacity)
            } else {
                pending = converter.convert(input, frames: got, into: output, capacity: outputCapacity)
            }
        }
        return done
    }
}
