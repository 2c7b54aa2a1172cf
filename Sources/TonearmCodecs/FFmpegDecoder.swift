// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCore

/// The FFmpeg state behind one ``AudioFile``: demuxer, decoder, the sample timeline and the
/// trimming, seeking and conversion logic. Not thread-safe: `AudioFile` serialises every call.
///
/// Timeline: every decoded frame gets a timestamp in samples. Position 0 is the first sample a
/// straight decode from the start yields (after the encoder delay the decoder removes), and
/// `length` is where a straight decode ends (after padding; capped by the container's own
/// duration, which cuts AAC end padding in MP4). Two ways to get exact timestamps:
/// - *trusted* containers (PCM in any container, FLAC with a known length, MP4/MOV): the
///   demuxer's timestamps are exact after a seek, so its seeks are used directly;
/// - all others (MP3, ADTS, Ogg, Matroska/WebM, …): the file is scanned once at open (demux only,
///   no decoding) into a packet index: byte position, exact sample timestamp from the summed packet
///   durations, and the skip/discard side data. Every packet read later gets its timestamp and
///   side data from the index, so decoding after a seek behaves exactly as a straight decode.
///
/// Canonical decoding (AAC, and Opus streams with SILK or hybrid packets): some decoders keep
/// state that a seek cannot rebuild exactly (AAC's PNS noise generator survives a flush and runs
/// on from the start of the stream; SILK's float LPC state never converges after a preroll). For
/// them the output is defined per *segment*: the stream is cut at raw timestamps
/// `segmentBase + s × segmentSamples`, and the packets of segment `s` are decoded by a fresh
/// decoder started `segmentPreroll` samples of packets before the segment (that output is
/// discarded). A straight read restarts the decoder that way at every boundary, and a seek starts
/// it for the segment holding the target, so both run the same computation and give the same bits.
///
/// Its parts: the I/O is an ``AVIOBridge`` (or FFmpeg's own for a path), the packet index a
/// ``PacketIndex``, what the container says about the gapless timeline ``GaplessTimeline``,
/// and decoded, trimmed samples wait in ``PendingFrames`` until they are read.
final class FFmpegDecoder {
    let name: String
    /// The demuxer's name (`mov,mp4,m4a,3gp,3g2,mj2`, `flac`, …).
    private let formatName: String
    var fmt: UnsafeMutablePointer<AVFormatContext>?
    var codecCtx: UnsafeMutablePointer<AVCodecContext>?
    let stream: UnsafeMutablePointer<AVStream>
    let streamIndex: Int32
    let packet: UnsafeMutablePointer<AVPacket>
    let frame: UnsafeMutablePointer<AVFrame>
    /// The custom I/O (bytes in memory, a network stream; nil for a file opened by path), kept
    /// alive while the demuxer reads.
    let io: AVIOBridge?
    let sampleRate: Int32
    let channels: Int
    let codecID: AVCodecID
    let timeBase: AVRational
    private var codec: UnsafePointer<AVCodec>?

    // Packet index (indexed mode only).
    let indexed: Bool
    /// Streaming mode: no scan and no look at the end (the stream may be endless or still
    /// arriving); `length` is the container's own when it states one, else `Int64.max`; seeks are
    /// the demuxer's own (not sample-exact).
    let streaming: Bool
    private var index = PacketIndex()
    private let byteSeek: Bool

    // Timeline.
    private(set) var startTs: Int64 = 0
    private(set) var length: Int64 = .max
    private(set) var headerFrames: Int64?
    private var firstDts: Int64 = 0

    // Reading state.
    private(set) var pos: Int64 = 0
    private let pending = PendingFrames()
    private var inputEOF = false
    private var decoderEOF = false
    private var nextPacket = 0 // indexed mode: index of the next audio packet; -1 = to identify
    private var packetCounter = 0
    private var consecutiveErrors = 0
    private var checkOvershoot = false
    private var overshot = false
    private var reportedTruncation = false

    // Canonical decoding (segmentSamples == 0: off; see the type's documentation).
    private var segmentSamples: Int64 = 0
    private var segmentPreroll: Int64 = 0
    private var segmentBase: Int64 = 0
    private var sawSILK = false
    /// The largest end timestamp (pts + duration, stream time base) of a packet read so far.
    private var lastPacketEnd: Int64 = .min
    private var segment = -1                // the segment being decoded; -1: not tracking boundaries
    private var nextBoundary: Int64 = .max  // raw timestamp where the next segment starts
    private var skipBefore: Int64 = .min    // packets before this raw timestamp are read but not decoded
    private var discardBefore: Int64 = .min // decoded frames before this raw timestamp are preroll
    private var checkFirstPacket = false    // the next packet is the first after positioning a segment
    private var segmentSeekTarget: Int64 = 0 // trusted mode: the demuxer timestamp sought for it

