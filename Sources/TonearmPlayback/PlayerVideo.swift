// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization
import TonearmCore
import TonearmEngine
import TonearmVideo

/// A picture's size in pixels (`CGSize` of `AVPlayerItem.presentationSize`).
public struct VideoSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public static let zero = VideoSize(width: 0, height: 0)

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)×\(height)" }
}

/// Something that shows a ``Player``'s video as it plays: a window's layer, a file writer, a
/// test. Registered with ``Player/addVideoRenderer(_:)``; it is a ``VideoFrameSink``: `show` is
/// called on the video pipeline's presenting thread with each frame when it is due (against
/// the audio at the speaker), never for a frame dropped as late. This is the hook the window
/// layer (`PlayerLayer`) uses: a layer registers itself as the player's renderer.
///
/// ``preferredPixelFormat`` is the format it wants; when the renderers and outputs of a player
/// disagree, frames are decoded as `yuv420p` and converted for the `rgba` ones.
public protocol PlayerVideoRenderer: VideoFrameSink {
    var preferredPixelFormat: VideoFrame.PixelFormat { get }
}

extension PlayerVideoRenderer {
    public var preferredPixelFormat: VideoFrame.PixelFormat { .yuv420p }
}

/// Pulls the frames of a ``PlayerItem``'s video as it plays (`AVPlayerItemVideoOutput`): add it
/// to the item (``PlayerItem/add(_:)``), then ask, as the display refreshes, whether a new frame
/// is there for the item's current time and copy it.
///
/// The frames are those the player's video pipeline presents: each as its time comes against
/// the audio at the speaker (late ones are dropped, as a display would drop them). The output
/// keeps the last few presented frames, so that a renderer asking a little late still gets the
/// frame due at its time. ``newFrameTimes`` tells, without polling, when a frame came.
///
/// While no output (and no ``PlayerVideoRenderer``) is attached, the player opens and decodes
/// no video at all.
///
/// Threading: every member may be used from any thread.
public final class PlayerItemVideoOutput: PlayerVideoRenderer, Sendable {
    /// The format of the frames handed out (`kCVPixelBufferPixelFormatTypeKey` of the
    /// pixel-buffer attributes): `yuv420p` (three planes) or `rgba`.
    public let pixelFormat: VideoFrame.PixelFormat

    private struct State {
        /// Presented frames, oldest first (a few).
        var recent: [VideoFrame] = []
        /// The time of the last frame copied out (nil: none since the last seek).
        var lastCopied: Double?
    }

    private static let kept = 4
    private let state = Mutex(State())
    private let broadcaster = EventBroadcaster<Double>()

    public init(pixelFormat: VideoFrame.PixelFormat = .yuv420p) {
        self.pixelFormat = pixelFormat
    }

    public var preferredPixelFormat: VideoFrame.PixelFormat { pixelFormat }

    /// The item time of each frame as it is presented, from the moment of the call (the
    /// counterpart of the output's delegate callback `outputMediaDataWillChange`).
    public var newFrameTimes: AsyncStream<Double> { broadcaster.stream(bufferingNewest: 256) }

    /// Whether a frame due at `itemTime` is there that has not been copied yet.
    public func hasNewPixelBuffer(forItemTime itemTime: Double) -> Bool {
        state.withLock { s in
            guard let f = Self.due(in: s.recent, at: itemTime) else { return false }
            return s.lastCopied != f.time
        }
    }

    /// The frame shown at `itemTime` (the last presented frame due at or before it), in
    /// ``pixelFormat``; nil when none has been presented for that time yet.
    public func copyPixelBuffer(forItemTime itemTime: Double) -> VideoFrame? {
        state.withLock { s in
            guard let f = Self.due(in: s.recent, at: itemTime) else { return nil }
            s.lastCopied = f.time
            return f
        }
    }

    /// The latest frame presented, whatever its time.
    public var lastPresentedFrame: VideoFrame? { state.withLock { $0.recent.last } }

    private static func due(in frames: [VideoFrame], at time: Double) -> VideoFrame? {
        // A hair of tolerance: a frame's time and a clock reading of the same instant may differ
        // in the last bits.
        frames.last { $0.time <= time + 1e-6 }
    }

    /// Presenting thread: a frame is shown.
    public func show(_ frame: VideoFrame) {
        let f = frame.pixelFormat == pixelFormat ? frame : frame.converted(to: pixelFormat)
        state.withLock { s in
            // A frame earlier than the newest kept: a seek went back; the old ones are stale.
            if let last = s.recent.last, f.time < last.time {
                s.recent.removeAll()
                s.lastCopied = nil
            }
            s.recent.append(f)
            if s.recent.count > Self.kept { s.recent.removeFirst(s.recent.count - Self.kept) }
        }
        broadcaster.yield(f.time)
    }
}

/// The pipeline's source over a ``VideoDecoder``: the frame a seek returns is held for the next
/// ``nextFrame()``. Used on the pipeline's decoding thread only.
final class DecoderFrameSource: VideoFrameSource, @unchecked Sendable {
    private var decoder: VideoDecoder?
    /// Opens the decoder at the first use (on the decoding thread): a network item's, whose
    /// opening waits for the network.
    private var opening: (() throws(TonearmError) -> VideoDecoder)?
    private var held: VideoFrame?
    /// A seek went past the end of the video: nothing until the next seek.
    private var pastEnd = false
    /// The item's subtitle, read before each frame is decoded.
    private let subtitles: SubtitleChoice?

    init(decoder: VideoDecoder, subtitles: SubtitleChoice? = nil) {
        self.decoder = decoder
        self.subtitles = subtitles
    }

