// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmNetwork
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// HLS through `Player`, from a real HTTP server on 127.0.0.1: a master playlist with two
/// variants plays to its end, a live playlist that grows is followed to its end, and a playlist
/// naming a local file fails typed without anything local being read.
@Suite(.serialized) struct PlayerHLSTests {
    /// Writes `NAME/index.m3u8` and `NAME/segN.ts` under `dir`: a tone as AAC (or `codec`) at `bitrate`, cut
    /// by ffmpeg's HLS muxer into `segment`-second segments.
    static func hls(_ dir: TempDir, _ name: String, bitrate: String, seconds: Double, segment: Double,
                    codec: String = "aac") throws {
        try FileManager.default.createDirectory(atPath: dir.file(name), withIntermediateDirectories: true)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(Fixtures.toneExpression(channels: 2, freq: 440)):s=48000:d=\(seconds)",
                             "-c:a", codec, "-b:a", bitrate, "-f", "hls", "-hls_time", "\(segment)",
                             "-hls_segment_type", "mpegts", "-hls_playlist_type", "vod",
                             "-hls_segment_filename", dir.file("\(name)/seg%d.ts"), dir.file("\(name)/index.m3u8")])
    }

    /// How many segments `NAME/index.m3u8` lists.
    static func segmentCount(_ dir: TempDir, _ name: String) throws -> Int {
        try String(contentsOfFile: dir.file("\(name)/index.m3u8"), encoding: .utf8).components(separatedBy: "#EXTINF:").count - 1
    }

    @Test func aMasterPlaylistWithTwoVariantsPlaysToItsEnd() async throws {
        let dir = try TempDir("player-hls")
        defer { dir.remove() }
        try Self.hls(dir, "low", bitrate: "32k", seconds: 8, segment: 2)
        try Self.hls(dir, "high", bitrate: "128k", seconds: 8, segment: 2)
        try """
        #EXTM3U
        #EXT-X-STREAM-INF:BANDWIDTH=160000,CODECS="mp4a.40.2"
        high/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=48000,CODECS="mp4a.40.2"
        low/index.m3u8

        """.write(toFile: dir.file("master.m3u8"), atomically: true, encoding: .utf8)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        let item = PlayerItem(url: server.url("/master.m3u8"))
        let player = Player(playerItem: item, output: { FileOutput(path: out) })
        let events = collectPlayerEvents(player, timeout: 60) {
            if case .failedToPlayToEndTime = $0 { return true }
            return $0 == .didPlayToEndTime
        }
        player.play()
        let seen = try await events.value
        #expect(seen.last == .didPlayToEndTime, "\(seen.suffix(3))")
        #expect(abs((item.duration.seconds ?? 0) - 8) < 0.1, "\(item.duration)")
        let media = item.accessLog.filter { $0.kind == .media }
        #expect(media.compactMap(\.mediaSequence) == Array(0..<(try Self.segmentCount(dir, "low"))),
                "every segment once, in order: \(media.map(\.url))")
        #expect(Set(media.compactMap(\.indicatedBitrate)).isSubset(of: [160_000, 48_000]))
        let frames = try readWAV(out).channels[0].count
        #expect(abs(frames - 8 * 48000) <= 4096, "played \(frames) frames of 8 s")
    }

    @Test func aVODStreamSeeksByOpeningItAgainAtTheTargetsSegment() async throws {
        let dir = try TempDir("player-hls-seek")
        defer { dir.remove() }
        try Self.hls(dir, "vod", bitrate: "64k", seconds: 8, segment: 2)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        let item = PlayerItem(url: server.url("/vod/index.m3u8"))
        let player = Player(output: { FileOutput(path: out) })
        let ready = collectPlayerEvents(player) { $0 == .itemStatusChanged(.readyToPlay) }
        player.replaceCurrentItem(with: item)
        _ = try await ready.value
        let d = try #require(item.duration.seconds)
        #expect(item.seekableTimeRanges == [TimeRange(start: 0, duration: d)])
        let ended = collectPlayerEvents(player, timeout: 60) {
            if case .failedToPlayToEndTime = $0 { return true }
            return $0 == .didPlayToEndTime
        }
        #expect(await player.seek(to: 5))
        #expect(abs(player.currentTime() - 5) < 0.001)
        player.play()
        let seen = try await ended.value
        #expect(seen.last == .didPlayToEndTime, "\(seen.suffix(3))")
        // The stream was opened again at the segment holding 5 s: the segments before it were not
        // fetched again.
        let sequences = item.accessLog.filter { $0.kind == .media }.compactMap(\.mediaSequence)
        #expect(sequences.first == 2 && sequences == Array(2..<(2 + sequences.count)), "\(sequences)")
        let frames = try readWAV(out).channels[0].count
        #expect(abs(Double(frames) / 48000 - (d - 5)) < 0.05, "played \(Double(frames) / 48000) s after the seek, of \(d - 5)")
    }

    @Test func mp3SegmentsPlayToo() async throws {
        let dir = try TempDir("player-hls-mp3")
        defer { dir.remove() }
        try Self.hls(dir, "mp3", bitrate: "128k", seconds: 4, segment: 1, codec: "libmp3lame")
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        let item = PlayerItem(url: server.url("/mp3/index.m3u8"))
        let player = Player(playerItem: item, output: { FileOutput(path: out) })
        let ended = collectPlayerEvents(player) {
            if case .failedToPlayToEndTime = $0 { return true }
            return $0 == .didPlayToEndTime
        }
        player.play()
        let seen = try await ended.value
        #expect(seen.last == .didPlayToEndTime, "\(seen.suffix(3))")
        #expect(item.format?.codecName == "mp3", "\(String(describing: item.format))")
        let frames = try readWAV(out).channels[0].count
        #expect(abs(Double(frames) / 48000 - 4) < 0.1, "played \(Double(frames) / 48000) s of 4")
    }

    @Test func aLivePlaylistThatGrowsIsFollowedToItsEnd() async throws {
        let dir = try TempDir("player-hls-live")
        defer { dir.remove() }
        try Self.hls(dir, "onair", bitrate: "64k", seconds: 4, segment: 0.5)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/live/onair.m3u8", query: ["window": "3", "initial": "3", "end": "1"]))
        let player = Player(playerItem: item, output: { NullOutput() })
        let events = collectPlayerEvents(player, timeout: 30) {
            if case .failedToPlayToEndTime = $0 { return true }
            return $0 == .didPlayToEndTime
        }
        player.play()
        let seen = try await events.value
        #expect(seen.last == .didPlayToEndTime, "\(seen.suffix(3))")
        #expect(item.duration == .indefinite)
        let sequences = item.accessLog.filter { $0.kind == .media }.compactMap(\.mediaSequence)
        #expect(sequences == Array(0..<(try Self.segmentCount(dir, "onair"))), "every segment once, in order: \(sequences)")
        #expect(abs(player.currentTime() - 4) < 0.2, "at \(player.currentTime()) s of 4")
    }

    @Test func aPlaylistNamingALocalFileFailsTyped() async throws {
        let dir = try TempDir("player-hls-evil")
        defer { dir.remove() }
        try "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n"
            .write(toFile: dir.file("evil.m3u8"), atomically: true, encoding: .utf8)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/evil.m3u8"))
        let player = Player(output: { NullOutput() })
        let events = collectPlayerEvents(player) { if case .itemStatusChanged(.failed) = $0 { true } else { false } }
        player.replaceCurrentItem(with: item)
        player.play()
        _ = try await events.value
        guard case .network(_, .schemeNotAllowed("file"))? = item.error else {
            Issue.record("expected the file: scheme refused, got \(String(describing: item.error))")
            return
        }
        #expect(server.requests().map(\.path) == ["/evil.m3u8"], "only the playlist was asked for")
    }
}