    // Warnings, read from any thread.
    private let warningLock = NSLock()
    private var warningList: [AudioWarning] = []

    private static let nopts = tonearm_av_nopts_value()
    private static let eagain = tonearm_averror_eagain()
    private static let eof = tonearm_averror_eof()

    // MARK: Opening

    init(name: String, fmt: UnsafeMutablePointer<AVFormatContext>, io: AVIOBridge?,
         streaming: Bool = false, audioStream: Int32 = -1) throws(TonearmError) {
        self.name = name
        self.streaming = streaming
        self.fmt = fmt
        self.io = io
        packet = av_packet_alloc()
        frame = av_frame_alloc()

        var decoder: UnsafePointer<AVCodec>?
        // `audioStream` ≥ 0: that stream (the caller checked it is audio); else the best one.
        let best = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, audioStream, -1, &decoder, 0)
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
        guard streamIndex >= 0 else {
            stream = fmt.pointee.streams[0]!
            sampleRate = 0; channels = 0; codecID = AV_CODEC_ID_NONE; timeBase = AVRational(num: 1, den: 1)
            indexed = false; byteSeek = false
            throw .noAudioTrack(path: name)
        }
        stream = fmt.pointee.streams[Int(streamIndex)]!
        let par = stream.pointee.codecpar!
        codecID = par.pointee.codec_id
        sampleRate = par.pointee.sample_rate
        channels = Int(par.pointee.ch_layout.nb_channels)
        timeBase = stream.pointee.time_base
        formatName = String(cString: fmt.pointee.iformat.pointee.name)
        let codecName = String(cString: avcodec_get_name(codecID))

        let isPCM = codecName.hasPrefix("pcm_")
        let trusted = (isPCM && stream.pointee.duration > 0)
            || (codecID == AV_CODEC_ID_FLAC && stream.pointee.duration > 0 && formatName == "flac")
            || formatName.hasPrefix("mov,")
            || (formatName == "caf" && stream.pointee.duration > 0)
        indexed = !trusted && !streaming
        byteSeek = ["mp3", "aac", "ac3", "eac3", "mp2", "dts"].contains(formatName)
            && (fmt.pointee.iformat.pointee.flags & AVFMT_NO_BYTE_SEEK) == 0

        // Prefer FFmpeg's float AAC decoder (the one the ffmpeg command uses) over aac_fixed.
        if codecID == AV_CODEC_ID_AAC, let floatAAC = avcodec_find_decoder_by_name("aac") { decoder = floatAAC }
        guard let codec = decoder ?? avcodec_find_decoder(codecID) else {
            throw .unsupportedCodec(path: name, codec: codecName)
        }
        guard sampleRate > 0, (1...64).contains(channels) else {
            throw .decodeFailed(path: name, detail: "invalid audio parameters (\(sampleRate) Hz, \(channels) channels)")
        }
        self.codec = codec
        let openResult = openCodec()
        if openResult == Self.configFailed {
            throw .decodeFailed(path: name, detail: "cannot configure the \(codecName) decoder")
        }
        if openResult < 0 {
            throw .unsupportedCodec(path: name, codec: "\(codecName) (\(Self.errorString(openResult)))")
        }
        // Discard the other streams at the demuxer level.
        for i in 0..<Int(fmt.pointee.nb_streams) where i != Int(streamIndex) {
            fmt.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        if stream.pointee.duration > 0 {
            headerFrames = av_rescale_q(stream.pointee.duration, timeBase, AVRational(num: 1, den: sampleRate))
        }

        if indexed {
            try scan()
        } else {
            // The first audio packet's timestamp, to rewind to it exactly.
            firstDts = Int64.min
            while av_read_frame(fmt, packet) >= 0 {
                defer { av_packet_unref(packet) }
                if packet.pointee.stream_index == streamIndex {
                    firstDts = packet.pointee.dts != Self.nopts ? packet.pointee.dts : packet.pointee.pts
                    break
                }
            }
            if firstDts == Self.nopts || firstDts == Int64.min { firstDts = stream.pointee.start_time != Self.nopts ? stream.pointee.start_time : 0 }
        }
        configureSegments()
        try establishTimeline()
    }

