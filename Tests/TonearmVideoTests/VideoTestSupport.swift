// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// Clips made by Debian's ffmpeg, and what ffmpeg itself decodes from them.
enum VideoClips {
    /// One codec in one container.
    struct Kind: Sendable, CustomStringConvertible {
        var name: String
        var ext: String
        var args: [String]
        var description: String { "\(name).\(ext)" }
    }

    /// The encoders this ffmpeg has.
    static let encoders: Set<String> = {
        guard let r = try? run("ffmpeg", ["-hide_banner", "-encoders"]) else { return [] }
        return Set(r.stdout.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            return parts.count >= 2 ? String(parts[1]) : nil
        })
    }()

    static let x265Quiet = ["-x265-params", "log-level=none:keyint=12:min-keyint=12:bframes=2"]

    /// Every codec of issue 19 whose encoder is here, in the containers that carry it.
    static var all: [Kind] {
        var kinds: [Kind] = []
        let h264 = ["-c:v", "libx264", "-bf", "3", "-g", "12", "-pix_fmt", "yuv420p"]
        for ext in ["mp4", "mov", "mkv", "ts"] { kinds.append(Kind(name: "h264", ext: ext, args: h264)) }
        let hevc = ["-c:v", "libx265", "-pix_fmt", "yuv420p"] + x265Quiet
        for ext in ["mp4", "mkv", "ts"] { kinds.append(Kind(name: "hevc", ext: ext, args: hevc)) }
        let vp8 = ["-c:v", "libvpx", "-g", "12", "-b:v", "200k"]
        kinds.append(Kind(name: "vp8", ext: "webm", args: vp8))
        kinds.append(Kind(name: "vp8", ext: "mkv", args: vp8))
        let vp9 = ["-c:v", "libvpx-vp9", "-g", "12", "-b:v", "200k", "-deadline", "realtime", "-cpu-used", "8"]
        kinds.append(Kind(name: "vp9", ext: "webm", args: vp9))
        kinds.append(Kind(name: "vp9", ext: "mp4", args: vp9))
        if encoders.contains("libaom-av1") {
            let av1 = ["-c:v", "libaom-av1", "-cpu-used", "8", "-g", "12", "-b:v", "200k"]
            kinds.append(Kind(name: "av1", ext: "mkv", args: av1))
            kinds.append(Kind(name: "av1", ext: "mp4", args: av1))
        }
        let mpeg4 = ["-c:v", "mpeg4", "-bf", "2", "-g", "12", "-q:v", "5"]
        for ext in ["mp4", "mkv", "ts"] { kinds.append(Kind(name: "mpeg4", ext: ext, args: mpeg4)) }
        return kinds
    }

    /// A moving test pattern, 64×48 at 25 fps, `seconds` long, encoded as `kind`.
    static func make(_ kind: Kind, in dir: TempDir, seconds: Double = 1.2, extra: [String] = []) throws -> String {
        let path = dir.file("clip-\(kind.name).\(kind.ext)")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=\(seconds)"] + kind.args + extra + [path])
        return path
    }

    /// `source` remuxed (no re-encoding) with a display matrix: ffmpeg 5.1 writes one from a
    /// `rotate` tag only when copying. The tag 270 makes the matrix that ffprobe shows as −90,
    /// which players (ffmpeg's autorotate too) undo by turning the picture 90° clockwise.
    static func rotated(_ source: String, tag: Int, to path: String) throws -> String {
        try Fixtures.ffmpeg(["-i", source, "-c", "copy", "-metadata:s:v:0", "rotate=\(tag)", path])
        return path
    }

    /// `ffmpeg -f framemd5` of the file's first video stream as yuv420p (see VideoFixtures).
    static func frameMD5s(_ path: String, extra: [String] = []) throws -> [String] {
        try VideoFixtures.frameMD5s(path, inputOptions: extra)
    }

    /// ffprobe's presentation times of the frames and which are key frames (see VideoFixtures).
    static func frameTimes(_ path: String) throws -> [(time: Double, key: Bool)] {
        try VideoFixtures.frameTimes(path)
    }

    /// Every frame the decoder yields, to the end.
    static func decodeAll(_ d: VideoDecoder) throws -> [VideoFrame] {
        var out: [VideoFrame] = []
        while let f = try d.nextFrame() { out.append(f) }
        return out
    }
}

extension VideoFrame {
    var md5: String { FrameMD5.hex(packedBytes) }
}
