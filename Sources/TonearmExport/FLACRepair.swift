// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCore

/// Makes a FLAC file whose writing stopped short (a full disk, a file-size limit) say what it
/// holds: FFmpeg reads it frame by frame, the file is cut after the last frame that decodes
/// whole, and STREAMINFO's sample count is set to the samples of those frames (its MD5 zeroed:
/// "not computed", since the MD5 of the whole would not match). FFmpeg's muxer wrote the count of
/// every sample it was given before the write failed, so without this the header announced more
/// than the file holds and the last frame was broken. Only rewrites bytes inside the file and
/// shortens it: it works on a disk with no space left. What the recorder does after a failed
/// write of a FLAC recording.
package enum FLACRepair {
    /// Repairs the FLAC file at `path` as described above; returns the frames (samples per
    /// channel) it holds, or nil when it is not a FLAC file FFmpeg can read (it is left as it is).
    /// Throws `writeFailed` when the file cannot be rewritten.
    package static func repair(path: String) throws(TonearmError) -> Int64? {
        guard let (samples, wholeEnd) = DecodableFrames.scan(path: path, formatName: "flac") else { return nil }
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: FLACStreamInfo.md5Offset + 16)
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard got == head.count, FLACStreamInfo.hasStreamInfo(head: head) else { return nil }
        var patched = FLACStreamInfo.field(Array(head[FLACStreamInfo.fieldOffset..<(FLACStreamInfo.fieldOffset + 8)]), samples: samples) + [UInt8](repeating: 0, count: 16)
        let wrote = patched.withUnsafeMutableBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(FLACStreamInfo.fieldOffset)) }
        guard wrote == patched.count else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        if let end = wholeEnd, end < Int64(st.st_size), ftruncate(fd, off_t(end)) != 0 {
            throw .writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
        return samples
    }
}
