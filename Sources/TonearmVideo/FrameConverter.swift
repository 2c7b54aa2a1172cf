// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// Turns decoded `AVFrame`s into ``VideoFrame`` planes: 8-bit 4:2:0 frames to `yuv420p` by
/// copying the planes as they are; anything else (10-bit, 4:2:2, 4:4:4, RGB…), a change of size,
/// or `rgba` through libswscale (bicubic, as the `ffmpeg` command converts by default). The
/// scaler is kept while the shapes stay the same. Used by one thread.
final class FrameConverter {
    private var sws: OpaquePointer?
    private var key: [Int32] = []

    deinit { if sws != nil { sws_freeContext(sws) } }

    /// Whether the frame converts by copying (its format is the one asked for, at its own size).
    static func copies(_ frame: UnsafeMutablePointer<AVFrame>, to format: VideoFrame.PixelFormat, width: Int, height: Int) -> Bool {
        format == .yuv420p && frame.pointee.format == AV_PIX_FMT_YUV420P.rawValue
            && Int(frame.pointee.width) == width && Int(frame.pointee.height) == height
    }

    /// The planes of `frame` in `format` at `width` × `height`. Nil when libswscale cannot
    /// convert from the frame's format.
    func planes(of frame: UnsafeMutablePointer<AVFrame>, format: VideoFrame.PixelFormat,
                width: Int, height: Int) -> [VideoFrame.Plane]? {
        if Self.copies(frame, to: format, width: width, height: height) { return Self.copy(frame) }
        let srcW = frame.pointee.width, srcH = frame.pointee.height, srcF = frame.pointee.format
        var srcStrides = [frame.pointee.linesize.0, frame.pointee.linesize.1, frame.pointee.linesize.2, frame.pointee.linesize.3]
        var src: [UnsafeMutablePointer<UInt8>?] = [frame.pointee.data.0, frame.pointee.data.1, frame.pointee.data.2, frame.pointee.data.3]
        return scale(&src, &srcStrides, width: srcW, height: srcH, format: srcF, to: format, width: width, height: height)
    }

    /// A `yuv420p` frame at `width` × `height` (libswscale, bicubic, as the `ffmpeg` command
    /// scales a stream whose size changes to its first size); nil when libswscale refuses.
    func scaled(_ frame: VideoFrame, width: Int, height: Int) -> VideoFrame? {
        guard frame.pixelFormat == .yuv420p, frame.planes.count == 3 else { return nil }
        let p = frame.planes
        let planes: [VideoFrame.Plane]? = p[0].bytes.withUnsafeBufferPointer { y in
            p[1].bytes.withUnsafeBufferPointer { u in
                p[2].bytes.withUnsafeBufferPointer { v in
                    var src: [UnsafeMutablePointer<UInt8>?] = [UnsafeMutablePointer(mutating: y.baseAddress),
                                                               UnsafeMutablePointer(mutating: u.baseAddress),
                                                               UnsafeMutablePointer(mutating: v.baseAddress), nil]
                    var strides = [Int32(p[0].bytesPerRow), Int32(p[1].bytesPerRow), Int32(p[2].bytesPerRow), 0]
                    return scale(&src, &strides, width: Int32(frame.width), height: Int32(frame.height),
                                 format: AV_PIX_FMT_YUV420P.rawValue, to: .yuv420p, width: width, height: height)
                }
            }
        }
        guard let planes else { return nil }
        var out = frame
        out.width = width
        out.height = height
        out.planes = planes
        return out
    }

