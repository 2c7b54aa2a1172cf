// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// The decoding side of an ``FFmpegDecoder``: the codec, its context and the frame it decodes
/// into. ``open()`` (re)creates the context: a fresh decoder, as at the start of a straight read
/// (a flush is not enough for bit-exactness: FFmpeg's AAC decoder keeps its noise generator (PNS)
/// state across `avcodec_flush_buffers`). Not thread-safe: used by its decoder alone.
final class FFmpegAudioCodec {
    let codec: UnsafePointer<AVCodec>
    /// The open context (nil before the first ``open()``).
    private(set) var context: UnsafeMutablePointer<AVCodecContext>?
    let frame: UnsafeMutablePointer<AVFrame>
    private let parameters: UnsafeMutablePointer<AVCodecParameters>
    /// The time base of the packets sent (samples in indexed mode, else the stream's).
    private let packetTimeBase: AVRational

    /// What ``open()`` returns when the context cannot be made or configured.
    static let configFailed: Int32 = -0x7fff_fff0

    init(codec: UnsafePointer<AVCodec>, parameters: UnsafeMutablePointer<AVCodecParameters>, packetTimeBase: AVRational) {
        self.codec = codec
        self.parameters = parameters
        self.packetTimeBase = packetTimeBase
        frame = av_frame_alloc()
    }

    deinit {
        if context != nil { avcodec_free_context(&context) }
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }

    /// (Re)creates and opens the decoder context (single-threaded); FFmpeg's result, or
    /// ``configFailed``.
    func open() -> Int32 {
        if context != nil { avcodec_free_context(&context) }
        guard let cc = avcodec_alloc_context3(codec) else { return Self.configFailed }
        context = cc
        if avcodec_parameters_to_context(cc, parameters) < 0 { return Self.configFailed }
        cc.pointee.pkt_timebase = packetTimeBase
        cc.pointee.thread_count = 1
        return avcodec_open2(cc, codec, nil)
    }

    /// Drops what the decoder holds (the context stays).
    func flush() {
        if let context { avcodec_flush_buffers(context) }
    }

    /// Samples per frame as the open context states it (0 when unknown or not open).
    var frameSize: Int32 { context?.pointee.frame_size ?? 0 }
}
