// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// What a file's video tracks say, and the files that are not video.
@Suite(.offThePool) struct VideoTrackInfoTests {
    let dir: TempDir
    init() throws { dir = try TempDir("video-tracks") }

    @Test func aRotatedClipReportsItsUprightSize() throws {
        defer { dir.remove() }
        let plain = dir.file("plain.mp4")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=0.4", "-c:v", "libx264", plain])
        #expect(try VideoTrackInfo.tracks(inFileAt: plain).first?.rotation == 0)
        let clip = try VideoClips.rotated(plain, tag: 270, to: dir.file("rotated.mp4"))
        let tracks = try VideoTrackInfo.tracks(inFileAt: clip)
        let t = try #require(tracks.first)
        #expect(tracks.count == 1)
        #expect(t.rotation == 90)
        #expect(t.codedWidth == 64 && t.codedHeight == 48)
        #expect(t.displayWidth == 48 && t.displayHeight == 64)
        let f = try #require(try VideoDecoder(path: clip).nextFrame())
        #expect(f.rotation == 90 && f.displaySize == (48, 64))
        // ffprobe agrees on the turn.
        let probe = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "side_data=rotation", "-of", "csv=p=0", clip])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "-90")
        // The other way round: a quarter turn counter-clockwise is 270 clockwise.
        let other = try VideoClips.rotated(plain, tag: 90, to: dir.file("other.mp4"))
        #expect(try VideoTrackInfo.tracks(inFileAt: other).first?.rotation == 270)
        let half = try VideoClips.rotated(plain, tag: 180, to: dir.file("half.mp4"))
        let h = try #require(try VideoTrackInfo.tracks(inFileAt: half).first)
        #expect(h.rotation == 180 && h.displayWidth == 64 && h.displayHeight == 48)
    }

    /// The probe of `tracks(inFileAt:)` is handed to the next opener of the same file (the
    /// item's sound), once; what it found serves the openers after that through
    /// `InputOpening.openProbed` (the picture's demuxer: opened, not probed again), while the
    /// sound's own opener probes; a file changed since is opened and probed again.
    @Test func theProbeIsHandedOnOnceAndNotForAChangedFile() throws {
        defer { dir.remove() }
        let clip = dir.file("handed.mp4")
        try VideoFixtures.clip(clip, seconds: 0.4)
        InputOpenCounter.watch(clip)
        defer { InputOpenCounter.unwatch(clip) }
        #expect(try VideoTrackInfo.tracks(inFileAt: clip).count == 1)
        _ = try AudioFile(path: clip)
        #expect(InputOpenCounter.counts(clip).probes == 1, "the sound took the probe")
        _ = try AudioFile(path: clip)
        #expect(InputOpenCounter.counts(clip).probes == 2, "taken once: a second opener probes")
        let opensBefore = InputOpenCounter.counts(clip).opens
        #expect(try VideoTrackInfo.tracks(inFileAt: clip).first?.codedWidth == 160)
        let decoder = try VideoDecoder(path: clip)
        #expect(InputOpenCounter.counts(clip).probes == 2, "the findings of the first probe serve, no probe")
        #expect(InputOpenCounter.counts(clip).opens == opensBefore + 1, "one open: the decoder's (the tracks took the kept one)")
        #expect(decoder.track.frameRate == 25 && decoder.track.pixelFormat == "yuv420p", "\(decoder.track)")
        #expect(try decoder.nextFrame()?.time == 0)
        // Rewritten since (another length): the kept context is not the file's any more.
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=96x64:rate=25:d=0.3",
                             "-f", "lavfi", "-i", "sine=duration=0.3", "-c:v", "libx264", "-c:a", "aac", clip])
        let tracks = try VideoTrackInfo.tracks(inFileAt: clip)
        #expect(tracks.first?.codedWidth == 96, "the new file's probe, not the kept one")
        #expect(InputOpenCounter.counts(clip).probes == 3)
    }

    @Test func anAnamorphicClipReportsItsDisplayWidth() throws {
        defer { dir.remove() }
        let clip = dir.file("anamorphic.mkv")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=0.4", "-vf", "setsar=4/3",
                             "-c:v", "libx264", clip])
        let t = try #require(try VideoTrackInfo.tracks(inFileAt: clip).first)
        #expect(t.pixelAspectRatio == .init(horizontal: 4, vertical: 3))
        #expect(t.displayWidth == 85 && t.displayHeight == 48)
        #expect(t.frameRate == 25 && t.frameRateNumerator == 25 && t.frameRateDenominator == 1)
        #expect(t.bitDepth == 8 && t.pixelFormat == "yuv420p" && t.hdrTransfer == nil)
        let f = try #require(try VideoDecoder(path: clip).nextFrame())
        #expect(f.pixelAspectRatio == .init(horizontal: 4, vertical: 3))
    }

    /// 10-bit HEVC with PQ: the track says so, and frames convert to 8-bit yuv420p through
    /// libswscale as `ffmpeg -pix_fmt yuv420p` converts them.
    @Test func aTenBitClipConverts() throws {
        defer { dir.remove() }
        let clip = dir.file("tenbit.mkv")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=0.4", "-c:v", "libx265",
                             "-pix_fmt", "yuv420p10le", "-color_trc", "smpte2084", "-color_primaries", "bt2020",
                             "-colorspace", "bt2020nc"] + VideoClips.x265Quiet + [clip])
        let t = try #require(try VideoTrackInfo.tracks(inFileAt: clip).first)
        #expect(t.bitDepth == 10 && t.pixelFormat == "yuv420p10le" && t.hdrTransfer == "PQ")
        #expect(t.profile == "Main 10")
        let d = try VideoDecoder(path: clip)
        let frames = try VideoClips.decodeAll(d)
        let expected = try VideoClips.frameMD5s(clip)
        #expect(frames.count == expected.count && frames.count == 10)
        #expect(frames.allSatisfy { $0.pixelFormat == .yuv420p && $0.planes.count == 3 && $0.planes[1].width == 32 })
        #expect(frames.map(\.md5) == expected, "the 8-bit conversion differs from ffmpeg's")
        // And to RGBA.
        let rgba = try VideoDecoder(path: clip, outputFormat: .rgba)
        let first = try #require(try rgba.nextFrame())
        #expect(first.pixelFormat == .rgba && first.planes.count == 1 && first.planes[0].bytesPerRow >= 64 * 4)
    }

    @Test func coverArtIsNotVideo() throws {
        defer { dir.remove() }
        let cover = dir.file("cover.png")
        try Fixtures.png(path: cover)
        let song = dir.file("song.mp3")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-i", cover, "-map", "0:a", "-map", "1:v",
                             "-c:a", "libmp3lame", "-c:v", "png", "-disposition:v", "attached_pic", song])
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", song])
        #expect(probe.stdout.contains("video"), "the fixture has its picture stream: \(probe.stdout)")
        #expect(try VideoTrackInfo.tracks(inFileAt: song).isEmpty)
        #expect(throws: TonearmError.noVideoTrack(path: song)) { try VideoDecoder(path: song) }
        #expect("\(TonearmError.noVideoTrack(path: song))" == "\(song): has no video track")
        let audio = dir.file("plain.ogg")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "libvorbis", audio])
        #expect(throws: TonearmError.noVideoTrack(path: audio)) { try VideoDecoder(path: audio) }
        #expect(throws: TonearmError.self) { try VideoDecoder(path: dir.file("missing.mp4")) }
    }

    @Test func aChosenTrackMustBeVideo() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.4",
                             "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=0.4",
                             "-f", "lavfi", "-i", "testsrc=size=32x32:rate=10:d=0.4",
                             "-map", "0:a", "-map", "1:v", "-map", "2:v", "-c:v", "libx264", "-c:a", "libvorbis", clip])
        let tracks = try VideoTrackInfo.tracks(inFileAt: clip)
        #expect(tracks.map(\.trackID) == [1, 2])
        #expect(tracks.map(\.codedWidth) == [64, 32])
        let second = try VideoDecoder(path: clip, track: 2)
        #expect(try second.nextFrame()?.width == 32)
        #expect(throws: TonearmError.self) { try VideoDecoder(path: clip, track: 0) }
    }

    /// A Matroska track whose codec FFmpeg does not know (its CodecID rewritten): listed as
    /// video of an unknown codec, and the decoder says it cannot decode it.
    @Test func aCodecFFmpegLacksIsNamedAsSuch() throws {
        defer { dir.remove() }
        let good = dir.file("good.mkv")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=0.4", "-c:v", "libx264", good])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let id = Array("V_MPEG4/ISO/AVC".utf8), other = Array("V_QUUXX/ISO/AVC".utf8)
        let at = try #require((0...(bytes.count - id.count)).first { Array(bytes[$0..<$0 + id.count]) == id })
        bytes.replaceSubrange(at..<at + id.count, with: other)
        let odd = dir.file("odd.mkv")
        try Data(bytes).write(to: URL(fileURLWithPath: odd))
        let t = try #require(try VideoTrackInfo.tracks(inFileAt: odd).first)
        #expect(t.codecName == "unknown" && t.codedWidth == 64)
        #expect(throws: TonearmError.unsupportedCodec(path: odd, codec: "unknown")) { try VideoDecoder(path: odd) }
        #expect(throws: TonearmError.unsupportedCodec(path: odd, codec: "unknown")) { try AssetImageGenerator(path: odd) }
    }

    /// A file cut in the middle: what is there decodes, and the decoder says the rest is missing.
    @Test func aTruncatedFileDecodesWhatItCanAndSaysSo() throws {
        defer { dir.remove() }
        let full = dir.file("full.mp4")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=2", "-c:v", "libx264", "-g", "12",
                             "-movflags", "+faststart", full])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let cut = dir.file("cut.mp4")
        try bytes.prefix(bytes.count * 55 / 100).write(to: URL(fileURLWithPath: cut))
        let d = try VideoDecoder(path: cut)
        let frames = try VideoClips.decodeAll(d)
        #expect(frames.count > 10 && frames.count < 50, "\(frames.count) frames")
        let truncated = d.warnings.contains { if case .truncated = $0 { true } else { false } }
        #expect(truncated, "\(d.warnings)")
        // What decoded is what ffmpeg decodes of the same bytes, frame for frame.
        let theirs = try VideoClips.frameMD5s(cut)
        let n = min(theirs.count, frames.count)
        #expect(n > 10 && Array(frames.prefix(n).map(\.md5)) == Array(theirs.prefix(n)))

        // Corrupt bytes in the middle of a Matroska stream: counted, skipped, decoding goes on.
        let mkv = dir.file("full.mkv")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=2", "-c:v", "libx264", "-g", "12", mkv])
        var damaged = [UInt8](try Data(contentsOf: URL(fileURLWithPath: mkv)))
        var state: UInt32 = 12345
        for i in stride(from: damaged.count * 4 / 10, to: damaged.count * 5 / 10, by: 7) {
            state = state &* 1103515245 &+ 12345
            damaged[i] = UInt8(truncatingIfNeeded: state >> 16)
        }
        let bad = dir.file("damaged.mkv")
        try Data(damaged).write(to: URL(fileURLWithPath: bad))
        let b = try VideoDecoder(path: bad)
        let got = try VideoClips.decodeAll(b)
        #expect(got.count > 25, "\(got.count) frames")
        #expect(!b.warnings.isEmpty, "no warning for the damaged stream")
        #expect(b.warnings.allSatisfy { $0.description.hasPrefix(bad) })
    }
}
