// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCodecs
import TonearmCore

extension VideoFrame {
    /// The frame as a PNG file's bytes (FFmpeg's `png` encoder, 8-bit RGBA). The frame must be
    /// `rgba` (``AssetImageGenerator`` makes such frames); pixel aspect and rotation are not applied.
    public func pngData() throws(TonearmError) -> [UInt8] {
        guard pixelFormat == .rgba, let plane = planes.first else { throw .invalidArgument("PNG encoding takes an rgba frame") }
        guard let encoder = avcodec_find_encoder_by_name("png") else { throw .encoderUnavailable(path: "PNG", encoder: "png") }
        var context = avcodec_alloc_context3(encoder)
        defer { avcodec_free_context(&context) }
        var picture = av_frame_alloc()
        defer { av_frame_free(&picture) }
        var encoded = av_packet_alloc()
        defer { av_packet_free(&encoded) }
        guard let ctx = context, let frame = picture, let packet = encoded else { throw .invalidState("no memory for the PNG encoder") }
        ctx.pointee.width = Int32(width)
        ctx.pointee.height = Int32(height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_RGBA
        ctx.pointee.time_base = AVRational(num: 1, den: 1)
        var r = avcodec_open2(ctx, encoder, nil)
        guard r >= 0 else { throw .encoderUnavailable(path: "PNG", encoder: "png (\(InputOpening.message(r)))") }
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = AV_PIX_FMT_RGBA.rawValue
        frame.pointee.pts = 0
        r = av_frame_get_buffer(frame, 0)
        guard r >= 0, let dst = frame.pointee.data.0 else { throw .invalidState("no memory for a \(width)×\(height) picture") }
        let stride = Int(frame.pointee.linesize.0)
        plane.bytes.withUnsafeBufferPointer { src in
            for y in 0..<height { (dst + y * stride).update(from: src.baseAddress! + y * plane.bytesPerRow, count: width * 4) }
        }
        r = avcodec_send_frame(ctx, frame)
        if r >= 0 { r = avcodec_send_frame(ctx, nil) }
        var out: [UInt8] = []
        while avcodec_receive_packet(ctx, packet) >= 0 {
            if let d = packet.pointee.data { out += UnsafeBufferPointer(start: d, count: Int(packet.pointee.size)) }
            av_packet_unref(packet)
        }
        guard !out.isEmpty else { throw .invalidState("the PNG encoder gave no picture (\(InputOpening.message(r)))") }
        return out
    }

    /// Writes the frame as a PNG file at `path` (replacing it). Throws `writeFailed` saying why.
    public func writePNG(to path: String) throws(TonearmError) {
        let bytes = try pngData()
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw .writeFailed(path: path, reason: Self.reason(error))
        }
    }

    static func reason(_ error: any Error) -> String {
        if let e = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError, e.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(e.code)))
        }
        return (error as NSError).localizedDescription
    }
}
