// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// A passthrough export: copies one audio track's packets, unchanged, into a new container
/// (`av_read_frame` → `av_interleaved_write_frame`, timestamps rescaled to the output's time
/// base). A time range keeps the packets that overlap it, so a passthrough trim is exact to the
/// packet (1024 samples for AAC, 20 ms for Opus), not to the sample.
struct Remuxer: ExportJob {
    let sourcePath: String
    let trackID: Int
    let fileType: ExportFileType
    let timeRange: AssetTimeRange?
    let tags: ExportTags
    let language: String?

    func run(target: OutputTarget, cancel: CancelFlag, progress: (Double) -> Void) throws(TonearmError) {
        let opened = try FFmpegSupport.openInput(sourcePath)
        var input: UnsafeMutablePointer<AVFormatContext>? = opened.context
        defer {
            avformat_close_input(&input)
            withExtendedLifetime(opened.io) {}
        }
        let ic = input!
        guard trackID >= 0, trackID < Int(ic.pointee.nb_streams) else {
            throw .noSuchTrack(path: sourcePath, track: trackID, detail: "the file has \(ic.pointee.nb_streams) tracks")
        }
        for i in 0..<Int(ic.pointee.nb_streams) where i != trackID { ic.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL }
        let inStream = ic.pointee.streams[trackID]!
        let par = inStream.pointee.codecpar!
        let inTB = inStream.pointee.time_base

        let sink = try Self.makeSink(par: par, inTimeBase: inTB, fileType: fileType, target: target, tags: tags, language: language)
        let outTB = sink.timeBase(rate: par.pointee.sample_rate)

        let nopts = tonearm_av_nopts_value()
        let rate = Int64(max(1, par.pointee.sample_rate))
        let toSamples = AVRational(num: 1, den: Int32(rate))
        let range = timeRange.map { $0.frames(sampleRate: Int(rate)) }
        let wholeSamples: Int64 = {
            if inStream.pointee.duration != nopts, inStream.pointee.duration > 0 {
                return av_rescale_q(inStream.pointee.duration, inTB, toSamples)
            }
            if ic.pointee.duration != nopts, ic.pointee.duration > 0 {
                return ic.pointee.duration * rate / Int64(tonearm_av_time_base())
            }
            return 0
        }()
        // A range's own length, or up to the end for an open-ended one.
        let totalSamples = range.map { r in max(1, wholeSamples > r.start ? min(r.count, wholeSamples - r.start) : r.count) } ?? wholeSamples
        let firstTs = inStream.pointee.start_time != nopts ? av_rescale_q(inStream.pointee.start_time, inTB, toSamples) : 0
        var shift: Int64?  // trimmed output: subtract the first kept packet's timestamp
        // A time base coarser than a sample (Matroska's milliseconds) cannot place packets
        // exactly: the output's timestamps are then counted in samples from the packet durations,
        // starting at minus the encoder delay when the first timestamp is that, rounded.
        let coarse = Int64(inTB.num) * rate > Int64(inTB.den)
        var clock: Int64?
        var priming: Int64 = Int64(par.pointee.initial_padding)
        var firstPacket = true

        guard let packet = av_packet_alloc() else { throw .writeFailed(path: target.path, reason: "out of memory") }
        var pkt: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&pkt) }
        while true {
            if cancel.isSet { throw .exportCancelled(path: target.path) }
            let r = av_read_frame(ic, packet)
            if r == tonearm_averror_eof() { break }
            if r < 0 { throw .decodeFailed(path: sourcePath, detail: "reading packets: \(FFmpegSupport.message(r))") }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == Int32(trackID) else { continue }
            let ts = packet.pointee.pts != nopts ? packet.pointee.pts : packet.pointee.dts
            let at = ts != nopts ? av_rescale_q(ts, inTB, toSamples) : nil
            if let range, let at {
                let end = at + max(1, av_rescale_q(packet.pointee.duration, inTB, toSamples))
                if end <= range.start { continue }
                if at - range.start >= range.count { break }
                if shift == nil { shift = ts }
            }
            if firstPacket, range == nil, let at, at < 0 { priming = -at }
            firstPacket = false
            if let s = shift {
                if packet.pointee.pts != nopts { packet.pointee.pts -= s }
                if packet.pointee.dts != nopts { packet.pointee.dts -= s }
            }
            if let at, totalSamples > 0 {
                progress(Double(at - (range?.start ?? firstTs)) / Double(totalSamples))
            }
            // Ogg ends a stream at the last page's granule position (pts + duration): the
            // samples the source discards at the end are cut by shortening the last packet.
            let discard = fileType == .ogg || fileType == .opus ? Self.discardAtEnd(packet) : 0
            if coarse, let at {
                let durationSamples = av_rescale_q(packet.pointee.duration, inTB, toSamples)
                var now = clock ?? (at - (shift.map { av_rescale_q($0, inTB, toSamples) } ?? 0))
                if clock == nil, shift == nil, par.pointee.initial_padding > 0,
                   abs(at + Int64(par.pointee.initial_padding)) * Int64(inTB.den) <= Int64(inTB.num) * rate {
                    now = -Int64(par.pointee.initial_padding)
                } else if clock == nil, shift != nil, fileType == .ogg || fileType == .opus {
                    // A trimmed Ogg stream keeps the header's pre-skip: its first packet starts
                    // that much before 0, so that what the decoder discards is the warm-up.
                    now = -Int64(par.pointee.initial_padding)
                }
                clock = now + durationSamples
                packet.pointee.pts = av_rescale_q(now, toSamples, outTB)
                packet.pointee.dts = packet.pointee.pts
                packet.pointee.duration = av_rescale_q(durationSamples - discard, toSamples, outTB)
            } else {
                if discard > 0 { packet.pointee.duration -= av_rescale_q(discard, toSamples, inTB) }
                av_packet_rescale_ts(packet, inTB, outTB)
            }
            packet.pointee.stream_index = 0
            packet.pointee.pos = -1
            try sink.write(packet)
        }
        let valid: Int64? = range == nil && inStream.pointee.duration != nopts && inStream.pointee.duration > 0
            ? av_rescale_q(inStream.pointee.duration, inTB, toSamples) : nil
        try sink.finish(priming: priming, validFrames: valid)
    }

    /// The output for packets of a stream with parameters `par`: Tonearm's CAF writer for AAC
    /// in CAF, else an FFmpeg muxer with the parameters copied and its header written.
    static func makeSink(par: UnsafeMutablePointer<AVCodecParameters>, inTimeBase inTB: AVRational, fileType: ExportFileType,
                         target: OutputTarget, tags: ExportTags, language: String?) throws(TonearmError) -> PacketSink {
        if fileType == .caf && par.pointee.codec_id == AV_CODEC_ID_AAC {
            let asc = par.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(par.pointee.extradata_size))) } ?? []
            return .caf(try CAFAACWriter(target: target, sampleRate: Int(par.pointee.sample_rate),
                                         channels: Int(par.pointee.ch_layout.nb_channels), audioSpecificConfig: asc, tags: tags))
        }
        let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
        let out = try MuxerOutput(fileType: fileType, target: target)
        if avcodec_parameters_copy(out.stream.pointee.codecpar, par) < 0 {
            throw .writeFailed(path: target.path, reason: "cannot copy the codec parameters")
        }
        // The source container's tag (mp4a, A_AAC…) means nothing in another container.
        out.stream.pointee.codecpar.pointee.codec_tag = 0
        out.stream.pointee.time_base = inTB
        try out.writeHeader(tags: tags, language: language, codecName: codecName)
        return .muxer(out)
    }

    /// The samples a packet's skip side data says to drop at its end (0 when none).
    static func discardAtEnd(_ packet: UnsafeMutablePointer<AVPacket>) -> Int64 {
        var size = 0
        guard let data = av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 8 else { return 0 }
        return Int64(UInt32(data[4]) | UInt32(data[5]) << 8 | UInt32(data[6]) << 16 | UInt32(data[7]) << 24)
    }
}
