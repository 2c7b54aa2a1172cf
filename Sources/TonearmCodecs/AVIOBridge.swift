// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// Bytes that libavformat reads through an ``AVIOBridge``: a position, a size when known, reads
/// and seeks. Called only on the thread that runs the demuxer.
protocol AVIOByteReader: AnyObject {
    /// Bytes in all; nil when not known (a stream still arriving).
    var size: Int64? { get }
    /// Where the next read starts.
    var position: Int64 { get }
    /// Reads up to `count` bytes at ``position`` into `buffer` and moves past them. Returns the
    /// number read, 0 at the end, or a negative AVERROR code.
    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int32
    /// Moves to `offset` bytes from the start; false when that is not possible (nothing moved).
    func seek(to offset: Int64) -> Bool
}

/// An ``AVIOByteReader`` served to libavformat through a custom `AVIOContext`: the one place
/// where FFmpeg's read and seek callbacks are written. The callbacks are plain C functions; they
/// find this object through `Unmanaged` userdata (not retained: the owner keeps the bridge alive
/// as long as the demuxer reads, and closes it after `avformat_close_input`).
final class AVIOBridge {
    let reader: any AVIOByteReader
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    /// A bridge with a buffer of `bufferSize` bytes; nil when FFmpeg cannot allocate it.
    init?(reader: any AVIOByteReader, bufferSize: Int32) {
        self.reader = reader
        guard let buffer = av_malloc(Int(bufferSize))?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(buffer, bufferSize, 0, opaque, { opaque, buf, size in
            guard let opaque, let buf else { return tonearm_averror_eof() }
            let io = Unmanaged<AVIOBridge>.fromOpaque(opaque).takeUnretainedValue()
            let n = io.reader.read(into: buf, count: Int(size))
            return n == 0 ? tonearm_averror_eof() : n
        }, nil, { opaque, offset, whence in
            guard let opaque else { return -1 }
            let io = Unmanaged<AVIOBridge>.fromOpaque(opaque).takeUnretainedValue()
            if whence & AVSEEK_SIZE != 0 { return io.reader.size ?? -1 }
            let base: Int64
            switch whence & 3 {
            case SEEK_SET: base = 0
            case SEEK_CUR: base = io.reader.position
            case SEEK_END:
                guard let size = io.reader.size else { return -1 }
                base = size
            default: return -1
            }
            let target = base + offset
            return io.reader.seek(to: target) ? target : -1
        })
        if context == nil { av_free(buffer); return nil }
    }

    /// Frees the context and its buffer (after `avformat_close_input`).
    func close() {
        guard context != nil else { return }
        av_freep(&context!.pointee.buffer)
        avio_context_free(&context)
    }

    deinit { close() }
}
