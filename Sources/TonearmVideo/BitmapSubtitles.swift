// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCodecs
import TonearmCore

/// Draws a bitmap subtitle stream of the video's own file (PGS, DVD, DVB) into decoded frames, as
/// `ffmpeg -filter_complex '[0:v][0:s]overlay'` does: the stream is read on a demuxer of its own
/// (every other stream discarded) a little ahead of the frames, each event decoded with
/// `avcodec_decode_subtitle2` and kept as YUVA in the frame's matrix (BT.601, limited range), and
/// its rectangles blended over the frames of its interval. An event without an end lasts until
/// the next (PGS clears with an empty one). Planar YUV frames are drawn on, 8-bit and deeper
/// (10, 12, 16 bits a sample, little-endian: the colours scaled to the depth, as ffmpeg's
/// overlay does); others pass as they are.
///
/// Threading: not thread-safe; the decoding thread owns it.
final class BitmapSubtitleBurner {
    /// One rectangle, converted: luma, chroma and alpha at full resolution.
    private struct Rect {
        let x: Int, y: Int, width: Int, height: Int
        let luma: [UInt8], cb: [UInt8], cr: [UInt8], alpha: [UInt8]
    }

    private struct Event {
        let start: Double
        var end: Double
        let rects: [Rect]
    }

    /// How far ahead of a frame the stream is read (an event is decoded before its time).
    private static let readAhead = 1.0
    /// How long events stay after their end (a seek back within it needs no re-reading).
    private static let keep = 30.0

    private let input: VideoInput
    private let streamIndex: Int32
    private let timeBase: Double
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var events: [Event] = []
    /// The time of the last packet read; whether the stream has ended.
    private var readTo = -Double.infinity
    private var ended = false
    /// The time from which the events held are complete (earlier ones were let go).
    private var heldFrom = 0.0
    let output: UnsafeMutablePointer<AVFrame>

