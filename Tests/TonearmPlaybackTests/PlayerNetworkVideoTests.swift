// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmNetwork
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport
import TonearmVideo

/// `Player` with a progressive HTTP item that has video (issue 19), against the tests' HTTP
/// server on 127.0.0.1: its video tracks are found, its picture reaches the item's video output
/// as a local file's does — ffmpeg's frames, in order, every one shown or dropped — with the
/// moov atom first or last, with or without Range support, the file downloaded once for both (the
/// server counts the body bytes it sends); a server that stalls mid-file holds the picture and
/// the sound up, and both go on to the end (within a bounded deadline, with a bounded number of
/// requests). Real time (the null output's clock): run one at a time.
@Suite(.serialized) struct PlayerNetworkVideoTests {
    /// A 2 s clip with sound, its moov atom last (ffmpeg's default) or first (`+faststart`).
    static func clip(in dir: TempDir, moovFirst: Bool) throws -> String {
        let last = dir.file("last.mp4")
        try VideoFixtures.clip(last, seconds: 2)
        guard moovFirst else { return last }
        let first = dir.file("first.mp4")
        try Fixtures.ffmpeg(["-i", last, "-c", "copy", "-movflags", "+faststart", first])
        return first
    }

    /// Plays `url` to its end with a video output; the frame times presented, and the player.
    static func playToEnd(_ item: PlayerItem, timeout: Double = 60) async throws -> (times: [Double], player: Player) {
        let output = PlayerItemVideoOutput()
        item.add(output)
        let player = Player(playerItem: item, output: { NullOutput() })
        let times = output.newFrameTimes
        let collected = Task {
            var seen: [Double] = []
            for await t in times { seen.append(t) }
            return seen
        }
        let end = collectPlayerEvents(player, timeout: timeout) { e in
            switch e {
            case .didPlayToEndTime, .failedToPlayToEndTime, .videoFailed: true
            case .itemStatusChanged(.failed): true
            default: false
            }
        }
        player.play()
        let events = try await end.value
        let last = events.last
        #expect(last == PlayerEvent.didPlayToEndTime, "\(events)")
        collected.cancel()
        // Frames are delivered before the end is reported.
        let seen = await collected.value
        return (seen, player)
    }

