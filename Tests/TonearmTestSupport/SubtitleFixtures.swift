// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Videos with subtitles for the subtitle tests: `.srt` files written here, muxed by ffmpeg,
/// and what ffmpeg's own `subtitles` filter (libass) draws from them. Latin text only: the
/// machine's fonts (DejaVu) have no CJK glyphs.
public enum SubtitleFixtures {
    /// The first cue: bottom centre (SubRip's default place), 0.5–1.5 s.
    public static let bottomCue = (start: 0.5, end: 1.5)
    /// The second track's cue: at the top (`{\an8}`), 0.7–1.3 s.
    public static let topCue = (start: 0.7, end: 1.3)

    /// A SubRip file with one cue, `text`, from `start` to `end` seconds.
    public static func srt(_ path: String, text: String, start: Double, end: Double) throws {
        func stamp(_ t: Double) -> String {
            let ms = Int((t * 1000).rounded())
            return String(format: "%02d:%02d:%02d,%03d", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
        }
        try "1\n\(stamp(start)) --> \(stamp(end))\n\(text)\n\n".write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A SubRip file with one cue, `text`, during ``bottomCue`` (at the bottom: SubRip's place).
    public static func bottomCueSRT(_ path: String, text: String) throws {
        try srt(path, text: text, start: bottomCue.start, end: bottomCue.end)
    }

    /// The grey clip (``greyClip(_:seconds:sound:)``) in `clip` and, in `srt` (beside it, or
    /// anywhere), a SubRip file with one cue, `text`, during ``bottomCue``.
    public static func greyClip(_ clip: String, cue text: String, in srt: String, seconds: Double = 2.4,
                                sound: Bool = false) throws {
        try greyClip(clip, seconds: seconds, sound: sound)
        try bottomCueSRT(srt, text: text)
    }

    /// A mid-grey 320×240 H.264 clip at 25 fps in `path` (`.mkv`, `.mp4`), `seconds` long
    /// (2.4 by default), without subtitles: a plain picture, so what the subtitles draw is easy to
    /// find. `sound`: with a 440 Hz tone beside it (AAC; a queue plays a video's sound).
    public static func greyClip(_ path: String, seconds: Double = 2.4, sound: Bool = false) throws {
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=320x240:rate=25:d=\(seconds)"] + soundInput(seconds, sound)
                            + ["-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p"] + soundCodec(sound) + [path])
    }

    /// The extra input of a clip with `sound` (a tone, `seconds` long; input 1 after the picture).
    private static func soundInput(_ seconds: Double, _ sound: Bool) -> [String] {
        sound ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)"] : []
    }

    private static func soundCodec(_ sound: Bool) -> [String] { sound ? ["-c:a", "aac", "-b:a", "96k"] : [] }

    /// The grey clip as an MKV with two SubRip tracks: the first (`eng`, "English") at the
    /// bottom during ``bottomCue``, the second (`fra`, "Français") at the top during ``topCue``.
    /// The two `.srt` files are written beside it (`NAME-1.srt`, `NAME-2.srt`).
    /// `seconds` and `sound` as for ``greyClip(_:seconds:sound:)``.
    public static func twoTrackMKV(_ path: String, seconds: Double = 2.4, sound: Bool = false) throws {
        let base = (path as NSString).deletingPathExtension
        let first = base + "-1.srt", second = base + "-2.srt"
        try srt(first, text: "Hello from the first track", start: bottomCue.start, end: bottomCue.end)
        try srt(second, text: "{\\an8}Bonjour", start: topCue.start, end: topCue.end)
        let audio = sound ? ["-map", "3:a"] : []
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=320x240:rate=25:d=\(seconds)", "-i", first, "-i", second]
                            + soundInput(seconds, sound)
                            + ["-map", "0:v", "-map", "1:s", "-map", "2:s"] + audio
                            + ["-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p"] + soundCodec(sound) + [
                             "-c:s", "srt", "-metadata:s:s:0", "language=eng", "-metadata:s:s:0", "title=English",
                             "-metadata:s:s:1", "language=fra", "-metadata:s:s:1", "title=Français", path])
    }

    /// The box a bitmap track draws: x, y, width, height on the 320×240 grey clip, during ``bottomCue``.
    public static let pgsBox = (x: 100, y: 180, width: 120, height: 30)

