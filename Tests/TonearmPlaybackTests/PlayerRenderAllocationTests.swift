// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmEngine
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// `AudioPlayer`'s render path (stream → equaliser → mixer, pulled by the null output in real
/// time) measured by ``RenderProbe`` while the control plane changes the volume and pan, a seek
/// lands and the item plays to its end: nothing allocated, freed, locked or waited for on the
/// render thread. In a ThreadSanitizer build nothing is counted; the scenario runs for TSan.
@Suite(.serialized)
struct PlayerRenderAllocationTests {
    @Test func anAudioPlayerSeekingAndEndingAllocatesLocksAndWaitsForNothingOnTheRenderThread() async throws {
        let dir = try TempDir("player-alloc")
        defer { dir.remove() }
        let path = dir.file("a.flac")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: 2, rate: 48000)
        let probe = RenderProbe(skippingFirst: 20)
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: path),
                                     output: { ProbingOutput(NullOutput(periodDuration: 0.005), probe: probe) })
        let events = player.events
        #expect(player.play())
        #expect(probe.waitUntilCounting())
        player.volume = 0.5
        player.pan = 0.25
        player.setVolume(0.8, fadeDuration: 0.05)
        player.currentTime = 1.5  // the seek lands; the last half second plays to the end
        let finished = try await waitForEvent(events, "didFinishPlaying") {
            if case .didFinishPlaying = $0 { true } else { false }
        }
        #expect(finished == .didFinishPlaying(successfully: true))
        probe.disarm()
        let c = probe.counts
        #expect(c.calls > 0, "no render call was counted")
        guard RenderProbe.isAvailable else { return }  // a sanitizer build: nothing counted
        #expect(c.isClean, "seek and end through AudioPlayer: \(c)\n\(probe.firstOffences)")
    }
}