    @Test(arguments: [(true, false), (false, false), (false, true)])
    func theItemsPictureIsFFmpegsFramesInOrder(moovFirst: Bool, noRange: Bool) async throws {
        let dir = try TempDir("player-network-video")
        defer { dir.remove() }
        let clip = try Self.clip(in: dir, moovFirst: moovFirst)
        let name = (clip as NSString).lastPathComponent
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/\(name)", query: noRange ? ["norange": "1"] : [:]))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let (seen, player) = try await Self.playToEnd(item)
        #expect(item.videoTracks.count == 1, "the network item's video track is found")
        #expect(item.presentationSize == VideoSize(width: 160, height: 90))
        let stats = try #require(player.videoStatistics)
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "every frame shown or dropped: \(stats)")
        #expect(stats.presentedFrames > 0)
        #expect(PlayerVideoTests.inOrder(seen, of: expected), "ffmpeg's frames in order, none twice: \(seen)")
        let requests = server.requests(path: "/\(name)")
        #expect(requests.count >= 1 && requests.count <= 4, "one download, no storm: \(requests.count)")
        let served = requests.reduce(0) { $0 + $1.bytes }
        #expect(served <= size + size / 10, "the file is sent once for the sound and the picture: \(served) bytes of \(size)")
    }

    /// A poorly interleaved MP4 (all the picture's data, then all the sound's) over a server that
    /// sends 200 kB/s (about twice what it plays): the sound reads the end of the file and the
    /// picture its start, one download serving both by turns. The picture moves with the sound
    /// (most frames are shown while it plays; a presenter that once saw the clock stand at the
    /// start showed them all after the sound's end — PlayerVideoTests'
    /// thePictureMovesWhenTheSoundStartsAfterThePlay has that case for certain), every frame is
    /// shown or dropped, in order, and the file is sent about once.
    @Test func aPoorlyInterleavedFilesPictureMovesWithItsSound() async throws {
        let dir = try TempDir("player-network-video-interleave")
        defer { dir.remove() }
        let clip = dir.file("poor.mp4")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x180:rate=25:d=4,noise=alls=30:allf=t+u",
                                   "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4",
                                   "-c:v", "libx264", "-b:v", "800k", "-bf", "3", "-g", "50", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k",
                                   "-movflags", "+faststart", clip])
        let firsts = try VideoFixtures.deinterleave(clip)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        try #require(firsts.count == 2 && firsts[1] > size / 2, "the sound's data after the picture's: \(firsts) of \(size)")
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/poor.mp4", query: ["rate": "200000"]))
        let output = PlayerItemVideoOutput()
        item.add(output)
        let player = Player(playerItem: item, output: { NullOutput() })
        // Each frame as it is shown, and whether the sound was playing then (after the sound's
        // end the picture plays out on the host's clock).
        let times = output.newFrameTimes
        let collected = Task {
            var seen: [(time: Double, whilePlaying: Bool)] = []
            for await t in times { seen.append((t, player.timeControlStatus == .playing)) }
            return seen
        }
        let end = collectPlayerEvents(player, timeout: 60) { e in
            switch e {
            case .didPlayToEndTime, .failedToPlayToEndTime, .videoFailed, .itemStatusChanged(.failed): true
            default: false
            }
        }
        player.play()
        let events = try await end.value
        #expect(events.last == PlayerEvent.didPlayToEndTime, "\(events)")
        collected.cancel()
        let shown = await collected.value
        let seen = shown.map(\.time)
        // With the sound (not its first frames while the sound played on, the rest after it).
        let whilePlaying = shown.filter(\.whilePlaying).count
        #expect(whilePlaying >= expected.count * 3 / 4, "\(whilePlaying) of \(shown.count) frames shown while the sound played")
        let stats = try #require(player.videoStatistics)
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "every frame shown or dropped: \(stats)")
        #expect(stats.droppedFrames <= PlayerVideoTests.tolerableDrops(expected.count), "\(stats)")
        #expect(PlayerVideoTests.inOrder(seen, of: expected), "ffmpeg's frames in order, none twice: \(seen)")
        let served = server.requests(path: "/poor.mp4").reduce(0) { $0 + $1.bytes }
        #expect(served <= size + size / 5, "the file is sent about once for the sound and the picture: \(served) bytes of \(size)")
    }

    /// A stall mid-file shorter than the read timeout (the stalled download waits), and one
    /// longer (the stalled request times out and the download resumes with a new one): the
    /// picture and the sound both go on to the end.
    @Test(arguments: [(2.0, 15.0), (30.0, 1.0)])
    func aServerThatStallsMidFileHoldsBothUpThenBothGoOn(stall: Double, readTimeout: Double) async throws {
        let dir = try TempDir("player-network-video-stall")
        defer { dir.remove() }
        let clip = try Self.clip(in: dir, moovFirst: true)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        var options = NetworkSourceOptions()
        options.limits.readTimeout = readTimeout
        options.maximumBackoff = 0.5
        let item = PlayerItem(url: server.url("/first.mp4", query: ["stall": "\(stall)", "at": "\(size / 2)"]),
                              networkOptions: options)
        let (seen, player) = try await Self.playToEnd(item, timeout: 90)
        let stats = try #require(player.videoStatistics)
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "\(stats)")
        #expect(PlayerVideoTests.inOrder(seen, of: expected), "\(seen)")
        #expect(server.requests().contains { $0.stalled }, "the server did stall")
        let requests = server.requests(path: "/first.mp4")
        #expect(requests.count >= 1 && requests.count <= 6, "\(requests.count) requests")
        // Resumed where it stopped: each byte about once (a stalled request cut after its
        // timeout may have a little in flight).
        let served = requests.reduce(0) { $0 + $1.bytes }
        #expect(served <= size + size / 10, "\(served) bytes of \(size)")
    }
}

extension PlayerNetworkVideoTests {
    /// The picture needs no request of its own: from a server that answers 503 to every request
    /// after the first, the picture plays with the sound to the end, from one request (before,
    /// the picture's own download was refused and the video failed).
    @Test func thePictureReadsTheSoundsDownloadWithNoRequestOfItsOwn() async throws {
        let dir = try TempDir("player-network-video-one-request")
        defer { dir.remove() }
        let clip = try Self.clip(in: dir, moovFirst: true)
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/first.mp4", query: ["failafter": "1"]))
        let (seen, player) = try await Self.playToEnd(item)
        let stats = try #require(player.videoStatistics)
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "\(stats)")
        #expect(stats.presentedFrames > 0)
        #expect(PlayerVideoTests.inOrder(seen, of: expected), "\(seen)")
        #expect(server.requests(path: "/first.mp4").count == 1)
    }
}

