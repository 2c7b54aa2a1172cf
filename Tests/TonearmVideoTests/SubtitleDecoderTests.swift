// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// Subtitles drawn by the video decoder (libavfilter's `subtitles` filter) against ffmpeg's
/// own `-vf subtitles=…` of the same files: a subtitle file, a file's second subtitle track,
/// switched off mid-stream; the tracks listed with codec, language and title.
@Suite(.offThePool) struct SubtitleDecoderTests {
    let dir: TempDir
    init() throws { dir = try TempDir("subtitle-decoder") }

    @Test func subtitleFileMatchesFFmpegsFilterOnlyDuringItsCue() throws {
        defer { dir.remove() }
        let clip = dir.file("grey.mkv"), srt = dir.file("cue.srt")
        try SubtitleFixtures.greyClip(clip, cue: "Hello, subtitles", in: srt)
        let cue = SubtitleFixtures.bottomCue
        let plain = try VideoFixtures.frameMD5s(clip)
        let burnt = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(srt)")
        let d = try VideoDecoder(path: clip)
        d.subtitle = .file(path: srt)
        let frames = try VideoClips.decodeAll(d)
        #expect(frames.map(\.md5) == burnt, "ffmpeg's -vf subtitles, frame for frame")
        let plainFrames = try VideoClips.decodeAll(try VideoDecoder(path: clip))
        var shown = 0
        for (i, (f, p)) in zip(frames, plainFrames).enumerated() {
            let during = f.time >= cue.start && f.time < cue.end
            #expect((f.md5 != plain[i]) == during, "frame \(i) at \(f.time) s")
            if during {
                shown += 1
                let rows = SubtitleFixtures.differingRows(f.packedBytes, p.packedBytes, width: f.width, height: f.height)
                #expect(rows.allSatisfy { $0 >= f.height / 2 }, "a SubRip cue sits in the lower half: rows \(rows)")
            }
        }
        #expect(shown == 25)
    }