    /// A source whose decoder `open` makes at the first frame or seek, on the decoding thread
    /// (not the player's control queue, which it would hold up while the bytes arrive); a
    /// failure to open fails the pipeline (``PlayerEvent/videoFailed(_:)``).
    init(subtitles: SubtitleChoice? = nil, opening open: @escaping () throws(TonearmError) -> VideoDecoder) {
        self.subtitles = subtitles
        opening = open
    }

    private func opened() throws(TonearmError) -> VideoDecoder {
        if let decoder { return decoder }
        let d = try opening!()
        opening = nil
        decoder = d
        return d
    }

    func nextFrame() throws -> VideoFrame? {
        if let f = held {
            held = nil
            return f
        }
        if pastEnd { return nil }
        let decoder = try opened()
        if let subtitles { decoder.subtitle = subtitles.selection }
        return try decoder.nextFrame()
    }

    func seek(to seconds: Double, exact: Bool) throws {
        held = nil
        pastEnd = false
        let decoder = try opened()
        if let subtitles { decoder.subtitle = subtitles.selection }
        do {
            held = try decoder.seek(to: seconds, exact: exact)
        } catch .invalidArgument {
            // Past the end of the video (its stream is shorter than the sound's): nothing more
            // to show; the picture stays on its last frame.
            pastEnd = true
        }
    }
}

/// The pipeline's sink: hands each frame to the renderers of the moment (the item's outputs and
/// the player's renderers, which may change while it plays).
final class VideoFanout: VideoFrameSink, Sendable {
    private let sinks = Mutex<[any PlayerVideoRenderer]>([])

    func set(_ list: [any PlayerVideoRenderer]) { sinks.withLock { $0 = list } }

    func show(_ frame: VideoFrame) {
        for s in sinks.withLock({ $0 }) {
            s.show(frame.pixelFormat == s.preferredPixelFormat ? frame : frame.converted(to: s.preferredPixelFormat))
        }
    }
}

extension VideoFrame {
    /// The frame in `format`: `yuv420p` → `rgba` by BT.601 limited range (what FFmpeg's
    /// default conversion assumes for untagged video); `rgba` → `yuv420p` likewise.
    func converted(to format: PixelFormat) -> VideoFrame {
        guard format != pixelFormat else { return self }
        var out = self
        out.pixelFormat = format
        if format == .rgba {
            let y = planes[0], u = planes[1], v = planes[2]
            var bytes = [UInt8](repeating: 255, count: width * height * 4)
            for row in 0..<height {
                for col in 0..<width {
                    let Y = (Int(y.bytes[row * y.bytesPerRow + col]) - 16) * 298
                    let U = Int(u.bytes[(row / 2) * u.bytesPerRow + col / 2]) - 128
                    let V = Int(v.bytes[(row / 2) * v.bytesPerRow + col / 2]) - 128
                    let o = (row * width + col) * 4
                    bytes[o] = Self.clamp((Y + 409 * V + 128) >> 8)
                    bytes[o + 1] = Self.clamp((Y - 100 * U - 208 * V + 128) >> 8)
                    bytes[o + 2] = Self.clamp((Y + 516 * U + 128) >> 8)
                }
            }
            out.planes = [Plane(bytes: bytes, bytesPerRow: width * 4, width: width, height: height)]
        } else {
            let p = planes[0]
            let cw = (width + 1) / 2, ch = (height + 1) / 2
            var ys = [UInt8](repeating: 0, count: width * height)
            var us = [UInt8](repeating: 128, count: cw * ch), vs = [UInt8](repeating: 128, count: cw * ch)
            for row in 0..<height {
                for col in 0..<width {
                    let o = row * p.bytesPerRow + col * 4
                    let r = Int(p.bytes[o]), g = Int(p.bytes[o + 1]), b = Int(p.bytes[o + 2])
                    ys[row * width + col] = Self.clamp(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16)
                    if row % 2 == 0 && col % 2 == 0 {
                        us[(row / 2) * cw + col / 2] = Self.clamp(((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128)
                        vs[(row / 2) * cw + col / 2] = Self.clamp(((112 * r - 94 * g - 18 * b + 128) >> 8) + 128)
                    }
                }
            }
            out.planes = [Plane(bytes: ys, bytesPerRow: width, width: width, height: height),
                          Plane(bytes: us, bytesPerRow: cw, width: cw, height: ch),
                          Plane(bytes: vs, bytesPerRow: cw, width: cw, height: ch)]
        }
        return out
    }

    private static func clamp(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }
}

/// The sound of a video without sound: silence as long as the video. It gives a video-only item
/// the audio clock every item has — the output's pace, seeks, rates, the end — so that the
/// player's state machine, seeks and time observers work as for any item (the cost: an output
/// stream of silence; the picture is presented against it as against real sound).
/// Used on the player's decoder thread only.
final class SilentSource: PlaybackSource, @unchecked Sendable {
    let sourceFormat = AudioFormat.standard(sampleRate: 48_000, channels: 2)
    let frameLength: AudioFramePosition
    private var position: AudioFramePosition = 0

    init(duration: Double) {
        frameLength = AudioFramePosition((max(0, duration.isFinite ? duration : 0) * 48_000).rounded())
    }

    func seek(toFrame frame: AudioFramePosition) throws {
        position = max(0, min(frame, frameLength))
    }

    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int {
        let n = Int(min(AudioFramePosition(frameCount), frameLength - position))
        guard n > 0 else { return 0 }
        buffer.update(repeating: 0, count: n * sourceFormat.channelCount)
        position += AudioFramePosition(n)
        return n
    }

    func takeWarnings() -> [AudioWarning] { [] }
}
