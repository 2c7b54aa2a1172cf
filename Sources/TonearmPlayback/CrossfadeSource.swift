// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCodecs
import TonearmCore
import TonearmEngine

/// The overlap of a crossfade as one source: the last `frames` frames of the outgoing file
/// fading out, mixed with the first `frames` frames of the incoming file fading in (equal-power
/// curves, each side at its own ReplayGain). A queue schedules it between the outgoing file's
/// body and the incoming file's rest, on the same player node, so the whole transition stays on
/// one gapless timeline.
///
/// Both files must have the same sample rate and channel count (the queue only crossfades those).
///
/// Threading: as every ``PlaybackSource``: only the node's decoder thread reads it.
final class CrossfadeSource: PlaybackSource, @unchecked Sendable {
    let sourceFormat: AudioFormat
    let frameLength: AudioFramePosition
    private let outgoing: AudioFile
    private let incoming: AudioFile
    private let outStart: AudioFramePosition
    private let outGain: Float
    private let inGain: Float
    private var position: AudioFramePosition = 0
    private var scratch: [Float] = []

    /// - Parameters: `outgoing`/`incoming`: files opened for this source alone (it seeks them).
    init(outgoing: AudioFile, outGain: Float, incoming: AudioFile, inGain: Float, frames: AudioFramePosition) {
        self.outgoing = outgoing
        self.incoming = incoming
        self.outGain = outGain
        self.inGain = inGain
        sourceFormat = outgoing.processingFormat
        frameLength = max(0, min(frames, outgoing.length, incoming.length))
        outStart = outgoing.length - frameLength
    }

    func seek(toFrame frame: AudioFramePosition) throws {
        position = min(max(0, frame), frameLength)
        try outgoing.seek(toFrame: outStart + position)
        try incoming.seek(toFrame: position)
    }

    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int {
        let n = Int(min(AudioFramePosition(frameCount), frameLength - position))
        guard n > 0 else { return 0 }
        let ch = sourceFormat.channelCount
        let a = try outgoing.readInterleaved(into: buffer, frameCount: n)
        if a < n { (buffer + a * ch).update(repeating: 0, count: (n - a) * ch) }
        if scratch.count < n * ch { scratch = Array(repeating: 0, count: n * ch) }
        let b = try scratch.withUnsafeMutableBufferPointer { try incoming.readInterleaved(into: $0.baseAddress!, frameCount: n) }
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
