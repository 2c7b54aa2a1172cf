// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// Fills in the codec parameters and the length a demuxer's header leaves out, from the file's bytes.
enum HeaderFields {
    /// Sets the sample rate, channels, bits per sample and (MP3) bit rate of `stream` when the
    /// demuxer left them out and the bytes state them.
    static func fill(_ ctx: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                     mp3: MP3Info?) {
        let par = stream.pointee.codecpar!
        switch par.pointee.codec_id {
        case AV_CODEC_ID_FLAC:
            // STREAMINFO (the extradata): 20 bits of rate, 3 of channels − 1, 5 of bits − 1, 36 of samples.
            guard let x = extradata(par), x.count >= 18 else { return }
            let rate = Int32(x[10]) << 12 | Int32(x[11]) << 4 | Int32(x[12]) >> 4
            let channels = Int32((x[12] >> 1) & 7) + 1
            let bits = Int32((x[12] & 1) << 4 | x[13] >> 4) + 1
            if par.pointee.sample_rate <= 0 { par.pointee.sample_rate = rate }
            if par.pointee.ch_layout.nb_channels <= 0 { setLayout(par, flacLayout(Int(channels))) }
            if par.pointee.bits_per_raw_sample <= 0 { par.pointee.bits_per_raw_sample = bits }
        case AV_CODEC_ID_MP3, AV_CODEC_ID_MP2, AV_CODEC_ID_MP1:
            guard let info = mp3 else { return }
            if par.pointee.sample_rate <= 0 { par.pointee.sample_rate = Int32(info.header.sampleRate) }
            if par.pointee.ch_layout.nb_channels <= 0 { setLayout(par, info.header.channels == 1 ? "mono" : "stereo") }
            if par.pointee.bit_rate <= 0 { par.pointee.bit_rate = Int64(info.header.bitRate) }
        case AV_CODEC_ID_ALAC:
            // The magic cookie (ALACSpecificConfig, after FFmpeg's 12-byte atom header): bit depth at 5.
            guard par.pointee.bits_per_raw_sample <= 0, let x = extradata(par), x.count >= 36,
                  x[4..<8].elementsEqual("alac".utf8) else { return }
            par.pointee.bits_per_raw_sample = Int32(x[17])
        default:
            return
        }
    }

    /// The length in frames at the stream's sample rate, as the headers state it (nil: unknown).
    static func length(_ ctx: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                       file: TagFileReader, mp3: MP3Info?) -> Int64? {
        let par = stream.pointee.codecpar!
        let rate = Int64(par.pointee.sample_rate)
        guard rate > 0 else { return nil }
        let formatName = String(cString: ctx.pointee.iformat.pointee.name)
        if let info = mp3 {
            if let frames = info.frames {
                return frames * Int64(info.header.samplesPerFrame) - Int64(info.trimmed)
            }
            if stream.pointee.duration <= 0 || stream.pointee.duration == tonearm_av_nopts_value() {
                // No Xing or VBRI frame: estimated from the first frame's bit rate, as other tag readers do.
                let bytes = Int64(file.size - info.audioStart - trailingTagBytes(file))
                guard info.header.bitRate > 0, bytes > 0 else { return nil }
                return bytes * 8 * rate / Int64(info.header.bitRate)
            }
        }
        guard var length = statedLength(ctx, stream: stream) else { return nil }
        if formatName == "ogg" && par.pointee.codec_id == AV_CODEC_ID_OPUS,
           let x = extradata(par), x.count >= 12, x[0..<8].elementsEqual("OpusHead".utf8) {
            // The last granule position counts the pre-skip, which the decoder drops.
            length -= Int64(x[10]) | Int64(x[11]) << 8
        }
        if formatName.hasPrefix("mov,"), let smpb = GaplessTimeline.iTunSMPB(ctx, stream), length > smpb.frames {
            length = smpb.frames
        }
        return length
    }

    /// The stream's duration in frames, else the container's; nil when neither is known.
    static func statedLength(_ ctx: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>) -> Int64? {
        let nopts = tonearm_av_nopts_value()
        let rate = stream.pointee.codecpar.pointee.sample_rate
        guard rate > 0 else { return nil }
        if stream.pointee.duration > 0 && stream.pointee.duration != nopts {
            return av_rescale_q(stream.pointee.duration, stream.pointee.time_base, AVRational(num: 1, den: rate))
        }
        if ctx.pointee.duration > 0 && ctx.pointee.duration != nopts {
            return av_rescale_q(ctx.pointee.duration, AVRational(num: 1, den: tonearm_av_time_base()), AVRational(num: 1, den: rate))
        }
        return nil
    }

    /// The container's bit rate as `avformat_find_stream_info` sets it: the file's size over the
    /// container's duration (the longest stream's when it states none).
    static func fillBitRate(_ ctx: UnsafeMutablePointer<AVFormatContext>, file: TagFileReader) {
        let nopts = tonearm_av_nopts_value()
        var duration = ctx.pointee.duration
        if duration == nopts || duration <= 0 {
            duration = 0
            for i in 0..<Int(ctx.pointee.nb_streams) {
                let s = ctx.pointee.streams[i]!
                guard s.pointee.duration > 0, s.pointee.duration != nopts else { continue }
                duration = max(duration, av_rescale_q(s.pointee.duration, s.pointee.time_base,
                                                      AVRational(num: 1, den: tonearm_av_time_base())))
            }
        }
        guard duration > 0, file.size > 0 else { return }
        ctx.pointee.bit_rate = Int64(Double(file.size) * 8 * Double(tonearm_av_time_base()) / Double(duration))
    }

    /// Bytes of ID3v1 and APEv2 tags at the end of the file.
    static func trailingTagBytes(_ file: TagFileReader) -> Int {
        var end = file.size
        if end >= 128, let t = file.read(at: end - 128, count: 3), t.elementsEqual("TAG".utf8) { end -= 128 }
        if end >= 32, let f = file.read(at: end - 32, count: 32), f[0..<8].elementsEqual("APETAGEX".utf8) {
            let size = Int(f[12]) | Int(f[13]) << 8 | Int(f[14]) << 16 | Int(f[15]) << 24
            let hasHeader = f[23] & 0x80 != 0
            end -= size + (hasHeader ? 32 : 0)
        }
        return max(0, file.size - end)
    }

    private static func extradata(_ par: UnsafeMutablePointer<AVCodecParameters>) -> UnsafeBufferPointer<UInt8>? {
        guard let d = par.pointee.extradata, par.pointee.extradata_size > 0 else { return nil }
        return UnsafeBufferPointer(start: d, count: Int(par.pointee.extradata_size))
    }

    private static func setLayout(_ par: UnsafeMutablePointer<AVCodecParameters>, _ name: String) {
        var layout = AVChannelLayout()
        guard av_channel_layout_from_string(&layout, name) == 0 else { return }
        av_channel_layout_uninit(&par.pointee.ch_layout)
        par.pointee.ch_layout = layout
    }

    /// FLAC's channel assignments, as FFmpeg's decoder reports them.
    private static func flacLayout(_ channels: Int) -> String {
        ["mono", "stereo", "3.0", "quad", "5.0", "5.1", "6.1", "7.1"][max(1, min(channels, 8)) - 1]
    }
}
