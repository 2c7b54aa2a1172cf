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

/// `Player` with an HLS item whose variants carry video (H.264 in MPEG-TS segments, issue 19),
/// from the tests' HTTP server on 127.0.0.1: the item's video output gets ffmpeg's own decode of
/// the segments fetched, in order, every frame shown or dropped — with one variant, and across a
/// switch between variants of different sizes (the frames go on at the new size) — each segment
/// fetched once for the sound and the picture. Real time (the null output's clock): run one at
/// a time.
@Suite(.serialized) struct PlayerHLSVideoTests {
    static func stream(in dir: TempDir, sizes: [(Int, Int)], seconds: Double = 6) throws {
        try VideoFixtures.hls(in: dir.path, sizes: sizes, seconds: seconds)
    }

    /// Plays `item` to its end with a video output: the frames presented, and the player.
    static func playToEnd(_ item: PlayerItem, timeout: Double = 90) async throws -> (frames: [VideoFrame], player: Player) {
        let recorder = FrameRecorder()
        let player = Player(playerItem: item, output: { NullOutput() })
        player.addVideoRenderer(recorder)
        let end = collectPlayerEvents(player, timeout: timeout) { e in
            switch e {
            case .didPlayToEndTime, .failedToPlayToEndTime, .videoFailed: true
            case .itemStatusChanged(.failed): true
            default: false
            }
        }
        player.play()
        let events = try await end.value
        #expect(events.last == PlayerEvent.didPlayToEndTime, "\(events)")
        return (recorder.frames, player)
    }

    /// ffmpeg's frames (MD5 of each as `yuv420p`) of the segments the item fetched, in the order
    /// it fetched them, each segment decoded on its own (every one starts with a key frame).
    static func expectedFrames(_ item: PlayerItem, root: TempDir) throws -> (md5s: [String], segments: [String]) {
        let segments = item.accessLog.filter { $0.kind == .media }.compactMap { URL(string: $0.url)?.path }
        var md5s: [String] = []
        for s in segments { md5s += try VideoFixtures.frameMD5s(root.file(String(s.dropFirst()))) }
        return (md5s, segments)
    }

    /// Whether every frame of `seen` is one of `expected`, in its order, none twice.
    static func inOrder(_ seen: [String], of expected: [String]) -> Bool {
        var next = expected.startIndex
        for m in seen {
            guard let i = expected[next...].firstIndex(of: m) else { return false }
            next = i + 1
        }
        return true
    }

