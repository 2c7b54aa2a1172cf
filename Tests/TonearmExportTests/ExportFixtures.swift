// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmTestSupport

/// Videos and audio files generated with the real `ffmpeg` for the export tests.
enum ExportFixtures {
    /// An MP4: a test-pattern video and a 440 Hz stereo AAC track of `seconds`, with tags.
    static func mp4WithAAC(_ path: String, seconds: Double = 2) throws {
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:d=\(seconds)",
                             "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds):sample_rate=48000",
                             "-map", "0:v", "-map", "1:a", "-ac", "2", "-c:v", "mpeg4", "-c:a", "aac", "-b:a", "128k",
                             "-metadata", "title=Clip Title", "-metadata", "artist=Clip Artist",
                             "-metadata:s:a:0", "language=eng", path])
    }

    /// A Matroska video with an Opus track (48 kHz stereo).
    static func mkvWithOpus(_ path: String, seconds: Double = 2) throws {
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:d=\(seconds)",
                             "-f", "lavfi", "-i", "sine=frequency=523:duration=\(seconds):sample_rate=48000",
                             "-map", "0:v", "-map", "1:a", "-ac", "2", "-c:v", "mpeg4", "-c:a", "libopus", "-b:a", "96k",
                             "-metadata", "title=Opus Clip", path])
    }

    /// An MP4 with a video and two AAC tracks: 440 Hz at 48 kHz ("eng") then 660 Hz at 44.1 kHz ("fra").
    static func mp4WithTwoAudioTracks(_ path: String, seconds: Double = 2) throws {
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:d=\(seconds)",
                             "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds):sample_rate=48000",
                             "-f", "lavfi", "-i", "sine=frequency=660:duration=\(seconds):sample_rate=44100",
                             "-map", "0:v", "-map", "1:a", "-map", "2:a", "-c:v", "mpeg4", "-c:a", "aac",
                             "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", path])
    }

    /// A video without audio.
    static func videoOnly(_ path: String) throws { try Fixtures.videoOnly(path: path, seconds: 1) }

    /// The audio packets of stream `map` ("0:a:0") as ffmpeg's framemd5 lists them: one
    /// "size,md5" entry per packet (timestamps left out: containers count time differently).
    /// ADTS files (`.aac`) go through `aac_adtstoasc`, which strips the 7-byte frame headers.
    static func packetDigests(_ path: String, map: String = "0:a:0") throws -> [String] {
        let bsf = path.hasSuffix(".aac") ? ["-bsf:a", "aac_adtstoasc"] : []
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", map, "-c", "copy"] + bsf + ["-f", "framemd5", "-"])
        if r.status != 0 { throw TestSupportError("framemd5 of \(path) failed: \(r.stderr)") }
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return "\(f[4]),\(f[5])"
        }
    }

    /// Decodes stream `map` of `path` with ffmpeg to interleaved Float32.
    static func decode(_ path: String, map: String = "0:a:0") throws -> [Float] {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-threads", "1", "-i", path, "-map", map,
                                   "-f", "f32le", "-c:a", "pcm_f32le", path + ".f32"])
        if r.status != 0 { throw TestSupportError("decoding \(path) failed: \(r.stderr)") }
        defer { try? FileManager.default.removeItem(atPath: path + ".f32") }
        let data = try Data(contentsOf: URL(fileURLWithPath: path + ".f32"))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The names of the entries of a directory (hidden ones included).
    static func listing(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }
}
