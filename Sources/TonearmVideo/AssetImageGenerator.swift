// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// Pictures of a video at given times (AVAssetImageGenerator): exact, or any frame within the
/// requested tolerances (by default the key frame the file's index gives for the time, which
/// needs no decoding forward), scaled to fit ``maximumSize`` keeping the display aspect, as RGBA ``VideoFrame``s
/// whose `time` is the actual time of the frame shown.
///
/// Threading: not thread-safe; one thread (or task) uses a generator at a time. The frames it
/// returns go anywhere.
public final class AssetImageGenerator {
    /// A size in pixels; zero in a dimension means no limit there.
    public struct Size: Sendable, Hashable {
        public var width: Int
        public var height: Int
        public static let zero = Size(width: 0, height: 0)
        public init(width: Int, height: Int) { self.width = width; self.height = height }
    }

    public let path: String
    /// The largest picture wanted; the picture is scaled down to fit, never up (`.zero`: its own size).
    public var maximumSize: Size = .zero
    /// Whether the track's rotation is applied (the picture comes out upright). As Apple's, off
    /// by default: the frame then keeps its `rotation` for the renderer to apply.
    public var appliesPreferredTrackTransform = false
    /// How far before and after the requested time the frame may be (seconds). Both infinite,
    /// the default as on Apple's: the first frame decoded where the demuxer lands for the time
    /// (a key frame, usually the one at or before it). Infinite before and zero after: the key
    /// frame at or before the time. Both zero: exact, the frame shown at the time.
    public var requestedTimeToleranceBefore: Double = .infinity
    public var requestedTimeToleranceAfter: Double = .infinity

    private let decoder: VideoDecoder

    /// Opens the best video track of `path` (or `track`). Throws `noVideoTrack` for a file
    /// without video and the file errors.
    public init(path: String, track: Int? = nil) throws(TonearmError) {
        self.path = path
        decoder = try VideoDecoder(path: path, track: track, outputFormat: .rgba)
    }

    /// The track pictures come from.
    public var track: VideoTrackInfo { decoder.track }

    /// The picture at `time` (seconds from the start). Throws `invalidArgument` for a time
    /// before 0 or past the end.
    public func image(at time: Double) throws(TonearmError) -> VideoFrame {
        guard time.isFinite, time >= 0 else { throw .invalidArgument("\(path): \(time) is not a time in the video") }
        if let d = decoder.duration, time > d + 1e-6 {
            throw .invalidArgument("\(path): \(VideoWarning.seconds(time)) is past the end of the video (it ends at \(VideoWarning.seconds(d)))")
        }
        let t = track
        // Square pixels, upright when asked: the shape the picture is shown in.
        let rotation = appliesPreferredTrackTransform ? t.rotation : 0
        let quarter = rotation == 90 || rotation == 270
        let squareWidth = max(1, Int((Double(t.codedWidth) * Double(t.pixelAspectRatio.horizontal)
                                     / Double(t.pixelAspectRatio.vertical)).rounded()))
        var (w, h) = quarter ? (t.codedHeight, squareWidth) : (squareWidth, t.codedHeight)
        var scale = 1.0
        if maximumSize.width > 0 { scale = min(scale, Double(maximumSize.width) / Double(w)) }
        if maximumSize.height > 0 { scale = min(scale, Double(maximumSize.height) / Double(h)) }
        w = max(1, Int((Double(w) * scale).rounded()))
        h = max(1, Int((Double(h) * scale).rounded()))
        decoder.outputSize = quarter ? (h, w) : (w, h)
        let f = try decoder.seek(to: time, toleranceBefore: max(requestedTimeToleranceBefore, 0),
                                 toleranceAfter: max(requestedTimeToleranceAfter, 0))
        var out = rotation == 0 ? f : f.rotatedUpright(by: rotation)
        out.pixelAspectRatio = .square
        out.rotation = appliesPreferredTrackTransform ? 0 : t.rotation
        return out
    }

    /// The pictures at each of `times`, in order; each a picture or the error for that time.
    public func images(at times: [Double]) -> [Result<VideoFrame, TonearmError>] {
        times.map { t in Result { () throws(TonearmError) -> VideoFrame in try image(at: t) } }
    }
}

extension VideoFrame {
    /// An RGBA frame turned `degrees` clockwise (90, 180, 270), with rotation 0.
    public func rotatedUpright(by degrees: Int) -> VideoFrame {
        precondition(pixelFormat == .rgba, "rotatedUpright(by:) turns RGBA frames")
        let d = ((degrees % 360) + 360) % 360
        guard d != 0, let p = planes.first else { return self }
        let (nw, nh) = d == 180 ? (width, height) : (height, width)
        var out = [UInt8](repeating: 0, count: nw * nh * 4)
        for y in 0..<height {
            for x in 0..<width {
                let (nx, ny): (Int, Int)
                switch d {
                case 90: (nx, ny) = (height - 1 - y, x)
                case 180: (nx, ny) = (width - 1 - x, height - 1 - y)
                default: (nx, ny) = (y, width - 1 - x)
                }
                let s = y * p.bytesPerRow + x * 4, o = (ny * nw + nx) * 4
                out[o] = p.bytes[s]; out[o + 1] = p.bytes[s + 1]; out[o + 2] = p.bytes[s + 2]; out[o + 3] = p.bytes[s + 3]
            }
        }
        return VideoFrame(pixelFormat: .rgba, width: nw, height: nh,
                          planes: [Plane(bytes: out, bytesPerRow: nw * 4, width: nw, height: nh)], time: time,
                          duration: duration, pixelAspectRatio: pixelAspectRatio, rotation: 0)
    }
}
