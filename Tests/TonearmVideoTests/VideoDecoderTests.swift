// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// The video decoder against FFmpeg's own decode of the same file: every frame, once, in order,
/// bit-identical, for each codec and container of issue 19; seeks land on FFmpeg's frame.
@Suite(.offThePool) struct VideoDecoderTests {
    let dir: TempDir
    init() throws { dir = try TempDir("video-decoder") }

    @Test(arguments: VideoClips.all)
    func everyFrameMatchesFFmpeg(kind: VideoClips.Kind) throws {
        defer { dir.remove() }
        let clip = try VideoClips.make(kind, in: dir)
        let expected = try VideoClips.frameMD5s(clip)
        let times = try VideoClips.frameTimes(clip)
        let d = try VideoDecoder(path: clip)
        #expect(d.track.codecName == kind.name)
        let frames = try VideoClips.decodeAll(d)
        #expect(frames.count == expected.count, "\(kind): \(frames.count) frames, ffmpeg \(expected.count)")
        #expect(expected.count >= 25, "\(kind): ffmpeg decoded only \(expected.count) frames")
        #expect(frames.map(\.md5) == expected, "\(kind): frames differ from ffmpeg's")
        #expect(frames.allSatisfy { $0.pixelFormat == .yuv420p && $0.width == 64 && $0.height == 48 })
        // In presentation order, on the same timeline as ffprobe's (from the container's start).
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.time < $1.time }, "\(kind): \(frames.map(\.time))")
        if times.count == frames.count {
            for (f, t) in zip(frames, times) { #expect(abs(f.time - t.time) < 0.0015, "\(kind): \(f.time) vs \(t.time)") }
        } else {
            Issue.record("\(kind): ffprobe lists \(times.count) frames")
        }
        #expect(d.warnings.isEmpty, "\(d.warnings)")
    }

    /// Exact seeks give the frame shown at the time — bit for bit what `ffmpeg -ss T -frames:v 1`
    /// gives for a time on a frame, and the frame before for a time between two frames; a
    /// non-exact seek gives the key frame at or before the time.
    @Test(arguments: VideoClips.all.filter { ["h264.mp4", "h264.ts", "hevc.mkv", "vp9.webm", "mpeg4.mp4", "av1.mkv"].contains($0.description) })
    func seeksLandOnFFmpegsFrame(kind: VideoClips.Kind) throws {
        defer { dir.remove() }
        let clip = try VideoClips.make(kind, in: dir)
        let expected = try VideoClips.frameMD5s(clip)
        let times = try VideoClips.frameTimes(clip)
        try #require(times.count == expected.count)
        let d = try VideoDecoder(path: clip)
        var ffmpegSeekFailures: [String] = []
        // Frames on and after key frames, mid-GOP, the last; in an order that goes back and forth.
        for i in [17, 3, 12, 13, 29, 0, 22].filter({ $0 < times.count }) {
            let t = times[i].time
            let atFrame = try d.seek(to: t, exact: true)
            #expect(atFrame.md5 == expected[i], "\(kind): exact seek to frame \(i) (\(t) s) gave the frame at \(atFrame.time)")
            // ffmpeg's own accurate seek to the same time (microseconds, rounded down as ffmpeg reads it).
            let ss = String(format: "%.6f", (t * 1e6).rounded(.down) / 1e6)
            let theirs = try VideoClips.frameMD5s(clip, extra: ["-ss", ss])
            // ffmpeg shows the first frame at or after the time: frame i of its own full decode.
            if let first = theirs.first, expected.firstIndex(of: first) == i {
                #expect(first == atFrame.md5)
            } else {
                // ffmpeg's seek gave another frame than its own full decode shows at that time:
                // none, a later one (MPEG-TS: its search lands a GOP late and its trim starts
                // there), or one its full decode never shows (MPEG-4 Part 2's open GOPs: the
                // leading B-frames decoded without their reference). Ours is checked against
                // the full decode above.
                ffmpegSeekFailures.append("\(ss): \(theirs.first.map { expected.firstIndex(of: $0).map { "frame \($0)" } ?? "a frame of its own" } ?? "no frame")")
            }
            // Half a frame later the same frame is still shown.
            if i + 1 < times.count {
                let mid = (t + times[i + 1].time) / 2
                #expect(try d.seek(to: mid, exact: true).md5 == expected[i], "\(kind): seek to \(mid)")
                // And decoding goes on with the next frame.
                #expect(try d.nextFrame()?.md5 == expected[i + 1], "\(kind): after the seek to \(mid)")
            }
            let key = try d.seek(to: t, exact: false)
            let keyIndex = try #require(times.lastIndex { $0.key && $0.time <= t + 1e-6 })
            #expect(key.md5 == expected[keyIndex], "\(kind): key-frame seek to \(t) gave the frame at \(key.time)")
            #expect(abs(key.time - times[keyIndex].time) < 0.0015)
        }
        // ffmpeg's seek agrees with its own full decode (and so with ours) at most times; where it
        // does not, the full decode is the reference (checked above). In MPEG-TS, ffmpeg 5.1's
        // seek lands a GOP late at most times (and past the end for the last frame).
        let points = [17, 3, 12, 13, 29, 0, 22].filter { $0 < times.count }.count
        #expect(kind.ext == "ts" || ffmpegSeekFailures.count * 2 < points, "\(kind): ffmpeg's own seek disagrees with its full decode at \(ffmpegSeekFailures)")
        if !ffmpegSeekFailures.isEmpty { print("\(kind): ffmpeg -ss differs from ffmpeg's full decode at \(ffmpegSeekFailures)") }
        // Past the end: an error that says so.
        #expect(throws: TonearmError.self) { try d.seek(to: 60, exact: true) }
        // Seeking is no damage: no warning (a seek past the end reads to the end, which is where
        // the file says it ends).
        #expect(d.warnings.isEmpty, "\(kind): \(d.warnings)")
    }
}
