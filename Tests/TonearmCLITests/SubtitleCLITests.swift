// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play VIDEO --sub FILE / --sub-track N` and the `.srt` beside a video, written
/// offline with `--video-output file:OUT.y4m`, against ffmpeg's `-vf subtitles=…`; `info`
/// listing the subtitle tracks.
@Suite struct SubtitleCLITests {
    let dir: TempDir
    init() throws { dir = try TempDir("subtitle-cli") }

    var environment: [String: String] {
        ["XDG_STATE_HOME": dir.file("state"), "XDG_CONFIG_HOME": dir.file("config"), "XDG_DATA_HOME": dir.file("data")]
    }

    func tonearm(_ args: [String]) throws -> RunResult {
        try run(try tonearmBinary(), args, environment: environment)
    }

    /// The frames `play` writes for `clip` with `extra` arguments, as MD5s.
    func written(_ clip: String, _ extra: [String]) throws -> [String] {
        let y4m = dir.file("out.y4m")
        try? FileManager.default.removeItem(atPath: y4m)
        let r = try tonearm(["play", clip, "--video-output", "file:\(y4m)", "--output", "null:untimed"] + extra)
        #expect(r.status == 0, "\(r.stderr)")
        return try VideoFixtures.y4mFrames(y4m).map(FrameMD5.hex)
    }

    @Test func subFileAndTheSRTBesideTheVideo() throws {
        defer { dir.remove() }
        let clip = dir.file("film.mp4"), srt = dir.file("other.srt")
        try SubtitleFixtures.greyClip(clip)
        let cue = SubtitleFixtures.bottomCue
        try SubtitleFixtures.srt(srt, text: "Subtitles from a file", start: cue.start, end: cue.end)
        let plain = try VideoFixtures.frameMD5s(clip)
        let burnt = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(srt)")
        #expect(burnt != plain)
        #expect(try written(clip, []) == plain, "no subtitle: the plain decode")
        #expect(try written(clip, ["--sub", srt]) == burnt, "--sub: ffmpeg's -vf subtitles")
        // film.srt beside film.mp4 is drawn without being asked for.
        let beside = dir.file("film.srt")
        try SubtitleFixtures.srt(beside, text: "Found beside", start: cue.start, end: cue.end)
        let besideBurnt = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(beside)")
        #expect(besideBurnt != burnt)
        #expect(try written(clip, []) == besideBurnt, "film.srt beside film.mp4")
        #expect(try written(clip, ["--sub", srt]) == burnt, "--sub wins over the file beside")
    }

    @Test func subTrackChoosesAmongTheTextTracksAndSaysHowManyThereAre() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(clip)
        let first = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(clip):si=0")
        let second = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(clip):si=1")
        #expect(first != second)
        #expect(try written(clip, ["--sub-track", "2"]) == second)
        #expect(try written(clip, ["--sub-track", "1"]) == first)
        let r = try tonearm(["play", clip, "--video-output", "file:\(dir.file("bad.y4m"))", "--output", "null:untimed",
                             "--sub-track", "3"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--sub-track 3: the file has 2 text subtitle tracks"), "\(r.stderr)")
    }

    @Test func infoListsTheSubtitleTracks() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(clip)
        let r = try tonearm(["info", clip])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  Subtitle   ") }
        try #require(lines.count == 2, "\(r.stdout)")
        #expect(lines[0].hasPrefix("  Subtitle   #1 subrip · eng · \"English\"") && lines[0].hasSuffix("--sub-track 1"), "\(lines[0])")
        #expect(lines[1].hasPrefix("  Subtitle   #2 subrip · fra · \"Français\"") && lines[1].hasSuffix("--sub-track 2"), "\(lines[1])")
    }
}
