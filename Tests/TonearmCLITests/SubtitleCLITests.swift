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
        try SubtitleFixtures.greyClip(clip, cue: "Subtitles from a file", in: srt)
        let plain = try VideoFixtures.frameMD5s(clip)
        let burnt = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(srt)")
        #expect(burnt != plain)
        #expect(try written(clip, []) == plain, "no subtitle: the plain decode")
        #expect(try written(clip, ["--sub", srt]) == burnt, "--sub: ffmpeg's -vf subtitles")
        // film.srt beside film.mp4 is drawn without being asked for.
        let beside = dir.file("film.srt")
        try SubtitleFixtures.bottomCueSRT(beside, text: "Found beside")
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
        #expect(r.stderr.contains("--sub-track 3: the file has 2 subtitle tracks"), "\(r.stderr)")
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

    /// The frames `play` writes offline for the queue `items` with `extra` arguments, as MD5s.
    func writtenQueue(_ items: [String], _ extra: [String]) throws -> (RunResult, [String]) {
        let y4m = dir.file("queue.y4m")
        try? FileManager.default.removeItem(atPath: y4m)
        let r = try tonearm(["play", "--plain"] + items + ["--video-output", "file:\(y4m)", "--output", "null:untimed"] + extra)
        guard r.status == 0 else { return (r, []) }
        return (r, try VideoFixtures.y4mFrames(y4m).map(FrameMD5.hex))
    }

    /// A song of `seconds` at 330 Hz.
    func song(_ name: String, seconds: Double = 1) throws -> String {
        let path = dir.file(name)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=330:sample_rate=48000:duration=\(seconds)", path])
        return path
    }

    /// `tonearm play a.flac film.mp4 two.mkv`: each video of the queue draws its own subtitles —
    /// film.mp4 the film.srt beside it, two.mkv nothing, or with --sub-track 2 its second text
    /// track (film.mp4, which has no track, still its .srt) — as ffmpeg's -vf subtitles does.
    @Test func eachVideoOfAQueueDrawsItsOwnSubtitles() throws {
        defer { dir.remove() }
        let a = try song("a.flac")
        let film = dir.file("film.mp4"), beside = dir.file("film.srt"), two = dir.file("two.mkv")
        try SubtitleFixtures.greyClip(film, cue: "Found beside", in: beside, sound: true)
        try SubtitleFixtures.twoTrackMKV(two, sound: true)
        let filmBurnt = try SubtitleFixtures.burntMD5s(film, subtitles: "f=\(beside)")
        let twoPlain = try VideoFixtures.frameMD5s(two)
        let twoSecond = try SubtitleFixtures.burntMD5s(two, subtitles: "f=\(two):si=1")
        #expect(filmBurnt != (try VideoFixtures.frameMD5s(film)) && twoSecond != twoPlain)

        let (plainRun, plain) = try writtenQueue([a, film, two], [])
        #expect(plainRun.status == 0, "\(plainRun.stderr)")
        #expect(plain == filmBurnt + twoPlain, "film.srt over film.mp4; two.mkv as decoded")
        let (trackRun, track) = try writtenQueue([a, film, two], ["--sub-track", "2"])
        #expect(trackRun.status == 0, "\(trackRun.stderr)")
        #expect(track == filmBurnt + twoSecond, "two.mkv's second track; film.mp4's .srt")

        let (beyond, _) = try writtenQueue([a, film, two], ["--sub-track", "3"])
        #expect(beyond.status != 0)
        #expect(beyond.stderr.contains("--sub-track 3: none of the videos has 3 subtitle tracks"), "\(beyond.stderr)")
        let (oneFile, _) = try writtenQueue([a, film, two], ["--sub", beside])
        #expect(oneFile.status != 0)
        #expect(oneFile.stderr.contains("in a queue each video draws the .srt beside it"), "\(oneFile.stderr)")
    }

    /// Plays `args` under Xvfb in a video window; once its first frame is shown, presses `j` in
    /// the window titled `title` `presses` times, waiting each time for the line that says which
    /// subtitle is drawn; then q. The lines said, in order.
    func subtitleLinesAfterJ(_ args: [String], title: String, presses: Int) async throws -> [String] {
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        let env = environment.merging(display.childEnvironment) { $1 }
        let child = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null"] + args, environment: env,
                                     captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate() }
        let shown = await child.waitForStandardOutput(timeout: 60) { $0.text.contains("Video: the first frame shown") || $0.childEnded }
        try #require(shown, "no frame was shown: \(child.standardOutputText) \(child.standardErrorText)")
        func said() -> [String] {
            child.standardOutputText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.hasPrefix("Subtitles: ") }
        }
        for n in 1...presses {
            try display.send(toWindowTitled: title, ["key:j"])
            let heard = await child.waitForStandardOutput(timeout: 20) { o in
                o.text.components(separatedBy: "Subtitles: ").count - 1 >= n || o.childEnded
            }
            #expect(heard, "j #\(n) said nothing: \(child.standardOutputText) \(child.standardErrorText)")
        }
        try display.send(toWindowTitled: title, ["key:q"])
        #expect(await child.waitForExit(timeout: 20), "q in the window did not end the command")
        #expect(child.succeeded, "status \(child.status ?? -1): \(child.standardErrorText)")
        return said()
    }

    /// j in a queue's video window steps through the video's subtitles: its .srt, then its text
    /// tracks, then none, then from the start again.
    @Test func jInAQueuesVideoWindowCyclesTheSubtitles() async throws {
        defer { dir.remove() }
        let a = try song("a.flac", seconds: 0.5)
        let two = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(two, seconds: 20, sound: true)
        try SubtitleFixtures.bottomCueSRT(dir.file("two.srt"), text: "Beside")
        let lines = try await subtitleLinesAfterJ([a, two], title: "two.mkv", presses: 4)
        try #require(lines.count == 4, "\(lines)")
        // It starts with two.srt drawn: j goes on to the first track.
        #expect(lines[0].hasPrefix("Subtitles: 2/3 — #") && lines[0].contains("English"), "\(lines[0])")
        #expect(lines[1].hasPrefix("Subtitles: 3/3 — #") && lines[1].contains("Français"), "\(lines[1])")
        #expect(lines[2] == "Subtitles: off")
        #expect(lines[3] == "Subtitles: 1/3 — two.srt")
    }

    /// j in a single video's window (the PlayerView's own key) does the same.
    @Test func jInAVideosWindowCyclesTheSubtitles() async throws {
        defer { dir.remove() }
        let two = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(two, seconds: 20, sound: true)
        let lines = try await subtitleLinesAfterJ([two, "--sub-track", "1"], title: "two.mkv", presses: 2)
        try #require(lines.count == 2, "\(lines)")
        #expect(lines[0].hasPrefix("Subtitles: 2/2 — #") && lines[0].contains("Français"), "\(lines[0])")
        #expect(lines[1] == "Subtitles: off")
    }

    /// A PGS (bitmap) track: `info` lists it with its --sub-track N, and `play --sub-track 1`
    /// draws it during its cue as ffmpeg's overlay draws it, the plain picture elsewhere.
    @Test func aBitmapTrackIsListedAndDrawn() throws {
        defer { dir.remove() }
        let clip = dir.file("pgs.mkv")
        try SubtitleFixtures.pgsMKV(clip)
        let info = try tonearm(["info", clip])
        #expect(info.status == 0, "\(info.stderr)")
        let line = info.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("  Subtitle   ") }
        #expect(line?.contains("hdmv_pgs_subtitle · bitmap · --sub-track 1") == true, "\(info.stdout)")
        let plain = try VideoFixtures.frameMD5s(clip)
        let boxed = Set(try SubtitleFixtures.overlaidMD5s(clip)).subtracting(plain)
        try #require(boxed.count == 1)
        let cue = SubtitleFixtures.bottomCue
        let expected = plain.indices.map { i in
            Double(i) / 25 >= cue.start - 1e-6 && Double(i) / 25 < cue.end - 1e-6 ? boxed.first! : plain[i]
        }
        #expect(try written(clip, ["--sub-track", "1"]) == expected)
        #expect(try written(clip, []) == plain)
    }
}
