// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// A file read by libavformat through an ``AVIOBridge``: `pread` at a position of its own (no
/// `FILE`, no URL protocol), or a copy of the bytes ``TagFileReader`` already holds. With an
/// `end`, the file is presented as if it stopped there (the tags after an MP3's audio, say).
final class AVIOFileReader: AVIOByteReader {
    let file: TagFileReader
    /// Where the bytes presented end (the file's size, or less).
    let end: Int
    private(set) var position: Int64 = 0

    init(file: TagFileReader, end: Int? = nil) {
        self.file = file
        self.end = min(end ?? file.size, file.size)
    }

    var size: Int64? { Int64(end) }

    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        let count = min(count, end - Int(position))
        if count <= 0 { return 0 }
        let n = file.read(into: buffer, at: Int(position), count: count)
        if n < 0 { return tonearm_averror(Int32(-n)) }
        position += Int64(n)
        return Int32(n)
    }

    /// Any offset from 0 on (reads past the end find the end).
    func seek(to offset: Int64) -> Bool {
        guard offset >= 0 else { return false }
        position = offset
        return true
    }
}
