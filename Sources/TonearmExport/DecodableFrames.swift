// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// What a file that a recording wrote actually holds, read back with FFmpeg: after a failed
/// write (a full disk), the frames a player will get from it — not those given to the encoder.
package enum DecodableFrames {
    /// The samples (frames per channel) of the audio packets that decode whole (their CRCs
    /// checked where the codec has them), from the start to the first that does not, and the byte
    /// where the last of them ends (nil when none does, or the demuxer does not say); nil when
    /// FFmpeg cannot open the file (as `formatName`, when given) or it has no audio. Any thread.
    package static func scan(path: String, formatName: String? = nil) -> (samples: Int64, end: Int64?)? {
        tonearm_av_log_quiet()
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let format = formatName.flatMap { av_find_input_format($0) }
        guard formatName == nil || format != nil, avformat_open_input(&ctx, path, format, nil) >= 0, let ctx else { return nil }
        var input: UnsafeMutablePointer<AVFormatContext>? = ctx
        defer { avformat_close_input(&input) }
        // The stream's rate and channels (what choosing the audio stream looks at), read from
        // the first packets: a file cut short is still read to its end after this.
        guard avformat_find_stream_info(ctx, nil) >= 0 else { return nil }
        let index = av_find_best_stream(ctx, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let stream = ctx.pointee.streams[Int(index)],
              let decoder = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id),
              let codec = avcodec_alloc_context3(decoder) else { return nil }
        var codecBox: UnsafeMutablePointer<AVCodecContext>? = codec
        defer { avcodec_free_context(&codecBox) }
        codec.pointee.err_recognition |= AV_EF_CRCCHECK | AV_EF_EXPLODE
        guard avcodec_parameters_to_context(codec, stream.pointee.codecpar) >= 0, avcodec_open2(codec, decoder, nil) >= 0,
              let packet = av_packet_alloc() else { return nil }
        var packetBox: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetBox) }
        guard let frame = av_frame_alloc() else { return nil }
        var frameBox: UnsafeMutablePointer<AVFrame>? = frame
        defer { av_frame_free(&frameBox) }
        var samples: Int64 = 0
        var end: Int64?
        var broken = false
        /// The samples of the frames the decoder has ready; nil on a decoding error.
        func drain() -> Int64? {
            var decoded: Int64 = 0
            while true {
                let r = avcodec_receive_frame(codec, frame)
                if r == tonearm_averror_eagain() || r == tonearm_averror_eof() { return decoded }
                if r < 0 { return nil }
                decoded += Int64(frame.pointee.nb_samples)
                av_frame_unref(frame)
            }
        }
        while av_read_frame(ctx, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == index else { continue }
            let pos = packet.pointee.pos, size = Int64(packet.pointee.size)
            // A frame cut by the end of the file fails to decode: it and what follows are not
            // kept. (A packet may decode to nothing: the encoder's priming, skipped.)
            guard avcodec_send_packet(codec, packet) >= 0, let decoded = drain() else {
                broken = true
                break
            }
            if decoded > 0 {
                samples += decoded
                end = pos >= 0 ? pos + size : nil
            }
        }
        if !broken, avcodec_send_packet(codec, nil) >= 0, let rest = drain() { samples += rest }
        return (samples, end)
    }
}
