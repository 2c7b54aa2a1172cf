// SPDX-License-Identifier: GPL-3.0-or-later

/// Bytes in memory, read by libavformat through an ``AVIOBridge``. Seeks stay within the bytes.
/// With an `end`, only the bytes before it are presented (the tags after an MP3's audio, say).
final class AVIOMemoryReader: AVIOByteReader {
    let bytes: [UInt8]
    /// Where the bytes presented end (their count, or less).
    let end: Int
    private(set) var position: Int64 = 0

    init(bytes: [UInt8], end: Int? = nil) {
        self.bytes = bytes
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var size: Int64? { Int64(end) }

    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        let left = end - Int(position)
        if left <= 0 { return 0 }
        let n = min(count, left)
        bytes.withUnsafeBufferPointer { src in
            buffer.update(from: src.baseAddress! + Int(position), count: n)
        }
        position += Int64(n)
        return Int32(n)
    }

    func seek(to offset: Int64) -> Bool {
        guard offset >= 0, offset <= Int64(end) else { return false }
        position = offset
        return true
    }
}