    @Test func aSingleVariantStreamsPictureIsFFmpegsFramesInOrder() async throws {
        let dir = try TempDir("player-hls-video")
        defer { dir.remove() }
        try Self.stream(in: dir, sizes: [(160, 90)])
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/master.m3u8"))
        let (frames, player) = try await Self.playToEnd(item)
        #expect(item.videoTracks.count == 1, "the HLS item's video track is found")
        #expect(item.presentationSize == VideoSize(width: 160, height: 90))
        let (expected, segments) = try Self.expectedFrames(item, root: dir)
        #expect(segments == ["/v0/seg0.ts", "/v0/seg1.ts", "/v0/seg2.ts"], "every segment once: \(segments)")
        let stats = try #require(player.videoStatistics)
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "every frame shown or dropped: \(stats)")
        #expect(frames.count == stats.presentedFrames && !frames.isEmpty)
        #expect(Self.inOrder(frames.map { FrameMD5.hex($0.packedBytes) }, of: expected), "ffmpeg's frames in order, none twice")
        for s in segments {
            #expect(server.requests(path: s).count == 1, "\(s) fetched once for the sound and the picture")
        }
    }

    /// Two variants of different sizes: the stream starts on the lower one and, the measured
    /// bandwidth being far above both on 127.0.0.1, switches up after the first segment; the
    /// picture goes on across the switch at the new size, ffmpeg's frames of the segments
    /// fetched, in order.
    @Test func aVariantSwitchKeepsThePictureAtTheNewSize() async throws {
        let dir = try TempDir("player-hls-video-switch")
        defer { dir.remove() }
        try Self.stream(in: dir, sizes: [(320, 180), (160, 90)])
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/master.m3u8"))
        let itemEvents = item.events
        let sizesAnnounced = Task {
            var sizes: [VideoSize] = []
            for await e in itemEvents { if case .presentationSizeChanged(let size) = e { sizes.append(size) } }
            return sizes
        }
        let (frames, player) = try await Self.playToEnd(item)
        let (expected, segments) = try Self.expectedFrames(item, root: dir)
        sizesAnnounced.cancel()
        // Observers hear the size change (AVPlayerItem's presentationSize observed): the first
        // picture's, then the new variant's.
        #expect(await sizesAnnounced.value == [VideoSize(width: 160, height: 90), VideoSize(width: 320, height: 180)])
        #expect(segments == ["/v1/seg0.ts", "/v0/seg1.ts", "/v0/seg2.ts"], "low first, then up: \(segments)")
        let stats = try #require(player.videoStatistics)
        #expect(stats.presentedFrames + stats.droppedFrames == expected.count, "every frame shown or dropped: \(stats)")
        #expect(Self.inOrder(frames.map { FrameMD5.hex($0.packedBytes) }, of: expected), "ffmpeg's frames in order, none twice")
        let sizes = frames.map { VideoSize(width: $0.width, height: $0.height) }
        let firstLarge = try #require(sizes.firstIndex(of: VideoSize(width: 320, height: 180)), "frames at the new size: \(Set(sizes))")
        #expect(firstLarge > 0 && sizes[..<firstLarge].allSatisfy { $0 == VideoSize(width: 160, height: 90) })
        #expect(sizes[firstLarge...].allSatisfy { $0 == VideoSize(width: 320, height: 180) })
        #expect(sizes.count - firstLarge > 50, "the picture goes on after the switch: \(sizes.count - firstLarge) frames")
        // The item's size and track follow the variant on screen (they were the first one's).
        #expect(item.presentationSize == VideoSize(width: 320, height: 180), "\(item.presentationSize)")
        let track = try #require(item.selectedVideoTrack)
        #expect(track.codedWidth == 320 && track.codedHeight == 180 && track.displayWidth == 320 && track.displayHeight == 180,
                "the track list says the shown variant's size: \(track)")
    }
}

extension PlayerHLSVideoTests {

    /// ffmpeg's frames (MD5s, times and key flags) of the first variant's three segments one
    /// after another — the item's timeline — and a player of the stream's master playlist,
    /// served from `dir`, playing with a frame recorder and showing its first frame. The caller
    /// stops the server.
    private static func playingTheFirstVariant(in dir: TempDir) async throws
        -> (md5s: [String], frames: [(time: Double, key: Bool)], server: PrivateHTTPServer, player: Player, recorder: FrameRecorder) {
        let all = dir.file("all.ts")
        var bytes = Data()
        for k in 0..<3 { bytes += try Data(contentsOf: URL(fileURLWithPath: dir.file("v0/seg\(k).ts"))) }
        try bytes.write(to: URL(fileURLWithPath: all))
        let md5s = try VideoFixtures.frameMD5s(all)
        let frames = try VideoFixtures.frameTimes(all)
        try #require(md5s.count == frames.count && !md5s.isEmpty)
        let server = try PrivateHTTPServer(root: dir.path)
        let recorder = FrameRecorder()
        let player = Player(playerItem: PlayerItem(url: server.url("/master.m3u8")), output: { NullOutput() })
        player.addVideoRenderer(recorder)
        let shownOnce = collectPlayerEvents(player, timeout: 30) { if case .readyForDisplay = $0 { true } else { false } }
        player.play()
        _ = try await shownOnce.value
        return (md5s, frames, server, player, recorder)
    }
    /// An exact seek while playing: the sound's seek opens the stream again at the target's
    /// segment, and the picture follows it — a reader of that new stream, not a download of its
    /// own — showing ffmpeg's frame at the target first, then the rest in order.
    @Test func anExactSeekShowsTheTargetsFrameFromTheReopenedStream() async throws {
        let dir = try TempDir("player-hls-video-seek")
        defer { dir.remove() }
        try Self.stream(in: dir, sizes: [(160, 90)])
        // ffmpeg's frames of the whole stream (its segments one after another), with their times
        // on the item's timeline.
        let (md5s, frames, server, player, recorder) = try await Self.playingTheFirstVariant(in: dir)
        defer { server.stop() }
        let times = frames.map(\.time)
        let target = 3.5
        let ended = collectPlayerEvents(player, timeout: 60) { e in
            switch e {
            case .didPlayToEndTime, .failedToPlayToEndTime, .videoFailed: true
            case .itemStatusChanged(.failed): true
            default: false
            }
        }
        let mark = recorder.frames.count
        #expect(await player.seek(to: target, toleranceBefore: 0, toleranceAfter: 0))
        let events = try await ended.value
        #expect(events.last == PlayerEvent.didPlayToEndTime, "\(events)")
        // The frames of the seek's generation: from the first one at or after the one displayed
        // at the target (frames of before the seek may still have been shown as it began).
        let due = try #require(times.lastIndex { $0 <= target + 1e-6 })
        let after = Array(recorder.frames[mark...].map { FrameMD5.hex($0.packedBytes) })
        let start = try #require(after.firstIndex(of: md5s[due]), "the frame displayed at \(target) is shown")
        // At its time on the item's timeline (the first segment's timestamps): the reopened
        // stream's frames were 58.7 ms late when placed by the segment's stated start.
        let shownTime = recorder.frames[mark + start].time
        #expect(abs(shownTime - times[due]) < 0.001, "the target's frame is shown as \(shownTime) s; it is at \(times[due]) s")
        #expect(Self.inOrder(Array(after[start...]), of: Array(md5s[due...])), "ffmpeg's frames in order after the seek")
        #expect(after.count - start > 40, "the picture goes on to the end: \(after.count - start) frames")
        // The segment of the target and the next: once before the seek (read ahead), once for
        // the stream opened again, which the picture reads too (a download of its own would be a
        // third).
        for s in ["/v0/seg1.ts", "/v0/seg2.ts"] {
            #expect(server.requests(path: s).count <= 2, "\(s): \(server.requests(path: s).count) requests")
        }
    }
}

