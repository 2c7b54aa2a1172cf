// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// Thumbnails: the frame at a time (exact or key frame), scaled to fit with the display aspect,
/// rotation applied on request, and PNG that ffmpeg reads back as the same pixels.
@Suite(.offThePool) struct AssetImageGeneratorTests {
    let dir: TempDir
    init() throws { dir = try TempDir("image-generator") }

    /// The RGBA pixels ffmpeg makes of a PNG.
    func rgbaOfPNG(_ path: String) throws -> (width: Int, height: Int, bytes: [UInt8]) {
        let size = try run("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        let wh = size.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        let raw = dir.file("raw-\(UUID().uuidString.prefix(6)).rgba")
        try Fixtures.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", raw])
        return (wh[0], wh[1], [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw))))
    }

    @Test func exactAndKeyFrameThumbnails() throws {
        defer { dir.remove() }
        let clip = try VideoClips.make(.init(name: "h264", ext: "mp4", args: ["-c:v", "libx264", "-bf", "3", "-g", "12"]), in: dir)
        let times = try VideoClips.frameTimes(clip)
        let g = try AssetImageGenerator(path: clip)
        // Default tolerances (infinite): the key frame before.
        let loose = try g.image(at: times[17].time)
        #expect(abs(loose.time - times[12].time) < 0.0015 && times[12].key, "\(loose.time)")
        g.requestedTimeToleranceBefore = 0
        g.requestedTimeToleranceAfter = 0
        let exact = try g.image(at: times[17].time)
        #expect(abs(exact.time - times[17].time) < 0.0015)
        #expect(exact.pixelFormat == .rgba && exact.width == 64 && exact.height == 48)
        // The same pixels as ffmpeg's own RGBA of that frame, bit for bit (both through
        // libswscale, bicubic).
        let png = dir.file("t.png")
        try exact.writePNG(to: png)
        let back = try rgbaOfPNG(png)
        #expect(back.width == 64 && back.height == 48)
        #expect(back.bytes == exact.packedBytes, "the PNG does not hold the frame's pixels")
        let ffmpegFrame = dir.file("ff.rgba")
        try Fixtures.ffmpeg(["-ss", String(format: "%.6f", times[17].time), "-i", clip, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgba", ffmpegFrame])
        let theirs = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ffmpegFrame)))
        #expect(theirs.count == exact.packedBytes.count)
        let maxDiff = zip(theirs, exact.packedBytes).map { abs(Int($0) - Int($1)) }.max() ?? 255
        #expect(theirs == exact.packedBytes, "RGBA differs from ffmpeg's by up to \(maxDiff)")
        // Several at once, in order; a time past the end is an error for that time only.
        let many = g.images(at: [times[3].time, 99, times[29].time])
        #expect(many.count == 3)
        #expect(abs(((try? many[0].get())?.time ?? -1) - times[3].time) < 0.0015)
        #expect(throws: TonearmError.self) { try many[1].get() }
        #expect(abs(((try? many[2].get())?.time ?? -1) - times[29].time) < 0.0015)
        if case .failure(let e) = many[1] { #expect("\(e)".contains("past the end"), "\(e)") }
    }

    @Test func thumbnailsScaleKeepingTheDisplayAspect() throws {
        defer { dir.remove() }
        // 64×48 coded, 4:3 pixels (85×48 shown), turned a quarter (48×85 upright).
        let plain = dir.file("plain.mp4")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=0.4", "-vf", "setsar=4/3",
                             "-c:v", "libx264", plain])
        let clip = try VideoClips.rotated(plain, tag: 270, to: dir.file("both.mp4"))
        let g = try AssetImageGenerator(path: clip)
        var f = try g.image(at: 0)
        #expect((f.width, f.height) == (85, 48) && f.rotation == 90 && f.pixelAspectRatio == .square)
        g.appliesPreferredTrackTransform = true
        f = try g.image(at: 0)
        #expect((f.width, f.height) == (48, 85) && f.rotation == 0)
        g.maximumSize = .init(width: 24, height: 0)
        f = try g.image(at: 0)
        #expect((f.width, f.height) == (24, 43))
        g.maximumSize = .init(width: 100, height: 40)
        f = try g.image(at: 0)
        #expect((f.width, f.height) == (23, 40))
        // Never scaled up.
        g.maximumSize = .init(width: 1000, height: 1000)
        f = try g.image(at: 0)
        #expect((f.width, f.height) == (48, 85))
        // The turn is clockwise: the top-left pixel of the stored picture ends at the top right.
        g.appliesPreferredTrackTransform = false
        g.maximumSize = .zero
        let stored = try g.image(at: 0)
        let upright = stored.rotatedUpright(by: 90)
        #expect(Array(upright.planes[0].bytes[(upright.width - 1) * 4 ..< upright.width * 4]) == Array(stored.planes[0].bytes[0..<4]))
    }

    @Test func aFileWithoutVideoHasNoThumbnails() throws {
        defer { dir.remove() }
        let audio = dir.file("a.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", audio])
        #expect(throws: TonearmError.noVideoTrack(path: audio)) { try AssetImageGenerator(path: audio) }
    }
}
