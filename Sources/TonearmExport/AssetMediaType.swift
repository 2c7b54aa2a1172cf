// SPDX-License-Identifier: GPL-3.0-or-later

/// What a track of an ``Asset`` carries (the counterpart of `AVMediaType`).
public enum AssetMediaType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case audio
    case video
    case subtitle
    /// Timed data other than the above (chapters, timecode, metadata streams).
    case data
    /// A file attached to the container (fonts in Matroska, for instance).
    case attachment
    /// A still picture stored as a video stream: embedded cover art.
    case artwork
    case unknown

    public var description: String { rawValue }
}
