// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import Synchronization
import TonearmCore

/// What `avformat_find_stream_info` found in a file's streams — each stream's codec parameters,
/// frame rates, start and duration, and the container's start, duration and bit rate — kept for
/// a later opener of the same file, which then opens it without probing it again.
///
/// `tonearm play VIDEO` probes the file once (``ProbedInputs``); the item's sound takes that
/// opened context, and the picture's demuxer used to open the file and probe it a second time
/// (a few milliseconds at 1080p: the probe decodes the first frames) before its first frame.
/// Now ``InputOpening/openProbed(_:)`` opens it and copies these findings in instead, for the
/// containers whose header names every stream with its codec (MP4/MOV and Matroska/WebM); any
/// other container, or a file whose streams differ from the findings', is probed as before.
///
/// Threading: immutable after it is made; the parameters it holds are its own copies.
package final class ProbeFindings: @unchecked Sendable {
    private struct Stream {
        var parameters: UnsafeMutablePointer<AVCodecParameters>
        var realFrameRate: AVRational
        var averageFrameRate: AVRational
        var startTime: Int64
        var duration: Int64
    }

    let formatName: String
    private let startTime: Int64
    private let duration: Int64
    private let bitRate: Int64
    private let streams: [Stream]

    /// The findings of `context`, opened and probed (`avformat_find_stream_info`); nil for a
    /// container whose header may not name every stream (its streams are found by reading).
    init?(context: UnsafeMutablePointer<AVFormatContext>) {
        let name = String(cString: context.pointee.iformat.pointee.name)
        guard Self.headerNamesEveryStream(name) else { return nil }
        var streams: [Stream] = []
        for i in 0..<Int(context.pointee.nb_streams) {
            guard let st = context.pointee.streams[i], let copy = avcodec_parameters_alloc() else { break }
            guard avcodec_parameters_copy(copy, st.pointee.codecpar) >= 0 else {
                var p: UnsafeMutablePointer<AVCodecParameters>? = copy
                avcodec_parameters_free(&p)
                break
            }
            streams.append(Stream(parameters: copy, realFrameRate: st.pointee.r_frame_rate,
                                  averageFrameRate: st.pointee.avg_frame_rate,
                                  startTime: st.pointee.start_time, duration: st.pointee.duration))
        }
        guard streams.count == Int(context.pointee.nb_streams) else {
            Self.free(streams)
            return nil
        }
        formatName = name
        startTime = context.pointee.start_time
        duration = context.pointee.duration
        bitRate = context.pointee.bit_rate
        self.streams = streams
    }

    deinit { Self.free(streams) }

    private static func free(_ streams: [Stream]) {
        for s in streams {
            var p: UnsafeMutablePointer<AVCodecParameters>? = s.parameters
            avcodec_parameters_free(&p)
        }
    }

    /// MP4/MOV (FFmpeg's `mov,mp4,m4a,3gp,3g2,mj2`) and Matroska/WebM (`matroska,webm`): their
    /// header lists every stream with its codec and its codec's setup; streams of MPEG-TS, MPEG-PS,
    /// FLV or AVI may show up only as packets are read.
    static func headerNamesEveryStream(_ formatName: String) -> Bool {
        formatName.hasPrefix("mov,") || formatName.hasPrefix("matroska")
    }

    /// Whether `context` (the same file, opened and not probed) has the streams these findings
    /// describe: the same container, as many streams, each of the same type and codec.
    func matches(_ context: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard String(cString: context.pointee.iformat.pointee.name) == formatName,
              Int(context.pointee.nb_streams) == streams.count else { return false }
        for (i, s) in streams.enumerated() {
            guard let st = context.pointee.streams[i] else { return false }
            let par = st.pointee.codecpar.pointee
            if par.codec_type != s.parameters.pointee.codec_type || par.codec_id != s.parameters.pointee.codec_id {
                return false
            }
        }
        return true
    }

    /// Copies the findings into `context` (which ``matches(_:)``), as the probe would have left
    /// it. False when a copy failed (out of memory): the caller probes then.
    func apply(to context: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        for (i, s) in streams.enumerated() {
            guard let st = context.pointee.streams[i], avcodec_parameters_copy(st.pointee.codecpar, s.parameters) >= 0 else {
                return false
            }
            st.pointee.r_frame_rate = s.realFrameRate
            st.pointee.avg_frame_rate = s.averageFrameRate
            st.pointee.start_time = s.startTime
            st.pointee.duration = s.duration
        }
        context.pointee.start_time = startTime
        context.pointee.duration = duration
        context.pointee.bit_rate = bitRate
        return true
    }
}
