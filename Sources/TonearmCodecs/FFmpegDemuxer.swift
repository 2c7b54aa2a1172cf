// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// The container side of an ``FFmpegDecoder``: the format context and its I/O, the audio stream
/// it reads (the others are discarded at the demuxer level), the packet being read, the
/// stream's time base against samples, and the one-pass scan that builds a ``PacketIndex``.
/// Owns the context (closed when the demuxer goes, also when opening fails). Not thread-safe:
/// used by its decoder alone.
final class FFmpegDemuxer {
    var fmt: UnsafeMutablePointer<AVFormatContext>?
    /// The custom I/O (bytes in memory, a network stream; nil for a file opened by path), kept
    /// alive while the demuxer reads.
    let io: AVIOBridge?
    let packet: UnsafeMutablePointer<AVPacket>
    let streamIndex: Int32
    let stream: UnsafeMutablePointer<AVStream>
    /// The demuxer's name (`mov,mp4,m4a,3gp,3g2,mj2`, `flac`, …).
    let formatName: String
    let timeBase: AVRational
    /// The decoder FFmpeg chose for the stream (nil: none found).
    let bestDecoder: UnsafePointer<AVCodec>?

    private static let nopts = tonearm_av_nopts_value()

    /// Chooses the audio stream: `audioStream` ≥ 0, that stream (the caller checked it is audio);
    /// else the best one. Throws `noAudioTrack` when there is none.
    init(name: String, fmt: UnsafeMutablePointer<AVFormatContext>, io: AVIOBridge?, audioStream: Int32) throws(TonearmError) {
        self.fmt = fmt
        self.io = io
        packet = av_packet_alloc()
        var decoder: UnsafePointer<AVCodec>?
        let best = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, audioStream, -1, &decoder, 0)
        bestDecoder = decoder
        if best < 0 {
            // Choose the first audio stream even without a decoder, to name its codec.
            var audio: Int32 = -1
            for i in 0..<Int(fmt.pointee.nb_streams) where fmt.pointee.streams[i]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
                audio = Int32(i); break
            }
            streamIndex = audio
        } else {
            streamIndex = best
        }
        formatName = String(cString: fmt.pointee.iformat.pointee.name)
        guard streamIndex >= 0 else {
            stream = fmt.pointee.streams[0]!
            timeBase = AVRational(num: 1, den: 1)
            throw .noAudioTrack(path: name)
        }
        stream = fmt.pointee.streams[Int(streamIndex)]!
        timeBase = stream.pointee.time_base
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        if fmt != nil { avformat_close_input(&fmt) }
        io?.close()
    }

    /// Discards the other streams at the demuxer level.
    func discardOtherStreams() {
        guard let fmt else { return }
        for i in 0..<Int(fmt.pointee.nb_streams) where i != Int(streamIndex) {
            fmt.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
    }

    /// The first audio packet's timestamp (dts, else pts; the stream's start, else 0, when no
    /// packet says), to rewind to it exactly. Reads from where the demuxer is.
    func firstAudioTimestamp() -> Int64 {
        var firstDts = Int64.min
        while av_read_frame(fmt, packet) >= 0 {
            defer { av_packet_unref(packet) }
            if packet.pointee.stream_index == streamIndex {
                firstDts = packet.pointee.dts != Self.nopts ? packet.pointee.dts : packet.pointee.pts
                break
            }
        }
        if firstDts == Self.nopts || firstDts == Int64.min { firstDts = stream.pointee.start_time != Self.nopts ? stream.pointee.start_time : 0 }
        return firstDts
    }

    /// What ``scan(name:sampleRate:codecID:fallbackDuration:hashed:)`` finds.
    struct Scan {
        var index = PacketIndex()
        /// The first audio packet's dts (else pts), stream time base.
        var firstDts: Int64 = 0
        /// Whether an Opus packet is SILK-only or hybrid.
        var sawSILK = false
    }

    /// Reads every packet of the audio stream once (no decoding) and builds the packet index.
    /// `fallbackDuration`: samples per packet when a packet states no duration; `hashed`: whether
    /// packets are hashed (byte seeks land on known packets and need none).
    func scan(name: String, sampleRate: Int32, codecID: AVCodecID, fallbackDuration: Int64,
              hashed: Bool) throws(TonearmError) -> Scan {
        var result = Scan()
        guard let fmt else { return result }
        // Containers with coarse timestamps (Matroska's milliseconds) need a parser for exact durations.
        var parser: UnsafeMutablePointer<AVCodecParserContext>?
        var parseCtx: UnsafeMutablePointer<AVCodecContext>?
        if timeBase.num == 1 && timeBase.den < sampleRate {
            parser = av_parser_init(Int32(codecID.rawValue))
            if let parser {
                parser.pointee.flags |= PARSER_FLAG_COMPLETE_FRAMES
                parseCtx = avcodec_alloc_context3(nil)
                if let parseCtx { avcodec_parameters_to_context(parseCtx, stream.pointee.codecpar) }
            }
        }
        defer {
            if parser != nil { av_parser_close(parser) }
            if parseCtx != nil { avcodec_free_context(&parseCtx) }
        }
        var ts: Int64 = 0
        var first = true
        while true {
            let r = av_read_frame(fmt, packet)
            if r < 0 { break }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            if first {
                first = false
                let p = packet.pointee.pts != Self.nopts ? packet.pointee.pts : packet.pointee.dts
                ts = p != Self.nopts ? toSamples(p, sampleRate: sampleRate) : 0
                result.firstDts = packet.pointee.dts != Self.nopts ? packet.pointee.dts : p
            }
            var duration = packet.pointee.duration > 0 ? toSamples(packet.pointee.duration, sampleRate: sampleRate) : fallbackDuration
            if let parser, let parseCtx {
                var out: UnsafeMutablePointer<UInt8>?
                var outSize: Int32 = 0
                av_parser_parse2(parser, parseCtx, &out, &outSize, packet.pointee.data, packet.pointee.size,
                                 Self.nopts, Self.nopts, -1)
                if parser.pointee.duration > 0 { duration = Int64(parser.pointee.duration) }
            }
            result.index.append(packet, timestamp: ts, hashed: hashed)
            // Opus TOC byte: configurations 0–15 are SILK-only or hybrid (SILK plus CELT).
            if codecID == AV_CODEC_ID_OPUS && !result.sawSILK && packet.pointee.size > 0, let d = packet.pointee.data, d[0] >> 3 < 16 {
                result.sawSILK = true
            }
            ts += duration
        }
        result.index.finish(end: ts)
        if result.index.count == 0 { throw .decodeFailed(path: name, detail: "the audio stream has no packets") }
        return result
    }

    /// A stream timestamp in samples at `sampleRate`.
    func toSamples(_ ts: Int64, sampleRate: Int32) -> Int64 {
        av_rescale_q(ts, timeBase, AVRational(num: 1, den: sampleRate))
    }

    /// Samples at `sampleRate` as a stream timestamp.
    func fromSamples(_ s: Int64, sampleRate: Int32) -> Int64 {
        av_rescale_q(s, AVRational(num: 1, den: sampleRate), timeBase)
    }
}
