// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// One track (stream) of an ``Asset`` (the counterpart of `AVAssetTrack`): a plain value read
/// when the asset loaded.
public struct AssetTrack: Sendable, Hashable, Codable, Identifiable {
    /// The stream's index in the container (0-based); what ``AssetExportSession/audioTrackID``
    /// and `tonearm extract-audio --track` take.
    public var trackID: Int
    public var mediaType: AssetMediaType
    /// The format as stored; `formatDescription.codecName` is the codec.
    public var formatDescription: TrackFormatDescription
    /// The ISO 639 language code the container gives ("eng", "fra", …), nil when unset or "und".
    public var language: String?
    /// The track's title, when the container names it.
    public var title: String?
    /// Where the track lies on the asset's timeline, in seconds.
    public var timeRange: AssetTimeRange
    /// Whether the container marks the track as the default of its type.
    public var isDefault: Bool
    /// The file the track belongs to (set by ``Asset``'s loading; nil for a track made by
    /// hand): what ``Composition/insertTimeRange(_:of:at:)`` takes the track's audio from, as
    /// an `AVAssetTrack` knows its asset.
    public var assetURL: URL?

    /// The coded and compared fields: the file is where the track was read, not part of what it
    /// is (JSON output such as `tonearm info --json` is unchanged, and a track read by another
    /// reader of the same stream is equal).
    private enum CodingKeys: String, CodingKey {
        case trackID, mediaType, formatDescription, language, title, timeRange, isDefault
    }

    public static func == (a: AssetTrack, b: AssetTrack) -> Bool {
        a.trackID == b.trackID && a.mediaType == b.mediaType && a.formatDescription == b.formatDescription
            && a.language == b.language && a.title == b.title && a.timeRange == b.timeRange && a.isDefault == b.isDefault
    }

    public func hash(into h: inout Hasher) {
        h.combine(trackID)
        h.combine(mediaType)
        h.combine(formatDescription)
        h.combine(language)
        h.combine(title)
        h.combine(timeRange)
        h.combine(isDefault)
    }

    public var id: Int { trackID }
    /// Shorthand for `formatDescription.codecName`.
    public var codecName: String { formatDescription.codecName }

    public init(trackID: Int, mediaType: AssetMediaType, formatDescription: TrackFormatDescription,
                language: String? = nil, title: String? = nil, timeRange: AssetTimeRange, isDefault: Bool = false) {
        self.trackID = trackID
        self.mediaType = mediaType
        self.formatDescription = formatDescription
        self.language = language
        self.title = title
        self.timeRange = timeRange
        self.isDefault = isDefault
    }
}
