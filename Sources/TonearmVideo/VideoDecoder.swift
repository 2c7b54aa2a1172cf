// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCodecs
import TonearmCore

/// Something wrong in a video stream that did not stop decoding: counted, reported, skipped.
public enum VideoWarning: Sendable, Hashable, CustomStringConvertible {
    /// Packets or frames the decoder refused (corrupt data), counted since the decoder opened;
    /// `firstAt` is the item time of the first, in seconds.
    case corruptData(path: String, count: Int, firstAt: Double)
    /// The stream ended before the file said it would: `decodedTo` seconds of `expected`.
    case truncated(path: String, expected: Double, decodedTo: Double, detail: String)

    public var description: String {
        switch self {
        case .corruptData(let p, let n, let t):
            "\(p): \(n) corrupt video packet\(n == 1 ? "" : "s") skipped (the first at \(Self.seconds(t)))"
        case .truncated(let p, let e, let d, let detail):
            "\(p): truncated video: decoded to \(Self.seconds(d)) of \(Self.seconds(e)) (\(detail))"
        }
    }

    static func seconds(_ t: Double) -> String {
        let ms = Int((t * 1000).rounded())
        return "\(ms / 1000).\(String(ms % 1000 + 1000).dropFirst()) s"
    }
}

/// Decodes one video stream of a file, in presentation order, to ``VideoFrame``s (the decoding
/// half of `AVPlayerItemVideoOutput` and `AVAssetImageGenerator`).
///
/// Frames come out as `yuv420p` straight from the decoder's planes when that is its format (no
/// conversion), through libswscale otherwise (10-bit, 4:2:2, …) or when `rgba` is asked for.
/// Times are seconds on the item's timeline: from the container's start, as `ffmpeg -ss` counts.
/// Corrupt packets are counted and skipped (``warnings``); decoding goes on.
///
/// Threading: not thread-safe. One decoding thread makes it and uses it; the frames it returns
/// are values that may go to any thread.
public final class VideoDecoder {
    /// The file's path, as given.
    public let path: String
    /// The stream decoded.
    public let track: VideoTrackInfo
    /// Every video stream of the file (cover art left out).
    public let tracks: [VideoTrackInfo]
    /// The format of the frames returned.
    public var outputFormat: VideoFrame.PixelFormat
    /// The size of the frames returned (nil: the coded size). Scaling goes through libswscale.
    public var outputSize: (width: Int, height: Int)?
    /// Frames returned since opening (by ``nextFrame()`` and by seeks).
    public private(set) var framesDecoded = 0
    /// The subtitles drawn into the frames returned from now on (nil: none, the frames as
    /// decoded, bit for bit). Text subtitles are drawn by libass through libavfilter (loaded when
    /// first needed), bitmap ones (PGS, DVD, DVB) by blending their pictures.
    public var subtitle: SubtitleSelection? {
        didSet { if subtitle != oldValue { burner = nil } }
    }
    private var burner: SubtitleBurner?

    private let input: VideoInput
    private let streamIndex: Int32
    private let stream: UnsafeMutablePointer<AVStream>
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    /// The frame being received, and the one held back (a seek read one frame too far).
    private var frame: UnsafeMutablePointer<AVFrame>
    private var held: UnsafeMutablePointer<AVFrame>
    private var hasHeld = false
    private var flushed = false
    private var readError: Int32?
    private let converter = FrameConverter()
    private let timeBase: Double
    private let startTime: Double
    private var lastTime: Double?
    private var lastEnd: Double = 0
    private var corruptCount = 0
    private var firstCorrupt: Double?
    private var seeked = false
    /// Frames received since the last seek: an end met right after a seek (a seek at or past
    /// the end) says nothing about the file's length.
    private var receivedSinceSeek = 0
    /// After a seek: whether the first key packet is still to come, and its time once seen —
    /// frames shown before it are an open GOP's leading pictures, whose references were not
    /// decoded, and are dropped.
    private var awaitingKey = false
    private var leadingBefore: Double?
    /// The decode time (dts) of the first key packet after a seek, to seek before it.
    private var landedKeyDecodeTime: Double?
    private var packetsRead = 0

