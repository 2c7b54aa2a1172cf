// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport
import TonearmVideo

/// `Player` with video: frames presented in order against the audio clock through the real-time
/// null output, seeks landing on ffmpeg's frame, and no video work without an output.
/// Real time (the null output's clock): run one at a time.
@Suite(.serialized) struct PlayerVideoTests {
    /// This process's video pipeline threads by thread id (`/proc/self/task/*/comm`; the kernel
    /// keeps 15 characters of a name: `tonearm-vdecode`, `tonearm-vpresen`).
    static func videoThreads() -> [Int: String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var found: [Int: String] = [:]
        for task in tasks {
            guard let tid = Int(task),
                  let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                      .trimmingCharacters(in: .whitespacesAndNewlines),
                  name.hasPrefix("tonearm-vdec") || name.hasPrefix("tonearm-vpres") else { continue }
            found[tid] = name
        }
        return found
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

    /// Whether `seen` are frames of `expected` (times), in order, none twice.
    static func inOrder(_ seen: [Double], of expected: [Double]) -> Bool {
        var next = expected.startIndex
        for t in seen {
            guard let i = expected[next...].firstIndex(where: { abs($0 - t) < 1e-6 }) else { return false }
            next = i + 1
        }
        return true
    }

    /// Frames a starved machine may drop (a presenting thread held off the processor for longer
    /// than a frame, as under ThreadSanitizer at a load of 12 on 2 cores: up to 4 of 27 seen;
    /// none in plain runs). A clock that moves in output periods instead of smoothly drops far
    /// more (23 of the first 45 frames with 250 ms periods, measured with the extrapolation off).
    static func tolerableDrops(_ frames: Int) -> Int { frames / 4 }

    /// An item of a 3 s clip made in `dir`, with a video output attached.
    static func itemWithOutput(in dir: TempDir) throws -> (PlayerItem, PlayerItemVideoOutput) {
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 3)
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        let output = PlayerItemVideoOutput()
        item.add(output)
        return (item, output)
    }

    static func isReady(after: Double) -> @Sendable (PlayerEvent) -> Bool {
        { if case .readyForDisplay(let t) = $0, t > after { true } else { false } }
    }

