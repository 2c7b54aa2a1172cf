// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// The frame to show at a given time, pulled by a renderer as its clock moves (the pull side of
/// `AVPlayerItemVideoOutput`: `hasNewPixelBuffer(forItemTime:)`, `copyPixelBuffer(forItemTime:)`),
/// over one file's video track.
///
/// Decodes forward as time advances; a frame whose whole time on screen passed between two
/// pulls is decoded but never handed out, and counted in ``framesSkipped`` (the dropped frames
/// of a renderer that cannot keep up, or of playback at rate 2). A time before the frame held,
/// or more than ``seekThreshold`` past it, seeks exactly instead of decoding through.
///
/// Threading: not thread-safe; one thread pulls (frames are values and go anywhere).
public final class VideoFrameReader {
    private let decoder: VideoDecoder
    /// The frame shown at the last time asked, and the one decoded after it (if any).
    private var current: VideoFrame?
    private var upcoming: VideoFrame?
    private var ended = false
    /// The time of the last frame handed out by ``frame(forTime:)``.
    private var handedOut: Double?

    /// Frames decoded and passed over without being handed out (not counting those a seek
    /// passes over).
    public private(set) var framesSkipped = 0
    /// How far ahead of the frame held a time may be before it is reached by seeking rather
    /// than by decoding every frame in between (seconds).
    public var seekThreshold: Double = 2

    public init(path: String, track: Int? = nil, outputFormat: VideoFrame.PixelFormat = .yuv420p) throws(TonearmError) {
        decoder = try VideoDecoder(path: path, track: track, outputFormat: outputFormat)
    }

    public var track: VideoTrackInfo { decoder.track }
    public var warnings: [VideoWarning] { decoder.warnings }

    /// Whether the frame shown at `time` is another than the one last handed out.
    public func hasNewFrame(forTime time: Double) throws(TonearmError) -> Bool {
        guard let f = try advance(to: time) else { return false }
        return f.time != handedOut
    }

    /// The frame shown at `time` (seconds on the item's timeline): the last one that starts at
    /// or before it. Nil before the first frame. After the last frame it stays on screen.
    public func frame(forTime time: Double) throws(TonearmError) -> VideoFrame? {
        let f = try advance(to: time)
        if let f { handedOut = f.time }
        return f
    }

    /// Moves `current` to the frame shown at `time`.
    private func advance(to time: Double) throws(TonearmError) -> VideoFrame? {
        if let c = current, time < c.time - 1e-9 || time > c.time + seekThreshold {
            try jump(to: time)
            return current
        }
        if current == nil {
            guard let first = try decoder.nextFrame() else { ended = true; return nil }
            current = first
            if time > first.time + seekThreshold { try jump(to: time); return current }
            if time < first.time - 1e-9 { return nil }
        }
        while true {
            if upcoming == nil && !ended {
                upcoming = try decoder.nextFrame()
                if upcoming == nil { ended = true }
            }
            guard let next = upcoming, next.time <= time + 1e-9 else { break }
            if current?.time != handedOut { framesSkipped += 1 }
            current = next
            upcoming = nil
        }
        return current
    }

    private func jump(to time: Double) throws(TonearmError) {
        upcoming = nil
        ended = false
        do {
            current = try decoder.seek(to: max(time, 0), exact: true)
        } catch {
            // Past the end: the last frame stays; decode to it.
            guard case .invalidArgument = error else { throw error }
            current = try decoder.seek(to: max(0, (decoder.duration ?? time) - 0.001), exact: true)
            ended = true
        }
    }
}
