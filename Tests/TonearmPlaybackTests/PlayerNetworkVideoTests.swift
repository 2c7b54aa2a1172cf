// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
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