extension PlayerNetworkVideoTests {
    /// `isPlaybackLikelyToKeepUp` counts the picture (issue 19). A clip whose picture begins at
    /// 4 s (its bytes after 4 s of sound), from a server that stalls for 4 s just before the
    /// picture's first bytes: the sound before the stall covers the buffer goal, but no frame can
    /// be decoded, so the item is not likely to keep up and the player does not start until
    /// bytes after the stall have come and the picture's queue has filled. Before, it started
    /// during the stall (the bytes received then were exactly those before it) with no frame.
    @Test func thePlayerStartsOnlyWhenThePictureKeepsUpToo() async throws {
        let dir = try TempDir("player-network-video-keepup")
        defer { dir.remove() }
        let clip = dir.file("late.mp4")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=8",
                                   "-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:d=4", "-map", "0:a", "-map", "1:v",
                                   "-vf", "setpts=PTS+4/TB", "-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p",
                                   "-c:a", "aac", "-b:a", "96k", "-movflags", "+faststart", clip])
        let probe = try await run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pos",
                                              "-of", "csv=p=0", clip])
        let firstPictureByte = try #require(probe.stdout.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.min())
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let stallAt = firstPictureByte - 2_000
        // The sound before the stall covers the default 2 s goal (as the item estimates it).
        #expect(Double(stallAt) / (Double(size) / 8) > 2.5, "the fixture's sound before the stall: \(stallAt) of \(size) bytes")
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        var options = NetworkSourceOptions()
        options.limits.readTimeout = 60
        let item = PlayerItem(url: server.url("/late.mp4", query: ["stall": "4", "at": "\(stallAt)"]), networkOptions: options)
        item.add(PlayerItemVideoOutput())
        let player = Player(playerItem: item, output: { NullOutput() })
        struct AtStart: Sendable { var received: Int64; var keepsUp: Bool; var soundKeepsUp: Bool; var stats: VideoPipelineStatistics? }
        let atStart = Mutex<AtStart?>(nil)
        let started = collectPlayerEvents(player, timeout: 60) { e in
            guard e == .timeControlStatusChanged(.playing) else {
                if case .itemStatusChanged(.failed) = e { return true }
                return false
            }
            atStart.withLock {
                $0 = AtStart(received: item.accessLog.reduce(0) { $0 + $1.bytesTransferred }, keepsUp: item.isPlaybackLikelyToKeepUp, soundKeepsUp: item.soundIsLikelyToKeepUp, stats: player.videoStatistics)
            }
            return true
        }
        player.play()
        let events = try await started.value
        let start = try #require(atStart.withLock { $0 }, "\(events)")
        #expect(start.received > Int64(stallAt), "the player started with \(start.received) bytes, the stall at \(stallAt): before the picture had a frame")
        #expect(start.keepsUp, "\(start)")
        let end = collectPlayerEvents(player, timeout: 60) { e in
            if case .failedToPlayToEndTime = e { return true }
            return e == .didPlayToEndTime
        }
        #expect(try await end.value.last == .didPlayToEndTime)
        #expect(server.requests().contains { $0.stalled }, "the server did stall")
        let stats = try #require(player.videoStatistics)
        #expect(stats.presentedFrames + stats.droppedFrames == (try VideoFixtures.frameTimes(clip)).count, "\(stats)")
    }
}

extension PlayerNetworkVideoTests {
    /// An exact seek far ahead in a network video while it downloads (1 MB, sent at 250 kB/s):
    /// the sound's and the picture's readers of the one download both go there (a ranged
    /// request), the frame at the target is shown first, then the rest in order to the end —
    /// and nothing is downloaded twice (bounded requests, bytes served at most the file's).
    @Test func anExactSeekAheadWhileDownloadingLandsOnItsFrameAndFetchesNothingTwice() async throws {
        let dir = try TempDir("player-network-video-seek")
        defer { dir.remove() }
        let clip = dir.file("big.mp4")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x180:rate=25:d=8",
                                   "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=8",
                                   "-c:v", "libx264", "-b:v", "1M", "-g", "12", "-pix_fmt", "yuv420p",
                                   "-c:a", "aac", "-b:a", "96k", "-movflags", "+faststart", clip])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let expected = try VideoFixtures.frameTimes(clip).map(\.time)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/big.mp4", query: ["rate": "250000"]))
        let output = PlayerItemVideoOutput()
        item.add(output)
        let player = Player(playerItem: item, output: { NullOutput() })
        let first = collectPlayerEvents(player, timeout: 60, until: PlayerVideoTests.isReady(after: -1))
        player.play()
        _ = try await first.value
        let target = 6.0
        let landed = collectPlayerEvents(player, timeout: 60, until: PlayerVideoTests.isReady(after: target - 0.5))
        let times = output.newFrameTimes
        let collected = Task {
            var seen: [Double] = []
            for await t in times { seen.append(t) }
            return seen
        }
        #expect(await player.seek(to: target, toleranceBefore: 0, toleranceAfter: 0))
        _ = try await landed.value
        let end = collectPlayerEvents(player, timeout: 60) { e in
            if case .failedToPlayToEndTime = e { return true }
            return e == .didPlayToEndTime
        }
        #expect(try await end.value.last == .didPlayToEndTime)
        collected.cancel()
        let seen = await collected.value.filter { $0 >= target - 0.5 }
        let at = try #require(expected.lastIndex { $0 <= target + 1e-6 })
        #expect(seen.first.map { abs($0 - expected[at]) < 1e-6 } == true, "the frame at the target first: \(seen.prefix(3))")
        #expect(PlayerVideoTests.inOrder(seen, of: expected), "in order, none twice: \(seen)")
        let requests = server.requests(path: "/big.mp4")
        #expect(requests.count >= 1 && requests.count <= 6, "\(requests.map { ($0.range, $0.bytes) })")
        let served = requests.reduce(0) { $0 + $1.bytes }
        #expect(served <= size + size / 10, "nothing twice: \(served) bytes of \(size) — \(requests.map { ($0.range, $0.bytes) })")
    }
}
