// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport
import TonearmVideo

/// `PlayerItem`'s subtitle selection (`AVMediaSelectionGroup`'s legible options): the text tracks
/// listed, one selected drawn into the frames the player shows, switched off while playing.
/// Real time (the null output's clock): run one at a time.
@Suite(.serialized) struct PlayerSubtitleTests {
    /// Keeps every frame shown; at the first frame at or after `switchAt`, selects no subtitle.
    final class Recorder: PlayerVideoRenderer, Sendable {
        let frames = Mutex<[VideoFrame]>([])
        let switchAt: Double
        let item: PlayerItem
        init(item: PlayerItem, switchAt: Double) { self.item = item; self.switchAt = switchAt }
        func show(_ frame: VideoFrame) {
            let first = frames.withLock { f -> Bool in
                f.append(frame)
                return frame.time >= switchAt && f.dropLast().allSatisfy { $0.time < switchAt }
            }
            if first { try? item.select(subtitle: nil) }
        }
    }

    @Test func aSelectedTrackIsDrawnAndSwitchesOffWhilePlaying() async throws {
        let dir = try TempDir("player-subtitles")
        defer { dir.remove() }
        let clip = dir.file("two.mkv")
        try SubtitleFixtures.twoTrackMKV(clip)
        let plain = try VideoFixtures.frameMD5s(clip)
        let burnt = try SubtitleFixtures.burntMD5s(clip, subtitles: "f=\(clip):si=0")
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        #expect(item.subtitleTracks.map(\.language) == ["eng", "fra"])
        #expect(item.selectedSubtitle == nil)
        try item.select(subtitle: .track(item.subtitleTracks[0]))
        #expect(item.selectedSubtitle == .track(item.subtitleTracks[0]))
        var notText = item.subtitleTracks[0]
        notText.trackID = 0  // the video stream
        #expect(throws: TonearmError.self) { try item.select(subtitle: .track(notText)) }
        let switchAt = 0.8
        let recorder = Recorder(item: item, switchAt: switchAt)
        let player = Player(output: { NullOutput() })
        player.addVideoRenderer(recorder)
        let end = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.replaceCurrentItem(with: item)
        player.play()
        _ = try await end.value
        let shown = recorder.frames.withLock { $0 }.map { (index: Int(($0.time * 25).rounded()), md5: FrameMD5.hex($0.packedBytes)) }
        #expect(shown.count >= 40, "\(shown.count) frames shown")
        for f in shown { #expect(f.md5 == burnt[f.index] || f.md5 == plain[f.index], "frame \(f.index): neither") }
        let cue = SubtitleFixtures.bottomCue
        let before = shown.filter { Double($0.index) / 25 >= cue.start && Double($0.index) / 25 < switchAt }
        #expect(before.contains { $0.md5 == burnt[$0.index] && burnt[$0.index] != plain[$0.index] }, "drawn before the switch")
        // The decoder runs at most the queue (3 frames) and the one it decodes ahead of the
        // picture: six frames after the switch, the picture is plain again though the cue goes on.
        let after = shown.filter { Double($0.index) / 25 >= switchAt + 6.0 / 25 && Double($0.index) / 25 < cue.end }
        #expect(!after.isEmpty)
        #expect(after.allSatisfy { $0.md5 == plain[$0.index] }, "no subtitle after the switch")
        #expect(after.contains { burnt[$0.index] != plain[$0.index] }, "within the cue")
    }
}
