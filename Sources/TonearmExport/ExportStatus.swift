// SPDX-License-Identifier: GPL-3.0-or-later

/// Where an ``AssetExportSession`` is (the counterpart of `AVAssetExportSession.Status`).
public enum ExportStatus: String, Sendable, Hashable, CustomStringConvertible {
    /// Created, not started.
    case waiting
    /// `export()` is running.
    case exporting
    /// The output file is in place.
    case completed
    /// The export stopped on an error (``AssetExportSession/error`` says which); nothing was left behind.
    case failed
    /// The export was cancelled; nothing was left behind.
    case cancelled

    public var description: String { rawValue }
    /// Whether the session is done (completed, failed or cancelled).
    public var isFinal: Bool { self == .completed || self == .failed || self == .cancelled }
}
