// SPDX-License-Identifier: GPL-3.0-or-later

/// An MPEG audio (layer I, II, III) frame header.
struct MPEGAudioHeader: Equatable {
    /// 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5).
    var version: Int
    /// 1, 2 or 3 (ADTS, whose layer bits are 0, is not parsed here).
    var layer: Int
    /// Bits per second (0: free format).
    var bitRate: Int
    var sampleRate: Int
    var channels: Int
    /// Bytes of the frame, header included (0: free format).
    var frameLength: Int
    var samplesPerFrame: Int
    /// Bytes of layer III side information after the header (where a Xing tag starts).
    var sideInfoSize: Int

    private static let bitRates: [[Int]] = [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],  // MPEG-1 layer I
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],     // MPEG-1 layer II
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],      // MPEG-1 layer III
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],     // MPEG-2/2.5 layer I
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],          // MPEG-2/2.5 layers II, III
    ]

    /// Parses 4 bytes; nil unless they are a valid header (sync, version, layer, rates).
    init?(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        let v = (b1 >> 3) & 3, l = (b1 >> 1) & 3
        let bi = Int(b2 >> 4), si = Int((b2 >> 2) & 3)
        guard v != 1, l != 0, bi != 15, si != 3 else { return nil }
        version = v == 3 ? 1 : v == 2 ? 2 : 25
        layer = 4 - Int(l)
        let table = version == 1 ? layer - 1 : layer == 1 ? 3 : 4
        bitRate = Self.bitRates[table][bi] * 1000
        sampleRate = [44100, 48000, 32000][si] / (version == 1 ? 1 : version == 2 ? 2 : 4)
        channels = b3 >> 6 == 3 ? 1 : 2
        let padding = Int((b2 >> 1) & 1)
        samplesPerFrame = layer == 1 ? 384 : layer == 3 && version != 1 ? 576 : 1152
        if bitRate == 0 {
            frameLength = 0
        } else if layer == 1 {
            frameLength = (12 * bitRate / sampleRate + padding) * 4
        } else {
            frameLength = samplesPerFrame / 8 * bitRate / sampleRate + padding
        }
        sideInfoSize = layer != 3 ? 0 : version == 1 ? (channels == 1 ? 17 : 32) : (channels == 1 ? 9 : 17)
    }
}
