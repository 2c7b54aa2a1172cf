// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCore

/// A ``ByteSource`` read by libavformat through an ``AVIOBridge`` (on the demuxer's thread). A
/// source's failure is kept in ``failure`` and reported to FFmpeg as an I/O error, so that the
/// caller can say what really went wrong.
final class AVIOByteSourceReader: AVIOByteReader {
    let source: any ByteSource
    /// Where the bytes presented end (the tags after an MP3's audio cut off, as for a file), or
    /// nil: the source's own end.
    let end: Int64?
    /// The last failure of the source (set on the demuxer's thread).
    var failure: TonearmError?

    init(source: any ByteSource, end: Int64? = nil) {
        self.source = source
        self.end = end
    }

    var size: Int64? { end ?? source.length }
    var position: Int64 { source.position }

    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        var count = count
        if let end {
            count = Int(max(0, min(Int64(count), end - source.position)))
            if count == 0 { return 0 }
        }
        do throws(TonearmError) {
            let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: count))
            return Int32(n)
        } catch {
            failure = error
            return tonearm_averror(EIO)
        }
    }

    func seek(to offset: Int64) -> Bool { source.seek(to: offset) }
}

/// A ``ByteSource`` of known length read as a ``TagByteSource``: for finding the tags at its
/// end before it is demuxed. `head` and `tail`: its first and last bytes, already read; other
/// bytes are read by seeking the source (the caller puts it back).
final class TagByteSourceReader: TagByteSource {
    let source: any ByteSource
    let size: Int
    let head: [UInt8]
    let tail: [UInt8]

    init(source: any ByteSource, size: Int, head: [UInt8], tail: [UInt8]) {
        self.source = source
        self.size = size
        self.head = head
        self.tail = tail
    }

    func read(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset <= size - count else { return nil }
        if offset + count <= head.count { return Array(head[offset..<(offset + count)]) }
        let tailStart = size - tail.count
        if offset >= tailStart { return Array(tail[(offset - tailStart)..<(offset - tailStart + count)]) }
        guard source.seek(to: Int64(offset)) else { return nil }
        return Self.readFully(source, count: count)
    }

    /// Exactly `count` bytes from the source's position, or nil when it ends or fails first.
    static func readFully(_ source: any ByteSource, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { all -> Int in
                (try? source.read(into: UnsafeMutableRawBufferPointer(rebasing: all[got...]))) ?? 0
            }
            if n <= 0 { return nil }
            got += n
        }
        return bytes
    }
}
