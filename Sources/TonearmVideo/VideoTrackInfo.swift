// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCodecs
import TonearmCore

/// One video stream of a file, as its headers describe it (the video side of `AVAssetTrack`):
/// codec, sizes, frame rate, rotation, pixel aspect, pixel format and HDR transfer.
/// Pictures attached to audio files (cover art) are not video and are not listed.
public struct VideoTrackInfo: Sendable, Hashable, Codable {
    /// The stream's index in the container (the track number `tonearm info` shows).
    public var trackID: Int
    /// FFmpeg's short codec name (`h264`, `hevc`, `vp9`, `av1`, `mpeg4`, …).
    public var codecName: String
    /// The codec profile when FFmpeg names one (`High`, `Main 10`).
    public var profile: String?
    /// The picture's size in pixels as coded.
    public var codedWidth: Int
    public var codedHeight: Int
    /// The size to show it at, upright, in square pixels (pixel aspect and rotation applied).
    public var displayWidth: Int
    public var displayHeight: Int
    /// Frames per second (FFmpeg's guess from the stream's rates); nil when unknown.
    public var frameRate: Double?
    /// The frame rate as a fraction (numerator, denominator), e.g. 30000/1001; nil when unknown.
    public var frameRateNumerator: Int?
    public var frameRateDenominator: Int?
    /// Degrees to turn the picture clockwise to show it upright (0, 90, 180, 270), from the
    /// display matrix.
    public var rotation: Int
    public var pixelAspectRatio: VideoFrame.PixelAspectRatio
    /// FFmpeg's pixel format name (`yuv420p`, `yuv420p10le`, …).
    public var pixelFormat: String?
    /// Bits per sample of the luma plane (8, 10, 12).
    public var bitDepth: Int?
    /// The HDR transfer when the stream states one: `PQ` (SMPTE ST 2084) or `HLG`.
    public var hdrTransfer: String?
    /// The stream's duration in seconds when stated.
    public var duration: Double?
    public var isDefault: Bool
}

extension VideoTrackInfo {
    /// Every video stream of the file at `path` (cover art left out), in container order.
    /// Throws the file errors (`fileNotFound`, `notMediaFile`, …); a file without video gives [].
    /// The opened file is kept (``ProbedInputs``) for the next opener of the same file — the
    /// item that plays it, its sound or its picture — which then does not probe it again.
    public static func tracks(inFileAt path: String) throws(TonearmError) -> [VideoTrackInfo] {
        let input = try VideoInput(path: path)
        let tracks = input.videoStreams.map { input.info(of: $0) }
        input.keepForNextOpener()
        return tracks
    }

    /// Every video stream of a container already opened (an item's audio, opened on a network
    /// source), read from its stream parameters; the context stays its owner's.
    package static func tracks(inOpened context: UnsafeMutablePointer<AVFormatContext>, name: String) -> [VideoTrackInfo] {
        let input = VideoInput(borrowing: context, name: name)
        return input.videoStreams.map { input.info(of: $0) }
    }
}

/// A file opened for reading its video: the format context (with stream info) and its I/O,
/// through TonearmCodecs' opener. Closes both when it goes. One thread at a time.
final class VideoInput {
    let path: String
    var fmt: UnsafeMutablePointer<AVFormatContext>?
    private let io: AnyObject?
    /// False for a context borrowed from its owner (not closed here), or handed on.
    private var owned: Bool

    init(path: String) throws(TonearmError) {
        self.path = path
        let opened = try InputOpening.openProbed(path)
        fmt = opened.context
        io = opened.io
        owned = true
    }

    /// Opens the bytes of `source` (a network download); `name` (its URL) names it.
    init(byteSource source: any ByteSource, name: String) throws(TonearmError) {
        path = name
        let opened = try InputOpening.openProbed(byteSource: source, name: name)
        fmt = opened.context
        io = opened.io
        owned = true
    }

    init(borrowing context: UnsafeMutablePointer<AVFormatContext>, name: String) {
        path = name
        fmt = context
        io = nil
        owned = false
    }

    /// Hands the context (opened on ``path``, probed, nothing read beyond) to ``ProbedInputs``
    /// for the next opener of the same file, rather than closing it.
    func keepForNextOpener() {
        guard owned, let fc = fmt else { return }
        owned = false
        fmt = nil
        ProbedInputs.keep(path: path, context: fc, io: io)
    }

    deinit {
        if owned && fmt != nil { avformat_close_input(&fmt) }
        withExtendedLifetime(io) {}
    }