    /// A PGS (Blu-ray) subtitle stream, written here byte by byte (ffmpeg cannot encode bitmap
    /// subtitles from text): one display set at ``bottomCue``'s start showing ``pgsBox`` in
    /// opaque white (palette entry Y 235, Cr/Cb 128), and one at its end clearing it.
    public static func pgs(_ path: String) throws {
        func be(_ v: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }
        func segment(_ time: Double, _ type: UInt8, _ data: [UInt8]) -> [UInt8] {
            [0x50, 0x47] + be(Int((time * 90000).rounded()), 4) + be(0, 4) + [type] + be(data.count, 2) + data
        }
        let box = pgsBox
        var rle: [UInt8] = []
        for _ in 0..<box.height { rle += [0, 0xC0 | UInt8(box.width >> 8), UInt8(box.width & 0xFF), 1, 0, 0] }
        let window = [1, 0] + be(box.x, 2) + be(box.y, 2) + be(box.width, 2) + be(box.height, 2)
        let show = be(320, 2) + be(240, 2) + [0x10] + be(0, 2) + [0x80, 0, 0, 1] + be(0, 2) + [0, 0] + be(box.x, 2) + be(box.y, 2)
        let palette: [UInt8] = [0, 0, 1, 235, 128, 128, 255]
        let object = be(0, 2) + [0, 0xC0] + be(rle.count + 4, 3) + be(box.width, 2) + be(box.height, 2) + rle
        let clear = be(320, 2) + be(240, 2) + [0x10] + be(1, 2) + [0x00, 0, 0, 0]
        let (start, end) = bottomCue
        let bytes = segment(start, 0x16, show) + segment(start, 0x17, window) + segment(start, 0x14, palette)
            + segment(start, 0x15, object) + segment(start, 0x80, [])
            + segment(end, 0x16, clear) + segment(end, 0x17, window) + segment(end, 0x80, [])
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The grey clip (2.4 s, 320×240) as an MKV with the PGS stream of ``pgs(_:)`` (written
    /// beside it as `NAME.sup`).
    public static func pgsMKV(_ path: String) throws {
        try bitmapClip(path, codec: "copy")
    }

    /// The grey clip with the bitmap subtitles of ``pgs(_:)`` (written beside it as `NAME.sup`)
    /// as `codec`: `copy` (PGS), `dvdsub` (DVD) or `dvb_subtitle` (DVB, in MPEG-TS) — ffmpeg
    /// re-encodes bitmaps as bitmaps. The container follows `path`'s extension.
    /// `pixelFormat`: the picture's (`yuv420p10le`: a 10-bit H.264 picture).
    public static func bitmapClip(_ path: String, codec: String, pixelFormat: String = "yuv420p") throws {
        let sup = (path as NSString).deletingPathExtension + ".sup"
        try pgs(sup)
        // -copyts: the .sup's own times (ffmpeg would otherwise start it at 0, as its first display set).
        try Fixtures.ffmpeg(["-copyts", "-f", "lavfi", "-i", "color=c=gray:size=320x240:rate=25:d=2.4", "-i", sup,
                             "-map", "0:v", "-map", "1:s", "-c:v", "libx264", "-g", "12", "-pix_fmt", pixelFormat,
                             "-c:s", codec, path])
    }

    /// `ffmpeg -filter_complex '[0:v][0:s]overlay'` of `video` (its first bitmap subtitle stream
    /// over its picture) as framemd5.
    public static func overlaidMD5s(_ video: String) throws -> [String] {
        let r = try run("ffmpeg", ["-v", "error", "-i", video, "-filter_complex", "[0:v][0:s]overlay",
                                   "-fps_mode", "passthrough", "-pix_fmt", "yuv420p", "-f", "framemd5", "-"])
        guard r.status == 0 else { throw TestSupportError("ffmpeg overlay of \(video): \(r.stderr)") }
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// `ffmpeg -vf subtitles=…` of `video` as framemd5: `subtitles` is the filter's argument
    /// (`f=FILE` or `f=VIDEO:si=N`).
    public static func burntMD5s(_ video: String, subtitles: String) throws -> [String] {
        let r = try run("ffmpeg", ["-v", "error", "-i", video, "-map", "0:v:0", "-vf", "subtitles=\(subtitles)",
                                   "-fps_mode", "passthrough", "-pix_fmt", "yuv420p", "-f", "framemd5", "-"])
        guard r.status == 0 else { throw TestSupportError("ffmpeg subtitles of \(video): \(r.stderr)") }
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The rows of a 4:2:0 picture's luma plane (`width` × `height`, packed first in `a` and
    /// `b`) where the two differ; empty when they are the same picture.
    public static func differingRows(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int) -> [Int] {
        (0..<height).filter { y in
            let r = y * width..<(y + 1) * width
            return a[r] != b[r]
        }
    }
}
