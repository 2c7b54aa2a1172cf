// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// Writes interleaved Float32 audio as it comes (a recording) through one FFmpeg encoder into
/// one file at its final path: the header at `init` (the file exists from then on), the
/// encoded frames with each ``write(_:frames:)``, the trailer — for WAV the RIFF sizes, for FLAC
/// STREAMINFO's sample count and MD5 — at ``finish()``. What AudioRecorder (TonearmRecord) uses
/// on its writer thread. One thread at a time.
package final class RecordingFileWriter {
    package let path: String
    package let channels: Int
    private let muxer: MuxerOutput
    private let encoder: AudioEncoder
    private let planes: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let chunk = 4096
    private var finished = false
    /// Frames given so far.
    package private(set) var framesWritten: Int64 = 0

    /// Creates (or replaces) the file at `path` as `fileType` with FFmpeg's `encoder` (`bits`: the
    /// sample depth for PCM and lossless, `bitRate` for lossy), and writes its header. Throws
    /// `writeFailed` (the folder, the disk, or the encoder refusing the parameters) and
    /// `encoderUnavailable`, naming `path`.
    package init(path: String, fileType: ExportFileType, encoder name: String, bits: Int?, bitRate: Int?,
                 sampleRate: Int, channels: Int) throws(TonearmError) {
        self.path = path
        self.channels = channels
        // FFmpeg's own log off (its AAC encoder prints statistics when closed), as for decoding:
        // what goes wrong is thrown, typed.
        tonearm_av_log_quiet()
        let target = OutputTarget(path: path, temporaryPath: path, overwrite: true)
        muxer = try MuxerOutput(fileType: fileType, target: target)
        encoder = try AudioEncoder(choice: EncoderChoice(encoderName: name, bitRate: bitRate, bits: bits),
                                   sampleRate: sampleRate, channels: channels,
                                   globalHeader: muxer.needsGlobalHeader, path: path)
        guard encoder.outputRate == sampleRate else {
            throw .writeFailed(path: path, reason: "the \(name) encoder does not take \(sampleRate) Hz")
        }
        if avcodec_parameters_from_context(muxer.stream.pointee.codecpar, encoder.context) < 0 {
            throw .writeFailed(path: path, reason: "cannot set the stream parameters")
        }
        muxer.stream.pointee.time_base = encoder.timeBase
        planes = .allocate(capacity: channels)
        for c in 0..<channels { planes[c] = .allocate(capacity: chunk) }
        try muxer.writeHeader(tags: ExportTags(metadata: AudioMetadata(), includingArtwork: false), language: nil, codecName: name)
    }

    deinit {
        for c in 0..<channels { planes[c].deallocate() }
        planes.deallocate()
    }

    /// Encodes and writes `frames` frames of interleaved Float32 (``channels`` per frame).
    package func write(_ samples: UnsafePointer<Float>, frames: Int) throws(TonearmError) {
        var done = 0
        while done < frames {
            let n = min(chunk, frames - done)
            for c in 0..<channels {
                let plane = planes[c]
                var src = samples + done * channels + c
                for i in 0..<n {
                    plane[i] = src.pointee
                    src += channels
                }
            }
            try encoder.encode(UnsafePointer(planes), count: n, emit: emit)
            done += n
            framesWritten += Int64(n)
        }
    }

    private func emit(_ packet: UnsafeMutablePointer<AVPacket>) throws(TonearmError) {
        av_packet_rescale_ts(packet, encoder.timeBase, muxer.stream.pointee.time_base)
        packet.pointee.stream_index = 0
        try muxer.write(packet)
    }

    /// Flushes the encoder and writes the trailer (the header's sizes and length), then closes
    /// the file. Once; later calls do nothing.
    package func finish() throws(TonearmError) {
        guard !finished else { return }
        finished = true
        try encoder.finish(emit: emit)
        try muxer.finish()
    }
}
