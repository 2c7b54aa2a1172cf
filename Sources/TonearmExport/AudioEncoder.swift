// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// An FFmpeg audio encoder fed with planar Float32 at the source's rate and channels: it
/// converts (libswresample) to the encoder's sample format, rate and layout, cuts the stream
/// into the encoder's frame size and hands every encoded packet (timestamps in
/// ``timeBase``: 1 / output rate) to a callback. Used on one worker thread.
final class AudioEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private var swr: OpaquePointer?
    private let fifo: OpaquePointer
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frameSize: Int
    private var inputRate: Int
    private var channels: Int
    private var nextPTS: Int64 = 0
    /// The output frames the input given so far amounts to (each input's frames × output rate
    /// ÷ its rate): where the encoded stream must end.
    private var framesOutExact = 0.0
    var framesOut: Int64 { Int64(framesOutExact.rounded()) }
    private let path: String

    var timeBase: AVRational { context.pointee.time_base }
    var outputRate: Int { Int(context.pointee.sample_rate) }

    /// Opens `choice`'s encoder for audio at `sampleRate` with `channels`. `globalHeader`: the
    /// container wants the codec configuration out of band (MP4, Matroska, CAF).
    /// Throws `encoderUnavailable` and `writeFailed` (the encoder refused the parameters), naming `path`.
    init(choice: EncoderChoice, sampleRate: Int, channels: Int, globalHeader: Bool, path: String) throws(TonearmError) {
        self.path = path
        inputRate = sampleRate
        self.channels = channels
        guard let codec = avcodec_find_encoder_by_name(choice.encoderName) else {
            throw .encoderUnavailable(path: path, encoder: choice.encoderName)
        }
        guard let ctx = avcodec_alloc_context3(codec), let f = av_frame_alloc(), let p = av_packet_alloc() else {
            throw .writeFailed(path: path, reason: "out of memory")
        }
        context = ctx
        frame = f
        packet = p
        let rate = Self.rate(for: codec, wanted: sampleRate)
        var layout = tonearm_layout_default(Int32(channels))
        if !Self.supports(codec, layout: layout) {
            av_channel_layout_uninit(&layout)
            layout = tonearm_layout_default(Int32(min(channels, 2)))
        }
        ctx.pointee.sample_rate = Int32(rate)
        av_channel_layout_copy(&ctx.pointee.ch_layout, &layout)
        ctx.pointee.sample_fmt = Self.format(for: codec, bits: choice.bits)
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(rate))
        if let b = choice.bitRate { ctx.pointee.bit_rate = Int64(b) }
        if let bits = choice.bits, bits > 16 { ctx.pointee.bits_per_raw_sample = Int32(bits) }
        if globalHeader { ctx.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var opened = avcodec_open2(ctx, codec, nil)
        if opened < 0 {
            // Some encoders want 'experimental' compliance for their newer features.
            ctx.pointee.strict_std_compliance = -2
            opened = avcodec_open2(ctx, codec, nil)
        }
        guard let fifoPtr = av_audio_fifo_alloc(ctx.pointee.sample_fmt, ctx.pointee.ch_layout.nb_channels, 4096) else {
            throw .writeFailed(path: path, reason: "out of memory")
        }
        fifo = fifoPtr
        if opened < 0 {
            av_channel_layout_uninit(&layout)
            throw .writeFailed(path: path, reason: "the \(choice.encoderName) encoder refused \(rate) Hz, \(channels) channels: \(FFmpegSupport.message(opened))")
        }
        let variable = (codec.pointee.capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) != 0
        frameSize = ctx.pointee.frame_size > 0 && !variable ? Int(ctx.pointee.frame_size) : 4096

        av_channel_layout_uninit(&layout)
        try makeResampler()
    }

    /// (Re)creates the converter from planar Float32 at ``inputRate`` × ``channels`` to the encoder's input.
    private func makeResampler() throws(TonearmError) {
        swr_free(&swr)
        var inLayout = tonearm_layout_default(Int32(channels))
        defer { av_channel_layout_uninit(&inLayout) }
        let r = swr_alloc_set_opts2(&swr, &context.pointee.ch_layout, context.pointee.sample_fmt, context.pointee.sample_rate,
                                    &inLayout, AV_SAMPLE_FMT_FLTP, Int32(inputRate), 0, nil)
        if r < 0 || swr_init(swr) < 0 { throw .writeFailed(path: path, reason: "cannot set up the sample conversion") }
    }

    /// Changes the input's rate and channel count (the next segment of a composition): the
    /// audio converted so far is flushed through the old converter first, so nothing is lost.
    func changeInput(sampleRate: Int, channels newChannels: Int) throws(TonearmError) {
        guard sampleRate != inputRate || newChannels != channels else { return }
        var none: [UnsafeMutablePointer<UInt8>?] = []
        try convert(&none, count: 0)
        inputRate = sampleRate
        channels = newChannels
        try makeResampler()
    }

    deinit {
        swr_free(&swr)
        av_audio_fifo_free(fifo)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    /// Converts and encodes `count` frames of planar Float32 (`channels` pointers).
    func encode(_ planes: UnsafePointer<UnsafeMutablePointer<Float>>, count: Int,
                emit: (UnsafeMutablePointer<AVPacket>) throws(TonearmError) -> Void) throws(TonearmError) {
        framesOutExact += Double(count) * Double(context.pointee.sample_rate) / Double(inputRate)
        var input = (0..<channels).map { UnsafeMutableRawPointer(planes[$0]).assumingMemoryBound(to: UInt8.self) as UnsafeMutablePointer<UInt8>? }
        try convert(&input, count: count)
        try drain(final: false, emit: emit)
    }

    /// Flushes the resampler, the last partial frame and the encoder.
    func finish(emit: (UnsafeMutablePointer<AVPacket>) throws(TonearmError) -> Void) throws(TonearmError) {
        var none: [UnsafeMutablePointer<UInt8>?] = []
        try convert(&none, count: 0)
        try drain(final: true, emit: emit)
        try send(nil, emit: emit)
    }

    private func convert(_ input: inout [UnsafeMutablePointer<UInt8>?], count: Int) throws(TonearmError) {
        let outMax = Int(swr_get_out_samples(swr, Int32(count))) + 16
        guard outMax > 0 else { return }
        var planes: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>? = nil
        var lines: Int32 = 0
        if av_samples_alloc_array_and_samples(&planes, &lines, context.pointee.ch_layout.nb_channels, Int32(outMax),
                                              context.pointee.sample_fmt, 0) < 0 {
            throw .writeFailed(path: path, reason: "out of memory")
        }
        defer {
            av_freep(UnsafeMutableRawPointer(planes!))
            withUnsafeMutablePointer(to: &planes) { av_freep($0) }
        }
        let got = input.isEmpty
            ? tonearm_swr_convert(swr, planes, Int32(outMax), nil, 0)
            : input.withUnsafeMutableBufferPointer { tonearm_swr_convert(swr, planes, Int32(outMax), $0.baseAddress, Int32(count)) }
        if got < 0 { throw .writeFailed(path: path, reason: "sample conversion failed: \(FFmpegSupport.message(got))") }
        if got > 0 {
            let w = planes!.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: Int(context.pointee.ch_layout.nb_channels)) {
                av_audio_fifo_write(fifo, $0, got)
            }
            if w < got { throw .writeFailed(path: path, reason: "out of memory") }
        }
    }

    private func drain(final: Bool, emit: (UnsafeMutablePointer<AVPacket>) throws(TonearmError) -> Void) throws(TonearmError) {
        while av_audio_fifo_size(fifo) >= Int32(frameSize) || (final && av_audio_fifo_size(fifo) > 0) {
            let n = min(Int32(frameSize), av_audio_fifo_size(fifo))
            av_frame_unref(frame)
            frame.pointee.nb_samples = n
            frame.pointee.format = context.pointee.sample_fmt.rawValue
            frame.pointee.sample_rate = context.pointee.sample_rate
            av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout)
            if av_frame_get_buffer(frame, 0) < 0 { throw .writeFailed(path: path, reason: "out of memory") }
            _ = frame.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self,
                                                             capacity: Int(context.pointee.ch_layout.nb_channels)) {
                av_audio_fifo_read(fifo, $0, n)
            }
            frame.pointee.pts = nextPTS
            nextPTS += Int64(n)
            try send(frame, emit: emit)
        }
    }

    private func send(_ f: UnsafeMutablePointer<AVFrame>?, emit: (UnsafeMutablePointer<AVPacket>) throws(TonearmError) -> Void) throws(TonearmError) {
        let r = avcodec_send_frame(context, f)
        if r < 0 { throw .writeFailed(path: path, reason: "encoding failed: \(FFmpegSupport.message(r))") }
        while true {
            let g = avcodec_receive_packet(context, packet)
            if g == tonearm_averror_eagain() || g == tonearm_averror_eof() { return }
            if g < 0 { throw .writeFailed(path: path, reason: "encoding failed: \(FFmpegSupport.message(g))") }
            defer { av_packet_unref(packet) }
            try emit(packet)
        }
    }

    /// The source rate when the encoder takes it, else 48 kHz when it takes that, else its highest.
    private static func rate(for codec: UnsafePointer<AVCodec>, wanted: Int) -> Int {
        guard var p = codec.pointee.supported_samplerates else { return wanted }
        var rates: [Int] = []
        while p.pointee != 0 { rates.append(Int(p.pointee)); p += 1 }
        if rates.contains(wanted) { return wanted }
        if rates.contains(48000) { return 48000 }
        return rates.max() ?? wanted
    }

    private static func supports(_ codec: UnsafePointer<AVCodec>, layout: AVChannelLayout) -> Bool {
        guard var p = codec.pointee.ch_layouts else { return true }
        while p.pointee.nb_channels != 0 {
            if p.pointee.nb_channels == layout.nb_channels { return true }
            p += 1
        }
        return false
    }

    /// The encoder's sample format: for `bits` (PCM and lossless), the 16- or 32-bit integer
    /// format it takes; otherwise its first (preferred) format.
    private static func format(for codec: UnsafePointer<AVCodec>, bits: Int?) -> AVSampleFormat {
        guard var p = codec.pointee.sample_fmts else { return AV_SAMPLE_FMT_FLTP }
        var formats: [AVSampleFormat] = []
        while p.pointee != AV_SAMPLE_FMT_NONE { formats.append(p.pointee); p += 1 }
        if let bits {
            let wanted: [AVSampleFormat] = bits > 16 ? [AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P] : [AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P]
            if let f = formats.first(where: { wanted.contains($0) }) { return f }
        }
        return formats.first ?? AV_SAMPLE_FMT_FLTP
    }
}
