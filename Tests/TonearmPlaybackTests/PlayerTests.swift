// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCodecs
import TonearmCore
import TonearmNetwork
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// Starts collecting `player`'s events up to and including the first one `last` accepts.
func collectPlayerEvents(_ player: Player, timeout: Double = 30,
                         until last: @escaping @Sendable (PlayerEvent) -> Bool) -> Task<[PlayerEvent], any Error> {
    let stream = player.events
    return Task {
        try await withThrowingTaskGroup(of: [PlayerEvent].self) { group in
            group.addTask {
                var seen: [PlayerEvent] = []
                for await e in stream {
                    seen.append(e)
                    if last(e) { break }
                }
                return seen
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))  // a deadline, not synchronisation
                throw TimedOut(what: "the player's events")
            }
            let r = try await group.next()!
            group.cancelAll()
            return r
        }
    }
}

/// The interleaved samples of `path` decoded by our own decoder from `frame` on.
func decodedSamples(_ path: String, from frame: AudioFramePosition = 0) throws -> [Float] {
    let f = try AudioFile(path: path)
    try f.seek(toFrame: frame)
    let ch = f.processingFormat.channelCount
    var out: [Float] = []
    var chunk = [Float](repeating: 0, count: 4096 * ch)
    while true {
        let n = try chunk.withUnsafeMutableBufferPointer { try f.readInterleaved(into: $0.baseAddress!, frameCount: 4096) }
        if n == 0 { break }
        out += chunk[0..<(n * ch)]
    }
    return out
}

/// The interleaved samples of a WAV the file output wrote.
func writtenSamples(_ path: String) throws -> [Float] {
    let w = try readWAV(path)
    let ch = w.channels.count
    let frames = w.channels.first?.count ?? 0
    var out = [Float](repeating: 0, count: frames * ch)
    for c in 0..<ch { for f in 0..<frames { out[f * ch + c] = w.channels[c][f] } }
    return out
}

/// Whether a FLAC file has a SEEKTABLE metadata block.
func flacHasSeekTable(_ path: String) throws -> Bool {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    guard bytes.count > 8, bytes[0..<4] == [0x66, 0x4C, 0x61, 0x43] else { throw TestSupportError("\(path): not FLAC") }
    var i = 4
    while i + 4 <= bytes.count {
        if bytes[i] & 0x7F == 3 { return true }
        let last = bytes[i] & 0x80 != 0
        i += 4 + (Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
        if last { break }
    }
    return false
}

func sameSamples(_ a: [Float], _ b: [Float]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) < 1e-6 }
}