    @Test func secondTrackOfTheFileAndSwitchingOff() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(clip)
        let tracks = try SubtitleTrackInfo.tracks(inFileAt: clip)
        #expect(tracks.map(\.codecName) == ["subrip", "subrip"])
        #expect(tracks.map(\.language) == ["eng", "fra"])
        #expect(tracks.map(\.title) == ["English", "Français"])
        #expect(tracks.allSatisfy { $0.isText })
        let second = try SubtitleTrackInfo.textTrack(2, inFileAt: clip)
        #expect(second.trackID == tracks[1].trackID)
        let burnt = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(clip):si=1")
        let plain = try VideoFixtures.frameMD5s(clip)
        let d = try VideoDecoder(path: clip)
        d.subtitle = .track(second)
        let frames = try VideoClips.decodeAll(d)
        #expect(frames.map(\.md5) == burnt, "ffmpeg's -vf subtitles=…:si=1, frame for frame")
        let plainFrames = try VideoClips.decodeAll(try VideoDecoder(path: clip))
        let cue = SubtitleFixtures.topCue
        for (f, p) in zip(frames, plainFrames) where f.time >= cue.start && f.time < cue.end {
            let rows = SubtitleFixtures.differingRows(f.packedBytes, p.packedBytes, width: f.width, height: f.height)
            #expect(!rows.isEmpty && rows.allSatisfy { $0 < f.height / 2 }, "the second track's cue is at the top: \(rows)")
        }
        // Switched off mid-cue: from the next frame on, the plain decode.
        let e = try VideoDecoder(path: clip)
        e.subtitle = .track(second)
        var out: [String] = []
        while let f = try e.nextFrame() {
            out.append(f.md5)
            if out.count == 22 { e.subtitle = nil }
        }
        #expect(Array(out.prefix(22)) == Array(burnt.prefix(22)))
        #expect(Array(out.dropFirst(22)) == Array(plain.dropFirst(22)))
        #expect(burnt[22] != plain[22], "frame 22 is within the cue")
    }

    @Test func aTrackBeyondTheTextTracksSaysHowManyThereAre() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(clip)
        #expect {
            try SubtitleTrackInfo.textTrack(3, inFileAt: clip)
        } throws: { e in
            guard case TonearmError.noSuchTrack(_, 3, let detail) = e else { return false }
            return detail.contains("2 text subtitle tracks")
        }
        let plain = dir.file("plain.mkv")
        try SubtitleFixtures.greyClip(plain)
        #expect(try SubtitleTrackInfo.tracks(inFileAt: plain).isEmpty)
    }

    /// What `j` steps through: the file first, then the tracks (a bitmap one too), then off,
    /// then the first again; each said as mpv's OSD does.
    @Test func theCycleGoesFileTracksOffAndRoundAgain() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(clip)
        var tracks = try SubtitleTrackInfo.tracks(inFileAt: clip)
        try #require(tracks.count == 2)
        var bitmap = tracks[1]
        bitmap.isText = false
        bitmap.codecName = "hdmv_pgs_subtitle"
        tracks.append(bitmap)
        let cycle = SubtitleSelection.cycle(file: "/films/two.srt", tracks: tracks)
        #expect(cycle == [.file(path: "/films/two.srt"), .track(tracks[0]), .track(tracks[1]), .track(tracks[2])])
        var seen: [SubtitleSelection?] = []
        var now: SubtitleSelection? = nil
        for _ in 0..<6 {
            now = SubtitleSelection.next(after: now, in: cycle)
            seen.append(now)
        }
        #expect(seen == [cycle[0], cycle[1], cycle[2], cycle[3], nil, cycle[0]])
        #expect(SubtitleSelection.next(after: .file(path: "/elsewhere.srt"), in: cycle) == cycle[0])
        #expect(SubtitleSelection.next(after: nil, in: []) == nil)
        #expect(SubtitleSelection.describe(cycle[0], in: cycle) == "Subtitles: 1/4 — two.srt")
        #expect(SubtitleSelection.describe(cycle[2], in: cycle)
                == "Subtitles: 3/4 — #\(tracks[1].trackID) subrip · fra · \"Français\"")
        #expect(SubtitleSelection.describe(nil, in: cycle) == "Subtitles: off")
    }

    /// A PGS track (bitmap) is decoded and blended: the frames of its cue show the box as
    /// ffmpeg's overlay draws it, bit for bit, the others are the plain decode; a seek back into
    /// the cue draws it again, one past it does not.
    @Test func aBitmapTrackIsDrawnDuringItsCueAsFFmpegsOverlayDrawsIt() throws {
        defer { dir.remove() }
        let clip = dir.file("pgs.mkv")
        try SubtitleFixtures.pgsMKV(clip)
        let tracks = try SubtitleTrackInfo.tracks(inFileAt: clip)
        try #require(tracks.count == 1)
        #expect(tracks[0].codecName == "hdmv_pgs_subtitle" && !tracks[0].isText)
        let plain = try VideoFixtures.frameMD5s(clip)
        // ffmpeg's sub2video shows bitmaps at its own times; the picture it draws is the reference.
        let boxed = Set(try SubtitleFixtures.overlaidMD5s(clip)).subtracting(plain)
        try #require(boxed.count == 1, "one picture with the box: \(boxed)")
        let d = try VideoDecoder(path: clip)
        d.subtitle = .track(tracks[0])
        let frames = try VideoClips.decodeAll(d)
        try #require(frames.count == plain.count)
        let cue = SubtitleFixtures.bottomCue
        var shown = 0
        for (i, f) in frames.enumerated() {
            let during = f.time >= cue.start - 1e-6 && f.time < cue.end - 1e-6
            if during { shown += 1 }
            #expect(f.md5 == (during ? boxed.first! : plain[i]), "frame \(i) at \(f.time) s")
        }
        #expect(shown == 25)
        let back = try d.seek(to: 1.0, exact: true)
        #expect(back.md5 == boxed.first!, "a seek back into the cue")
        let after = try d.seek(to: 2.0, exact: true)
        #expect(after.md5 == plain[50], "a seek past it")
    }

    /// A bitmap track over a 10-bit picture (before, 8-bit pictures only were drawn on; a 10-bit
    /// one showed no subtitle): during the cue the box is there — white where it is, the grey
    /// picture around it as the plain decode has it — and the frames outside the cue are the
    /// plain decode.
    @Test func aBitmapTrackIsDrawnOnA10BitPicture() throws {
        defer { dir.remove() }
        let clip = dir.file("pgs10.mkv")
        try SubtitleFixtures.bitmapClip(clip, codec: "copy", pixelFormat: "yuv420p10le")
        let tracks = try SubtitleTrackInfo.tracks(inFileAt: clip)
        try #require(tracks.count == 1)
        let plain = try VideoClips.decodeAll(try VideoDecoder(path: clip))
        let d = try VideoDecoder(path: clip)
        d.subtitle = .track(tracks[0])
        let frames = try VideoClips.decodeAll(d)
        try #require(frames.count == plain.count && frames.count > 50)
        let cue = SubtitleFixtures.bottomCue, box = SubtitleFixtures.pgsBox
        for (i, f) in frames.enumerated() {
            if f.time >= cue.start - 1e-6 && f.time < cue.end - 1e-6 {
                let luma = f.planes[0]
                let inside = luma.bytes[(box.y + box.height / 2) * luma.bytesPerRow + box.x + box.width / 2]
                let outside = luma.bytes[(box.y - 10) * luma.bytesPerRow + box.x + box.width / 2]
                let plainOutside = plain[i].planes[0].bytes[(box.y - 10) * luma.bytesPerRow + box.x + box.width / 2]
                #expect(abs(Int(inside) - 235) <= 2, "frame \(i) at \(f.time) s: the box's luma \(inside)")
                #expect(outside == plainOutside, "frame \(i): the picture around the box")
            } else {
                #expect(f.md5 == plain[i].md5, "frame \(i) at \(f.time) s: outside the cue")
            }
        }
    }

    /// DVD and DVB bitmap subtitles (re-encoded by ffmpeg from the PGS fixture) take the same
    /// path: the box as ffmpeg's overlay draws it during the cue (its ends within the encoders'
    /// rounding), the plain picture elsewhere. ffmpeg's DVD encoder drops the event that clears
    /// the box, so its event has no end: shown to the clip's end, as ffmpeg's overlay shows it.
    @Test(arguments: [("dvd.mkv", "dvdsub", "dvd_subtitle", true), ("dvb.ts", "dvb_subtitle", "dvb_subtitle", false)])
    func dvdAndDVBSubtitlesAreDrawnToo(_ name: String, _ codec: String, _ decoder: String, _ endless: Bool) throws {
        defer { dir.remove() }
        let clip = dir.file(name)
        try SubtitleFixtures.bitmapClip(clip, codec: codec)
        let tracks = try SubtitleTrackInfo.tracks(inFileAt: clip)
        try #require(tracks.count == 1)
        #expect(tracks[0].codecName == decoder && !tracks[0].isText)
        let plain = try VideoFixtures.frameMD5s(clip)
        let boxed = Set(try SubtitleFixtures.overlaidMD5s(clip)).subtracting(plain)
        try #require(boxed.count == 1, "one picture with the box: \(boxed)")
        let d = try VideoDecoder(path: clip)
        d.subtitle = .track(tracks[0])
        let frames = try VideoClips.decodeAll(d)
        try #require(frames.count == plain.count)
        let cue = (start: SubtitleFixtures.bottomCue.start, end: endless ? Double.infinity : SubtitleFixtures.bottomCue.end)
        #expect(try SubtitleFixtures.overlaidMD5s(clip).filter { $0 == boxed.first! }.count > (endless ? 40 : 20))
        for (i, f) in frames.enumerated() {
            if f.time >= cue.start + 0.05 && f.time < cue.end - 0.05 {
                #expect(f.md5 == boxed.first!, "frame \(i) at \(f.time) s: within the cue")
            } else if f.time < cue.start - 0.05 || f.time >= cue.end + 0.1 {
                #expect(f.md5 == plain[i], "frame \(i) at \(f.time) s: outside it")
            } else {
                #expect(f.md5 == boxed.first! || f.md5 == plain[i], "frame \(i) at \(f.time) s")
            }
        }
    }
}
