// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
@testable import TonearmCLI
import TonearmTestSupport

/// The subtitles of a queue's videos: what each video draws first, what `j` steps through, and
/// the queue's frame source following the choice from the next frame on (ffmpeg's frames of the
/// same file, plain and with `-vf subtitles`).
@Suite(.offThePool) struct QueueSubtitleTests {
    let dir: TempDir
    init() throws { dir = try TempDir("queue-subtitles") }

    @Test func theFrameSourceFollowsTheChoiceFromTheNextFrame() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(clip)
        let plain = try VideoFixtures.frameMD5s(clip)
        let burnt = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(clip):si=1")
        let second = try SubtitleTrackInfo.textTrack(2, inFileAt: clip)
        let choice = SubtitleChoice(nil)
        let source = QueueFrameSource(decoder: try VideoDecoder(path: clip), subtitles: choice)
        var out: [String] = []
        while let f = try source.nextFrame() {
            out.append(FrameMD5.hex(f.packedBytes))
            if out.count == 19 { choice.selection = .track(second) }  // j, at 0.76 s: within the cue
        }
        #expect(Array(out.prefix(19)) == Array(plain.prefix(19)))
        #expect(Array(out.dropFirst(19)) == Array(burnt.dropFirst(19)))
        #expect(burnt[19] != plain[19], "frame 19 is within the cue")
        // A seek reads the choice too: back to the cue, with subtitles off again.
        choice.selection = nil
        try source.seek(to: 0.8, exact: true)
        let f = try #require(try source.nextFrame())
        #expect(FrameMD5.hex(f.packedBytes) == plain[20])
    }

    @Test func eachVideoStartsWithItsSRTOrItsTrackAndJStepsThroughTheRest() throws {
        defer { dir.remove() }
        let clip = dir.file("two.mkv"), beside = dir.file("two.srt")
        try SubtitleFixtures.twoTrackMKV(clip)
        try SubtitleFixtures.bottomCueSRT(beside, text: "Beside")
        let tracks = try SubtitleTrackInfo.tracks(inFileAt: clip)

        let subs = QueueSubtitles(track: nil)
        #expect(subs.cycle() == nil, "no video yet")
        let choice = subs.begin(clip)
        #expect(choice.selection == .file(path: beside))
        #expect(subs.cycle()?.contains("English") == true)
        #expect(choice.selection == .track(tracks[0]))
        #expect(subs.cycle()?.contains("Français") == true)
        #expect(subs.cycle() == "Subtitles: off")
        #expect(choice.selection == nil)
        #expect(subs.cycle() == "Subtitles: 1/3 — two.srt")

        // --sub-track 2: the second track first; a video with fewer tracks draws its .srt (none here).
        let withTrack = QueueSubtitles(track: 2)
        #expect(withTrack.begin(clip).selection == .track(tracks[1]))
        let plain = dir.file("plain.mp4")
        try SubtitleFixtures.greyClip(plain)
        #expect(withTrack.begin(plain).selection == nil)
        #expect(withTrack.cycle() == nil, "nothing to step through")
    }
}
