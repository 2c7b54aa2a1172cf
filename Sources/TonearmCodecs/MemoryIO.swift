// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// Bytes in memory served to libavformat through a custom `AVIOContext` (read + seek callbacks).
/// The callbacks are plain C functions; they find this object through `Unmanaged` userdata.
final class MemoryIO {
    let bytes: [UInt8]
    var position = 0
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    init?(bytes: [UInt8]) {
        self.bytes = bytes
        let size: Int32 = 32 * 1024
        guard let buffer = av_malloc(Int(size))?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(buffer, size, 0, opaque, { opaque, buf, size in
            guard let opaque, let buf else { return tonearm_averror_eof() }
            let io = Unmanaged<MemoryIO>.fromOpaque(opaque).takeUnretainedValue()
            let left = io.bytes.count - io.position
            if left <= 0 { return tonearm_averror_eof() }
            let n = min(Int(size), left)
            io.bytes.withUnsafeBufferPointer { src in
                buf.update(from: src.baseAddress! + io.position, count: n)
            }
            io.position += n
            return Int32(n)
        }, nil, { opaque, offset, whence in
            guard let opaque else { return -1 }
            let io = Unmanaged<MemoryIO>.fromOpaque(opaque).takeUnretainedValue()
            let count = Int64(io.bytes.count)
            if whence & AVSEEK_SIZE != 0 { return count }
            let base: Int64
            switch whence & 3 {
            case SEEK_SET: base = 0
            case SEEK_CUR: base = Int64(io.position)
            case SEEK_END: base = count
            default: return -1
            }
            let target = base + offset
            if target < 0 || target > count { return -1 }
            io.position = Int(target)
            return target
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