    /// Opens `path` and its best video stream, or stream `track` (its container index) when given.
    /// Throws `noVideoTrack` for a file without video (cover art does not count),
    /// `noSuchTrack` for a `track` that is not video, `unsupportedCodec` when FFmpeg has no
    /// decoder for it, and the file errors.
    public convenience init(path: String, track: Int? = nil, outputFormat: VideoFrame.PixelFormat = .yuv420p) throws(TonearmError) {
        try self.init(input: VideoInput(path: path), track: track, outputFormat: outputFormat)
    }

    /// Opens the video read from `source` (a progressive HTTP download: a `NetworkByteSource` of
    /// its own, not one another demuxer reads — the decoder moves its position); `name` (the URL)
    /// is its ``path`` in messages. As ``init(path:track:outputFormat:)`` otherwise; a failure of
    /// the source while opening is thrown as it is (`TonearmError.network`). Reads block on the
    /// source as long as it does (bounded by its network limits; cancelling it ends them).
    /// `timelineStart`: the item time at which the source's bytes begin (an HLS stream opened at
    /// a segment after the first: that segment's start), added to every frame's time.
    /// `timestampOrigin`: instead, the stream timestamp (seconds) that is the item's time 0 — a
    /// stream that goes on from an earlier one (HLS segments) keeps the first one's timeline by
    /// its timestamps, exactly where a segment's stated start is not where its frames are.
    public convenience init(byteSource source: any ByteSource, name: String, track: Int? = nil,
                            outputFormat: VideoFrame.PixelFormat = .yuv420p, timelineStart: Double = 0,
                            timestampOrigin: Double? = nil) throws(TonearmError) {
        try self.init(input: VideoInput(byteSource: source, name: name), track: track, outputFormat: outputFormat,
                      timelineStart: timelineStart, timestampOrigin: timestampOrigin)
    }

    private init(input: VideoInput, track: Int?, outputFormat: VideoFrame.PixelFormat, timelineStart: Double = 0,
                 timestampOrigin: Double? = nil) throws(TonearmError) {
        let path = input.path
        self.path = path
        self.outputFormat = outputFormat
        self.input = input
        let video = input.videoStreams
        let tracks = video.map { input.info(of: $0) }
        self.tracks = tracks
        let chosen: Int
        if let track {
            guard video.contains(track) else {
                throw .noSuchTrack(path: path, track: track, detail: video.isEmpty ? "the file has no video track"
                                   : "video tracks: \(video.map(String.init).joined(separator: ", "))")
            }
            chosen = track
        } else {
            guard let first = video.first else { throw .noVideoTrack(path: path) }
            let best = Int(av_find_best_stream(input.context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0))
            chosen = video.contains(best) ? best : first
        }
        streamIndex = Int32(chosen)
        stream = input.stream(chosen)
        self.track = tracks[video.firstIndex(of: chosen)!]
        timeBase = Double(stream.pointee.time_base.num) / Double(stream.pointee.time_base.den)
        startTime = timestampOrigin ?? (input.startTime - timelineStart)
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        held = av_frame_alloc()
        for i in 0..<Int(input.context.pointee.nb_streams) where i != chosen {
            input.stream(i).pointee.discard = AVDISCARD_ALL
        }
        guard let decoder = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else {
            throw .unsupportedCodec(path: path, codec: self.track.codecName)
        }
        codec = avcodec_alloc_context3(decoder)
        guard let codec else { throw .decodeFailed(path: path, detail: "no memory for the video decoder") }
        avcodec_parameters_to_context(codec, stream.pointee.codecpar)
        codec.pointee.pkt_timebase = stream.pointee.time_base
        codec.pointee.thread_count = 0
        let r = avcodec_open2(codec, decoder, nil)
        if r < 0 {
            throw .decodeFailed(path: path, detail: "the \(self.track.codecName) decoder does not start: \(InputOpening.message(r))")
        }
    }

    deinit {
        if codec != nil { avcodec_free_context(&codec) }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        var h: UnsafeMutablePointer<AVFrame>? = held
        av_frame_free(&h)
    }

    /// The file's duration in seconds (the container's, else the stream's), when known.
    public var duration: Double? { input.duration ?? track.duration }