    private func scale(_ src: inout [UnsafeMutablePointer<UInt8>?], _ srcStrides: inout [Int32], width srcW: Int32, height srcH: Int32,
                       format srcF: Int32, to format: VideoFrame.PixelFormat, width: Int, height: Int) -> [VideoFrame.Plane]? {
        let dstF = format == .rgba ? AV_PIX_FMT_RGBA : AV_PIX_FMT_YUV420P
        let want: [Int32] = [srcW, srcH, srcF, Int32(width), Int32(height), dstF.rawValue]
        if want != key || sws == nil {
            if sws != nil { sws_freeContext(sws); sws = nil }
            sws = sws_getContext(srcW, srcH, AVPixelFormat(rawValue: srcF), Int32(width), Int32(height), dstF,
                                 SWS_BICUBIC, nil, nil, nil)
            key = want
        }
        guard let sws else { return nil }
        // Rows padded to 64 bytes (libswscale's SIMD writes whole blocks), and a row more at the end.
        func aligned(_ n: Int) -> Int { (n + 63) & ~63 }
        var out: [VideoFrame.Plane]
        if format == .rgba {
            out = [VideoFrame.Plane(bytes: [], bytesPerRow: aligned(width * 4), width: width, height: height)]
        } else {
            let cw = (width + 1) / 2, ch = (height + 1) / 2
            out = [VideoFrame.Plane(bytes: [], bytesPerRow: aligned(width), width: width, height: height),
                   VideoFrame.Plane(bytes: [], bytesPerRow: aligned(cw), width: cw, height: ch),
                   VideoFrame.Plane(bytes: [], bytesPerRow: aligned(cw), width: cw, height: ch)]
        }
        // The scaler writes into buffers of our own, copied into the planes' arrays after.
        let buffers = out.map { UnsafeMutablePointer<UInt8>.allocate(capacity: $0.bytesPerRow * ($0.height + 1)) }
        defer { for b in buffers { b.deallocate() } }
        var dst: [UnsafeMutablePointer<UInt8>?] = buffers + Array(repeating: nil, count: 4 - buffers.count)
        var strides = out.map { Int32($0.bytesPerRow) } + Array(repeating: 0, count: 4 - out.count)
        guard tonearm_sws_scale(sws, &src, &srcStrides, 0, srcH, &dst, &strides) > 0 else { return nil }
        for i in out.indices {
            out[i].bytes = [UInt8](UnsafeBufferPointer(start: buffers[i], count: out[i].bytesPerRow * out[i].height))
        }
        return out
    }

    /// The three planes of an 8-bit 4:2:0 frame, copied row by row without their padding.
    static func copy(_ frame: UnsafeMutablePointer<AVFrame>) -> [VideoFrame.Plane] {
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let data = [frame.pointee.data.0, frame.pointee.data.1, frame.pointee.data.2]
        let sizes = [frame.pointee.linesize.0, frame.pointee.linesize.1, frame.pointee.linesize.2]
        let dims = [(w, h), (cw, ch), (cw, ch)]
        return (0..<3).map { p in
            let (pw, ph) = dims[p]
            let stride = Int(sizes[p])
            let bytes = [UInt8](unsafeUninitializedCapacity: pw * ph) { buf, count in
                if let src = data[p], let dst = buf.baseAddress {
                    for y in 0..<ph { (dst + y * pw).update(from: src + y * stride, count: pw) }
                }
                count = pw * ph
            }
            return VideoFrame.Plane(bytes: bytes, bytesPerRow: pw, width: pw, height: ph)
        }
    }
}

extension VideoFrame {
    /// Every plane's picture bytes, plane after plane, without row padding: the layout of
    /// FFmpeg's `rawvideo` (what `-f framemd5` hashes) and of a YUV4MPEG2 frame.
    public var packedBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(planes.reduce(0) { $0 + $1.width * $1.height * (pixelFormat == .rgba ? 4 : 1) })
        for p in planes {
            let rowBytes = p.width * (pixelFormat == .rgba ? 4 : 1)
            if p.bytesPerRow == rowBytes && p.bytes.count == rowBytes * p.height {
                out += p.bytes
            } else {
                for y in 0..<p.height { out += p.bytes[y * p.bytesPerRow ..< y * p.bytesPerRow + rowBytes] }
            }
        }
        return out
    }
}
