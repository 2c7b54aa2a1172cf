// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// Where a scan is: files looked at so far of all files found (unchanged ones count at once),
/// and the file just finished.
public struct ScanProgress: Sendable, Hashable {
    public var filesDone: Int
    public var filesTotal: Int
    public var currentFile: String?

    public init(filesDone: Int, filesTotal: Int, currentFile: String?) {
        self.filesDone = filesDone
        self.filesTotal = filesTotal
        self.currentFile = currentFile
    }
}

/// A file the scan did not add, and why ("a text file, not media", "not a media file (…)",
/// "cannot be read (permission denied)", …).
public struct SkippedFile: Sendable, Hashable, Codable {
    public var path: String
    public var reason: String
    /// The kind of reason, for a summary that counts them.
    public var kind: SkipKind

    public init(path: String, reason: String, kind: SkipKind) {
        self.path = path
        self.reason = reason
        self.kind = kind
    }
}

/// Why a scan skipped a file, in kinds a summary can count ("2 not audio, 1 unreadable").
public enum SkipKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not an audio file: text, an image, an unknown format, a container without sound.
    case notAudio
    /// An audio file this build cannot decode (unsupported codec, broken stream).
    case undecodable
    /// The file has no bytes.
    case empty
    /// The file could not be opened or read (permissions, I/O error).
    case unreadable

    /// "not audio", "not decodable", "empty", "unreadable".
    public var label: String {
        switch self {
        case .notAudio: "not audio"
        case .undecodable: "not decodable"
        case .empty: "empty"
        case .unreadable: "unreadable"
        }
    }

    /// The kind of a reading error: `.notMediaFile`/`.noAudioTrack` not audio, `.unsupportedCodec`
    /// and `.decodeFailed` not decodable, `.emptyFile` empty, the others unreadable.
    public init(_ error: TonearmError) {
        switch error {
        case .notMediaFile, .noAudioTrack, .isDirectory: self = .notAudio
        case .unsupportedCodec, .decodeFailed: self = .undecodable
        case .emptyFile: self = .empty
        default: self = .unreadable
        }
    }
}

/// What a scan did. Every file found is counted once in added, updated, moved, unchanged or
/// skipped; `removed` counts rows whose files are gone.
public struct ScanSummary: Sendable, Hashable {
    /// New files, now in the library.
    public var added = 0
    /// Files whose size or modification time changed and were read again (same persistentID).
    public var updated = 0
    /// Files found at a new path with the content of a row whose file is gone: the row follows
    /// them (same persistentID, play count, rating).
    public var moved = 0
    /// Rows whose files no longer exist, deleted.
    public var removed = 0
    /// Files with the size and modification time recorded: not read.
    public var unchanged = 0
    /// Files that are not playable media, with the reason, in path order.
    public var skipped: [SkippedFile] = []
    /// How many files were skipped for each kind of reason (only kinds that occurred).
    public var skippedByKind: [SkipKind: Int] { skipped.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 } }
    /// Files opened and read (tags, duration) by this scan: added + updated + those moved files
    /// that had to be read.
    public var filesRead = 0

    public init() {}
}

/// What `MediaLibrary.scan(folders:)` reports: progress as it goes (after each file in scans
/// of up to 100 files, else after each hundredth of them, and always after the last), then
/// the summary, last.
public enum ScanEvent: Sendable, Hashable {
    case progress(ScanProgress)
    case finished(ScanSummary)
}
