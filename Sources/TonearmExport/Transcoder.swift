// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCodecs
import TonearmCore

/// A re-encoding export: decodes one audio track with ``AudioFile`` (encoder delay and padding
/// removed, sample-accurate seeking), keeps exactly the frames of the time range
/// (`start × rate` rounded, for `duration × rate` frames), and encodes them with the preset's
/// encoder into the file type's container. PCM and lossless output at the source's rate
/// therefore holds exactly those samples; lossy encoders add their own delay, which the
/// container states (MP4 edit list, Ogg pre-skip, LAME header, CAF packet table).
struct Transcoder: ExportJob {
    let sourcePath: String
    let trackID: Int
    let fileType: ExportFileType
    let choice: EncoderChoice
    let timeRange: AssetTimeRange?
    let tags: ExportTags
    let language: String?

    func run(target: OutputTarget, cancel: CancelFlag, progress: (Double) -> Void) throws(TonearmError) {
        let file = try AudioFile(path: sourcePath, audioStream: trackID)
        let rate = Int(file.processingFormat.sampleRate), channels = file.processingFormat.channelCount
        var start: Int64 = 0, count = file.length
        if let r = timeRange?.frames(sampleRate: rate) {
            start = min(r.start, file.length)
            count = min(r.count, file.length - start)
        }
        if start > 0 { try file.seek(toFrame: start) }

        let cafAAC = fileType == .caf && choice.encoderName == "aac"
        let muxer = cafAAC ? nil : try MuxerOutput(fileType: fileType, target: target)
        let encoder = try AudioEncoder(choice: choice, sampleRate: rate, channels: channels,
                                       globalHeader: cafAAC || muxer?.needsGlobalHeader == true, path: target.path)
        let enc = encoder.context
        let sink: PacketSink
        if let muxer {
            if avcodec_parameters_from_context(muxer.stream.pointee.codecpar, enc) < 0 {
                throw .writeFailed(path: target.path, reason: "cannot set the stream parameters")
            }
            muxer.stream.pointee.time_base = encoder.timeBase
            try muxer.writeHeader(tags: tags, language: language, codecName: choice.encoderName)
            sink = .muxer(muxer)
        } else {
            let asc = enc.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(enc.pointee.extradata_size))) } ?? []
            sink = .caf(try CAFAACWriter(target: target, sampleRate: encoder.outputRate, channels: Int(enc.pointee.ch_layout.nb_channels),
                                         audioSpecificConfig: asc, tags: tags))
        }
        let outTB = sink.timeBase(rate: enc.pointee.sample_rate)
        let encTB = encoder.timeBase
        let trimsOggEnd = fileType == .ogg || fileType == .opus
        let delay = Int64(enc.pointee.initial_padding)
        // Set once every input frame is in: the output frames the stream must end at. Ogg ends
        // a stream at the last granule position (pts + duration), so the encoder's end padding
        // is cut by shortening the packets past it.
        var endAt: Int64?
        let write = { (packet: UnsafeMutablePointer<AVPacket>) throws(TonearmError) in
            if trimsOggEnd, let endAt, packet.pointee.pts + packet.pointee.duration > endAt + delay {
                packet.pointee.duration = max(0, endAt + delay - packet.pointee.pts)
            }
            av_packet_rescale_ts(packet, encTB, outTB)
            packet.pointee.stream_index = 0
            try sink.write(packet)
        }

        let chunk = 4096
        guard let buffer = AudioPCMBuffer(format: file.processingFormat, frameCapacity: chunk) else {
            throw .writeFailed(path: target.path, reason: "out of memory")
        }
        var done: Int64 = 0
        while done < count {
            if cancel.isSet { throw .exportCancelled(path: target.path) }
            try file.read(into: buffer, frameCount: Int(min(Int64(chunk), count - done)))
            let n = buffer.frameLength
            if n == 0 { break }
            try encoder.encode(buffer.floatChannelData, count: n, emit: write)
            done += Int64(n)
            progress(Double(done) / Double(max(1, count)))
        }
        let produced = (done * Int64(encoder.outputRate) + Int64(rate) / 2) / Int64(rate)
        endAt = produced
        try encoder.finish(emit: write)
        try sink.finish(priming: Int64(enc.pointee.initial_padding), validFrames: produced)
    }
}
