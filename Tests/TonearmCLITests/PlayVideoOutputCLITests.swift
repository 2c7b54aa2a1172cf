// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play VIDEO --video-output …` as a user runs it: every frame of ffmpeg's decode
/// offline, the picture against the sound in real time (through the null output's clock), and
/// the sound alone with `--no-video`. Real time: run one at a time.
@Suite(.serialized) final class PlayVideoOutputCLITests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("play-video-output-cli") }
    deinit { dir.remove() }

    /// A private state, config and data home: nothing of the user's is read or written.
    var environment: [String: String] {
        ["XDG_STATE_HOME": dir.file("state"), "XDG_CONFIG_HOME": dir.file("config"), "XDG_DATA_HOME": dir.file("data")]
    }

    func play(_ args: [String]) throws -> RunResult {
        try run(try tonearmBinary(), ["play"] + args, environment: environment)
    }

    @Test(arguments: [(true, "null:untimed"), (true, "file"), (false, "null:untimed")])
    func offlineWritesEveryFrameOfFFmpegsDecode(audio: Bool, output: String) throws {
        defer { dir.remove() }
        let clip = dir.file(audio ? "av.mp4" : "v.mp4")
        try VideoFixtures.clip(clip, seconds: 3, audio: audio)
        let expected = try VideoFixtures.frameMD5s(clip)
        let y4m = dir.file("out.y4m"), wav = dir.file("out.wav")
        let r = try play([clip, "--video-output", "file:\(y4m)", "--output", output == "file" ? "file:\(wav)" : output])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Video: \(expected.count) frames written to \(y4m)"), "\(r.stdout)")
        let frames = try VideoFixtures.y4mFrames(y4m)
        #expect(frames.count == expected.count)
        #expect(frames.map(FrameMD5.hex) == expected, "ffmpeg's frames, each once, in order")
        if output == "file" {
            let seconds = try run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", wav])
            let d = Double(seconds.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            #expect(abs(d - 3) < 0.1, "the sound beside it: \(d) s")
        }
        #expect(r.stdout.contains("Done: 1 played, 0 failed"), "\(r.stdout)")
    }

    @Test(arguments: [true, false])
    func realTimeShowsTheFramesInOrderWithAVAndDropped(audio: Bool) throws {
        defer { dir.remove() }
        let clip = dir.file("av.mp4")
        try VideoFixtures.clip(clip, seconds: 2, audio: audio)
        let expected = try VideoFixtures.frameMD5s(clip)
        let y4m = dir.file("shown.y4m")
        let r = try play([clip, "--video-output", "file:\(y4m)", "--output", "null", "--plain"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(r.stdout.contains(audio ? "H264 160×90 · AAC" : "H264 160×90 · no sound"), "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("  0:0") && $0.contains("dropped: ") }, "the progress line: \(r.stdout)")
        let summary = try #require(lines.first { $0.hasPrefix("Video: ") }, "\(r.stdout)")
        // "Video: 50 frames shown, 0 dropped, A-V: +0.000"
        let numbers = summary.split(whereSeparator: { " ,:".contains($0) }).compactMap { Double($0) }
        try #require(numbers.count == 3, "\(summary)")
        let (shown, dropped, av) = (Int(numbers[0]), Int(numbers[1]), numbers[2])
        #expect(shown + dropped == expected.count, "\(summary)")
        #expect(abs(av) < 0.1, "\(summary)")
        // The file holds the frames shown: ffmpeg's, in order, none twice.
        let written = try VideoFixtures.y4mFrames(y4m).map(FrameMD5.hex)
        #expect(written.count == shown)
        var next = expected.startIndex
        for h in written {
            guard let i = expected[next...].firstIndex(of: h) else {
                Issue.record("a frame out of order or not ffmpeg's")
                break
            }
            next = i + 1
        }
    }

    @Test func noVideoPlaysTheSoundOnly() throws {
        defer { dir.remove() }
        let clip = dir.file("av.mp4")
        try VideoFixtures.clip(clip, seconds: 1)
        let r = try play([clip, "--no-video", "--output", "null:untimed"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Done: 1 played, 0 failed"), "\(r.stdout)")
        #expect(!r.stdout.contains("Video:"))
        let both = try play([clip, "--no-video", "--video-output", "null"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("cannot be used together"), "\(both.stderr)")
    }

    @Test func aFileWithoutVideoIsRefused() throws {
        defer { dir.remove() }
        let tone = dir.file("a.flac")
        try Fixtures.tone(path: tone, codecArgs: ["-c:a", "flac"], seconds: 1)
        let r = try play([tone, "--video-output", "null", "--output", "null:untimed"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("has no video stream"), "\(r.stderr)")
        // A queue of them: none has a picture to put there.
        let two = try play([tone, tone, "--video-output", "null", "--output", "null:untimed"])
        #expect(two.status == 1)
        #expect(two.stderr.contains("none of the files to play has a video stream"), "\(two.stderr)")
    }
}