    private static let configFailed: Int32 = -0x7fff_fff0

    /// Segment length and preroll for the codecs decoded canonically.
    private func configureSegments() {
        let frameSize = Int64(stream.pointee.codecpar.pointee.frame_size > 0 ? stream.pointee.codecpar.pointee.frame_size : 1024)
        switch codecID {
        case AV_CODEC_ID_AAC:
            // Without PNS the decoder's only memory is the MDCT overlap (one frame) and the
            // previous window shape: two packets of preroll give the bits of a continuous decode.
            segmentSamples = 256 * frameSize
            segmentPreroll = 2 * frameSize
        case AV_CODEC_ID_OPUS where sawSILK || !indexed:
            // Two seconds bring SILK's float state within about 1e-5 of a continuous decode
            // (CELT's energy predictions converge to the same bits); 20 s segments keep that
            // preroll at a tenth of the decoding work.
            segmentSamples = 20 * Int64(sampleRate)
            segmentPreroll = 2 * Int64(sampleRate)
        default:
            return
        }
        segmentBase = indexed ? index.timestamps[0] : toSamples(firstDts)
    }

    /// The segment holding raw timestamp `ts`.
    private func segmentOf(_ ts: Int64) -> Int {
        ts < segmentBase + segmentSamples ? 0 : Int((ts - segmentBase) / segmentSamples)
    }

    /// Starts decoding segment `s` canonically: a fresh decoder, positioned `segmentPreroll`
    /// before the segment's first packet, whose output before the segment is discarded.
    private func startSegment(_ s: Int) throws(TonearmError) {
        if s == 0 { try rewind(); return }
        resetDecoder()
        let r = openCodec()
        if r < 0 { throw .decodeFailed(path: name, detail: "cannot reopen the decoder (\(Self.errorString(r)))") }
        let start = segmentBase + Int64(s) * segmentSamples
        segment = s
        nextBoundary = start + segmentSamples
        discardBefore = start
        skipBefore = start - segmentPreroll
        checkFirstPacket = true
        if indexed {
            try positionAt(packet: index.firstPacket(atOrAfter: skipBefore))
        } else {
            segmentSeekTarget = fromSamples(skipBefore) - 1
            if av_seek_frame(fmt, streamIndex, segmentSeekTarget, AVSEEK_FLAG_BACKWARD) < 0 { try seekToFirstPacket() }
            packetCounter = -1
        }
    }

    /// Trusted mode: positions the demuxer at the first audio packet.
    private func seekToFirstPacket() throws(TonearmError) {
        var r = av_seek_frame(fmt, streamIndex, firstDts, AVSEEK_FLAG_BACKWARD)
        if r < 0 { r = avformat_seek_file(fmt, streamIndex, .min, .min, .max, 0) }
        if r < 0 { r = av_seek_frame(fmt, -1, 0, AVSEEK_FLAG_BYTE) }
        if r < 0 { throw .decodeFailed(path: name, detail: "cannot seek to the start (\(Self.errorString(r)))") }
        segmentSeekTarget = .max
    }

    /// (Re)creates and opens the decoder context: a fresh decoder, as at the start of a straight
    /// read. A flush is not enough for bit-exactness: FFmpeg's AAC decoder keeps its noise
    /// generator (PNS) state across `avcodec_flush_buffers`.
    private func openCodec() -> Int32 {
        if codecCtx != nil { avcodec_free_context(&codecCtx) }
        guard let codec, let cc = avcodec_alloc_context3(codec) else { return Self.configFailed }
        codecCtx = cc
        if avcodec_parameters_to_context(cc, stream.pointee.codecpar) < 0 { return Self.configFailed }
        cc.pointee.pkt_timebase = indexed ? AVRational(num: 1, den: sampleRate) : timeBase
        cc.pointee.thread_count = 1
        return avcodec_open2(cc, codec, nil)
    }

    deinit {
        if codecCtx != nil { avcodec_free_context(&codecCtx) }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        if fmt != nil { avformat_close_input(&fmt) }
        io?.close()
    }

