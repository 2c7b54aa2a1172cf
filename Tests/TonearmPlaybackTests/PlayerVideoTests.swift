// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport
import TonearmVideo

/// `Player` with video: frames presented in order against the audio clock through the real-time
/// null output, seeks landing on ffmpeg's frame, and no video work without an output.
/// Real time (the null output's clock): run one at a time.
@Suite(.serialized) struct PlayerVideoTests {
    /// The names of this process's video pipeline threads (`/proc/self/task/*/comm`; the kernel
    /// keeps 15 characters of a name: `tonearm-vdecode`, `tonearm-vpresen`).
    static func videoThreads() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { $0.hasPrefix("tonearm-vdec") || $0.hasPrefix("tonearm-vpres") }
    }

    /// The first `count` values of `stream`, or what came when it ended; throws after `timeout`.
    static func first<T: Sendable>(_ count: Int, of stream: AsyncStream<T>, timeout: Double = 30) async throws -> [T] {
        let task = Task {
            var seen: [T] = []
            for await v in stream {
                seen.append(v)
                if seen.count >= count { break }
            }
            return seen
        }
        return try await withDeadline(timeout, "\(count) values", onTimeout: { task.cancel() }) { await task.value }
    }

    static func isReady(after: Double) -> @Sendable (PlayerEvent) -> Bool {
        { if case .readyForDisplay(let t) = $0, t > after { true } else { false } }
    }

    @Test func audioOnlyPlaybackOfAVideoStartsNoVideoThread() async throws {
        let dir = try TempDir("player-video-none")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 3)
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        let player = Player(playerItem: item, output: { NullOutput() })
        let playing = collectPlayerEvents(player) { $0 == .timeControlStatusChanged(.playing) }
        player.play()
        _ = try await playing.value
        _ = try await Self.first(1, of: player.boundaryCrossings([0.5]))
        #expect(item.videoTracks.count == 1)
        #expect(item.presentationSize == VideoSize(width: 160, height: 90))
        #expect(!player.isPlayingVideo)
        #expect(Self.videoThreads().isEmpty, "audio-only playback of a video decodes no video")
        // The check can see them: an output added now starts both threads.
        let ready = collectPlayerEvents(player, until: Self.isReady(after: -1))
        item.add(PlayerItemVideoOutput())
        _ = try await ready.value
        #expect(player.isPlayingVideo)
        #expect(Set(Self.videoThreads()).count == 2)
        let changed = collectPlayerEvents(player) { $0 == .currentItemChanged }
        player.replaceCurrentItem(with: nil)
        _ = try await changed.value
        #expect(!player.isPlayingVideo, "a replaced item's video stops")
    }

    @Test func anAudioItemHasNoPresentationSize() async throws {
        let dir = try TempDir("player-video-audio")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 1)
        let item = PlayerItem(url: URL(fileURLWithPath: dir.file("a.flac")))
        let player = Player(playerItem: item, output: { NullOutput() })
        let ready = collectPlayerEvents(player) { $0 == .itemStatusChanged(.readyToPlay) }
        _ = try await ready.value
        #expect(item.videoTracks.isEmpty)
        #expect(item.presentationSize == .zero)
        item.add(PlayerItemVideoOutput())
        #expect(!player.isPlayingVideo)
        _ = player
    }

    @Test func realTimePlaybackPresentsEveryFrameInOrderInSync() async throws {
        let dir = try TempDir("player-video-sync")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 3)
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let output = PlayerItemVideoOutput()
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        item.add(output)
        let player = Player(playerItem: item, output: { NullOutput() })
        let times = output.newFrameTimes
        player.play()
        // Two seconds of playback: 50 frames at 25 fps.
        let seen = try await Self.first(50, of: times)
        let stats = try #require(player.videoStatistics)
        player.pause()
        #expect(seen.count == 50)
        for (got, want) in zip(seen, expected) { #expect(abs(got - want) < 1e-6, "every frame, in order") }
        #expect(stats.droppedFrames == 0, "nothing dropped at 160×90 (the clock moves smoothly between render calls)")
        let av = try #require(stats.lastAVDifference)
        #expect(abs(av) < 0.1, "A−V \(av)")
        let last = try #require(seen.last)
        #expect(output.copyPixelBuffer(forItemTime: last + 0.01)?.time == last)
    }

    /// A renderer that holds the presenting thread once, for `stall` seconds, at its `at`th frame.
    final class StallingRenderer: PlayerVideoRenderer, Sendable {
        let count = Mutex(0)
        let at: Int
        let stall: Double
        init(at: Int, stall: Double) { self.at = at; self.stall = stall }
        func show(_ frame: VideoFrame) {
            let n = count.withLock { c in c += 1; return c }
            if n == at { Thread.sleep(forTimeInterval: stall) }  // a slow display, not synchronisation
        }
    }

    @Test func aStalledDisplayDropsTheFramesItMissed() async throws {
        let dir = try TempDir("player-video-stall")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 2)
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        let player = Player(playerItem: item, output: { NullOutput() })
        player.addVideoRenderer(StallingRenderer(at: 5, stall: 0.5))
        let end = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.play()
        _ = try await end.value
        #expect(!player.isPlayingVideo, "the end stops the video")
        // Kept from the pipeline that ran until the end.
        let stats = try #require(player.videoStatistics)
        #expect(stats.droppedFrames > 0, "half a second held: the frames due meanwhile are dropped, not shown late")
        #expect(stats.presentedFrames + stats.droppedFrames <= 50)
    }

    @Test(arguments: [VideoFrame.PixelFormat.yuv420p, .rgba])
    func seeksLandOnFFmpegsFrame(format: VideoFrame.PixelFormat) async throws {
        let dir = try TempDir("player-video-seek")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 3)
        let md5s = try VideoFixtures.frameMD5s(clip, pixelFormat: format.rawValue)
        let frames = try VideoFixtures.frameTimes(clip)
        try #require(md5s.count == frames.count)
        let output = PlayerItemVideoOutput(pixelFormat: format)
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        item.add(output)
        let player = Player(output: { NullOutput() })
        let first = collectPlayerEvents(player, until: Self.isReady(after: -1))
        player.replaceCurrentItem(with: item)
        _ = try await first.value
        #expect(player.isReadyForDisplay)
        // Exact: the frame shown at the target.
        let target = 1.3
        let exact = collectPlayerEvents(player, until: Self.isReady(after: 1))
        #expect(await player.seek(to: target, toleranceBefore: 0, toleranceAfter: 0))
        _ = try await exact.value
        let index = try #require(frames.lastIndex { $0.time <= target + 1e-6 })
        let f = try #require(output.copyPixelBuffer(forItemTime: target))
        #expect(f.pixelFormat == format)
        #expect(abs(f.time - frames[index].time) < 1e-6)
        #expect(FrameMD5.hex(f.packedBytes) == md5s[index], "frame \(index) after an exact seek")
        #expect(!output.hasNewPixelBuffer(forItemTime: target), "copied already")
        // With tolerance: the key frame at or before the target.
        let loose = 2.1
        let keyed = collectPlayerEvents(player, until: Self.isReady(after: 1.5))
        #expect(await player.seek(to: loose))
        _ = try await keyed.value
        let key = try #require(frames.lastIndex { $0.key && $0.time <= loose })
        #expect(output.hasNewPixelBuffer(forItemTime: loose))
        let k = try #require(output.copyPixelBuffer(forItemTime: loose))
        #expect(abs(k.time - frames[key].time) < 1e-6, "the key frame before \(loose), not \(k.time)")
        #expect(FrameMD5.hex(k.packedBytes) == md5s[key])
    }
}