    init(path: String, track: SubtitleTrackInfo) throws(TonearmError) {
        input = try VideoInput(path: path)
        let ctx = input.context
        guard track.trackID >= 0, track.trackID < Int(ctx.pointee.nb_streams) else {
            throw .invalidArgument("\(path): no subtitle stream #\(track.trackID)")
        }
        streamIndex = Int32(track.trackID)
        for i in 0..<Int(ctx.pointee.nb_streams) where i != track.trackID {
            input.stream(i).pointee.discard = AVDISCARD_ALL
        }
        let stream = input.stream(track.trackID)
        let tb = stream.pointee.time_base
        timeBase = Double(tb.num) / Double(max(1, tb.den))
        guard let decoder = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id),
              let c = avcodec_alloc_context3(decoder) else {
            throw .decodeFailed(path: path, detail: "no decoder for the subtitles (\(track.codecName))")
        }
        codec = c
        output = av_frame_alloc()
        packet = av_packet_alloc()
        var r = avcodec_parameters_to_context(c, stream.pointee.codecpar)
        c.pointee.pkt_timebase = tb
        if r >= 0 { r = avcodec_open2(c, decoder, nil) }
        guard r >= 0 else {
            throw .decodeFailed(path: path, detail: "the subtitles cannot be decoded: \(InputOpening.message(r))")
        }
    }

    deinit {
        avcodec_free_context(&codec)
        av_packet_free(&packet)
        var o: UnsafeMutablePointer<AVFrame>? = output
        av_frame_free(&o)
    }

    /// `frame` with the subtitle shown at `time` (item seconds) drawn in — ``output``, which the
    /// caller unreferences after use — or `frame` itself when nothing is shown then.
    func burn(_ frame: UnsafeMutablePointer<AVFrame>, time: Double) throws(TonearmError) -> UnsafeMutablePointer<AVFrame> {
        if time < heldFrom { restart(at: time) }
        read(until: time + Self.readAhead)
        let cutoff = time - Self.keep
        if events.contains(where: { $0.end < cutoff }) {
            events.removeAll { $0.end < cutoff }
            heldFrom = max(heldFrom, cutoff)
        }
        guard let shown = events.last(where: { $0.start <= time && time < $0.end }), !shown.rects.isEmpty,
              let layout = Self.planeLayout(frame.pointee.format) else { return frame }
        av_frame_unref(output)
        guard av_frame_ref(output, frame) >= 0, av_frame_make_writable(output) >= 0 else {
            av_frame_unref(output)
            throw .decodeFailed(path: input.path, detail: "no memory to draw the subtitles")
        }
        for rect in shown.rects {
            if layout.bits == 8 {
                blend(rect, into: output, chroma: layout.chroma, sample: UInt8.self, shift: 0)
            } else {
                blend(rect, into: output, chroma: layout.chroma, sample: UInt16.self, shift: layout.bits - 8)
            }
        }
        return output
    }

    /// The chroma subsampling (log2 horizontal, vertical) and bits a sample of the planar YUV
    /// formats drawn on (deeper than 8 bits: little-endian 16-bit words, as this machine's).
    static func planeLayout(_ format: Int32) -> (chroma: (Int, Int), bits: Int)? {
        switch AVPixelFormat(rawValue: format) {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: ((1, 1), 8)
        case AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P: ((1, 0), 8)
        case AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P: ((0, 0), 8)
        case AV_PIX_FMT_YUV420P10LE: ((1, 1), 10)
        case AV_PIX_FMT_YUV422P10LE: ((1, 0), 10)
        case AV_PIX_FMT_YUV444P10LE: ((0, 0), 10)
        case AV_PIX_FMT_YUV420P12LE: ((1, 1), 12)
        case AV_PIX_FMT_YUV422P12LE: ((1, 0), 12)
        case AV_PIX_FMT_YUV444P12LE: ((0, 0), 12)
        case AV_PIX_FMT_YUV420P16LE: ((1, 1), 16)
        case AV_PIX_FMT_YUV422P16LE: ((1, 0), 16)
        case AV_PIX_FMT_YUV444P16LE: ((0, 0), 16)
        default: nil
        }
    }

    /// A seek back before what is held: read again from a little before `time`.
    private func restart(at time: Double) {
        events = []
        ended = false
        readTo = -Double.infinity
        let target = max(0, time - Self.keep) + input.startTime
        _ = avformat_seek_file(input.context, -1, Int64.min, Int64(target * Double(tonearm_av_time_base())),
                               Int64(target * Double(tonearm_av_time_base())), 0)
        avcodec_flush_buffers(codec)
        heldFrom = max(0, time - Self.keep)
    }

    /// Reads and decodes the stream's packets until one is past `limit` or the stream ends.
    private func read(until limit: Double) {
        guard let packet else { return }
        while !ended, readTo <= limit {
            let r = av_read_frame(input.context, packet)
            if r < 0 {
                ended = true
                return
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let pts = packet.pointee.pts != tonearm_av_nopts_value() ? packet.pointee.pts : packet.pointee.dts
            if pts != tonearm_av_nopts_value() { readTo = Double(pts) * timeBase - input.startTime }
            decode(packet)
        }
    }

    private func decode(_ packet: UnsafeMutablePointer<AVPacket>) {
        var sub = AVSubtitle()
        var got: Int32 = 0
        guard avcodec_decode_subtitle2(codec, &sub, &got, packet) >= 0, got != 0 else { return }
        defer { avsubtitle_free(&sub) }
        let base = sub.pts != tonearm_av_nopts_value() ? Double(sub.pts) / Double(tonearm_av_time_base()) - input.startTime : readTo
        let start = base + Double(sub.start_display_time) / 1000
        let hasEnd = sub.end_display_time > sub.start_display_time && sub.end_display_time != UInt32.max
        let end = hasEnd ? base + Double(sub.end_display_time) / 1000 : Double.infinity
        // An open event ends where the next one starts.
        for i in events.indices where events[i].end > start && events[i].start <= start { events[i].end = start }
        var rects: [Rect] = []
        for i in 0..<Int(sub.num_rects) {
            guard let r = sub.rects?[i], r.pointee.type == SUBTITLE_BITMAP, let rect = Self.convert(r) else { continue }
            rects.append(rect)
        }
        events.append(Event(start: start, end: end, rects: rects))
    }

    /// A palette bitmap as YUVA (BT.601, limited range, as swscale converts ffmpeg's RGBA canvas).
    private static func convert(_ r: UnsafeMutablePointer<AVSubtitleRect>) -> Rect? {
        let w = Int(r.pointee.w), h = Int(r.pointee.h)
        guard w > 0, h > 0, let indices = r.pointee.data.0, let paletteBytes = r.pointee.data.1 else { return nil }
        let stride = Int(r.pointee.linesize.0)
        let colors = max(0, min(256, Int(r.pointee.nb_colors)))
        var palette: [(y: UInt8, cb: UInt8, cr: UInt8, a: UInt8)] = []
        paletteBytes.withMemoryRebound(to: UInt32.self, capacity: colors) { p in
            for i in 0..<colors {
                let argb = p[i]
                let a = Double((argb >> 24) & 0xFF), red = Double((argb >> 16) & 0xFF)
                let green = Double((argb >> 8) & 0xFF), blue = Double(argb & 0xFF)
                func clip(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
                palette.append((clip(16 + (65.738 * red + 129.057 * green + 25.064 * blue) / 256),
                                clip(128 + (-37.945 * red - 74.494 * green + 112.439 * blue) / 256),
                                clip(128 + (112.439 * red - 94.154 * green - 18.285 * blue) / 256), UInt8(a)))
            }
        }
        var luma = [UInt8](repeating: 0, count: w * h), cb = luma, cr = luma, alpha = luma
        for y in 0..<h {
            for x in 0..<w {
                let index = Int(indices[y * stride + x])
                guard index < palette.count else { continue }
                let c = palette[index]
                let k = y * w + x
                (luma[k], cb[k], cr[k], alpha[k]) = (c.y, c.cb, c.cr, c.a)
            }
        }
        return Rect(x: Int(r.pointee.x), y: Int(r.pointee.y), width: w, height: h, luma: luma, cb: cb, cr: cr, alpha: alpha)
    }

    /// Blends `rect` over the planes of `frame` (clipped to it), whose samples are `Sample`s
    /// holding values `shift` bits above 8-bit ones; a chroma sample takes the mean of the
    /// alpha-weighted colours of the pixels it covers.
    private func blend<Sample: FixedWidthInteger & UnsignedInteger>(
        _ rect: Rect, into frame: UnsafeMutablePointer<AVFrame>, chroma: (Int, Int), sample: Sample.Type, shift: Int) {
        let fw = Int(frame.pointee.width), fh = Int(frame.pointee.height)
        guard let y8 = frame.pointee.data.0, let u8 = frame.pointee.data.1, let v8 = frame.pointee.data.2 else { return }
        let size = MemoryLayout<Sample>.size
        let yPlane = UnsafeMutableRawPointer(y8).assumingMemoryBound(to: Sample.self)
        let uPlane = UnsafeMutableRawPointer(u8).assumingMemoryBound(to: Sample.self)
        let vPlane = UnsafeMutableRawPointer(v8).assumingMemoryBound(to: Sample.self)
        let ys = Int(frame.pointee.linesize.0) / size, us = Int(frame.pointee.linesize.1) / size
        let vs = Int(frame.pointee.linesize.2) / size
        /// `value` (8-bit) over `under` with alpha `a` (0…255), at the plane's depth.
        func over(_ value: Int, _ a: Int, _ under: Sample) -> Sample {
            Sample(((value << shift) * a + Int(under) * (255 - a) + 127) / 255)
        }
        let x0 = max(0, rect.x), y0 = max(0, rect.y)
        let x1 = min(fw, rect.x + rect.width), y1 = min(fh, rect.y + rect.height)
        guard x0 < x1, y0 < y1 else { return }
        for y in y0..<y1 {
            for x in x0..<x1 {
                let k = (y - rect.y) * rect.width + (x - rect.x)
                let a = Int(rect.alpha[k])
                guard a > 0 else { continue }
                let p = yPlane + y * ys + x
                p.pointee = over(Int(rect.luma[k]), a, p.pointee)
            }
        }
        let (sx, sy) = chroma
        let cw = (fw + (1 << sx) - 1) >> sx, ch = (fh + (1 << sy) - 1) >> sy
        for cy in (y0 >> sy)..<min(ch, ((y1 - 1) >> sy) + 1) {
            for cx in (x0 >> sx)..<min(cw, ((x1 - 1) >> sx) + 1) {
                var aSum = 0, uSum = 0, vSum = 0, n = 0
                for y in (cy << sy)..<((cy + 1) << sy) {
                    for x in (cx << sx)..<((cx + 1) << sx) {
                        n += 1
                        guard x >= rect.x, x < rect.x + rect.width, y >= rect.y, y < rect.y + rect.height else { continue }
                        let k = (y - rect.y) * rect.width + (x - rect.x)
                        let a = Int(rect.alpha[k])
                        aSum += a
                        uSum += a * Int(rect.cb[k])
                        vSum += a * Int(rect.cr[k])
                    }
                }
                guard aSum > 0 else { continue }
                let a = aSum / n  // the block's coverage
                let u = uPlane + cy * us + cx, v = vPlane + cy * vs + cx
                let su = uSum / aSum, sv = vSum / aSum
                u.pointee = over(su, a, u.pointee)
                v.pointee = over(sv, a, v.pointee)
            }
        }
    }
}
