// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore

/// One subtitle stream of a file (the legible side of `AVAssetTrack`, an option of
/// `AVMediaSelectionGroup`): its codec, language and title. Text subtitles (``isText``: SubRip,
/// ASS/SSA, mov_text, WebVTT) are drawn with libass; bitmap ones (PGS, DVD, DVB) are decoded and
/// blended over 8-bit planar YUV frames.
public struct SubtitleTrackInfo: Sendable, Hashable, Codable {
    /// The stream's index in the container.
    public var trackID: Int
    /// FFmpeg's short codec name (`subrip`, `ass`, `mov_text`, `webvtt`, `hdmv_pgs_subtitle`, …).
    public var codecName: String
    /// The language the container states (ISO 639-2, `eng`), when it does.
    public var language: String?
    /// The stream's title, when the container gives one.
    public var title: String?
    /// Whether the subtitles are text (drawable here), not bitmaps.
    public var isText: Bool
    public var isDefault: Bool
    /// The stream's rank among the file's subtitle streams (0-based; the `subtitles` filter's `si`).
    var subtitleIndex: Int

    /// Every subtitle stream of the file at `path`, in container order.
    public static func tracks(inFileAt path: String) throws(TonearmError) -> [SubtitleTrackInfo] {
        try VideoInput(path: path).subtitleTracks
    }

    /// The `n`th (1-based) subtitle track of `path`, text or bitmap (what `--sub-track n`
    /// draws); `noSuchTrack` saying how many there are when there is no such track.
    public static func track(_ n: Int, inFileAt path: String) throws(TonearmError) -> SubtitleTrackInfo {
        let all = try tracks(inFileAt: path)
        guard n >= 1, n <= all.count else {
            let has = all.count == 1 ? "1 subtitle track" : "\(all.count) subtitle tracks"
            throw .noSuchTrack(path: path, track: n, detail: "--sub-track \(n): the file has \(has)")
        }
        return all[n - 1]
    }

    /// The `n`th (1-based) text subtitle track of `path`; `noSuchTrack` saying how many there
    /// are when there is no such track.
    public static func textTrack(_ n: Int, inFileAt path: String) throws(TonearmError) -> SubtitleTrackInfo {
        let text = try tracks(inFileAt: path).filter(\.isText)
        guard n >= 1, n <= text.count else {
            let has = text.count == 1 ? "1 text subtitle track" : "\(text.count) text subtitle tracks"
            throw .noSuchTrack(path: path, track: n, detail: "--sub-track \(n): the file has \(has)")
        }
        return text[n - 1]
    }
}

/// The subtitles drawn over a video: a subtitle file (`.srt`, `.ass`, …) or a text subtitle
/// stream of the video's own file.
public enum SubtitleSelection: Sendable, Hashable {
    case file(path: String)
    case track(SubtitleTrackInfo)

    /// What a "next subtitle" key (mpv's `j`) steps through for a video: `file` (the `.srt`
    /// beside it, or the file given) first when there is one, then its subtitle `tracks` (text
    /// and bitmap) in container order; "off" (nil) comes after the last.
    public static func cycle(file: String?, tracks: [SubtitleTrackInfo]) -> [SubtitleSelection] {
        (file.map { [.file(path: $0)] } ?? []) + tracks.map { .track($0) }
    }

    /// The subtitle after `current` in `cycle`: the next one, "off" (nil) after the last, the
    /// first after "off" (or after a subtitle not in the cycle); nil when the cycle is empty.
    public static func next(after current: SubtitleSelection?, in cycle: [SubtitleSelection]) -> SubtitleSelection? {
        guard let current, let i = cycle.firstIndex(of: current) else { return cycle.first }
        return i + 1 < cycle.count ? cycle[i + 1] : nil
    }

    /// How a player says which subtitle is drawn, as mpv's OSD does: `Subtitles: 2/3 — #2 subrip
    /// · fra · "Français"`, `Subtitles: 1/3 — film.srt`, `Subtitles: off`.
    public static func describe(_ selection: SubtitleSelection?, in cycle: [SubtitleSelection]) -> String {
        guard let selection else { return "Subtitles: off" }
        let rank = cycle.firstIndex(of: selection).map { "\($0 + 1)/\(cycle.count) — " } ?? ""
        switch selection {
        case .file(let path):
            return "Subtitles: \(rank)\((path as NSString).lastPathComponent)"
        case .track(let t):
            let parts = [t.codecName, t.language, t.title.map { "\"\($0)\"" }].compactMap { $0 }
            return "Subtitles: \(rank)#\(t.trackID) " + parts.joined(separator: " · ")
        }
    }
}

extension VideoInput {
    var subtitleTracks: [SubtitleTrackInfo] {
        var rank = 0
        var out: [SubtitleTrackInfo] = []
        for i in 0..<Int(context.pointee.nb_streams) {
            let s = stream(i)
            let par = s.pointee.codecpar.pointee
            guard par.codec_type == AVMEDIA_TYPE_SUBTITLE else { continue }
            func tag(_ key: String) -> String? {
                guard let e = av_dict_get(s.pointee.metadata, key, nil, 0), let v = e.pointee.value else { return nil }
                let str = String(cString: v)
                return str.isEmpty || str == "und" ? nil : str
            }
            let props = avcodec_descriptor_get(par.codec_id)?.pointee.props ?? 0
            out.append(SubtitleTrackInfo(trackID: i, codecName: String(cString: avcodec_get_name(par.codec_id)),
                                         language: tag("language"), title: tag("title"),
                                         isText: props & Int32(AV_CODEC_PROP_TEXT_SUB) != 0,
                                         isDefault: s.pointee.disposition & AV_DISPOSITION_DEFAULT != 0,
                                         subtitleIndex: rank))
            rank += 1
        }
        return out
    }
}

