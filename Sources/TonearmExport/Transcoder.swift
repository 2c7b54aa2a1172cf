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
    /// One stretch of source audio: the track's frames in `range` (nil: all of them).
    struct Segment: Sendable {
        var path: String
        var trackID: Int
        var range: AssetTimeRange?
    }

    /// The stretches to encode one after another (one for an asset; a composition's in order).
    /// The output has the first's sample rate and channel count; later ones are converted.
    let segments: [Segment]
    let fileType: ExportFileType
    let choice: EncoderChoice
    let tags: ExportTags
    let language: String?

    func run(target: OutputTarget, cancel: CancelFlag, progress: (Double) -> Void) throws(TonearmError) {
        guard let firstSegment = segments.first else { throw .invalidArgument("\(target.path): nothing to export") }
        let first = try AudioFile(path: firstSegment.path, audioStream: firstSegment.trackID)
        let format = first.processingFormat
        let rate = Int(format.sampleRate), channels = format.channelCount
        // The frames of each segment, known before encoding so that progress is exact.
        var planned: [(file: AudioFile?, start: Int64, count: Int64)] = []
        for (i, seg) in segments.enumerated() {
            let file = i == 0 ? first : nil
            if let r = seg.range?.frames(sampleRate: rate) {
                // An open-ended range (or one past the end) stops at the file's last frame.
                let count = i == 0 ? min(r.count, max(0, first.length - r.start)) : r.count
                planned.append((file, r.start, count))
            } else {
                planned.append((file, 0, i == 0 ? first.length : -1))
            }
        }
        let expected = planned.reduce(Int64(0)) { $0 + max(0, $1.count) }
        // A container can state a length beyond the last decodable frame: a range starting
        // there holds nothing, and is refused as one starting after the end.
        if let r = firstSegment.range, segments.count == 1, planned[0].start >= first.length {
            throw .invalidArgument("\(target.path): the time range \(r) starts after the end of \(firstSegment.path) (\(Int((first.duration * 1000).rounded())) ms)")
        }

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
        guard let buffer = AudioPCMBuffer(format: format, frameCapacity: chunk) else {
            throw .writeFailed(path: target.path, reason: "out of memory")
        }
        var done: Int64 = 0
        for (i, seg) in segments.enumerated() {
            let file: AudioFile
            if let opened = planned[i].file { file = opened } else { file = try AudioFile(path: seg.path, audioStream: seg.trackID) }
            // A segment at another rate or channel count is converted to the first's.
            let segRate = Int(file.processingFormat.sampleRate)
            try encoder.changeInput(sampleRate: segRate, channels: file.processingFormat.channelCount)
            guard let segBuffer = file.processingFormat == format ? buffer : AudioPCMBuffer(format: file.processingFormat, frameCapacity: chunk) else {
                throw .writeFailed(path: target.path, reason: "out of memory")
            }
            var start = planned[i].start, count = planned[i].count
            if segRate != rate, let r = seg.range?.frames(sampleRate: segRate) { (start, count) = r }
            start = min(start, file.length)
            count = count < 0 ? file.length : min(count, file.length - start)
            if start > 0 { try file.seek(toFrame: start) }
            var segmentDone: Int64 = 0
            while segmentDone < count {
                if cancel.isSet { throw .exportCancelled(path: target.path) }
                try file.read(into: segBuffer, frameCount: Int(min(Int64(chunk), count - segmentDone)))
                let n = segBuffer.frameLength
                if n == 0 { break }
                try encoder.encode(segBuffer.floatChannelData, count: n, emit: write)
                segmentDone += Int64(n)
                done += Int64(n)
                progress(Double(done) / Double(max(1, expected)))
            }
        }
        let produced = encoder.framesOut
        endAt = produced
        try encoder.finish(emit: write)
        try sink.finish(priming: Int64(enc.pointee.initial_padding), validFrames: produced)
    }
}