    static func errorString(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 128)
        tonearm_av_strerror(code, &buf, 128)
        return stringFromCBuffer(buf)
    }

    private func toSamples(_ ts: Int64) -> Int64 {
        av_rescale_q(ts, timeBase, AVRational(num: 1, den: sampleRate))
    }

    private func fromSamples(_ s: Int64) -> Int64 {
        av_rescale_q(s, AVRational(num: 1, den: sampleRate), timeBase)
    }

    /// Reads every packet of the audio stream once (no decoding) and builds the packet index.
    private func scan() throws(TonearmError) {
        guard let fmt else { return }
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
        let fallbackDuration = Int64(max(0, codecCtx?.pointee.frame_size ?? 0))
        while true {
            let r = av_read_frame(fmt, packet)
            if r < 0 { break }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            if first {
                first = false
                let p = packet.pointee.pts != Self.nopts ? packet.pointee.pts : packet.pointee.dts
                ts = p != Self.nopts ? toSamples(p) : 0
                firstDts = packet.pointee.dts != Self.nopts ? packet.pointee.dts : p
            }
            var duration = packet.pointee.duration > 0 ? toSamples(packet.pointee.duration) : fallbackDuration
            if let parser, let parseCtx {
                var out: UnsafeMutablePointer<UInt8>?
                var outSize: Int32 = 0
                av_parser_parse2(parser, parseCtx, &out, &outSize, packet.pointee.data, packet.pointee.size,
                                 Self.nopts, Self.nopts, -1)
                if parser.pointee.duration > 0 { duration = Int64(parser.pointee.duration) }
            }
            index.append(packet, timestamp: ts, hashed: !byteSeek) // byte seeks land on known packets
            // Opus TOC byte: configurations 0–15 are SILK-only or hybrid (SILK plus CELT).
            if codecID == AV_CODEC_ID_OPUS && !sawSILK && packet.pointee.size > 0, let d = packet.pointee.data, d[0] >> 3 < 16 {
                sawSILK = true
            }
            ts += duration
        }
        index.finish(end: ts)
        if index.count == 0 { throw .decodeFailed(path: name, detail: "the audio stream has no packets") }
    }

    /// Finds where the decoded stream starts and ends, and positions at the start.
    private func establishTimeline() throws(TonearmError) {
        // Start: the timestamp of the first decoded sample.
        try rewind()
        var firstTs: Int64?
        var frames = 0
        while let ts = try receiveFrameRaw() {
            frames += 1
            if frame.pointee.nb_samples > 0 { firstTs = ts; break }
            if frames > 64 { break }
        }
        guard let firstTs else {
            throw .decodeFailed(path: name, detail: "no audio could be decoded")
        }
        startTs = firstTs

        if streaming {
            // The end is not looked for: the container's length when it states one.
            length = headerFrames ?? .max
            reportedTruncation = true  // an unknown or estimated length is no truncation
            try seek(to: 0)
            return
        }

        // End: decode the tail; the container's own end caps it (AAC padding in MP4).
        var cap: Int64 = .max
        if indexed {
            cap = index.timestamps[index.timestamps.count - 1]
        } else if stream.pointee.duration > 0 {
            let st = stream.pointee.start_time != Self.nopts ? stream.pointee.start_time : 0
            cap = toSamples(st + stream.pointee.duration)
        }
        var end: Int64 = startTs
        var margin = Int64(sampleRate)
        while true {
            let estimatedEnd = cap != .max ? cap : Int64.max
            let from = estimatedEnd == .max ? startTs : max(startTs, estimatedEnd - margin)
            end = startTs
            if from <= startTs { try rewind() } else { try positionRaw(atTimestamp: from) }
            var got = false
            while let ts = try receiveFrameRaw() {
                let n = Int64(frame.pointee.nb_samples)
                if n > 0 { got = true; end = max(end, ts + n) }
            }
            if got || from <= startTs { break }
            margin *= 4
        }
        // MP4 written with a 1/1000 s movie timescale (FFmpeg's default) states the edit list's
        // duration rounded to the millisecond, and FFmpeg cuts the last packet to it; the track's
        // own duration (its sample table) is exact. Trust the track when the two differ by less
        // than a millisecond.
        if formatName.hasPrefix("mov,"), cap != .max, io == nil, firstDts < 0,
           let f = fmt, let raw = GaplessTimeline.trackDurationIgnoringEditList(f, streamIndex: streamIndex) {
            let exactEnd = toSamples(raw + firstDts)
            let tick = Int64((Double(sampleRate) / 1000).rounded(.up)) + 1
            if exactEnd > cap, exactEnd - cap <= tick, exactEnd <= end { cap = exactEnd }
        }
        length = max(0, min(end, cap) - startTs)

        // iTunes gapless info (files without an edit list).
        if let smpb = GaplessTimeline.iTunSMPB(fmt, stream), length > smpb.frames {
            if length >= smpb.delay + smpb.frames {
                startTs += smpb.delay
            }
            length = smpb.frames
        }
        if let h = headerFrames, !indexed, h > length + Int64(max(4096, codecCtx?.pointee.frame_size ?? 0)) {
            addWarning(.truncated(path: name, expectedFrames: h, actualFrames: length))
            reportedTruncation = true
        }
        try seek(to: 0)
    }

    // MARK: Positioning (raw, before trimming)

    private func resetDecoder() {
        if let codecCtx { avcodec_flush_buffers(codecCtx) }
        segment = -1
        nextBoundary = .max
        skipBefore = .min
        discardBefore = .min
        checkFirstPacket = false
        inputEOF = false
        decoderEOF = false
        pending.clear()
    }

    /// Positions the demuxer at the first packet, with a fresh decoder.
    private func rewind() throws(TonearmError) {
        resetDecoder()
        let r = openCodec()
        if r < 0 { throw .decodeFailed(path: name, detail: "cannot reopen the decoder (\(Self.errorString(r)))") }
        if indexed {
            try positionAt(packet: 0)
        } else {
            try seekToFirstPacket()
            packetCounter = 0
        }
        if segmentSamples > 0 {
            segment = 0
            nextBoundary = segmentBase + segmentSamples
        }
    }

    /// Indexed mode: positions the demuxer so that the next audio packet is `k` (or one before it).
    private func positionAt(packet k: Int) throws(TonearmError) {
        var r: Int32
        if byteSeek || k == 0 && index.positions[0] >= 0 && byteSeek {
            r = av_seek_frame(fmt, streamIndex, index.positions[k], AVSEEK_FLAG_BYTE)
            nextPacket = k
        } else {
            if k == 0 {
                r = av_seek_frame(fmt, streamIndex, firstDts, AVSEEK_FLAG_BACKWARD)
                if r < 0 { r = avformat_seek_file(fmt, streamIndex, .min, .min, .max, 0) }
                nextPacket = 0
            } else {
                r = av_seek_frame(fmt, streamIndex, index.demuxerTimestamps[k], AVSEEK_FLAG_BACKWARD)
                nextPacket = -1
            }
        }
        if r < 0 && k == 0 {
            r = av_seek_frame(fmt, -1, 0, AVSEEK_FLAG_BYTE)
            nextPacket = 0
        }
        if r < 0 { throw .decodeFailed(path: name, detail: "seek failed (\(Self.errorString(r)))") }
    }

    /// Positions for reading the stream from sample timestamp `ts` (raw; callers trim).
    private func positionRaw(atTimestamp ts: Int64) throws(TonearmError) {
        resetDecoder()
        if indexed {
            try positionAt(packet: index.packet(containing: ts))
        } else {
            let r = av_seek_frame(fmt, streamIndex, fromSamples(ts), AVSEEK_FLAG_BACKWARD)
            if r < 0 { try rewind() }
            packetCounter = -1
        }
    }

    /// Decodes the next frame into `frame`; returns its sample timestamp (nil at the end of the stream).
    /// Bad packets are skipped and reported as warnings.
    private func receiveFrameRaw() throws(TonearmError) -> Int64? {
        guard let fmt else { return nil }
        while true {
            // Re-read each time: a canonical segment boundary replaces the decoder.
            guard let cc = codecCtx else { return nil }
            if decoderEOF { return nil }
            let r = avcodec_receive_frame(cc, frame)
            if r == 0 {
                consecutiveErrors = 0
                var ts = frame.pointee.pts
                if ts == Self.nopts { ts = frame.pointee.best_effort_timestamp }
                if ts == Self.nopts { return startTs + pos + Int64(pending.count) }
                if !indexed { ts = toSamples(ts) }
                if ts < discardBefore { continue } // canonical preroll
                return ts
            }
            if r == Self.eof { decoderEOF = true; return nil }
            if r != Self.eagain {
                try noteError(r)
                continue
            }
            if inputEOF { decoderEOF = true; return nil }
            let rr = av_read_frame(fmt, packet)
            if rr < 0 {
                // A byte source that failed (a network source after its retries) is an error,
                // not the end of the stream.
                if let f = (io?.reader as? AVIOByteSourceReader)?.failure { throw f }
                inputEOF = true
                avcodec_send_packet(cc, nil)
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            if packet.pointee.pts != Self.nopts && packet.pointee.duration > 0 {
                lastPacketEnd = max(lastPacketEnd, packet.pointee.pts + packet.pointee.duration)
            }
            if indexed {
                if nextPacket < 0 {
                    guard let k = index.identify(packet) else {
                        // Cannot place the packet: read from the start instead (always exact).
                        av_packet_unref(packet)
                        try positionAt(packet: 0)
                        if let codecCtx { avcodec_flush_buffers(codecCtx) }
                        continue
                    }
                    nextPacket = k
                }
                guard nextPacket < index.count else { continue }
                let k = nextPacket
                nextPacket += 1
                if checkFirstPacket {
                    checkFirstPacket = false
                    if k > index.firstPacket(atOrAfter: skipBefore) {
                        // Landed past the preroll: read from the start, skipping up to it.
                        av_packet_unref(packet)
                        try positionAt(packet: 0)
                        continue
                    }
                }
                if index.timestamps[k] < skipBefore { continue }
                if segment >= 0 && index.timestamps[k] >= nextBoundary {
                    av_packet_unref(packet)
                    try startSegment(segmentOf(index.timestamps[k]))
                    continue
                }
                packetCounter = k
                index.stamp(packet, as: k)
            } else {
                if packetCounter >= 0 { packetCounter += 1 }
                if segmentSamples > 0 {
                    let p = packet.pointee.pts != Self.nopts ? packet.pointee.pts : packet.pointee.dts
                    if p != Self.nopts {
                        if checkFirstPacket {
                            checkFirstPacket = false
                            if p > segmentSeekTarget {
                                // Landed past the preroll: read from the start, skipping up to it.
                                av_packet_unref(packet)
                                try seekToFirstPacket()
                                continue
                            }
                        }
                        let ts = toSamples(p)
                        if ts < skipBefore { continue }
                        if segment >= 0 && ts >= nextBoundary {
                            av_packet_unref(packet)
                            try startSegment(segmentOf(ts))
                            continue
                        }
                    }
                }
            }
            let s = avcodec_send_packet(cc, packet)
            if s < 0 && s != Self.eagain { try noteError(s) }
        }
    }

    private func noteError(_ code: Int32) throws(TonearmError) {
        consecutiveErrors += 1
        addWarning(.corruptPacket(path: name, packetIndex: max(0, packetCounter), framePosition: pos,
                                  detail: Self.errorString(code)))
        if consecutiveErrors > 500 {
            throw .decodeFailed(path: name, detail: "too many consecutive bad packets (\(Self.errorString(code)))")
        }
    }

    func addWarning(_ w: AudioWarning) {
        warningLock.lock()
        if warningList.count < 1000 { warningList.append(w) }
        warningLock.unlock()
    }

    func takeWarnings() -> [AudioWarning] {
        warningLock.lock()
        defer { warningLock.unlock() }
        let w = warningList
        warningList.removeAll()
        return w
    }

    // MARK: Trimmed reading

    /// Decodes until there are pending frames; false at the end of the stream.
    private func fillPending() throws(TonearmError) -> Bool {
        while pending.count == 0 {
            if pos >= length { return false }
            guard let ts = try receiveFrameRaw() else {
                if pos < length && !reportedTruncation {
                    reportedTruncation = true
                    addWarning(.truncated(path: name, expectedFrames: length, actualFrames: pos))
                }
                return false
            }
            let n = Int64(frame.pointee.nb_samples)
            if n <= 0 { continue }
            let fpos = ts - startTs
            if checkOvershoot {
                checkOvershoot = false
                if fpos > pos { overshot = true; return false }
            }
            var drop: Int64 = 0, gap: Int64 = 0
            if fpos < pos {
                drop = pos - fpos
                if drop >= n { continue }
            } else if fpos > pos {
                gap = fpos - pos
                if gap > Int64(sampleRate) { pos = fpos; gap = 0 }
            }
            var take = n - drop
            if pos + gap + take > length { take = max(0, length - pos - gap) }
            if gap > length - pos { gap = length - pos }
            let total = Int(gap + take)
            if total == 0 { continue }
            pending.reserve(total, channels: channels)
            if gap > 0 {
                for c in 0..<channels { pending.channelData[c].update(repeating: 0, count: Int(gap)) }
            }
            if take > 0 && !convertFrame(frame, channels: channels, from: Int(drop), count: Int(take),
                                         into: pending.channelData, offset: Int(gap)) {
                throw .decodeFailed(path: name, detail: "unsupported sample format \(frame.pointee.format)")
            }
            pending.filled(total)
        }
        return true
    }

    /// Preroll before a seek target so the decoder's output there is warmed up (in samples, packets, bytes).
    private var preroll: (samples: Int64, packets: Int, bytes: Int) {
        switch codecID {
        case AV_CODEC_ID_MP3, AV_CODEC_ID_MP2, AV_CODEC_ID_MP1: (0, 4, 2048)
        case AV_CODEC_ID_AAC: (2048, 2, 0)
        case AV_CODEC_ID_VORBIS: (4096, 2, 0)
        // FFmpeg's CELT decoder keeps float energy predictions that converge to the bits of a
        // straight read only after about a second (80 ms, the spec's preroll, leaves errors of
        // 1e-2); 2 s made every measured CELT seek bit-identical. Its SILK (low bit rate) LPC
        // state is float and never converges exactly: differences stay near 2e-6.
        case AV_CODEC_ID_OPUS: (Int64(sampleRate) * 2, 2, 0)
        case AV_CODEC_ID_FLAC, AV_CODEC_ID_ALAC, AV_CODEC_ID_WAVPACK, AV_CODEC_ID_TTA, AV_CODEC_ID_APE: (0, 0, 0)
        default: codecID.rawValue >= AV_CODEC_ID_PCM_S16LE.rawValue && codecID.rawValue < AV_CODEC_ID_ADPCM_IMA_QT.rawValue
            ? (0, 0, 0) : (4096, 2, 0)
        }
    }

    /// Moves to frame `target` (0...length) exactly.
    func seek(to target: Int64) throws(TonearmError) {
        let target = max(0, min(target, length))
        if target == length {
            resetDecoder()
            pos = length
            return
        }
        if segmentSamples > 0 {
            // Canonical: decode the segment whose packets hold the target, as a straight read does.
            let goal = startTs + target
            var s = indexed ? segmentOf(index.timestamps[index.packet(containing: goal)]) : segmentOf(goal)
            while true {
                try startSegment(s)
                pos = target
                overshot = false
                checkOvershoot = true
                _ = try fillPending()
                checkOvershoot = false
                if !overshot || s == 0 { return }
                s -= 1 // the target is in the last frame of the previous segment
            }
        }
        let p = preroll
        for attempt in 0..<4 {
            let scale = Int64(1) << (2 * attempt)
            let goal = startTs + target
            if indexed {
                var k = index.packet(containing: goal)
                var packets = 0, bytes = 0
                while k > 0 && (packets < p.packets * Int(scale) || bytes < p.bytes * Int(scale)
                                || goal - index.timestamps[k] < p.samples * scale) {
                    k -= 1; packets += 1; bytes += Int(index.sizes[k])
                }
                if k == 0 { try rewind() } else { resetDecoder(); try positionAt(packet: k) }
            } else {
                let ts = goal - p.samples * scale
                if ts <= startTs { try rewind() } else { try positionRaw(atTimestamp: ts) }
            }
            pos = target
            overshot = false
            checkOvershoot = true
            _ = try fillPending()
            checkOvershoot = false
            if !overshot { return }
        }
        try rewind()
        pos = target
        _ = try fillPending()
    }

    /// Reads up to `count` frames into planar channel pointers at `offset`; returns frames read.
    func read(into out: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, count: Int) throws(TonearmError) -> Int {
        var done = 0
        while done < count {
            if pending.count == 0 { guard try fillPending() else { break } }
            let n = pending.take(into: out, offset: offset + done, frames: count - done)
            pos += Int64(n); done += n
        }
        return done
    }

    /// Reads up to `count` frames interleaved into `out`; returns frames read.
    func readInterleaved(into out: UnsafeMutablePointer<Float>, count: Int) throws(TonearmError) -> Int {
        var done = 0
        while done < count {
            if pending.count == 0 { guard try fillPending() else { break } }
            let n = pending.takeInterleaved(into: out + done * channels, frames: count - done)
            pos += Int64(n); done += n
        }
        return done
    }
}

/// A Swift string from a NUL-terminated C buffer.
func stringFromCBuffer(_ buf: [CChar]) -> String {
    let bytes = buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