/// `Player` and `PlayerItem` on local files and on a real HTTP server on 127.0.0.1: what the
/// output gets is what the file decodes to, failures are typed and bounded, stalls are waited
/// out, seeks land and are never stale, radio titles arrive, time observers fire.
@Suite(.serialized) struct PlayerTests {
    @Test func aLocalFilePlaysToItsEndWithItsEventsInOrder() async throws {
        let dir = try TempDir("player-local")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 1)
        let out = dir.file("out.wav")
        let player = Player(url: URL(fileURLWithPath: dir.file("a.flac")), output: { FileOutput(path: out) })
        let events = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.play()
        let seen = try await events.value
        let interesting = seen.filter {
            switch $0 {
            case .timeControlStatusChanged, .didPlayToEndTime, .itemStatusChanged, .rateChanged: true
            default: false
            }
        }
        #expect(Array(interesting.suffix(3)) == [.rateChanged(0), .timeControlStatusChanged(.paused), .didPlayToEndTime],
                "\(interesting)")
        let ready = interesting.firstIndex(of: .itemStatusChanged(.readyToPlay))
        let playing = interesting.firstIndex(of: .timeControlStatusChanged(.playing))
        #expect(ready != nil && playing != nil && ready! < playing!, "\(interesting)")
        #expect(interesting.filter { $0 == .timeControlStatusChanged(.playing) }.count == 1, "\(interesting)")
        #expect(player.rate == 0)
        #expect(player.timeControlStatus == .paused)
        #expect(player.currentItem?.duration == .seconds(1))
        let same = sameSamples(try writtenSamples(out), try decodedSamples(dir.file("a.flac")))
        #expect(same, "what reached the output is not what the file decodes to")
    }

    @Test func anHTTPFilePlaysIdenticalToTheLocalOneThroughADrop() async throws {
        let dir = try TempDir("player-http")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 3)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        let item = PlayerItem(url: server.url("/a.mp3", query: ["drop": "20000"]))
        let player = Player(playerItem: item, output: { FileOutput(path: out) })
        let events = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.play()
        let seen = try await events.value
        #expect(item.status == .readyToPlay)
        #expect(item.errorLog.count >= 1, "the drop is in the error log")
        #expect(item.accessLog.count >= 2, "the resumption is in the access log")
        #expect(item.accessLog.last?.rangeStart ?? 0 > 0, "resumed with a Range request")
        #expect(seen.contains { if case .newErrorLogEntry = $0 { true } else { false } })
        #expect(seen.contains { if case .newAccessLogEntry = $0 { true } else { false } })
        #expect(item.isPlaybackBufferFull && item.isPlaybackLikelyToKeepUp)
        let local = try decodedSamples(dir.file("a.mp3"))
        let heard = try writtenSamples(out)
        // The streamed MP3's length is the one its header states (maybe one frame longer).
        #expect(heard.count >= local.count && heard.count - local.count <= 1152 * 2)
        let same = sameSamples(Array(heard.prefix(local.count)), local)
        #expect(same, "the stream's audio differs from the file's")
    }

    @Test(arguments: [("mp3", ["-c:a", "libmp3lame", "-b:a", "128k"]), ("m4a", ["-c:a", "aac", "-b:a", "128k"]),
                      ("flac", ["-c:a", "flac"]), ("opus", ["-c:a", "libopus", "-b:a", "96k"])])
    func progressiveFilesPlayAsTheLocalFileDecodes(ext: String, codec: [String]) async throws {
        let dir = try TempDir("player-\(ext)")
        defer { dir.remove() }
        let name = "a.\(ext)"
        try Fixtures.tone(path: dir.file(name), codecArgs: codec, seconds: 2)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        let item = PlayerItem(url: server.url("/\(name)"))
        let player = Player(playerItem: item, output: { FileOutput(path: out) })
        let events = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.play()
        _ = try await events.value
        let local = try decodedSamples(dir.file(name))
        let heard = try writtenSamples(out)
        // A stream's length is what its header states: at most a codec frame off the scanned one.
        let n = min(heard.count, local.count)
        #expect(abs(heard.count - local.count) <= 2048 * 2, "\(ext): \(heard.count) vs \(local.count) samples")
        let same = n > 2 * 48000 * 2 - 4096 && sameSamples(Array(heard.prefix(n)), Array(local.prefix(n)))
        #expect(same, "\(ext): the stream's audio differs from the file's")
    }

    @Test func failuresAreTypedAndBounded() async throws {
        let dir = try TempDir("player-fail")
        defer { dir.remove() }
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        var options = NetworkSourceOptions()
        options.limits.readTimeout = 2
        options.reconnectAttempts = 1
        let cases: [(URL, @Sendable (TonearmError) -> Bool)] = [
            (server.url("/missing.mp3"), { if case .network(_, .httpStatus(404, _)) = $0 { true } else { false } }),
            (server.url("/status/500"), { if case .network(_, .httpStatus(500, _)) = $0 { true } else { false } }),
            (server.url("/redirectloop"), { if case .network(_, .tooManyRedirects) = $0 { true } else { false } }),
            (server.url("/html"), { if case .network(_, .notMedia) = $0 { true } else { false } }),
            (server.url("/hang"), { if case .network(_, .timedOut) = $0 { true } else { false } }),
            (URL(string: "ftp://127.0.0.1/a.mp3")!, { if case .network(_, .schemeNotAllowed("ftp")) = $0 { true } else { false } }),
            (URL(fileURLWithPath: dir.file("nothing.flac")), { if case .fileNotFound = $0 { true } else { false } }),
        ]
        for (url, expected) in cases {
            let item = PlayerItem(url: url, networkOptions: options)
            // Subscribed before the item is given: a failure at once (ftp:, a missing file) is
            // not missed.
            let player = Player(output: { NullOutput() })
            let events = collectPlayerEvents(player, timeout: 20) {
                if case .itemStatusChanged(.failed) = $0 { true } else { false }
            }
            player.replaceCurrentItem(with: item)
            player.play()
            let seen: [PlayerEvent]
            do { seen = try await events.value } catch {
                Issue.record("\(url): \(error)")
                continue
            }
            guard case .itemStatusChanged(.failed(let error))? = seen.last else {
                Issue.record("\(url): no failure")
                continue
            }
            #expect(expected(error), "\(url): \(error)")
            #expect(item.error == error)
            #expect(player.rate == 0, "\(url): the player pauses")
            #expect(player.timeControlStatus == .paused)
            #expect(await player.seek(to: 1) == false, "a failed item cannot seek")
        }
    }

    @Test func aStreamThatBreaksOffFailsToPlayToItsEnd() async throws {
        let dir = try TempDir("player-breaks")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 3)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        var options = NetworkSourceOptions()
        options.reconnectAttempts = 0  // the drop is final
        let item = PlayerItem(url: server.url("/a.mp3", query: ["drop": "24000"]), networkOptions: options)
        let player = Player(playerItem: item, output: { FileOutput(path: dir.file("out.wav")) })
        let events = collectPlayerEvents(player) {
            if case .failedToPlayToEndTime = $0 { return true }
            return $0 == .didPlayToEndTime
        }
        player.play()
        let seen = try await events.value
        guard case .failedToPlayToEndTime(.network(_, .connectionDropped))? = seen.last else {
            Issue.record("expected a failure to play to the end, got \(seen.suffix(3))")
            return
        }
        #expect(seen.contains(.itemStatusChanged(.failed(item.error ?? .invalidState("none")))))
        #expect(player.rate == 0 && player.timeControlStatus == .paused)
        let heard = try readWAV(dir.file("out.wav")).channels[0].count
        #expect(heard > 0 && heard < 3 * 44100, "what arrived before the break was played: \(heard) frames")
    }

    @Test func aTenSecondStallIsWaitedOutWithTheEventsInOrder() async throws {
        let dir = try TempDir("player-stall")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 6)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        // About 4 s of audio arrive, then nothing for 10 s, then the rest.
        let item = PlayerItem(url: server.url("/a.mp3", query: ["stall": "10", "at": "64000"]))
        let player = Player(playerItem: item, output: { NullOutput() })
        let stalledAt = Mutex<[Double]>([])
        let events = collectPlayerEvents(player, timeout: 40) { $0 == .didPlayToEndTime }
        let stallEvents = player.events
        let watcher = Task {
            for await e in stallEvents where e == .playbackStalled {
                let t = player.currentTime()
                stalledAt.withLock { $0.append(t) }
            }
        }
        player.play()
        let seen = try await events.value
        watcher.cancel()
        let statuses = seen.compactMap { e -> String? in
            switch e {
            case .timeControlStatusChanged(let s): "\(s)"
            case .playbackStalled: "stalled"
            case .didPlayToEndTime: "end"
            default: nil
            }
        }
        // Each stall (the server's; on a busy machine maybe also a late decoder) is followed by
        // waiting, then playing; the end comes after the last.
        #expect(Array(statuses.suffix(3)) == ["playing", "paused", "end"], "\(statuses)")
        for (i, s) in statuses.enumerated() where s == "stalled" {
            #expect(Array(statuses[i..<min(statuses.count, i + 3)]) == ["stalled", "waiting (toMinimizeStalls)", "playing"],
                    "\(statuses)")
        }
        let at = stalledAt.withLock { $0 }
        #expect(item.numberOfStalls == at.count && item.numberOfStalls >= 1)
        #expect(at.contains { $0 > 3 && $0 < 5.5 }, "the server's stall is met where it is, before the end: \(at)")
        // The MP3's last 4 kB are read once with a ranged request of their own (a trailing APE
        // tag is looked for: AudioFile(byteSource:)); the body is one request, never repeated.
        let size = try FileManager.default.attributesOfItem(atPath: dir.file("a.mp3"))[.size] as? Int ?? 0
        let requests = server.requests(path: "/a.mp3")
        let tail = requests.filter { ($0.rangeStart ?? 0) >= size - 4096 }
        #expect(requests.count - tail.count == 1, "a 10 s stall is waited out on the same connection: \(requests)")
        #expect(tail.count <= 1)
    }

    @Test func aFarSeekUsesARangeAndLandsExactly() async throws {
        let dir = try TempDir("player-seek")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 30)
        // FFmpeg writes no seek table: the demuxer finds the place by bisecting the file, and each
        // probe far from what has arrived is a Range request.
        #expect(try !flacHasSeekTable(dir.file("a.flac")))
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let out = dir.file("out.wav")
        // Throttled: the far part has not arrived when the seek comes.
        let item = PlayerItem(url: server.url("/a.flac", query: ["rate": "100000"]))
        let player = Player(output: { FileOutput(path: out) })
        let ready = collectPlayerEvents(player) { $0 == .itemStatusChanged(.readyToPlay) }
        player.replaceCurrentItem(with: item)
        _ = try await ready.value
        #expect(item.seekableTimeRanges == [TimeRange(start: 0, duration: 30)])
        let ended = collectPlayerEvents(player, timeout: 60) { $0 == .didPlayToEndTime }
        #expect(await player.seek(to: 25))
        let t = player.currentTime()
        #expect(abs(t - 25) < 0.001, "at \(t)")
        player.play()
        _ = try await ended.value
        let ranged = server.requests(path: "/a.flac").compactMap(\.range).filter { $0 != "bytes=0-" }
        #expect(!ranged.isEmpty, "a Range request for the far part")
        let heard = try writtenSamples(out)
        let expected = try decodedSamples(dir.file("a.flac"), from: 25 * 48000)
        let same = sameSamples(heard, expected)
        #expect(same, "the audio after the seek is not the file's from 25 s (\(heard.count) vs \(expected.count) samples)")
    }

    @Test func aSupersededSeekCompletesWithFalse() async throws {
        let dir = try TempDir("player-seek2")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 4)
        let player = Player(url: URL(fileURLWithPath: dir.file("a.flac")), output: { NullOutput() })
        let results = Watched<[Int: Bool]>([:])
        player.seek(to: 1) { ok in results.update { $0[1] = ok } }
        player.seek(to: 2) { ok in results.update { $0[2] = ok } }
        #expect(await results.wait(timeout: 10) { $0.count == 2 })
        #expect(results.value == [1: false, 2: true])
        #expect(abs(player.currentTime() - 2) < 0.001)
        // Replacing the item fails the seeks still pending.
        let pending = Watched<Bool?>(nil)
        let slow = try PrivateHTTPServer(root: dir.path)
        defer { slow.stop() }
        player.replaceCurrentItem(with: PlayerItem(url: slow.url("/hang")))
        player.seek(to: 1) { ok in pending.update { $0 = ok } }
        player.replaceCurrentItem(with: nil)
        #expect(await pending.wait(timeout: 10) { $0 != nil })
        #expect(pending.value == false)
    }

    @Test func radioTitlesArriveAsTimedMetadataAndTheStreamIsEndless() async throws {
        let dir = try TempDir("player-radio")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("loop.mp3"), codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 3)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        // 128 kb/s paced at 16 kB/s like a real station; the title changes every second of audio.
        let url = server.url("/radio", query: ["file": "loop.mp3", "metaint": "8000", "titles": "First|Second",
                                               "every": "16000", "rate": "24000"])
        let item = PlayerItem(url: url)
        let player = Player(playerItem: item, output: { NullOutput() })
        let titles = Watched<[String]>([])
        let itemEvents = item.events
        let watcher = Task {
            for await e in itemEvents {
                if case .timedMetadata(let m) = e, let t = m["StreamTitle"] { titles.update { $0.append(t) } }
            }
        }
        defer { watcher.cancel() }
        player.play()
        #expect(await titles.wait(timeout: 20) { $0.contains("First") && $0.contains("Second") }, "\(titles.value)")
        #expect(item.duration == .indefinite)
        #expect(item.seekableTimeRanges.isEmpty)
        #expect(await player.seek(to: 10) == false, "a live stream cannot seek")
        #expect(player.timeControlStatus == .playing)
        #expect(["First", "Second"].contains(item.timedMetadata["StreamTitle"] ?? ""))
        let ranges = item.loadedTimeRanges
        #expect(ranges.count == 1 && ranges[0].duration > 0, "\(ranges)")
        player.pause()
    }

    @Test func timeObserversFireDuringPlayback() async throws {
        let dir = try TempDir("player-observers")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 2.5)
        let player = Player(url: URL(fileURLWithPath: dir.file("a.flac")), output: { NullOutput() })
        let periodic = Watched<[Double]>([])
        let boundaries = Watched<[(Double, Double)]>([])
        let p = player.addPeriodicTimeObserver(forInterval: 0.25) { t in periodic.update { $0.append(t) } }
        _ = player.addBoundaryTimeObserver(forTimes: [1.0, 2.0]) { b in
            let t = player.currentTime()
            boundaries.update { $0.append((b, t)) }
        }
        let stream = player.periodicTimes(interval: 0.5)
        let fromStream = Task {
            var got: [Double] = []
            for await t in stream {
                got.append(t)
                if got.count == 3 { break }
            }
            return got
        }
        let ended = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.play()
        _ = try await ended.value
        player.removeTimeObserver(p)
        let times = periodic.value
        #expect(times.count >= 6, "\(times)")
        let playingTimes = times.filter { $0 > 0.1 && $0 < 2.4 }
        #expect(zip(playingTimes, playingTimes.dropFirst()).allSatisfy { $0 <= $1 }, "periodic times go forward: \(times)")
        let b = boundaries.value
        #expect(b.map(\.0) == [1.0, 2.0])
        #expect(b.allSatisfy { abs($0.1 - $0.0) < 0.1 }, "boundaries fire when playback crosses them: \(b)")
        let streamed = await fromStream.value
        #expect(streamed.count == 3 && streamed.last! > streamed.first!)
    }

    @Test func anUnheldPlayerPlaysOn() async throws {
        let dir = try TempDir("player-retain")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 0.5)
        let item = PlayerItem(url: URL(fileURLWithPath: dir.file("a.flac")))
        let itemEvents = item.events
        let ended = Task {
            for await e in itemEvents where e == .didPlayToEndTime { return true }
            return false
        }
        do {
            // The seed's pitfall: a player made in a function and not kept. It keeps itself.
            let player = Player(playerItem: item, output: { NullOutput() })
            player.play()
        }
        let done = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { await ended.value }
            group.addTask {
                try await Task.sleep(for: .seconds(10))  // a deadline, not synchronisation
                throw TimedOut(what: "the end")
            }
            let r = try await group.next()!
            group.cancelAll()
            return r
        }
        #expect(done)
    }
}
