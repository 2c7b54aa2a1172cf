// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// A passthrough export of a composition of several segments: each segment's packets, unchanged,
/// one after the other in one new container — as `AVAssetExportSession` with the passthrough
/// preset exports an `AVMutableComposition` whose segments share a format. Every segment must
/// hold the same codec with the same parameters (sample rate, channel count, and the codec's
/// set-up bytes, such as AAC's AudioSpecificConfig), or the export fails before writing a
/// packet of the segment that differs, naming it. A segment keeps the packets that overlap its
/// range (exact to the packet, as ``Remuxer``'s trims; a segment from 0 keeps the packets before
/// 0 too — AAC's encoder delay, which a decoder of the joined file then plays as sound, as it
/// would on iOS); the output's timestamps run on from one segment to the next. A composition of one segment is exported by ``Remuxer`` itself.
struct CompositionRemuxer: ExportJob {
    struct Segment: Sendable {
        var path: String
        var trackID: Int
        var range: AssetTimeRange
    }

    let segments: [Segment]
    let fileType: ExportFileType
    let tags: ExportTags
    let language: String?

    /// The parameters every segment must share with the first.
    private struct Format: Equatable {
        var codec: AVCodecID
        var sampleRate: Int32
        var channels: Int32
        var extradata: [UInt8]

        init(_ par: UnsafeMutablePointer<AVCodecParameters>) {
            codec = par.pointee.codec_id
            sampleRate = par.pointee.sample_rate
            channels = par.pointee.ch_layout.nb_channels
            extradata = par.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(par.pointee.extradata_size))) } ?? []
        }

        /// What differs from `other`, for the error.
        func difference(from other: Format) -> String {
            if codec != other.codec {
                return "codec \(String(cString: avcodec_get_name(codec))), not \(String(cString: avcodec_get_name(other.codec)))"
            }
            if sampleRate != other.sampleRate { return "\(sampleRate) Hz, not \(other.sampleRate) Hz" }
            if channels != other.channels { return "\(channels) channels, not \(other.channels)" }
            return "other codec set-up bytes (\(extradata.count) bytes)"
        }
    }

    func run(target: OutputTarget, cancel: CancelFlag, progress: (Double) -> Void) throws(TonearmError) {
        var sink: PacketSink?
        var first: Format?
        var outTB = AVRational(num: 1, den: 1)
        var rate: Int64 = 1
        var clock: Int64 = 0      // the output's next timestamp, in samples
        var priming: Int64 = 0
        let total = segments.reduce(0) { $0 + $1.range.duration }
        var done = 0.0
        guard let packet = av_packet_alloc() else { throw .writeFailed(path: target.path, reason: "out of memory") }
        var pkt: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&pkt) }
        for (index, segment) in segments.enumerated() {
            let opened = try FFmpegSupport.openInput(segment.path)
            var input: UnsafeMutablePointer<AVFormatContext>? = opened.context
            defer {
                avformat_close_input(&input)
                withExtendedLifetime(opened.io) {}
            }
            let ic = input!
            guard segment.trackID >= 0, segment.trackID < Int(ic.pointee.nb_streams) else {
                throw .noSuchTrack(path: segment.path, track: segment.trackID, detail: "the file has \(ic.pointee.nb_streams) tracks")
            }
            for i in 0..<Int(ic.pointee.nb_streams) where i != segment.trackID { ic.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL }
            let inStream = ic.pointee.streams[segment.trackID]!
            let par = inStream.pointee.codecpar!
            let format = Format(par)
            if let first {
                guard format == first else {
                    throw .invalidArgument("\(target.path): segment \(index + 1) (\(segment.path)) has \(format.difference(from: first)) — "
                                           + "a passthrough export joins segments of one format; re-encode with another preset")
                }
            } else {
                first = format
                rate = Int64(max(1, par.pointee.sample_rate))
                let made = try Remuxer.makeSink(par: par, inTimeBase: inStream.pointee.time_base, fileType: fileType,
                                                target: target, tags: tags, language: language)
                sink = made
                outTB = made.timeBase(rate: par.pointee.sample_rate)
            }
            let inTB = inStream.pointee.time_base
            let toSamples = AVRational(num: 1, den: Int32(rate))
            let range = segment.range.frames(sampleRate: Int(rate))
            let nopts = tonearm_av_nopts_value()
            var segmentStart: Int64?   // the first kept packet's time, in samples
            var segmentEnd: Int64 = 0  // the end of the last kept packet, relative to segmentStart
            let base = clock
            while true {
                if cancel.isSet { throw .exportCancelled(path: target.path) }
                let r = av_read_frame(ic, packet)
                if r == tonearm_averror_eof() { break }
                if r < 0 { throw .decodeFailed(path: segment.path, detail: "reading packets: \(FFmpegSupport.message(r))") }
                defer { av_packet_unref(packet) }
                guard packet.pointee.stream_index == Int32(segment.trackID) else { continue }
                let ts = packet.pointee.pts != nopts ? packet.pointee.pts : packet.pointee.dts
                guard ts != nopts else { continue }
                let at = av_rescale_q(ts, inTB, toSamples)
                let length = max(1, av_rescale_q(packet.pointee.duration, inTB, toSamples))
                // A segment from the start keeps the packets before 0 (AAC's encoder delay), as
                // the whole file's passthrough does.
                if range.start > 0 && at + length <= range.start { continue }
                if at - range.start >= range.count { break }
                if segmentStart == nil {
                    segmentStart = at
                    // The stream's encoder delay stays where the output begins with it.
                    if index == 0, at < 0 { priming = -at }
                }
                let relative = at - segmentStart!
                let discard = fileType == .ogg || fileType == .opus ? Remuxer.discardAtEnd(packet) : 0
                let now = base + relative - (index == 0 ? priming : 0)
                packet.pointee.pts = av_rescale_q(now, toSamples, outTB)
                packet.pointee.dts = packet.pointee.pts
                packet.pointee.duration = av_rescale_q(length - discard, toSamples, outTB)
                packet.pointee.stream_index = 0
                packet.pointee.pos = -1
                try sink!.write(packet)
                segmentEnd = max(segmentEnd, relative + length)
                if total > 0 { progress(min(1, (done + Double(relative) / Double(rate)) / total)) }
            }
            clock = base + segmentEnd - (index == 0 ? priming : 0)
            done += segment.range.duration
        }
        guard let sink else { throw .invalidArgument("\(target.path): the composition is empty") }
        try sink.finish(priming: priming, validFrames: nil)
    }
}
