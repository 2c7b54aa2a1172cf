// SPDX-License-Identifier: GPL-3.0-or-later

/// What an export does to the audio (the counterpart of the `AVAssetExportPreset…` names).
/// ``name`` (`apple-m4a`, `medium-quality`, …) is what `tonearm extract-audio/convert --preset`
/// show and take; ``init(name:)`` also accepts the raw values (`appleM4A`).
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

    /// The kebab-case name shown to people: `apple-m4a` for `appleM4A`, `medium-quality`.
    public var name: String {
        var out = ""
        for ch in rawValue {
            if ch.isUppercase, !out.isEmpty, !(out.last?.isNumber ?? false) { out += "-" }  // m4A: no dash after a digit
            out += ch.lowercased()
        }
        return out
    }

    /// The preset called `name`: the kebab-case ``name`` or the raw value, case, `-` and `_`
    /// ignored (`apple-m4a`, `appleM4A` and `APPLE_M4A` are the same).
    public init?(name: String) {
        func key(_ s: String) -> String { s.lowercased().filter { $0 != "-" && $0 != "_" } }
        guard let p = Self.allCases.first(where: { key($0.rawValue) == key(name) }) else { return nil }
        self = p
    }

    public var description: String { name }

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
