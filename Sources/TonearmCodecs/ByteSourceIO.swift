// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// A ``ByteSource`` served to libavformat through a custom `AVIOContext` (read + seek
/// callbacks, on the demuxer's thread). A source's failure is kept in ``failure`` and reported
/// to FFmpeg as an I/O error, so that the caller can say what really went wrong.
final class ByteSourceIO {
    let source: any ByteSource
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    /// The last failure of the source (set on the demuxer's thread).
    var failure: TonearmError?

    init?(source: any ByteSource) {
        self.source = source
        let size: Int32 = 64 * 1024
        guard let buffer = av_malloc(Int(size))?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(buffer, size, 0, opaque, { opaque, buf, size in
            guard let opaque, let buf else { return tonearm_averror_eof() }
            let io = Unmanaged<ByteSourceIO>.fromOpaque(opaque).takeUnretainedValue()
            do throws(TonearmError) {
                let n = try io.source.read(into: UnsafeMutableRawBufferPointer(start: buf, count: Int(size)))
                return n == 0 ? tonearm_averror_eof() : Int32(n)
            } catch {
                io.failure = error
                return tonearm_averror(EIO)
            }
        }, nil, { opaque, offset, whence in
            guard let opaque else { return -1 }
            let io = Unmanaged<ByteSourceIO>.fromOpaque(opaque).takeUnretainedValue()
            if whence & AVSEEK_SIZE != 0 { return io.source.length ?? -1 }
            let base: Int64
            switch whence & 3 {
            case SEEK_SET: base = 0
            case SEEK_CUR: base = io.source.position
            case SEEK_END:
                guard let l = io.source.length else { return -1 }
                base = l
            default: return -1
            }
            return io.source.seek(to: base + offset) ? base + offset : -1
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
