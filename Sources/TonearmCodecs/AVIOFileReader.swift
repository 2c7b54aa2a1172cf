// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// A file read by libavformat through an ``AVIOBridge``: `pread` at a position of its own (no
/// `FILE`, no URL protocol), or a copy of the bytes ``TagFileReader`` already holds.
final class AVIOFileReader: AVIOByteReader {
    let file: TagFileReader
    private(set) var position: Int64 = 0

    init(file: TagFileReader) { self.file = file }

    var size: Int64? { Int64(file.size) }

    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
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