    /// `tonearm play VIDEO`'s way to the first frame: the command asks whether the file has
    /// video, then the item loads it (its sound, its video tracks) and the picture's decoder
    /// opens it. The command's probe (`avformat_find_stream_info`, with the file opened) is
    /// handed on to the item's sound and read for the video tracks: before, each of them opened
    /// and probed the file again (four probes before the picture's own). The picture's demuxer
    /// opens the file and takes what that probe found instead of probing it again
    /// (`ProbeFindings`). Counted by TonearmCodecs' openers for this file only.
    @Test func theFileIsProbedOnceForTheItemAndItsPicture() async throws {
        let dir = try TempDir("player-video-probes")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 1)
        InputOpenCounter.watch(clip)
        defer { InputOpenCounter.unwatch(clip) }
        // As the command does (twice: whether `--video-output` may be used, whether to open a window).
        #expect(try VideoTrackInfo.tracks(inFileAt: clip).count == 1)
        #expect(try VideoTrackInfo.tracks(inFileAt: clip).count == 1)
        #expect(InputOpenCounter.counts(clip) == .init(opens: 1, probes: 1))
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        let output = PlayerItemVideoOutput()
        item.add(output)
        let player = Player(playerItem: item, output: { NullOutput() })
        let ready = collectPlayerEvents(player, until: Self.isReady(after: -1))
        player.play()
        _ = try await ready.value
        #expect(item.videoTracks.count == 1)
        #expect(item.presentationSize == VideoSize(width: 160, height: 90))
        let counts = InputOpenCounter.counts(clip)
        // One probe for the item, its sound and its picture; the opens besides: the picture's
        // own demuxer (the probe's findings copied in), and the sound's look at the AAC track's
        // length without its edit list (gapless, no probe).
        #expect(counts.probes == 1, "\(counts)")
        #expect(counts.opens == 3, "\(counts)")
        // The picture decoded from that demuxer is the file's: its first frame, at 0, full size.
        let first = try #require(output.lastPresentedFrame)
        #expect(first.time == 0 && first.width == 160 && first.height == 90, "\(first.time) \(first.width)×\(first.height)")
        player.pause()
        player.replaceCurrentItem(with: nil)
    }

    /// The picture does not wait for the sound's output: the item's first frame is decoded and
    /// presented while the output is still being made (a sound server slow to answer, here an
    /// output whose making waits for the test), and the picture follows the sound once it
    /// plays. Before, the picture's decoder opened only once the output had: for `tonearm play
    /// VIDEO`, after PulseAudio's handshake (scripts/bench video, BENCHMARKS.md's session 25).
    @Test func theFirstFrameIsShownWhileTheOutputIsStillBeingMade() async throws {
        let dir = try TempDir("player-video-before-output")
        defer { dir.remove() }
        let (item, output) = try Self.itemWithOutput(in: dir)
        let release = DispatchSemaphore(value: 0)
        let made = Atomic<Bool>(false)
        let player = Player(playerItem: item, output: {
            _ = release.wait(timeout: .now() + 60)
            made.store(true, ordering: .releasing)
            return NullOutput()
        })
        let frames = output.newFrameTimes
        player.play()
        let first = try await Self.first(1, of: frames, timeout: 20)
        #expect(first.count == 1)
        let madeBefore = made.load(ordering: .acquiring)
        #expect(!madeBefore, "the first frame came before the output was made")
        #expect(player.currentTime() == 0)
        release.signal()
        _ = try await Self.first(1, of: player.boundaryCrossings([1]))
        let shown = output.lastPresentedFrame?.time ?? -1
        #expect(shown >= 0.5, "the sound at 1 s, the picture at \(shown) s")
        player.pause()
        player.replaceCurrentItem(with: nil)
    }

    @Test func audioOnlyPlaybackOfAVideoStartsNoVideoThread() async throws {
        let dir = try TempDir("player-video-none")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 3)
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        // Threads of this player only: ones that were there before it (an earlier test's player
        // that has not gone yet; reported) are not counted.
        let before = Self.videoThreads()
        if !before.isEmpty { print("video threads before the player: \(before)") }
        func ours() -> [Int: String] { Self.videoThreads().filter { before[$0.key] == nil } }
        let player = Player(playerItem: item, output: { NullOutput() })
        let playing = collectPlayerEvents(player) { $0 == .timeControlStatusChanged(.playing) }
        // Observed before the start: made after it, on a loaded machine the playhead could be
        // past 0.5 s already, and the crossing would never come.
        let halfASecond = player.boundaryCrossings([0.5])
        player.play()
        _ = try await playing.value
        _ = try await Self.first(1, of: halfASecond)
        #expect(item.videoTracks.count == 1)
        #expect(item.presentationSize == VideoSize(width: 160, height: 90))
        #expect(!player.isPlayingVideo)
        #expect(ours().isEmpty, "audio-only playback of a video decodes no video: \(ours())")
        // The check can see them: an output added now starts both threads.
        let ready = collectPlayerEvents(player, until: Self.isReady(after: -1))
        let output = PlayerItemVideoOutput()
        item.add(output)
        _ = try await ready.value
        #expect(player.isPlayingVideo)
        #expect(Set(ours().values).count == 2, "\(ours())")
        // Removing the last output stops the video (the seek's completion comes through the
        // control queue after the removal was handled there).
        item.remove(output)
        #expect(await player.seek(to: 1))
        #expect(!player.isPlayingVideo, "no output, no video")
        item.add(output)
        #expect(await player.seek(to: 1.2))
        #expect(player.isPlayingVideo)
        let changed = collectPlayerEvents(player) { $0 == .currentItemChanged }
        player.replaceCurrentItem(with: nil)
        _ = try await changed.value
        #expect(!player.isPlayingVideo, "a replaced item's video stops")
    }

    /// Playing before the output renders anything (a sound server slow to start, a sound still
    /// being fetched): the picture's clock stands at the start — at the playing rate, so that
    /// the presenter, woken by the status, waits for its next frame's time instead of for an
    /// event — and the picture moves once the sound does. Before, the clock read rate 0 there;
    /// a presenter with a full queue then waited for an event that never came, and the picture
    /// stood still until the sound's end (seen with a poorly interleaved network file).
    @Test func thePictureMovesWhenTheSoundStartsAfterThePlay() async throws {
        let dir = try TempDir("player-video-late-sound")
        defer { dir.remove() }
        let (item, output) = try Self.itemWithOutput(in: dir)
        let gated = Mutex<GatedOutput?>(nil)
        let player = Player(playerItem: item, output: {
            let g = GatedOutput(NullOutput())
            gated.withLock { $0 = g }
            return g
        })
        let ready = collectPlayerEvents(player, until: Self.isReady(after: -1))
        _ = try await ready.value
        let playing = collectPlayerEvents(player) { $0 == .timeControlStatusChanged(.playing) }
        player.play()
        _ = try await playing.value
        let clock = player.videoClock()
        #expect(clock.rate == 1 && clock.time == 0, "nothing rendered yet: \(clock)")
        let oneSecond = player.boundaryCrossings([1])  // before the sound moves (see above)
        try #require(gated.withLock { $0 }).openGate()
        _ = try await Self.first(1, of: oneSecond)
        let shown = output.lastPresentedFrame?.time ?? -1
        #expect(shown >= 0.5, "the sound at 1 s, the picture at \(shown) s")
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
        // Periods of 250 ms, as the command's null output and a grown PulseAudio buffer have:
        // the position moves four times a second.
        let player = Player(playerItem: item, output: { NullOutput(periodDuration: 0.25) })
        let times = output.newFrameTimes
        let end = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.play()
        // Two seconds of playback: 50 frames at 25 fps.
        let seen = try await Self.first(45, of: times)
        let stats = try #require(player.videoStatistics)
        #expect(Self.inOrder(seen, of: expected), "frames in order, none twice: \(seen)")
        #expect(stats.droppedFrames <= Self.tolerableDrops(seen.count),
                "(next to) nothing dropped at 160×90: the clock moves smoothly between render calls; \(stats)")
        let av = try #require(stats.lastAVDifference)
        #expect(abs(av) < 0.1, "A−V \(av)")
        let last = try #require(seen.last)
        #expect(output.copyPixelBuffer(forItemTime: last + 0.01) != nil)
        // The end is reported once the picture has reached it too: every frame shown.
        _ = try await end.value
        let final = try #require(player.videoStatistics)
        #expect(final.presentedFrames + final.droppedFrames == expected.count, "the last frames are shown before the end is reported")
        #expect(final.droppedFrames <= Self.tolerableDrops(expected.count), "\(final)")
        #expect(output.lastPresentedFrame.map { abs($0.time - expected[expected.count - 1]) < 1e-6 } == true)
    }

    @Test func throughPulseAudioThePictureFollowsTheSoundAtTheSpeaker() async throws {
        let dir = try TempDir("player-video-pulse")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 3)
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let pulse = try PrivatePulseServer()
        defer { pulse.stop() }
        let server = pulse.serverString
        let output = PlayerItemVideoOutput()
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        item.add(output)
        let player = Player(playerItem: item, output: { PulseOutput(server: server, streamName: "video") })
        let times = output.newFrameTimes
        let collected = Task {
            var seen: [Double] = []
            for await t in times { seen.append(t) }
            return seen
        }
        let end = collectPlayerEvents(player, timeout: 40) { $0 == .didPlayToEndTime }
        player.play()
        _ = try await end.value
        collected.cancel()
        let seen = await collected.value
        let stats = try #require(player.videoStatistics)
        #expect(player.outputName == "pulse")
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "\(stats)")
        #expect(stats.droppedFrames <= Self.tolerableDrops(expected.count), "\(stats)")
        #expect(Self.inOrder(seen, of: expected))
        #expect(abs(try #require(stats.lastAVDifference)) < 0.1, "A−V against the audio at the speaker: \(stats)")
    }

    @Test func aVideoWithoutSoundPlaysAgainstSilence() async throws {
        let dir = try TempDir("player-video-silent")
        defer { dir.remove() }
        let clip = dir.file("v.mp4")
        try VideoFixtures.clip(clip, seconds: 2, audio: false)
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let md5s = try VideoFixtures.frameMD5s(clip)
        let output = PlayerItemVideoOutput()
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        item.add(output)
        let player = Player(output: { NullOutput() })
        let ready = collectPlayerEvents(player, until: Self.isReady(after: -1))
        player.replaceCurrentItem(with: item)
        _ = try await ready.value
        #expect(item.status == .readyToPlay)
        #expect(!item.hasAudio)
        #expect(abs((item.duration.seconds ?? 0) - 2) < 0.05)
        #expect(item.seekableTimeRanges.count == 1)
        // An exact seek, then played to the end from there.
        let target = 0.9
        let landed = collectPlayerEvents(player, until: Self.isReady(after: 0.5))
        #expect(await player.seek(to: target, toleranceBefore: 0, toleranceAfter: 0))
        _ = try await landed.value
        let index = try #require(expected.lastIndex { $0 <= target + 1e-6 })
        #expect(output.copyPixelBuffer(forItemTime: target).map { FrameMD5.hex($0.packedBytes) } == md5s[index])
        let times = output.newFrameTimes
        let collected = Task {
            var seen: [Double] = []
            for await t in times { seen.append(t) }
            return seen
        }
        let end = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.play()
        _ = try await end.value
        collected.cancel()
        let seen = await collected.value
        let stats = try #require(player.videoStatistics)
        let after = Array(expected[(index + 1)...])
        #expect(stats.droppedFrames <= Self.tolerableDrops(after.count), "\(stats)")
        #expect(seen.count + stats.droppedFrames == after.count, "\(seen)")
        #expect(Self.inOrder(seen, of: after), "the frames after the seek, in order: \(seen)")
        #expect(abs(try #require(stats.lastAVDifference)) < 0.1)
    }

    @Test func atTwiceTheSpeedThePictureFollowsTheSound() async throws {
        let dir = try TempDir("player-video-rate")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 3)
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let output = PlayerItemVideoOutput()
        let item = PlayerItem(url: URL(fileURLWithPath: clip))
        item.add(output)
        let player = Player(playerItem: item, output: { NullOutput() })
        let times = output.newFrameTimes
        let collected = Task {
            var seen: [Double] = []
            for await t in times { seen.append(t) }
            return seen
        }
        let end = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.rate = 2
        _ = try await end.value
        let stats = try #require(player.videoStatistics)
        collected.cancel()
        let seen = await collected.value
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "every frame shown or dropped by rule")
        #expect(Self.inOrder(seen, of: expected), "in order, none repeated")
        #expect(abs(try #require(stats.lastAVDifference)) < 0.1, "A−V at 2×")
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

/// An output whose render thread starts only when ``openGate()`` is called (`start` is held
/// until then): a player that plays before its output renders anything.
final class GatedOutput: ForwardingOutputDriver, @unchecked Sendable {
    let inner: any AudioOutputDriver
    private let lock = NSLock()
    private var isOpen = false
    private var pending: (any AudioRenderSource)?

    init(_ inner: any AudioOutputDriver) { self.inner = inner }

    func start(source: any AudioRenderSource) throws {
        let now = lock.withLock { () -> Bool in
            if isOpen { return true }
            pending = source
            return false
        }
        if now { try inner.start(source: source) }
    }

    /// From now on the output renders (the held `start` goes through).
    func openGate() throws {
        let held = lock.withLock { () -> (any AudioRenderSource)? in
            isOpen = true
            defer { pending = nil }
            return pending
        }
        if let held { try inner.start(source: held) }
    }

    func stop() {
        lock.withLock { pending = nil }
        inner.stop()
    }
}