/// Draws text subtitles into decoded frames with libavfilter's `subtitles` filter (libass;
/// fonts through fontconfig), as `ffmpeg -vf subtitles=…` does. Frames outside every
/// subtitle's interval come out as they went in. libavfilter is loaded on first use, so
/// nothing without a subtitle loads it.
///
/// Threading: not thread-safe; the decoding thread owns it.
final class SubtitleBurner {
    let selection: SubtitleSelection
    /// The video's own file (for a ``SubtitleSelection/track(_:)``).
    private let videoPath: String
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    private var shape: (width: Int32, height: Int32, format: Int32)?
    /// A bitmap track's (PGS, DVD, DVB): drawn without libavfilter.
    private var bitmap: BitmapSubtitleBurner?
    let output: UnsafeMutablePointer<AVFrame>

    init(selection: SubtitleSelection, videoPath: String) {
        self.selection = selection
        self.videoPath = videoPath
        output = av_frame_alloc()
    }

    deinit {
        if graph != nil { avfilter_graph_free(&graph) }
        var o: UnsafeMutablePointer<AVFrame>? = output
        av_frame_free(&o)
    }

    /// `frame` with the subtitles shown at `time` (item seconds) drawn in: ``output``, which
    /// the caller unreferences after use. `frame` is left as it was. A bitmap track's frames
    /// without a subtitle shown then come back as `frame` itself.
    func burn(_ frame: UnsafeMutablePointer<AVFrame>, time: Double) throws(TonearmError) -> UnsafeMutablePointer<AVFrame> {
        if case .track(let t) = selection, !t.isText {
            let b: BitmapSubtitleBurner
            if let known = bitmap { b = known } else { b = try BitmapSubtitleBurner(path: videoPath, track: t) }
            bitmap = b
            let drawn = try b.burn(frame, time: time)
            guard drawn != frame else { return frame }
            av_frame_unref(output)
            av_frame_move_ref(output, drawn)
            return output
        }
        let key = (frame.pointee.width, frame.pointee.height, frame.pointee.format)
        if shape == nil || shape! != key {
            try configure(width: key.0, height: key.1, format: key.2, aspect: frame.pointee.sample_aspect_ratio)
            shape = key
        }
        let savedPTS = frame.pointee.pts
        frame.pointee.pts = Int64((time * 1_000_000).rounded())
        let r = av_buffersrc_add_frame_flags(source, frame, tonearm_av_buffersrc_flag_keep_ref())
        frame.pointee.pts = savedPTS
        guard r >= 0 else { throw failure("the subtitles filter refused a frame: \(InputOpening.message(r))") }
        let g = av_buffersink_get_frame(sink, output)
        guard g >= 0 else { throw failure("the subtitles filter gave no frame: \(InputOpening.message(g))") }
        return output
    }

    private func failure(_ detail: String) -> TonearmError {
        .decodeFailed(path: subtitlePath, detail: detail)
    }

    private var subtitlePath: String {
        switch selection {
        case .file(let p): p
        case .track: videoPath
        }
    }

    private func configure(width: Int32, height: Int32, format: Int32, aspect: AVRational) throws(TonearmError) {
        if graph != nil { avfilter_graph_free(&graph) }
        guard let g = avfilter_graph_alloc() else { throw failure("no memory for the subtitles filter") }
        graph = g
        let sar = aspect.num > 0 && aspect.den > 0 ? aspect : AVRational(num: 1, den: 1)
        let args = "video_size=\(width)x\(height):pix_fmt=\(format):time_base=1/1000000:pixel_aspect=\(sar.num)/\(sar.den)"
        guard let buffer = avfilter_get_by_name("buffer"), let subtitles = avfilter_get_by_name("subtitles"),
              let buffersink = avfilter_get_by_name("buffersink") else {
            throw failure("this FFmpeg has no subtitles filter (it needs libass)")
        }
        guard let src = avfilter_graph_alloc_filter(g, buffer, "in"),
              let sub = avfilter_graph_alloc_filter(g, subtitles, "subtitles"),
              let out = avfilter_graph_alloc_filter(g, buffersink, "out") else {
            throw failure("no memory for the subtitles filter")
        }
        var r = avfilter_init_str(src, args)
        // Set as options, not in an argument string: a path needs no escaping.
        if r >= 0 { r = av_opt_set(sub, "filename", subtitlePath, tonearm_av_opt_search_children()) }
        if r >= 0, case .track(let t) = selection {
            r = av_opt_set_int(sub, "stream_index", Int64(t.subtitleIndex), tonearm_av_opt_search_children())
        }
        if r >= 0 { r = avfilter_init_str(sub, nil) }
        if r >= 0 { r = avfilter_init_str(out, nil) }
        if r >= 0 { r = avfilter_link(src, 0, sub, 0) }
        if r >= 0 { r = avfilter_link(sub, 0, out, 0) }
        if r >= 0 { r = avfilter_graph_config(g, nil) }
        guard r >= 0 else { throw failure("the subtitles cannot be read: \(InputOpening.message(r))") }
        source = src
        sink = out
    }
}

/// The subtitle a playing video shows, shared between whoever chooses it (any thread) and the
/// decoding thread, which reads it before each frame: a switch shows from the next frame
/// decoded (the few frames already queued keep what they had).
public final class SubtitleChoice: Sendable {
    private let value = Mutex<SubtitleSelection?>(nil)

    public init(_ selection: SubtitleSelection? = nil) { value.withLock { $0 = selection } }

    public var selection: SubtitleSelection? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
