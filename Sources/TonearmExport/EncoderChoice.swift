// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// The encoder a re-encoding preset uses for a file type: FFmpeg's encoder name, its bit rate
/// and, for PCM and lossless output, the bits per sample.
struct EncoderChoice: Sendable, Hashable {
    var encoderName: String
    var bitRate: Int?
    var bits: Int?

    /// The choice for `preset` writing `fileType` (`sourceBits`: the source's bits per sample,
    /// for PCM depth), or nil when the preset does not write the type or FFmpeg lacks the encoder.
    static func choose(preset: ExportPreset, fileType: ExportFileType, sourceBits: Int?) -> EncoderChoice? {
        guard preset.supportedFileTypes.contains(fileType) else { return nil }
        let deep = (sourceBits ?? 16) > 16
        let c: EncoderChoice?
        switch preset {
        case .passthrough: c = nil
        case .appleM4A: c = EncoderChoice(encoderName: "aac", bitRate: 256_000)
        case .lowQuality, .mediumQuality, .highestQuality:
            let level = preset == .lowQuality ? 0 : preset == .mediumQuality ? 1 : 2
            switch fileType {
            case .mp3: c = EncoderChoice(encoderName: "libmp3lame", bitRate: [96_000, 160_000, 320_000][level])
            case .ogg, .opus: c = EncoderChoice(encoderName: "libopus", bitRate: [48_000, 96_000, 192_000][level])
            default: c = EncoderChoice(encoderName: "aac", bitRate: [64_000, 128_000, 256_000][level])
            }
        case .lossless:
            switch fileType {
            case .m4a, .mp4, .caf: c = EncoderChoice(encoderName: "alac", bits: deep ? 24 : 16)
            default: c = EncoderChoice(encoderName: "flac", bits: deep ? 24 : 16)
            }
        case .pcm:
            switch fileType {
            case .aiff: c = EncoderChoice(encoderName: deep ? "pcm_s24be" : "pcm_s16be", bits: deep ? 24 : 16)
            default: c = EncoderChoice(encoderName: deep ? "pcm_s24le" : "pcm_s16le", bits: deep ? 24 : 16)
            }
        case .mp3: c = EncoderChoice(encoderName: "libmp3lame", bitRate: 256_000)
        case .opus: c = EncoderChoice(encoderName: "libopus", bitRate: 160_000)
        }
        guard let c, avcodec_find_encoder_by_name(c.encoderName) != nil else { return nil }
        return c
    }
}