extension PlayerHLSVideoTests {
    /// A seek into a later segment plays the sound that is at the target on the stream's own
    /// timeline: the same samples as a play from the start has there. The segments of a stream
    /// with video are cut at its key frames, and the sound before each key frame goes into the
    /// segment before — ffmpeg's segment 1 here starts 58.7 ms before its stated 2 s — so a
    /// stream placed by its stated start played 58.7 ms late. The sound is a sweep (no lag
    /// looks like another); played to a file output (as fast as it decodes, no video output).
    @Test func aSeekIntoALaterSegmentPlaysTheSoundAtTheTarget() async throws {
        let dir = try TempDir("player-hls-seek-timeline")
        defer { dir.remove() }
        try VideoFixtures.hls(in: dir.path, sizes: [(160, 90)], seconds: 6, chirp: true)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        /// The item played to a WAV file, after a seek to `seek` when given.
        func played(_ name: String, seek: Double?) async throws -> [Float] {
            let out = dir.file(name)
            let item = PlayerItem(url: server.url("/master.m3u8"))
            let player = Player(output: { FileOutput(path: out) })
            let ready = collectPlayerEvents(player, timeout: 30) { $0 == .itemStatusChanged(.readyToPlay) }
            player.replaceCurrentItem(with: item)
            _ = try await ready.value
            if let seek { #expect(await player.seek(to: seek, toleranceBefore: 0, toleranceAfter: 0)) }
            let events = try await Self.playToEnd(player) { player.play() }
            #expect(events.last == PlayerEvent.didPlayToEndTime, "\(events)")
            return try readWAV(out).channels[0]
        }
        let whole = try await played("whole.wav", seek: nil)
        for target in [2.5, 4.2] {
            let after = try await played("after-\(target).wav", seek: target)
            // The lag (samples) at which the seek's first 0.1 s best matches the whole play.
            let at = Int(target * 48000), window = 4800
            try #require(after.count > window && whole.count > at + window + 4800)
            var best = (lag: 0, error: Float.infinity)
            for lag in -4800...4800 where at + lag >= 0 {
                var e: Float = 0
                for i in stride(from: 0, to: window, by: 4) {
                    let d = after[i] - whole[at + lag + i]
                    e += d * d
                }
                if e < best.error { best = (lag, e) }
            }
            #expect(abs(best.lag) <= 2, "after a seek to \(target) s the sound heard is \(Double(best.lag) / 48) ms from the target's")
        }
    }

    /// Plays `player` to its end; its events.
    static func playToEnd(_ player: Player, timeout: Double = 90, start: () -> Void) async throws -> [PlayerEvent] {
        let ended = collectPlayerEvents(player, timeout: timeout) { e in
            switch e {
            case .didPlayToEndTime, .failedToPlayToEndTime, .videoFailed: true
            case .itemStatusChanged(.failed): true
            default: false
            }
        }
        start()
        return try await ended.value
    }

    /// A picture that starts late — a renderer added at 6.5 s, when the sound has read past the
    /// first segment and 1 MB more, so that a reader from the stream's start is no longer
    /// possible (large segments: a noisy 640×360 picture) — reads the segment that holds its
    /// time from what the sound fetched: every segment is fetched once (before, the picture
    /// opened a stream of its own and fetched them again), and the picture shows ffmpeg's frames
    /// in order from that segment to the end.
    @Test func aPictureThatStartsLateReadsTheSegmentsTheSoundFetched() async throws {
        let dir = try TempDir("player-hls-video-late")
        defer { dir.remove() }
        try VideoFixtures.hls(in: dir.path, sizes: [(640, 360)], seconds: 10, noisy: true)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/master.m3u8"))
        let recorder = FrameRecorder()
        let player = Player(playerItem: item, output: { NullOutput() })
        let (started, continuation) = AsyncStream<Int64>.makeStream()
        let token = player.addBoundaryTimeObserver(forTimes: [6.5]) { _ in
            // Where the sound reads when the picture is asked for.
            continuation.yield(item.hlsStream()?.position ?? 0)
            continuation.finish()
            player.addVideoRenderer(recorder)
        }
        defer { player.removeTimeObserver(token) }
        let events = try await Self.playToEnd(player) { player.play() }
        #expect(events.last == PlayerEvent.didPlayToEndTime, "\(events)")
        continuation.finish()  // (a boundary never crossed leaves nothing to read, not a wait)
        var iterator = started.makeAsyncIterator()
        let read = try #require(await iterator.next(), "the picture was asked for at 6.5 s")
        let segmentFiles = (0..<5).map { "v0/seg\($0).ts" }
        let sizes = try segmentFiles.map { try Data(contentsOf: URL(fileURLWithPath: dir.file($0))).count }
        #expect(read > Int64(HLSSourceOptions().keptBehind) + Int64(sizes[0]),
                "the sound had read \(read) bytes: past the first segment (\(sizes[0])) and 1 MB more")
        for s in segmentFiles {
            #expect(server.requests(path: "/" + s).count == 1, "\(s) fetched once for the sound and the late picture")
        }
        let perSegment = try segmentFiles.map { try VideoFixtures.frameMD5s(dir.file($0)) }
        let expected = perSegment.flatMap { $0 }
        let shown = recorder.frames.map { FrameMD5.hex($0.packedBytes) }
        #expect(shown.count > 50, "the picture plays from 6.5 s to the end: \(shown.count) frames")
        #expect(Self.inOrder(shown, of: expected), "ffmpeg's frames in order, none twice")
        let first = try #require(shown.first.flatMap { expected.firstIndex(of: $0) })
        #expect(first >= perSegment[0...2].reduce(0) { $0 + $1.count }, "the picture starts in the segment of 6.5 s, not before: frame \(first)")
    }