    /// What went wrong without stopping decoding: corrupt packets (counted) and a stream that
    /// ended early.
    public var warnings: [VideoWarning] {
        var out: [VideoWarning] = []
        if corruptCount > 0 { out.append(.corruptData(path: path, count: corruptCount, firstAt: firstCorrupt ?? lastEnd)) }
        if let t = truncation { out.append(t) }
        return out
    }

    /// Set once the stream has ended short of what the container states.
    private var truncation: VideoWarning?

    /// The next frame in presentation order; nil at the end of the stream.
    public func nextFrame() throws(TonearmError) -> VideoFrame? {
        if hasHeld {
            hasHeld = false
            swap(&frame, &held)
            defer { av_frame_unref(frame) }
            return try makeFrame(frame)
        }
        guard receive(into: frame) else { return nil }
        defer { av_frame_unref(frame) }
        return try makeFrame(frame)
    }

    /// Moves to `time` (seconds on the item's timeline) and returns the frame found there; the
    /// next ``nextFrame()`` continues after it. `exact`: the frame displayed at `time` (decoding
    /// forward from the key frame before it); otherwise the key frame at or before `time`.
    /// Throws `invalidArgument` for a time past the end of the video.
    @discardableResult
    public func seek(to time: Double, exact: Bool) throws(TonearmError) -> VideoFrame {
        try seek(to: time, toleranceBefore: exact ? 0 : .infinity, toleranceAfter: 0)
    }

    /// Moves to `time` and returns the first frame decoded from the key frame before it that is
    /// shown within [`time` − `toleranceBefore`, `time` + `toleranceAfter`], or, when none is,
    /// the frame displayed at `time` (AVFoundation's tolerances: zero and zero is exact).
    @discardableResult
    public func seek(to time: Double, toleranceBefore: Double, toleranceAfter: Double) throws(TonearmError) -> VideoFrame {
        guard time.isFinite, time >= 0 else { throw .invalidArgument("\(path): cannot seek to \(time) s") }
        // Demuxers land on a key frame near the target, not always at or before it (an MPEG-TS
        // search can land a GOP late; a key frame's leading pictures of an open GOP are shown
        // before it): when the first frame is too late, seek again further back — past the
        // start if need be, where every demuxer lands on the first key frame.
        var back = 0.0
        var target = time
        var landed = false
        for _ in 0..<16 {
            seekContainer(to: target)
            landed = receive(into: frame)
            if landed && frameTime(frame) <= time + toleranceAfter + 1e-6 { break }
            if target < -60 {
                if landed { break }
                throw pastEnd(time)
            }
            // Too late (or nothing): just before the decode time of the key frame landed on
            // is where the previous key frame is; when that is no earlier, step back further.
            if let key = landedKeyDecodeTime, key - 0.001 < target {
                target = key - 0.001
            } else {
                back = back == 0 ? 0.5 : back * 2
                target -= back
            }
        }
        guard landed else { throw pastEnd(time) }
        if let end = decodeForward(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter),
           time >= end + 1e-6 {
            // The stream ended before `time`: the last frame is displayed there only while it lasts.
            av_frame_unref(frame)
            throw pastEnd(time)
        }
        defer { av_frame_unref(frame) }
        return try makeFrame(frame)
    }

    /// Decodes on from where the decoder stands, without seeking the container (a stream that
    /// cannot seek: an HLS stream opened at the segment that holds `time`), and returns the
    /// frame found; the next ``nextFrame()`` continues after it. `exact`: the frame displayed at
    /// `time` — the last one shown at or before it, or the first one when every frame comes
    /// later; otherwise the first frame from where the decoder stands (for a stream opened at a
    /// segment, its key frame at or before `time`, as ``seek(to:exact:)`` lands on the key frame
    /// before the target). The frames passed over are not converted. Nil when the stream ends
    /// before any frame.
    public func advance(to time: Double, exact: Bool = true) throws(TonearmError) -> VideoFrame? {
        if hasHeld {
            hasHeld = false
            swap(&frame, &held)
        } else if !receive(into: frame) {
            return nil
        }
        // A stream that ends first shows its last frame.
        _ = decodeForward(to: time, toleranceBefore: exact ? 1e-9 : .infinity, toleranceAfter: 0)
        defer { av_frame_unref(frame) }
        return try makeFrame(frame)
    }

