// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

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
    /// Files opened and read (tags, duration) by this scan: added + updated + those moved files
    /// that had to be read.
    public var filesRead = 0

    public init() {}
}

/// What `MediaLibrary.scan(folders:)` reports: progress as it goes (after each file in scans
/// of up to 1,000 files, else after each thousandth of them, and always after the last), then
/// the summary, last.
public enum ScanEvent: Sendable, Hashable {
    case progress(ScanProgress)
    case finished(ScanSummary)
}