    var context: UnsafeMutablePointer<AVFormatContext> { fmt! }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[index]! }

    /// The indices of the video streams that are video (not attached pictures).
    var videoStreams: [Int] {
        (0..<Int(context.pointee.nb_streams)).filter { i in
            let s = stream(i)
            return s.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                && s.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
        }
    }

    /// The container's start, in seconds: item times count from here (as `ffmpeg -ss` does).
    var startTime: Double {
        let s = context.pointee.start_time
        return s == tonearm_av_nopts_value() ? 0 : Double(s) / Double(tonearm_av_time_base())
    }

    /// The container's duration in seconds, when known.
    var duration: Double? {
        let d = context.pointee.duration
        return d == tonearm_av_nopts_value() || d <= 0 ? nil : Double(d) / Double(tonearm_av_time_base())
    }

    /// Degrees clockwise from the stream's display matrix (as ffmpeg's own `get_rotation`).
    func rotation(of s: UnsafeMutablePointer<AVStream>) -> Int {
        var size = 0
        guard let data = av_stream_get_side_data(s, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else { return 0 }
        let angle = data.withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
        guard angle.isFinite else { return 0 }
        let theta = Int(-angle.rounded())
        let r = ((theta % 360) + 360) % 360
        // Only quarter turns are shown; round anything else to the nearest one.
        return ((r + 45) / 90 % 4) * 90
    }

    func info(of index: Int) -> VideoTrackInfo {
        let s = stream(index)
        let par = s.pointee.codecpar.pointee
        var codecName = String(cString: avcodec_get_name(par.codec_id))
        if par.codec_id == AV_CODEC_ID_NONE {
            // A codec FFmpeg does not know: its fourcc when the container gives one.
            let tag = par.codec_tag
            let chars = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * UInt32($0))) }
            codecName = tag != 0 && chars.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
                ? "unknown (\(String(decoding: chars, as: UTF8.self)))" : "unknown"
        }
        var profile: String?
        if par.profile != FF_PROFILE_UNKNOWN, let d = avcodec_descriptor_get(par.codec_id), let profiles = d.pointee.profiles {
            var p = profiles
            while p.pointee.profile != FF_PROFILE_UNKNOWN {
                if p.pointee.profile == par.profile { profile = String(cString: p.pointee.name); break }
                p += 1
            }
        }
        let sar = av_guess_sample_aspect_ratio(context, s, nil)
        let aspect = VideoFrame.PixelAspectRatio(horizontal: Int(sar.num), vertical: Int(sar.den))
        let rotation = rotation(of: s)
        let shape = VideoFrame(pixelFormat: .yuv420p, width: Int(par.width), height: Int(par.height), planes: [],
                               time: 0, pixelAspectRatio: aspect, rotation: rotation)
        let display = shape.displaySize
        let rate = av_guess_frame_rate(context, s, nil)
        let format = AVPixelFormat(rawValue: par.format)
        var formatName: String?
        var depth: Int?
        if par.format >= 0 {
            if let n = av_get_pix_fmt_name(format) { formatName = String(cString: n) }
            if let d = av_pix_fmt_desc_get(format) { depth = Int(d.pointee.comp.0.depth) }
        }
        var hdr: String?
        if par.color_trc == AVCOL_TRC_SMPTE2084 { hdr = "PQ" } else if par.color_trc == AVCOL_TRC_ARIB_STD_B67 { hdr = "HLG" }
        var duration: Double?
        if s.pointee.duration != tonearm_av_nopts_value() && s.pointee.duration > 0 {
            duration = Double(s.pointee.duration) * Double(s.pointee.time_base.num) / Double(s.pointee.time_base.den)
        }
        let hasRate = rate.num > 0 && rate.den > 0
        return VideoTrackInfo(
            trackID: index, codecName: codecName, profile: profile,
            codedWidth: Int(par.width), codedHeight: Int(par.height),
            displayWidth: display.width, displayHeight: display.height,
            frameRate: hasRate ? Double(rate.num) / Double(rate.den) : nil,
            frameRateNumerator: hasRate ? Int(rate.num) : nil, frameRateDenominator: hasRate ? Int(rate.den) : nil,
            rotation: rotation, pixelAspectRatio: aspect, pixelFormat: formatName, bitDepth: depth,
            hdrTransfer: hdr, duration: duration ?? self.duration,
            isDefault: s.pointee.disposition & AV_DISPOSITION_DEFAULT != 0)
    }
}