    /// The sound's seek and the picture's meet on one stream whichever comes first and however
    /// long the other takes (before, a picture that waited 5 s for the sound's seek opened a
    /// stream of its own and every segment after the target was fetched twice more): the
    /// picture's seek to 5 s comes first and reads its stream to the end; the sound's seek to the
    /// same time, long after, reads that stream — each segment from the target's on is fetched
    /// once more than by the first play-through, not twice — and plays to the end.
    @Test func aSoundSeekLongAfterThePicturesReadsThePicturesStream() async throws {
        let dir = try TempDir("player-hls-video-seek-order")
        defer { dir.remove() }
        try Self.stream(in: dir, sizes: [(160, 90)], seconds: 8)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let item = PlayerItem(url: server.url("/master.m3u8"))
        let player = Player(playerItem: item, output: { NullOutput() })
        let ready = collectPlayerEvents(player, timeout: 30) { $0 == .itemStatusChanged(.readyToPlay) }
        player.play()
        _ = try await ready.value
        player.pause()
        // The first play-through's stream fetches the whole (short) stream ahead.
        #expect(item.hlsStream()?.waitUntilFinished(timeout: 30) == true)
        // The server's log is read on a thread of its own: wait until it shows what the stream
        // received (under ThreadSanitizer it lagged, and seg2's request was not counted yet).
        let segments = (0..<4).map { "/v0/seg\($0).ts" }
        #expect(await server.waitForRequests(timeout: 30) { log in
            segments.allSatisfy { path in log.contains { $0.path == path && $0.complete } }
        })
        let before = segments.map { server.requests(path: $0).count }
        // The picture's seek, first: a stream of its own at 5 s, read to its end.
        let target = 5.0
        let picture = item.hlsStreamForPicture(at: target, seeking: true)
        picture.start()
        var pictureBytes = 0
        var piece = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try piece.withUnsafeMutableBytes { try picture.read(into: $0) }
            if n == 0 { break }
            pictureBytes += n
        }
        #expect(pictureBytes > 0)
        // The sound's seek, long after: it reads the picture's stream.
        #expect(await player.seek(to: target, toleranceBefore: 0, toleranceAfter: 0))
        let events = try await Self.playToEnd(player) { player.play() }
        #expect(events.last == PlayerEvent.didPlayToEndTime, "\(events)")
        for k in 2..<4 {
            let path = "/v0/seg\(k).ts"
            _ = await server.waitForRequests(timeout: 10) { log in log.filter { $0.path == path }.count >= before[k] + 1 }
            #expect(server.requests(path: path).count == before[k] + 1,
                    "\(path): \(before[k]) request(s) before the seeks, \(server.requests(path: path).count) after")
        }
        withExtendedLifetime(picture) {}
    }

    /// A seek with tolerance (scrubbing) on an HLS stream lands on the key frame at or before
    /// the target — the first frame of the target's segment, as ffmpeg decodes it — and plays on
    /// in order; an exact one (the test above) on the frame displayed at the target.
    @Test func aKeyFrameSeekShowsTheKeyFrameAtOrBeforeTheTarget() async throws {
        let dir = try TempDir("player-hls-video-keyseek")
        defer { dir.remove() }
        try Self.stream(in: dir, sizes: [(160, 90)])
        let (md5s, frames, server, player, recorder) = try await Self.playingTheFirstVariant(in: dir)
        defer { server.stop() }
        let target = 3.5
        let key = try #require(frames.lastIndex { $0.key && $0.time <= target + 1e-6 })
        let exact = try #require(frames.lastIndex { $0.time <= target + 1e-6 })
        try #require(key < exact, "the target is not on a key frame")
        let seeked = collectPlayerEvents(player, timeout: 30) { if case .readyForDisplay = $0 { true } else { false } }
        let mark = recorder.frames.count
        #expect(await player.seek(to: target))
        let shownAt = try await seeked.value
        let events = try await Self.playToEnd(player) {}
        #expect(events.last == PlayerEvent.didPlayToEndTime, "\(events)")
        let after = Array(recorder.frames[mark...].map { FrameMD5.hex($0.packedBytes) })
        let start = try #require(after.firstIndex(of: md5s[key]), "the key frame at \(frames[key].time) s is shown")
        #expect(Self.inOrder(Array(after[start...]), of: Array(md5s[key...])), "ffmpeg's frames in order after the seek")
        // The frame the seek put on screen first (its readyForDisplay) is the key frame.
        guard case .readyForDisplay(let t)? = shownAt.last else { Issue.record("no readyForDisplay: \(shownAt)"); return }
        let first = try #require(recorder.frames[mark...].first { $0.time == t })
        #expect(FrameMD5.hex(first.packedBytes) == md5s[key], "the first frame after the seek is the key frame")
    }
}

/// Keeps every frame presented.
private final class FrameRecorder: PlayerVideoRenderer, Sendable {
    private let shown = Mutex<[VideoFrame]>([])
    var frames: [VideoFrame] { shown.withLock { $0 } }
    func show(_ frame: VideoFrame) { shown.withLock { $0.append(frame) } }
}
