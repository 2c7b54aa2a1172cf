// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc

/// Makes a WAV file whose writing stopped short (a full disk, a file-size limit) say what it
/// holds: the RIFF size, the `data` chunk's size and the `fact` chunk's frame count set from the
/// bytes actually in the file, cut to whole frames. Only rewrites bytes inside the file and
/// shortens it, so it works on a disk with no space left. What the recorder does after a failed
/// write of a WAV recording, so that nothing recorded before the failure is lost to a header
/// that says the file is empty.
package enum WAVRepair {
    /// What to write: the sizes, where they go, and the file's new length.
    package struct Plan: Sendable, Hashable {
        package var riffSize: UInt32
        package var dataSizeOffset: Int
        package var dataSize: UInt32
        package var factOffset: Int?
        package var frames: Int64
        package var length: Int
    }

    /// The plan for a file of `fileLength` bytes that starts with `head` (at least up to the
    /// `data` chunk's header); nil when `head` is not a RIFF WAVE file with a `fmt ` chunk before
    /// its `data` chunk, or the sizes cannot be written in 32 bits. Pure; any bytes are safe.
    package static func plan(head: [UInt8], fileLength: Int) -> Plan? {
        func u32(_ at: Int) -> UInt32? {
            guard at >= 0, at + 4 <= head.count else { return nil }
            return UInt32(head[at]) | UInt32(head[at + 1]) << 8 | UInt32(head[at + 2]) << 16 | UInt32(head[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= head.count else { return nil }
            return Int(head[at]) | Int(head[at + 1]) << 8
        }
        func tag(_ at: Int) -> String? {
            guard at >= 0, at + 4 <= head.count else { return nil }
            return String(decoding: head[at..<(at + 4)], as: UTF8.self)
        }
        guard fileLength >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else { return nil }
        var at = 12
        var blockAlign: Int?
        var factOffset: Int?
        while let id = tag(at), let size = u32(at + 4) {
            if id == "data" {
                guard let align = blockAlign, align > 0 else { return nil }
                let start = at + 8
                guard fileLength >= start else { return nil }
                var frames = (fileLength - start) / align
                // A chunk of odd size is followed by a pad byte: keep it in the file if there
                // is one, else give up the last frame.
                if frames * align % 2 == 1 && start + frames * align + 1 > fileLength { frames -= 1 }
                let dataSize = frames * align
                let length = start + dataSize + dataSize % 2
                guard length - 8 <= Int(UInt32.max) else { return nil }
                return Plan(riffSize: UInt32(length - 8), dataSizeOffset: at + 4, dataSize: UInt32(dataSize),
                            factOffset: factOffset, frames: Int64(frames), length: length)
            }
            if id == "fmt " {
                guard size >= 16, let align = u16(at + 20) else { return nil }
                blockAlign = align
            } else if id == "fact", size >= 4 {
                factOffset = at + 8
            }
            let next = at + 8 + Int(size) + Int(size % 2)
            guard next > at, next <= fileLength else { return nil }
            at = next
        }
        return nil
    }

    /// Repairs the WAV file at `path` (see the type); returns the frames it holds after, or nil
    /// when it is not a WAV file this can read (then it is left as it is). Throws `writeFailed`
    /// naming the file when it cannot be read or rewritten.
    @discardableResult
    package static func repair(path: String) throws(TonearmError) -> Int64? {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        let length = Int(st.st_size)
        var head = [UInt8](repeating: 0, count: min(length, 1 << 20))
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard got >= 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        head.removeLast(head.count - got)
        guard let plan = plan(head: head, fileLength: length) else { return nil }
        func put(_ value: UInt32, at offset: Int) throws(TonearmError) {
            var le = value.littleEndian
            guard pwrite(fd, &le, 4, off_t(offset)) == 4 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        }
        try put(plan.riffSize, at: 4)
        try put(plan.dataSize, at: plan.dataSizeOffset)
        if let fact = plan.factOffset { try put(UInt32(clamping: plan.frames), at: fact) }
        if plan.length < length, ftruncate(fd, off_t(plan.length)) != 0 {
            throw .writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
        return plan.frames
    }
}
