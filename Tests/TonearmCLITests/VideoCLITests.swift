// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm thumbnail`, `tonearm video-frames` and the video lines of `tonearm info`, as a user
/// runs them.
@Suite(.offThePool) struct VideoCLITests {
    let dir: TempDir
    init() throws { dir = try TempDir("video-cli") }

    /// 64×48, 25 fps, 2 s, with a sine beside it.
    /// `rotateTag`: remuxed with that `rotate` tag, which ffmpeg 5.1 turns into a display matrix
    /// only when copying (270: shown turned 90° clockwise).
    func clip(_ name: String = "clip.mp4", rotateTag: Int? = nil) throws -> String {
        let f = dir.file(name)
        let encoded = rotateTag == nil ? f : dir.file("plain-" + name)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=2",
                             "-f", "lavfi", "-i", "sine=frequency=440:duration=2:sample_rate=48000",
                             "-c:v", "libx264", "-bf", "2", "-g", "12", "-c:a", "aac", encoded])
        if let rotateTag { try Fixtures.ffmpeg(["-i", encoded, "-c", "copy", "-metadata:s:v:0", "rotate=\(rotateTag)", f]) }
        return f
    }

    func pngSize(_ path: String) throws -> String {
        let r = try run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", path])
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func thumbnailWritesNumberedPNGsScaledToFit() throws {
        defer { dir.remove() }
        let f = try clip(rotateTag: 270)
        let bin = try tonearmBinary()
        let one = dir.file("one.png")
        let r = try run(bin, ["thumbnail", f, "--at", "0:01", "-o", one])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try pngSize(one) == "png,48,64", "upright: the clip is turned a quarter")
        #expect(r.stdout.contains("Wrote \(one): 48×64, the frame at 1.000 s"), "\(r.stdout)")
        // The frame is ffmpeg's frame at 1 s, turned (ffmpeg turns it too: autorotate).
        let ours = dir.file("ours.rgba"), theirs = dir.file("theirs.rgba")
        try Fixtures.ffmpeg(["-i", one, "-f", "rawvideo", "-pix_fmt", "rgba", ours])
        try Fixtures.ffmpeg(["-ss", "1", "-i", f, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgba", theirs])
        let a = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ours))), b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: theirs)))
        #expect(a.count == b.count && a.count == 48 * 64 * 4)
        let diff = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 255
        #expect(diff <= 3, "differs from ffmpeg's picture by up to \(diff)")

        let many = dir.file("many.png")
        let m = try run(bin, ["thumbnail", f, "--at", "0", "--at", "1.5", "--at", "0:00.2", "-o", many, "--size", "x32", "--keyframe"])
        #expect(m.status == 0, "\(m.stderr)")
        for i in 1...3 { #expect(try pngSize(dir.file("many-\(i).png")) == "png,24,32") }
        #expect(!FileManager.default.fileExists(atPath: many))
        #expect(m.stdout.contains("many-2.png: 24×32, the frame at 1.440 s"), "key frame at or before 1.5 s: \(m.stdout)")
        // Existing outputs: refused without --force.
        let again = try run(bin, ["thumbnail", f, "--at", "1", "-o", one])
        #expect(again.status == 1 && again.stderr.contains("\(one): already exists; use --force"), "\(again.stderr)")
        #expect(try run(bin, ["thumbnail", f, "--at", "1", "-o", one, "--force", "--size", "20x20"]).status == 0)
        #expect(try pngSize(one) == "png,15,20")
    }

    @Test func thumbnailErrorsAreClear() throws {
        defer { dir.remove() }
        let f = try clip()
        let bin = try tonearmBinary()
        let past = try run(bin, ["thumbnail", f, "--at", "5:00", "-o", dir.file("x.png")])
        #expect(past.status == 1)
        #expect(past.stderr.contains("300.000 s is past the end of the video"), "\(past.stderr)")
        let song = dir.file("song.ogg")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "libvorbis", song])
        let audio = try run(bin, ["thumbnail", song, "--at", "0", "-o", dir.file("y.png")])
        #expect(audio.status == 1 && audio.stderr.contains("\(song): has no video track"), "\(audio.stderr)")
        let unwritable = try run(bin, ["thumbnail", f, "--at", "0", "-o", dir.file("no/such/dir/z.png")])
        #expect(unwritable.status == 1 && unwritable.stderr.contains("z.png: cannot be written"), "\(unwritable.stderr)")
        let badTime = try run(bin, ["thumbnail", f, "--at", "soon", "-o", dir.file("w.png")])
        #expect(badTime.status == 64 && badTime.stderr.contains("--at must be seconds"), "\(badTime.stderr)")
        let badSize = try run(bin, ["thumbnail", f, "--at", "1", "-o", dir.file("w.png"), "--size", "big"])
        #expect(badSize.status == 64 && badSize.stderr.contains("--size must be"), "\(badSize.stderr)")
    }

    @Test func infoShowsTheVideoTracks() throws {
        defer { dir.remove() }
        let f = try clip("rot.mp4", rotateTag: 90)
        let bin = try tonearmBinary()
        let r = try run(bin, ["info", f])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("  Video      #0 h264 (High) · 64×48 · 25 fps · 8-bit yuv420p · rotated 270° · shown 48×64"), "\(r.stdout)")
        #expect(r.stdout.contains("#1  audio    aac · 48 kHz"), "the audio lines stay: \(r.stdout)")
        let tenbit = dir.file("hdr.mkv")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30000/1001:d=0.5", "-c:v", "libx265",
                             "-pix_fmt", "yuv420p10le", "-color_trc", "arib-std-b67", "-x265-params", "log-level=none", tenbit])
        let t = try run(bin, ["info", tenbit])
        #expect(t.status == 0, "\(t.stderr)")
        #expect(t.stdout.contains("  Video      #0 hevc (Main 10) · 64×48 · 29.97 fps · 10-bit yuv420p10le · HDR HLG"), "\(t.stdout)")
        let j = try run(bin, ["info", "--json", tenbit])
        let arr = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]])
        let video = try #require(arr[0]["video"] as? [[String: Any]])
        #expect(video.first?["bitDepth"] as? Int == 10 && video.first?["hdrTransfer"] as? String == "HLG")
        // An audio file with a cover shows no video line.
        let cover = dir.file("cover.png")
        try Fixtures.png(path: cover)
        let song = dir.file("song.mp3")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.5", "-i", cover, "-map", "0:a", "-map", "1:v",
                             "-c:a", "libmp3lame", "-c:v", "png", "-disposition:v", "attached_pic", song])
        let s = try run(bin, ["info", song])
        #expect(s.status == 0 && !s.stdout.contains("  Video "), "\(s.stdout)")
    }

    @Test func videoFramesWritesEveryFrameAsY4M() throws {
        defer { dir.remove() }
        let f = try clip("clip.mkv")
        let bin = try tonearmBinary()
        let out = dir.file("out.y4m")
        let r = try run(bin, ["video-frames", f, "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Wrote \(out): 50 frames, 64×48, h264"), "\(r.stdout)")
        func md5s(_ p: String) throws -> [Substring] {
            try run("ffmpeg", ["-v", "error", "-i", p, "-map", "0:v:0", "-fps_mode", "passthrough", "-pix_fmt", "yuv420p", "-f", "framemd5", "-"])
                .stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last }
        }
        let ours = try md5s(out)
        let theirs = try md5s(f)
        #expect(ours.count == 50 && ours == theirs)
        // A file cut short: what is there is written, and a warning says the rest is missing.
        let full = dir.file("full.mp4")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=2", "-c:v", "libx264", "-movflags", "+faststart", full])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let cut = dir.file("cut.mp4")
        try bytes.prefix(bytes.count * 7 / 10).write(to: URL(fileURLWithPath: cut))
        let partial = try run(bin, ["video-frames", cut, "-o", dir.file("cut.y4m")])
        #expect(partial.status == 0, "\(partial.stderr)")
        #expect(partial.stderr.contains("tonearm: \(cut): truncated video: decoded to "), "\(partial.stderr)")
        #expect(partial.stdout.contains("Wrote \(dir.file("cut.y4m")): "), "\(partial.stdout)")
        #expect(!partial.stdout.contains(": 0 frames") && !partial.stdout.contains(": 50 frames"), "\(partial.stdout)")
        // Cut just after the header, before the first frame's data: nothing to write, and no file.
        let raw = [UInt8](bytes), mdat = Array("mdat".utf8)
        let at = try #require((0...(raw.count - 4)).first { Array(raw[$0..<$0 + 4]) == mdat })
        try Data(raw.prefix(at + 12)).write(to: URL(fileURLWithPath: cut))
        let none = try run(bin, ["video-frames", cut, "-o", dir.file("none.y4m")])
        #expect(none.status == 1 && none.stderr.contains("\(cut): cannot be decoded (no video frame could be decoded)"), "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("none.y4m")))
        let again = try run(bin, ["video-frames", f, "-o", out])
        #expect(again.status == 1 && again.stderr.contains("already exists"))
        let song = dir.file("song.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.5", song])
        let audio = try run(bin, ["video-frames", song, "-o", dir.file("a.y4m")])
        #expect(audio.status == 1 && audio.stderr.contains("has no video track"), "\(audio.stderr)")
    }
}