    /// Decodes on from `frame` (the candidate, just received) while the candidate is shown
    /// before `time` − `toleranceBefore`: each next frame replaces it, unless that one comes
    /// after both `time` and `time` + `toleranceAfter` — then it is kept in `held` for
    /// ``nextFrame()`` and the candidate stays. Returns when the stream ended first the time at
    /// which the candidate (its last frame) stops being displayed, else nil.
    private func decodeForward(to time: Double, toleranceBefore: Double, toleranceAfter: Double) -> Double? {
        var t = frameTime(frame)
        while t < time - toleranceBefore {
            guard receive(into: held) else { return t + frameDuration(frame) }
            let next = frameTime(held)
            if next > time + 1e-9 && next > time + toleranceAfter {
                hasHeld = true
                return nil
            }
            swap(&frame, &held)
            av_frame_unref(held)
            t = next
        }
        return nil
    }

    private func pastEnd(_ time: Double) -> TonearmError {
        let end = duration.map { " (the video ends at \(VideoWarning.seconds($0)))" } ?? ""
        return .invalidArgument("\(path): \(VideoWarning.seconds(time)) is past the end of the video\(end)")
    }

    /// Repositions the demuxer at the key frame at or before `time` (as `ffmpeg -ss` asks for
    /// it) and empties the decoder. A time before the start asks for the first key frame.
    private func seekContainer(to time: Double) {
        let ts = Int64(((time + startTime) * Double(tonearm_av_time_base())).rounded(.down))
        if avformat_seek_file(input.context, -1, Int64.min, ts, ts, 0) < 0 {
            _ = avformat_seek_file(input.context, -1, Int64.min, ts, Int64.max, 0)
        }
        leadingBefore = nil
        landedKeyDecodeTime = nil
        receivedSinceSeek = 0
        awaitingKey = true
        avcodec_flush_buffers(codec)
        flushed = false
        hasHeld = false
        av_frame_unref(held)
        av_frame_unref(frame)
        lastTime = nil
        seeked = true
    }

    /// The frame's time on the item's timeline.
    private func frameTime(_ f: UnsafeMutablePointer<AVFrame>) -> Double {
        let pts = f.pointee.best_effort_timestamp != tonearm_av_nopts_value() ? f.pointee.best_effort_timestamp : f.pointee.pts
        if pts == tonearm_av_nopts_value() { return lastTime.map { $0 + frameDuration(f) } ?? 0 }
        return Double(pts) * timeBase - startTime
    }

    private func frameDuration(_ f: UnsafeMutablePointer<AVFrame>) -> Double {
        if f.pointee.pkt_duration > 0 { return Double(f.pointee.pkt_duration) * timeBase }
        if let r = track.frameRate, r > 0 { return 1 / r }
        return 0.04
    }

    /// Receives the next decoded frame into `f`, reading and sending packets as the decoder
    /// asks; corrupt data is counted and skipped. False at the end of the stream.
    private func receive(into f: UnsafeMutablePointer<AVFrame>) -> Bool {
        while true {
            let r = avcodec_receive_frame(codec, f)
            if r == 0 {
                if let key = leadingBefore {
                    if frameTime(f) < key - 1e-6 { av_frame_unref(f); continue }
                    leadingBefore = nil
                }
                if f.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 || f.pointee.decode_error_flags != 0 { noteCorrupt() }
                // How far the stream went, also through frames a seek decodes and passes over.
                lastEnd = max(lastEnd, frameTime(f) + frameDuration(f))
                receivedSinceSeek += 1
                return true
            }
            if r == tonearm_averror_eof() {
                noteEnd()
                return false
            }
            if r != tonearm_averror_eagain() {
                noteCorrupt()
                continue
            }
            if flushed { noteEnd(); return false }
            sendNextPacket()
        }
    }

