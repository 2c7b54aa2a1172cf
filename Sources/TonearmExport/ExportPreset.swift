// SPDX-License-Identifier: GPL-3.0-or-later

/// What an export does to the audio (the counterpart of the `AVAssetExportPreset…` names).
/// The raw values are what `tonearm extract-audio/convert --preset` take.
public enum ExportPreset: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Copy the audio packets unchanged (no re-encoding, no quality loss).
    case passthrough
    /// AAC at 256 kb/s.
    case appleM4A
    /// Lossy at a low bit rate: AAC 64 kb/s, MP3 96 kb/s or Opus 48 kb/s, by file type.
    case lowQuality
    /// Lossy at a medium bit rate: AAC 128 kb/s, MP3 160 kb/s or Opus 96 kb/s.
    case mediumQuality
    /// Lossy at a high bit rate: AAC 256 kb/s, MP3 320 kb/s or Opus 192 kb/s.
    case highestQuality
    /// Lossless: FLAC (flac, mka, ogg) or ALAC (m4a, mp4, caf).
    case lossless
    /// Uncompressed PCM (WAV, AIFF, CAF, MKA), 16-bit, or 24-bit from a source of more than 16 bits.
    case pcm
    /// MP3 at 256 kb/s with LAME (only when this FFmpeg has libmp3lame).
    case mp3
    /// Opus at 160 kb/s with libopus (48 kHz).
    case opus

    public var description: String { rawValue }

    /// The file types the preset can write, whatever the asset (the counterpart of
    /// `supportedFileTypes`); which of them suit a given asset is ``AssetExportSession/compatibleFileTypes()``.
    public var supportedFileTypes: [ExportFileType] {
        switch self {
        case .passthrough: ExportFileType.allCases
        case .appleM4A: [.m4a, .mp4, .caf, .mka, .aac]
        case .lowQuality, .mediumQuality, .highestQuality: [.m4a, .mp4, .caf, .mka, .aac, .mp3, .ogg, .opus]
        case .lossless: [.flac, .m4a, .mp4, .caf, .mka, .ogg]
        case .pcm: [.wav, .aiff, .caf, .mka]
        case .mp3: [.mp3, .mka, .mp4]
        case .opus: [.opus, .ogg, .mka, .mp4, .caf]
        }
    }

    /// Whether the preset re-encodes (everything but passthrough).
    public var reencodes: Bool { self != .passthrough }
}
