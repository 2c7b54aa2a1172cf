// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Observation
import Testing
import TonearmCore
import TonearmOutput
import TonearmPlayback
import TonearmTestSupport

/// `Player` and `PlayerItem` are observable with the Observation framework (issue 23), as iOS
/// code observes AVPlayer's and AVPlayerItem's properties (KVO there, `withObservationTracking`
/// or SwiftUI here): a read inside `withObservationTracking` registers the property, and its
/// change calls `onChange` — with no polling. Each test fails if the property's change is not
/// reported (the wait times out).
@Suite(.serialized) struct PlayerObservationTests {
    /// One change of whatever `read` reads, as a stream that yields once (tracking starts now).
    func nextChange(_ read: @escaping @Sendable () -> Void) -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        withObservationTracking { read() } onChange: {
            continuation.yield(1)
            continuation.finish()
        }
        return stream
    }

    func changed(_ stream: AsyncStream<Int>, _ what: String) async throws {
        _ = try await waitForEvent(stream, timeout: 10, what) { _ in true }
    }

    func tone(_ dir: TempDir, seconds: Double = 3) throws -> URL {
        let path = dir.file("tone.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", path])
        return URL(fileURLWithPath: path)
    }

    @Test func thePlayersStatusRateAndItemAreObserved() async throws {
        let dir = try TempDir("player-observation")
        defer { dir.remove() }
        let url = try tone(dir)
        let item = PlayerItem(url: url)
        let status = nextChange { _ = item.status }
        let player = Player(playerItem: item, output: { NullOutput() })
        try await changed(status, "the item's status")
        #expect(item.status == .readyToPlay)
        let control = nextChange { _ = player.timeControlStatus }
        let rate = nextChange { _ = player.rate }
        player.play()
        try await changed(rate, "the rate")
        try await changed(control, "the time control status")
        #expect(player.rate == 1)
        let paused = nextChange { _ = player.rate }
        player.pause()
        try await changed(paused, "the rate at pause")
        #expect(player.rate == 0)
        let other = PlayerItem(url: url)
        let current = nextChange { _ = player.currentItem }
        player.replaceCurrentItem(with: other)
        try await changed(current, "the current item")
        #expect(player.currentItem === other)
    }

    /// A download's buffer is observed as bytes arrive (a server sending 64 kB/s), and a video
    /// item's presentation size when its first picture is shown.
    @Test func theItemsBufferAndPresentationSizeAreObserved() async throws {
        let dir = try TempDir("player-observation-buffer")
        defer { dir.remove() }
        _ = try tone(dir, seconds: 20)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let remote = PlayerItem(url: server.url("/tone.flac", query: ["rate": "64000"]))
        let player = Player(playerItem: remote, output: { NullOutput() })
        defer { player.pause() }
        let loaded = nextChange { _ = remote.loadedTimeRanges }
        let keepsUp = nextChange { _ = remote.isPlaybackLikelyToKeepUp }
        player.play()
        try await changed(loaded, "the loaded time ranges")
        try await changed(keepsUp, "isPlaybackLikelyToKeepUp")

        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 2)
        let video = PlayerItem(url: URL(fileURLWithPath: clip))
        video.add(PlayerItemVideoOutput())
        #expect(video.presentationSize == .zero)
        let videoPlayer = Player(playerItem: video, output: { NullOutput() })
        defer { videoPlayer.pause() }
        let size = nextChange { _ = video.presentationSize }
        videoPlayer.play()
        try await changed(size, "the presentation size")
        #expect(video.presentationSize == VideoSize(width: 160, height: 90))
    }
}
