// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
@testable import TonearmPlayback
import TonearmTestSupport

/// A crossfade into a file of another channel layout (4.0 after quad): the overlap is in the
/// outgoing file's layout, and the incoming file's channels go onto it by position — its centre
/// between the front pair, its rear centre between the rear pair — as the player node puts its
/// rest (copied by index, the centre faded in on the rear-left channel).
@Suite(.offThePool) struct CrossfadeLayoutTests {
    /// A 1 s float WAV in `layout`, channel `c` holding `values[c]` throughout, at `rate`.
    static func constant(_ path: String, layout: String, values: [Float], rate: Int) throws -> AudioFile {
        let exprs = values.map { "\($0)" }.joined(separator: "|")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(exprs):c=\(layout):s=\(rate):d=1", "-c:a", "pcm_f32le", path])
        return try AudioFile(path: path)
    }

    @Test(arguments: [48000, 44100]) func incomingChannelsGoOntoTheOutgoingLayout(incomingRate: Int) throws {
        let dir = try TempDir("crossfade-layout")
        defer { dir.remove() }
        let outgoing = try Self.constant(dir.file("quad.wav"), layout: "quad", values: [0.5, 0.5, 0.5, 0.5], rate: 48000)
        let incoming = try Self.constant(dir.file("four.wav"), layout: "4.0", values: [0.1, 0.2, 0.4, 0.8], rate: incomingRate)
        #expect(outgoing.processingFormat.channelLayout == .quad)
        #expect(incoming.processingFormat.channelLayout == AudioChannelLayout(named: "4.0"))
        // The outgoing side silent (gain 0): what is heard is the incoming side fading in.
        let frames = 24_000
        let source = try CrossfadeSource(outgoing: outgoing, outGain: 0, incoming: incoming, inGain: 1,
                                         frames: AudioFramePosition(frames))
        try source.seek(toFrame: 0)
        var out = [Float](repeating: 0, count: frames * 4)
        let n = try out.withUnsafeMutableBufferPointer { try source.readInterleaved(into: $0.baseAddress!, frameCount: frames) }
        #expect(n == frames)
        let half = Float(0.5).squareRoot()
        let expected: [Float] = [0.1 + 0.4 * half, 0.2 + 0.4 * half, 0.8 * half, 0.8 * half]
        // Past the resampler's start (for 44.1 kHz), the fade-in of each mixed constant.
        for f in stride(from: 2000, to: frames, by: 997) {
            let fadeIn = Float(sin((Double(f) + 0.5) / Double(frames) * .pi / 2))
            for c in 0..<4 {
                #expect(abs(out[f * 4 + c] - expected[c] * fadeIn) < 1e-3,
                        "frame \(f) channel \(c): \(out[f * 4 + c]), not \(expected[c] * fadeIn)")
            }
        }
    }
}
