// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Media fixtures generated at test time with the real `ffmpeg` command.
public enum Fixtures {
    /// Runs `ffmpeg -v error -y ARGS`; throws with ffmpeg's message when it fails.
    public static func ffmpeg(_ args: [String]) throws {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args)
        if r.status != 0 { throw TestSupportError("ffmpeg \(args.joined(separator: " ")) failed: \(r.stderr)") }
    }

    /// The `aevalsrc` expression of a tone: channel `c` is a sine at `freq * (1 + c/4)` Hz, amplitude 0.5.
    public static func toneExpression(channels: Int, freq: Double) -> String {
        (0..<channels).map { c in "0.5*sin(2*PI*\(freq * (1 + Double(c) / 4))*t)" }.joined(separator: "|")
    }

    /// Writes a tone of `seconds` at `rate` with `channels` channels to `path`, encoded with
    /// `codecArgs` (e.g. `["-c:a", "flac"]`; the container follows the extension unless the args
    /// give `-f`). `video` adds a small test-pattern video stream encoded with `video` args.
    public static func tone(path: String, codecArgs: [String], seconds: Double = 2, rate: Int = 48000,
                            channels: Int = 2, freq: Double = 440, video: [String]? = nil) throws {
        var args = ["-f", "lavfi", "-i",
                    "aevalsrc=exprs=\(toneExpression(channels: channels, freq: freq)):s=\(rate):d=\(seconds)"]
        if let video {
            args += ["-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:d=\(seconds)", "-map", "0:a", "-map", "1:v"]
            args += video
        }
        if channels == 6 { args += ["-channel_layout", "5.1"] }
        try ffmpeg(args + codecArgs + [path])
    }

    /// A minute of a 440 Hz sine at `path` (FLAC when it ends in .flac): long enough that a fault a
    /// test causes (a server killed, a sink removed) lands while it plays.
    public static func minuteOfTone(path: String) throws {
        try ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=60", path])
    }

    /// ``minuteOfTone(path:)`` as `long.flac` in `dir`; returns its path.
    public static func minuteOfTone(in dir: TempDir) throws -> String {
        let path = dir.file("long.flac")
        try minuteOfTone(path: path)
        return path
    }

    /// A video-only MP4 (no audio track).
    public static func videoOnly(path: String, seconds: Double = 1) throws {
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:d=\(seconds)", "-c:v", "mpeg4", path])
    }

    /// A small PNG image.
    public static func png(path: String) throws {
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=32x32:rate=1:d=1", "-frames:v", "1", path])
    }

    /// Decodes `path` with ffmpeg to interleaved Float32 (the reference for bit-exact comparisons).
    public static func decodeWithFFmpeg(_ path: String) throws -> [Float] {
        let out = path + ".ref.f32"
        try ffmpeg(["-threads", "1", "-i", path, "-map", "0:a:0", "-f", "f32le", "-c:a", "pcm_f32le", out])
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        try? FileManager.default.removeItem(atPath: out)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Writes the audio of an `aevalsrc` expression list (`expr|expr` per channel) to `path`
    /// encoded with `codecArgs`, and returns the source itself as interleaved Float32 (what
    /// the encoder was given), for alignment checks against the decoded audio.
    public static func signal(path: String, expressions: String, codecArgs: [String], seconds: Double,
                              rate: Int) throws -> [Float] {
        let source = "aevalsrc=exprs=\(expressions):s=\(rate):d=\(seconds)"
        try ffmpeg(["-f", "lavfi", "-i", source] + codecArgs + [path])
        let raw = path + ".source.f32"
        try ffmpeg(["-f", "lavfi", "-i", source, "-f", "f32le", "-c:a", "pcm_f32le", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        try? FileManager.default.removeItem(atPath: raw)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// An M4A whose audio track FFmpeg demuxes but cannot decode: an AAC file whose sample
    /// entry is relabelled MPEG-H 3D Audio (`mhm1`, no decoder in FFmpeg 5.1) and whose `esds`
    /// box is turned into a `free` box (so the demuxer does not take the codec from it).
    public static func undecodableM4A(path: String) throws {
        let aac = path + ".aac.m4a"
        try tone(path: aac, codecArgs: ["-c:a", "aac"], seconds: 0.5, rate: 48000, channels: 2)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: aac)))
        try? FileManager.default.removeItem(atPath: aac)
        func find(_ tag: String, from: Int) throws -> Int {
            let t = Array(tag.utf8)
            var i = from
            while i + 4 <= bytes.count {
                if Array(bytes[i..<i + 4]) == t { return i }
                i += 1
            }
            throw TestSupportError("no '\(tag)' box in the AAC fixture")
        }
        let entry = try find("mp4a", from: 0)
        bytes.replaceSubrange(entry..<entry + 4, with: Array("mhm1".utf8))
        let esds = try find("esds", from: entry)
        bytes.replaceSubrange(esds..<esds + 4, with: Array("free".utf8))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
