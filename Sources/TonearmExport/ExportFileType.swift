// SPDX-License-Identifier: GPL-3.0-or-later

/// A file type an export can write (the counterpart of `AVFileType`). Each names one FFmpeg
/// muxer, a file extension, and the codecs it holds unchanged by a passthrough export.
public enum ExportFileType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// MPEG-4 audio (`.m4a`, iTunes style): AAC or ALAC.
    case m4a
    /// MPEG-4 (`.mp4`): AAC, ALAC, MP3, Opus.
    case mp4
    /// Core Audio Format (`.caf`): AAC, ALAC, Opus, MP3, FLAC, PCM.
    case caf
    /// RIFF WAVE (`.wav`): little-endian PCM only.
    case wav
    /// AIFF (`.aiff`): big-endian PCM only.
    case aiff
    /// Native FLAC (`.flac`).
    case flac
    /// MPEG audio layer 3 (`.mp3`).
    case mp3
    /// Ogg (`.ogg`): Vorbis, Opus, FLAC.
    case ogg
    /// Ogg Opus (`.opus`).
    case opus
    /// Matroska audio (`.mka`): nearly any audio codec.
    case mka
    /// Raw AAC in ADTS frames (`.aac`).
    case aac

    public var description: String { rawValue }

    /// The usual file extension (without the dot).
    public var fileExtension: String {
        switch self {
        case .aiff: "aiff"
        default: rawValue
        }
    }

    /// The file type an extension names (case-insensitive; `aif`, `oga`, `m4b`, `mkv` accepted), or nil.
    public init?(pathExtension ext: String) {
        switch ext.lowercased() {
        case "m4a", "m4b": self = .m4a
        case "mp4", "m4v": self = .mp4
        case "caf": self = .caf
        case "wav", "wave": self = .wav
        case "aif", "aiff", "aifc": self = .aiff
        case "flac": self = .flac
        case "mp3": self = .mp3
        case "ogg", "oga": self = .ogg
        case "opus": self = .opus
        case "mka", "mkv": self = .mka
        case "aac", "adts": self = .aac
        default: return nil
        }
    }

    /// FFmpeg's muxer for the type.
    var muxerName: String {
        switch self {
        case .m4a: "ipod"
        case .mp4: "mp4"
        case .caf: "caf"
        case .wav: "wav"
        case .aiff: "aiff"
        case .flac: "flac"
        case .mp3: "mp3"
        case .ogg: "ogg"
        case .opus: "opus"
        case .mka: "matroska"
        case .aac: "adts"
        }
    }

    /// The codecs (FFmpeg names) a passthrough export copies into this type unchanged. Narrower
    /// than what FFmpeg's muxers accept where players would not read the result (AAC or MP3 in
    /// WAV, FLAC in MP4).
    public var passthroughCodecs: Set<String> {
        switch self {
        case .m4a: ["aac", "alac"]
        case .mp4: ["aac", "alac", "mp3", "opus"]
        case .caf: ["aac", "alac", "opus", "mp3", "flac", "pcm_s16le", "pcm_s16be", "pcm_s24le", "pcm_s24be",
                    "pcm_s32le", "pcm_s32be", "pcm_f32le", "pcm_f32be", "pcm_f64le", "pcm_f64be"]
        case .wav: ["pcm_u8", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le", "pcm_alaw", "pcm_mulaw"]
        case .aiff: ["pcm_s8", "pcm_s16be", "pcm_s24be", "pcm_s32be", "pcm_f32be", "pcm_f64be", "pcm_alaw", "pcm_mulaw"]
        case .flac: ["flac"]
        case .mp3: ["mp3"]
        case .ogg: ["vorbis", "opus", "flac"]
        case .opus: ["opus"]
        case .mka: ["aac", "alac", "mp3", "mp2", "opus", "vorbis", "flac", "ac3", "eac3", "dts", "pcm_s16le",
                    "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le", "pcm_u8"]
        case .aac: ["aac"]
        }
    }

    /// The file types that hold `codec` unchanged, in declaration order.
    public static func passthroughTypes(for codec: String) -> [ExportFileType] {
        allCases.filter { $0.passthroughCodecs.contains(codec) }
    }

    /// Whether the container's tags sit on the audio stream (Vorbis comments in Ogg) rather than
    /// on the file.
    var tagsOnStream: Bool { self == .ogg || self == .opus }
}
