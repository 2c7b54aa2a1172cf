// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import TonearmCore

/// Where an export writes: a hidden temporary file beside the target, renamed into place by
/// ``commit()`` only when everything was written, and removed by ``discard()`` otherwise.
///
/// Without `overwrite`, the commit is a hard link (which fails if the target appeared
/// meanwhile) then an unlink of the temporary name, so an existing file is never replaced.
struct OutputTarget: Sendable {
    /// The path the user asked for.
    let path: String
    /// The temporary file in the same directory.
    let temporaryPath: String
    let overwrite: Bool

    /// Checks the target and picks the temporary name. Throws `fileExists` (target exists and
    /// `overwrite` is false), `isDirectory` (the target is a directory), `writeFailed` (the
    /// directory is missing, not a directory or not writable).
    static func prepare(path: String, overwrite: Bool) throws(TonearmError) -> OutputTarget {
        let dir = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var st = stat()
        if stat(path, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .isDirectory(path: path) }
            if !overwrite { throw .fileExists(path: path) }
        }
        if stat(dir, &st) != 0 {
            throw .writeFailed(path: path, reason: "the folder \(dir) does not exist")
        }
        if (st.st_mode & S_IFMT) != S_IFDIR { throw .writeFailed(path: path, reason: "\(dir) is not a folder") }
        if access(dir, W_OK) != 0 {
            throw .writeFailed(path: path, reason: "the folder \(dir) is not writable (\(String(cString: strerror(errno))))")
        }
        let tag = UUID().uuidString.prefix(8)
        return OutputTarget(path: path, temporaryPath: "\(dir)/.\(name).\(tag).partial", overwrite: overwrite)
    }

    /// Moves the finished temporary file into place. Throws `fileExists` when the target appeared
    /// meanwhile (without `overwrite`), `writeFailed` otherwise; the temporary file is removed
    /// either way.
    func commit() throws(TonearmError) {
        defer { unlink(temporaryPath) }
        if overwrite {
            if rename(temporaryPath, path) != 0 {
                throw .writeFailed(path: path, reason: "cannot move the finished file into place (\(String(cString: strerror(errno))))")
            }
            return
        }
        if link(temporaryPath, path) != 0 {
            let e = errno
            if e == EEXIST { throw .fileExists(path: path) }
            throw .writeFailed(path: path, reason: "cannot move the finished file into place (\(String(cString: strerror(e))))")
        }
    }

    /// Removes the temporary file (after a failure or a cancellation).
    func discard() { unlink(temporaryPath) }
}
