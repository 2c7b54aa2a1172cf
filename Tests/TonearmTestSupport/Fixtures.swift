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
}
