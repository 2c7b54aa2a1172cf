// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// What a container says about where its decoded audio starts and ends, beyond the demuxer's
/// own timestamps: iTunes gapless information (`iTunSMPB`: encoder delay, padding, the original
/// length) and an MP4 track's exact duration when its edit list rounds it. ``FFmpegDecoder``
/// combines these with what decoding the start and the end finds (its timeline), and
/// ``MediaProbe`` with the headers (its stated length).
enum GaplessTimeline {
    /// The duration of audio stream `streamIndex` as its sample table states it (the file opened
    /// again with FFmpeg's `ignore_editlist`), in the stream's time base; nil when unknown.
    static func trackDurationIgnoringEditList(_ fmt: UnsafeMutablePointer<AVFormatContext>, streamIndex: Int32) -> Int64? {
        guard let url = fmt.pointee.url else { return nil }
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        var options: OpaquePointer?
        av_dict_set(&options, "ignore_editlist", "1", 0)
        defer { av_dict_free(&options) }
        InputOpenCounter.noteOpen(String(cString: url))
        guard avformat_open_input(&ctx, url, fmt.pointee.iformat, &options) >= 0, let c = ctx else { return nil }
        defer { avformat_close_input(&ctx) }
        guard Int(streamIndex) < Int(c.pointee.nb_streams), let st = c.pointee.streams[Int(streamIndex)],
              st.pointee.duration > 0 else { return nil }
        return st.pointee.duration
    }

    /// Parses an `iTunSMPB` tag: encoder delay, padding and the original frame count.
    static func iTunSMPB(_ fmt: UnsafeMutablePointer<AVFormatContext>?, _ stream: UnsafeMutablePointer<AVStream>)
        -> (delay: Int64, frames: Int64)? {
        var entry = av_dict_get(stream.pointee.metadata, "iTunSMPB", nil, 0)
        if entry == nil, let fmt { entry = av_dict_get(fmt.pointee.metadata, "iTunSMPB", nil, 0) }
        guard let entry, let value = entry.pointee.value else { return nil }
        let fields = String(cString: value).split(separator: " ").compactMap { Int64($0, radix: 16) }
        guard fields.count >= 4, fields[3] > 0 else { return nil }
        return (fields[1], fields[3])
    }
}
