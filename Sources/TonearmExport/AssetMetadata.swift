// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// An asset's tags: the common keys normalised across formats (the counterpart of
/// `AVMetadataItem`'s common key space) and the container's own keys as stored.
public struct AssetMetadata: Sendable, Hashable {
    /// Title, artist, album, track numbers, dates, ReplayGain, cover art… normalised (see
    /// `MetadataReader` in TonearmCodecs). Empty for files without audio.
    public var common: AudioMetadata
    /// The container's tags, keys as FFmpeg names them (`title`, `major_brand`, `ENCODER`, …).
    public var formatSpecific: [String: String]

    public init(common: AudioMetadata = AudioMetadata(), formatSpecific: [String: String] = [:]) {
        self.common = common
        self.formatSpecific = formatSpecific
    }
}