    private func sendNextPacket() {
        while true {
            let r = av_read_frame(input.context, packet)
            if r < 0 {
                if r != tonearm_averror_eof() { readError = r }
                avcodec_send_packet(codec, nil)
                flushed = true
                return
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            if awaitingKey && packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
                awaitingKey = false
                let nopts = tonearm_av_nopts_value()
                if packet.pointee.pts != nopts {
                    leadingBefore = Double(packet.pointee.pts) * timeBase - startTime
                }
                let dts = packet.pointee.dts != nopts ? packet.pointee.dts : packet.pointee.pts
                if dts != nopts { landedKeyDecodeTime = Double(dts) * timeBase - startTime }
            }
            let s = avcodec_send_packet(codec, packet)
            if s < 0 && s != tonearm_averror_eagain() { noteCorrupt(); continue }
            return
        }
    }

    private func noteCorrupt() {
        corruptCount += 1
        if firstCorrupt == nil { firstCorrupt = lastEnd }
    }

    /// At the end of the stream: whether it ended short of what the container states.
    private func noteEnd() {
        guard truncation == nil else { return }
        let nbFrames = Int(stream.pointee.nb_frames)
        if let e = readError {
            truncation = .truncated(path: path, expected: duration ?? lastEnd, decodedTo: lastEnd,
                                    detail: "reading stopped: \(InputOpening.message(e))")
        } else if !seeked, nbFrames > 0, framesDecoded + (hasHeld ? 1 : 0) < nbFrames {
            truncation = .truncated(path: path, expected: duration ?? lastEnd, decodedTo: lastEnd,
                                    detail: "\(framesDecoded) of \(nbFrames) frames")
        } else if receivedSinceSeek > 0, let d = duration, let rate = track.frameRate, rate > 0, lastEnd < d - max(2 / rate, 0.1) {
            truncation = .truncated(path: path, expected: d, decodedTo: lastEnd, detail: "the stream ends early")
        }
    }

    private func makeFrame(_ f: UnsafeMutablePointer<AVFrame>) throws(TonearmError) -> VideoFrame {
        let t = frameTime(f)
        let d = frameDuration(f)
        lastTime = t
        framesDecoded += 1
        var f = f
        if let subtitle {
            let b = burner ?? SubtitleBurner(selection: subtitle, videoPath: path)
            burner = b
            f = try b.burn(f, time: t)
        }
        let burnt = f
        defer { if let burner, burnt == burner.output { av_frame_unref(burnt) } }
        let w = outputSize?.width ?? Int(f.pointee.width)
        let h = outputSize?.height ?? Int(f.pointee.height)
        guard let planes = converter.planes(of: f, format: outputFormat, width: w, height: h) else {
            let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: f.pointee.format)).map { String(cString: $0) } ?? "\(f.pointee.format)"
            throw .decodeFailed(path: path, detail: "libswscale cannot convert \(name) to \(outputFormat.rawValue)")
        }
        let sar = f.pointee.sample_aspect_ratio
        let aspect = sar.num > 0 && sar.den > 0 ? VideoFrame.PixelAspectRatio(horizontal: Int(sar.num), vertical: Int(sar.den))
            : track.pixelAspectRatio
        // A scaled frame keeps the display shape: its pixel aspect is what makes it so.
        var pixelAspect = aspect
        if w != Int(f.pointee.width) || h != Int(f.pointee.height) {
            let dw = Double(f.pointee.width) * Double(aspect.horizontal) / Double(aspect.vertical)
            let num = Int((dw * Double(h)).rounded()), den = Double(f.pointee.height) * Double(w)
            pixelAspect = Self.reduced(num, Int(den.rounded()))
        }
        return VideoFrame(pixelFormat: outputFormat, width: w, height: h, planes: planes, time: t, duration: d,
                          pixelAspectRatio: pixelAspect, rotation: track.rotation)
    }

    static func reduced(_ a: Int, _ b: Int) -> VideoFrame.PixelAspectRatio {
        func gcd(_ x: Int, _ y: Int) -> Int { y == 0 ? x : gcd(y, x % y) }
        let g = max(gcd(a, b), 1)
        return VideoFrame.PixelAspectRatio(horizontal: a / g, vertical: b / g)
    }
}
