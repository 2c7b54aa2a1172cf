// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
@testable import TonearmNetwork
import TonearmTestSupport

/// `HLSByteSource` decoded through `AudioFile(byteSource:streaming: true)` against the real test
/// HTTP server (Tests/TonearmTestSupport/httpd.py), with HLS media made here by ffmpeg: a VOD
/// playlist decodes to exactly what its segments decode to, a master playlist switches variants
/// by measured bandwidth, a live playlist is followed segment by segment to its end, AES-128
/// segments decrypt to the clear audio, a dropped segment is resumed, and every failure is typed.
@Suite(.serialized) struct HLSSourceTests {
    /// A folder with HLS media and a server on it.
    final class Site: @unchecked Sendable {
        let dir: TempDir
        let server: PrivateHTTPServer

        /// Always a 12 s VOD rendition in `clear/` (64 kb/s AAC in MPEG-TS, 2 s segments).
        init() throws {
            dir = try TempDir("hls-site")
            server = try PrivateHTTPServer(root: dir.path)
            try hls("clear", bitrate: "64k", seconds: 12, segmentSeconds: 2)
        }

        deinit {
            server.stop()
            dir.remove()
        }

        /// Writes `NAME/index.m3u8` and `NAME/segN.ts`: a two-channel tone (440 Hz left, 550 Hz
        /// right) as AAC at `bitrate`, cut by ffmpeg's HLS muxer.
        func hls(_ name: String, bitrate: String, seconds: Double, segmentSeconds: Double) throws {
            try FileManager.default.createDirectory(atPath: dir.file(name), withIntermediateDirectories: true)
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(Fixtures.toneExpression(channels: 2, freq: 440)):s=48000:d=\(seconds)",
                                 "-c:a", "aac", "-b:a", bitrate, "-fflags", "+bitexact", "-f", "hls", "-hls_time", "\(segmentSeconds)",
                                 "-hls_segment_type", "mpegts", "-hls_playlist_type", "vod",
                                 "-hls_segment_filename", dir.file("\(name)/seg%d.ts"), dir.file("\(name)/index.m3u8")])
        }

        /// The segments of `NAME/index.m3u8`: (file name, duration), in order.
        func segments(_ name: String) throws -> [(name: String, duration: Double)] {
            let text = try String(contentsOfFile: dir.file("\(name)/index.m3u8"), encoding: .utf8)
            var out: [(String, Double)] = []
            var duration = 0.0
            for line in text.split(separator: "\n") {
                if line.hasPrefix("#EXTINF:") { duration = Double(line.dropFirst(8).split(separator: ",")[0]) ?? 0 }
                if !line.hasPrefix("#") { out.append((String(line), duration)) }
            }
            return out
        }

        /// The segments of `NAME` concatenated, as they are on disk.
        func concatenated(_ name: String) throws -> [UInt8] {
            try segments(name).reduce(into: [UInt8]()) { $0 += try bytes("\(name)/\($1.name)") }
        }

        func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: dir.file(path)))) }

        func write(_ path: String, _ text: String) throws {
            try text.write(toFile: dir.file(path), atomically: true, encoding: .utf8)
        }
    }

    /// Bytes in memory as a stream (length unknown), to decode local segments the way the
    /// network source is decoded.
    final class MemorySource: ByteSource, @unchecked Sendable {
        let bytes: [UInt8]
        private let lock = NSLock()
        private var at: Int64 = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var length: Int64? { nil }
        var isSeekable: Bool { false }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(TonearmError) -> Int {
            lock.withLock {
                let n = min(buffer.count, bytes.count - Int(at))
                bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(at), byteCount: n) }
                at += Int64(n)
                return n
            }
        }
        func seek(to offset: Int64) -> Bool {
            lock.withLock {
                guard offset >= 0 && offset <= Int64(bytes.count) else { return false }
                at = offset
                return true
            }
        }
        var position: Int64 { lock.withLock { at } }
    }

    /// Every sample of `file`, per channel, read to its end.
    func decodeAll(_ file: AudioFile) throws -> [[Float]] {
        var out = [[Float]](repeating: [], count: file.processingFormat.channelCount)
        guard let buffer = AudioPCMBuffer(format: file.processingFormat, frameCapacity: 16_384) else {
            throw TestSupportError("no buffer")
        }
        while true {
            try file.read(into: buffer)
            if buffer.frameLength == 0 { return out }
            for c in out.indices { out[c] += buffer.channel(c) }
        }
    }

    /// The local segments of `name` decoded as one stream, as the HLS source's bytes are.
    func reference(_ site: Site, _ name: String) throws -> [[Float]] {
        try decodeAll(AudioFile(byteSource: MemorySource(site.concatenated(name)), name: "local \(name)", streaming: true))
    }

    /// Whether two decodes are identical; the first difference in `detail`.
    func same(_ a: [[Float]], _ b: [[Float]]) -> (Bool, String) {
        guard a.count == b.count else { return (false, "\(a.count) vs \(b.count) channels") }
        for c in a.indices where a[c] != b[c] {
            let first = zip(a[c], b[c]).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a[c].count, b[c].count)
            return (false, "channel \(c): \(a[c].count) vs \(b[c].count) frames, first difference at \(first)")
        }
        return (true, "")
    }

    /// The media sequence numbers of the segment requests in an access log, in order (a
    /// resumption counted with the request it resumes).
    func segmentSequence(_ log: [NetworkAccessLogEntry]) -> [Int] {
        log.filter { $0.kind == .media && !$0.isReconnect }.compactMap(\.mediaSequence)
    }

    /// The server's requests for `path` once at least `count` are in its log (which may lag a
    /// moment behind what the client has seen).
    func requests(_ site: Site, _ path: String, atLeast count: Int) async -> [RequestLogEntry] {
        _ = await site.server.waitForRequests(timeout: 10) { log in log.filter { $0.path == path }.count >= count }
        return site.server.requests(path: path)
    }

    /// What a source did, for a failure message.
    func diagnostics(_ source: HLSByteSource, _ events: [HLSSourceEvent]) -> String {
        let requests = source.accessLog.map { e in
            "\(e.kind) \(URL(string: e.url)?.lastPathComponent ?? e.url) seq \(e.mediaSequence.map(String.init) ?? "-") at \(e.indicatedBitrate.map { Int($0) } ?? 0): \(e.status) \(e.bytesTransferred) B in \(e.transferDuration) s"
        }
        return "position \(source.position), buffered \(source.bufferedDuration) s, measured \(source.measuredBandwidth ?? 0)\n"
            + "requests:\n" + requests.joined(separator: "\n") + "\nerrors: \(source.errorLog)\nevents: \(events)"
    }

    func opened(_ source: HLSByteSource) -> Bool { source.waitUntilOpen(timeout: 30) }

    /// The failure a source ends with before opening (nil when it opens).
    func openFailure(_ url: URL, options: HLSSourceOptions = HLSSourceOptions()) -> (TonearmError?, HLSByteSource) {
        let source = HLSByteSource(url: url, options: options)
        source.start()
        #expect(!source.waitUntilOpen(timeout: 30))
        return (source.failure, source)
    }

    // MARK: VOD

    @Test func aVODPlaylistDecodesExactlyAsItsSegments() throws {
        let site = try Site()
        let url = site.server.url("/clear/index.m3u8")
        let source = HLSByteSource(url: url)
        source.start()
        #expect(opened(source))
        #expect(!source.isLive)
        let segments = try site.segments("clear")
        let total = segments.reduce(0) { $0 + $1.duration }
        #expect(abs((source.duration ?? 0) - total) < 1e-6)
        #expect(source.variants.isEmpty && source.currentVariantBandwidth == nil)
        #expect(source.length == nil && !source.isSeekable)
        let remote = try AudioFile(byteSource: source, name: url.absoluteString, streaming: true)
        #expect(remote.processingFormat.sampleRate == 48_000 && remote.processingFormat.channelCount == 2)
        let got = try decodeAll(remote)
        let want = try reference(site, "clear")
        let (identical, detail) = same(got, want)
        #expect(identical, "\(detail)")
        // The whole duration: 12 s, within an AAC frame and the encoder's priming.
        #expect(abs(got[0].count - 12 * 48_000) <= 2048, "\(got[0].count) frames")
        #expect(source.isFinished && source.failure == nil)
        #expect(source.bufferedDuration == 0)
        #expect((source.measuredBandwidth ?? 0) > 0)
        // One playlist request, then every segment once, in order.
        let log = source.accessLog
        #expect(log.first?.kind == .playlist)
        #expect(log.filter { $0.kind == .playlist }.count == 1)
        #expect(segmentSequence(log) == Array(0..<segments.count))
        #expect(log.allSatisfy { $0.status == 200 && !$0.isReconnect })
        #expect(source.errorLog.isEmpty)
    }

    /// The bytes are the segments' own, in order; seeks work within what is kept (behind the
    /// reader and ahead of it) and fail before it or past the end.
    @Test func theStreamIsTheSegmentsInOrderAndSeeksStayInMemory() throws {
        let site = try Site()
        let events = Watched<[HLSSourceEvent]>([])
        var options = HLSSourceOptions()
        options.maximumSegmentsAhead = 100
        options.keptBehind = 20_000
        let source = HLSByteSource(url: site.server.url("/clear/index.m3u8"), options: options, onEvent: { e in events.update { $0.append(e) } })
        source.start()
        #expect(source.waitUntilFinished(timeout: 30))
        let segments = try site.segments("clear")
        let total = segments.reduce(0) { $0 + $1.duration }
        #expect(events.value.first == .opened(isLive: false, duration: total))
        #expect(events.waitBlocking(timeout: 10) { $0.last == .finished })  // delivered after the state changes
        let loaded = events.value.compactMap { if case .segmentLoaded(let n, _, let b) = $0 { (n, b) } else { nil } }
        #expect(loaded.map(\.0) == Array(0..<segments.count))
        #expect(loaded.map(\.1) == (try segments.map { try site.bytes("clear/\($0.name)").count }))
        // Everything is in and nothing read: all of it is buffered.
        #expect(abs(source.bufferedDuration - total) < 1e-6)
        func read(_ count: Int) throws -> [UInt8] {
            var out: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while out.count < count {
                let n = try chunk.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<min(4096, count - out.count)])) }
                if n == 0 { break }
                out += chunk[0..<n]
            }
            return out
        }
        let start = try read(30_000)
        #expect(source.bufferedDuration < total)
        #expect(source.seek(to: 0))  // still kept: the first segment ends after 30 000 - 20 000
        #expect(try read(30_000) == start)
        let all = try start + read(Int.max)
        #expect(all == (try site.concatenated("clear")))
        #expect(source.position == Int64(all.count))
        #expect(source.bufferedDuration == 0)
        #expect(!source.seek(to: 0))  // long forgotten
        #expect(source.seek(to: Int64(all.count - 1000)))
        #expect(try read(2000) == Array(all.suffix(1000)))
        #expect(!source.seek(to: Int64(all.count + 1)))  // past the end
    }

    // MARK: Variants

    /// `master.m3u8`: 20 s as `low/` (32 kb/s, BANDWIDTH 48000) and `high/` (128 kb/s,
    /// BANDWIDTH 160000), listed high first (the source sorts them).
    func variants(_ site: Site) throws {
        try site.hls("low", bitrate: "32k", seconds: 20, segmentSeconds: 2)
        try site.hls("high", bitrate: "128k", seconds: 20, segmentSeconds: 2)
        try site.write("master.m3u8", """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-STREAM-INF:BANDWIDTH=160000,AVERAGE-BANDWIDTH=150000,CODECS="mp4a.40.2"
        high/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=48000,AVERAGE-BANDWIDTH=40000,CODECS="mp4a.40.2"
        low/index.m3u8

        """)
    }

    /// Under a preferred peak bit rate the first variant is the highest below it, and the
    /// source never goes above it however fast the server is.
    @Test func aPreferredPeakBitRateCapsTheVariants() throws {
        let site = try Site()
        try variants(site)
        for (peak, expected) in [(200_000.0, 160_000), (100_000.0, 48_000)] {
            var options = HLSSourceOptions()
            options.preferredPeakBitRate = peak
            options.maximumSegmentsAhead = 100  // nothing reads: all of it is fetched ahead
            let source = HLSByteSource(url: site.server.url("/master.m3u8"), options: options)
            source.start()
            #expect(source.waitUntilFinished(timeout: 30))
            let rates = Set(source.accessLog.filter { $0.kind == .media }.compactMap(\.indicatedBitrate).map(Int.init))
            #expect(rates == [expected], "peak \(peak): \(rates)")
            #expect(source.currentVariantBandwidth == expected)
        }
    }

    /// Two variants: the source starts on the low one, switches up while the server is fast,
    /// and down once the server is throttled below the high one's BANDWIDTH; the audio goes on
    /// without a gap through both switches.
    @Test func aMasterPlaylistSwitchesVariantsByMeasuredBandwidth() throws {
        let site = try Site()
        try variants(site)
        let events = Watched<[HLSSourceEvent]>([])
        var options = HLSSourceOptions()
        options.maximumSegmentsAhead = 2
        let url = site.server.url("/master.m3u8")
        let source = HLSByteSource(url: url, options: options, onEvent: { e in events.update { $0.append(e) } })
        source.start()
        defer { try? site.server.setRate(nil) }
        #expect(opened(source))
        #expect(source.variants == [48_000, 160_000])
        #expect(!source.isLive)
        let remote = try AudioFile(byteSource: source, name: url.absoluteString, streaming: true)
        // Up: the local server is far faster than 1.5 × 160 kb/s.
        let up = events.waitBlocking(timeout: 30) { $0.contains(.variantSwitched(from: 48_000, to: 160_000, sequence: 1)) }
        #expect(up, "\(events.value)")
        // Down: 16 000 B/s = 128 kb/s, below 160 kb/s (and below 1.5 × 160 kb/s, so no way back up).
        try site.server.setRate(16_000)
        let audio: [[Float]]
        do {
            audio = try decodeAll(remote)
        } catch {
            Issue.record("\(error)\n\(diagnostics(source, events.value))")
            return
        }
        try site.server.setRate(nil)
        #expect(events.value.contains { if case .variantSwitched(160_000, 48_000, _) = $0 { true } else { false } }, "\(events.value)")
        #expect(source.currentVariantBandwidth == 48_000)
        // The access log: low, then high, then low again; every segment once, in order.
        let segments = source.accessLog.filter { $0.kind == .media }
        let rates = segments.compactMap(\.indicatedBitrate).map(Int.init)
        var runs: [Int] = []
        for r in rates where runs.last != r { runs.append(r) }
        #expect(runs == [48_000, 160_000, 48_000], "\(rates)")
        #expect(segmentSequence(source.accessLog) == Array(0..<(try site.segments("low").count)))
        #expect(source.accessLog.filter { $0.kind == .playlist }.map { URL(string: $0.url)!.lastPathComponent }
                == ["master.m3u8", "index.m3u8", "index.m3u8"])  // the low one kept for the way back
        // Continuous audio: the whole 20 s, the tone in every second, no silence anywhere.
        #expect(abs(audio[0].count - 20 * 48_000) <= 2048, "\(audio[0].count) frames")
        for second in 1..<19 {
            let slice = Array(audio[0][(second * 48_000)..<((second + 1) * 48_000)])
            let f = zeroCrossingFrequency(slice, sampleRate: 48_000) ?? 0
            #expect(abs(f - 440) < 2, "second \(second): \(f) Hz")
        }
        let quiet = stride(from: 4_800, to: audio[0].count - 9_600, by: 4_800).filter { rms(audio[0][$0..<($0 + 4_800)]) < 0.2 }
        #expect(quiet.isEmpty, "quiet at frames \(quiet)")
    }

    // MARK: Live

    /// A live playlist that grows by one segment per request: the source reloads it, fetches
    /// each new segment once, in order, none skipped, and ends after ENDLIST.
    @Test func aLivePlaylistIsFollowedToItsEnd() async throws {
        let site = try Site()
        // About 8 segments: all but the first three come one per reload, a target duration (1 s)
        // apart.
        try site.hls("onair", bitrate: "64k", seconds: 4, segmentSeconds: 0.5)
        let segments = try site.segments("onair")
        let events = Watched<[HLSSourceEvent]>([])
        let url = site.server.url("/live/onair.m3u8", query: ["window": "3", "initial": "3", "end": "1"])
        let source = HLSByteSource(url: url, onEvent: { e in events.update { $0.append(e) } })
        source.start()
        #expect(opened(source))
        #expect(source.isLive)
        #expect(source.duration == nil)
        let remote = try AudioFile(byteSource: source, name: url.absoluteString, streaming: true)
        let audio = try decodeAll(remote)
        #expect(source.isFinished && source.failure == nil)
        // Every segment once, in order, from the first (the three listed at first are less than
        // three target durations).
        #expect(segmentSequence(source.accessLog) == Array(0..<segments.count))
        #expect(source.accessLog.filter { $0.kind == .media }.allSatisfy { !$0.isReconnect })
        let reloads = events.value.compactMap { if case .playlistReloaded(let n) = $0 { n } else { nil } }
        #expect(reloads.count >= segments.count - 3, "\(reloads)")
        #expect(reloads.reduce(0, +) == segments.count - 3)
        #expect(events.waitBlocking(timeout: 10) { $0.last == .finished })  // delivered after the state changes
        let loads = source.accessLog.filter { $0.kind == .playlist }.count
        #expect(await requests(site, "/live/onair.m3u8", atLeast: loads).count == loads)
        // The audio is what the segments decode to.
        let (identical, detail) = same(audio, try reference(site, "onair"))
        #expect(identical, "\(detail)")
    }

    /// A live playlist joined late starts three target durations before its end.
    @Test func aLivePlaylistStartsThreeTargetDurationsFromItsEnd() throws {
        let site = try Site()
        let segments = try site.segments("clear")
        let count = segments.count
        let url = site.server.url("/live/clear.m3u8", query: ["window": "\(count)", "initial": "\(count)"])
        let events = Watched<[HLSSourceEvent]>([])
        let source = HLSByteSource(url: url, onEvent: { e in events.update { $0.append(e) } })
        source.start()
        #expect(opened(source))
        #expect(source.isLive)
        #expect(events.waitBlocking(timeout: 30) { $0.contains { if case .segmentLoaded = $0 { true } else { false } } })
        source.cancel()
        // Listed: all of them, target duration the ceiling of the longest (httpd.py's rule); the
        // first segment is the last from which three target durations remain.
        let target = segments.map(\.duration).max()!.rounded(.up)
        var total = 0.0
        var start = count - 1
        while start > 0 {
            total += segments[start].duration
            if total >= 3 * target - 1e-9 { break }
            start -= 1
        }
        #expect(start > 0)
        #expect(segmentSequence(source.accessLog).first == start)
    }

    // MARK: AES-128

    /// The clear segments encrypted with the openssl command: the first three with the media
    /// sequence number as IV, the next two with an explicit IV, the rest clear again
    /// (METHOD=NONE). Decrypted, they decode to the clear audio, and the key is fetched once;
    /// with a wrong key the source fails with a typed error.
    @Test func aes128SegmentsDecryptToTheClearAudio() async throws {
        let site = try Site()
        let key = (0..<16).map { UInt8($0 * 17 & 0xff) }
        let explicitIV = (0..<16).map { UInt8(0xa0 + $0) }
        func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
        try FileManager.default.createDirectory(atPath: site.dir.file("enc"), withIntermediateDirectories: true)
        try Data(key).write(to: URL(fileURLWithPath: site.dir.file("enc/key.bin")))
        try Data(key.map { $0 ^ 0x5a }).write(to: URL(fileURLWithPath: site.dir.file("enc/wrong.bin")))
        let segments = try site.segments("clear")
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-KEY:METHOD=AES-128,URI=\"@KEYURI@\"\n"
        for (i, s) in segments.enumerated() {
            if i == 3 { playlist += "#EXT-X-KEY:METHOD=AES-128,URI=\"@KEYURI@\",IV=0x\(hex(explicitIV))\n" }
            if i == 5 { playlist += "#EXT-X-KEY:METHOD=NONE\n" }
            let iv = i < 3 ? [UInt8](repeating: 0, count: 15) + [UInt8(i)] : explicitIV
            if i < 5 {
                let r = try await run("openssl", ["enc", "-aes-128-cbc", "-K", hex(key), "-iv", hex(iv),
                                                  "-in", site.dir.file("clear/\(s.name)"), "-out", site.dir.file("enc/\(s.name)")])
                #expect(r.status == 0, "\(r.stderr)")
            } else {
                try FileManager.default.copyItem(atPath: site.dir.file("clear/\(s.name)"), toPath: site.dir.file("enc/\(s.name)"))
            }
            playlist += "#EXTINF:\(s.duration),\n\(s.name)\n"
        }
        playlist += "#EXT-X-ENDLIST\n"
        try site.write("enc/index.m3u8", playlist.replacingOccurrences(of: "@KEYURI@", with: "key.bin"))
        try site.write("enc/wrong.m3u8", playlist.replacingOccurrences(of: "@KEYURI@", with: "wrong.bin"))
        #expect(segments.count > 5)
        #expect(try site.bytes("enc/seg0.ts") != site.bytes("clear/seg0.ts"))
        #expect(try site.bytes("enc/seg5.ts") == site.bytes("clear/seg5.ts"))

        let url = site.server.url("/enc/index.m3u8")
        let source = HLSByteSource(url: url)
        source.start()
        let audio = try decodeAll(AudioFile(byteSource: source, name: url.absoluteString, streaming: true))
        let (identical, detail) = same(audio, try reference(site, "clear"))
        #expect(identical, "\(detail)")
        #expect(source.accessLog.filter { $0.kind == .key }.count == 1)
        #expect(await requests(site, "/enc/key.bin", atLeast: 1).count == 1)
        #expect(segmentSequence(source.accessLog) == Array(0..<segments.count))

        let wrongURL = site.server.url("/enc/wrong.m3u8")
        let wrong = HLSByteSource(url: wrongURL)
        wrong.start()
        do {
            let file = try AudioFile(byteSource: wrong, name: wrongURL.absoluteString, streaming: true)
            _ = try decodeAll(file)
            Issue.record("a wrong key decoded")
        } catch {
            guard case .network(let u, .decryptionFailed(let d))? = error as? TonearmError else {
                Issue.record("not a decryption failure: \(error)")
                return
            }
            #expect(u.hasSuffix("/enc/seg0.ts"), "\(u)")
            #expect(d.contains("wrong key"), "\(d)")
        }
        guard case .network(_, .decryptionFailed)? = wrong.failure else {
            Issue.record("the source did not fail: \(String(describing: wrong.failure))")
            return
        }
    }

    // MARK: Refusals and failures

    /// A playlist naming `file:` or `pipe:` (a variant, a segment, a key) is refused before any
    /// of it is fetched: the only request is the playlist's own.
    @Test func aPlaylistNamingALocalFileIsRefused() async throws {
        let site = try Site()
        try site.write("local-variant.m3u8", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=64000\nclear/index.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=128000\nfile:///etc/passwd\n")
        try site.write("pipe-segment.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nclear/seg0.ts\n#EXTINF:2,\npipe:0\n#EXT-X-ENDLIST\n")
        try site.write("file-key.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128,URI=\"file:///etc/passwd\"\n#EXTINF:2,\nclear/seg0.ts\n#EXT-X-ENDLIST\n")
        for (name, uri, scheme) in [("local-variant.m3u8", "file:///etc/passwd", "file"), ("pipe-segment.m3u8", "pipe:0", "pipe"),
                                    ("file-key.m3u8", "file:///etc/passwd", "file")] {
            let (failure, source) = openFailure(site.server.url("/" + name))
            #expect(failure == .network(url: uri, failure: .schemeNotAllowed(scheme)), "\(name): \(String(describing: failure))")
            #expect(source.accessLog.map(\.url) == [site.server.url("/" + name).absoluteString])
            #expect(source.accessLog.allSatisfy { $0.finalURL.hasPrefix("http://") })
        }
        // The server saw the playlists only.
        _ = await site.server.waitForRequests(timeout: 10) { $0.count >= 3 }
        #expect(site.server.requests().filter { !$0.path.hasPrefix("/_control") }.map(\.path)
                == ["/local-variant.m3u8", "/pipe-segment.m3u8", "/file-key.m3u8"])
    }

    @Test func failuresAreTypedAndBounded() async throws {
        let site = try Site()
        // A missing playlist fails at once with its status (no retry).
        let (missing, _) = openFailure(site.server.url("/nothing.m3u8"))
        #expect(missing == .network(url: site.server.url("/nothing.m3u8").absoluteString, failure: .httpStatus(code: 404, reason: "Not Found")))
        #expect(await requests(site, "/nothing.m3u8", atLeast: 1).count == 1)
        // An HTML page instead of a playlist.
        let (html, _) = openFailure(site.server.url("/html"))
        guard case .network(_, .notMedia(let type, _))? = html else {
            Issue.record("an HTML page is not a playlist: \(String(describing: html))")
            return
        }
        #expect(type?.hasPrefix("text/html") == true)
        // Text that is not a playlist.
        try site.write("notes.txt", "just some text\n")
        let (text, _) = openFailure(site.server.url("/notes.txt"))
        guard case .invalidPlaylist(_, 1?, let reason)? = text else {
            Issue.record("text is not a playlist: \(String(describing: text))")
            return
        }
        #expect(reason.contains("#EXTM3U"))
        // A missing segment fails after the retries, with its status.
        try site.write("hole.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nclear/seg0.ts\n#EXTINF:2,\nclear/missing.ts\n#EXT-X-ENDLIST\n")
        var options = HLSSourceOptions()
        options.retryAttempts = 2
        options.maximumBackoff = 0.25
        let events = Watched<[HLSSourceEvent]>([])
        let url = site.server.url("/hole.m3u8")
        let source = HLSByteSource(url: url, options: options, onEvent: { e in events.update { $0.append(e) } })
        source.start()
        #expect(opened(source))
        #expect(!source.waitUntilFinished(timeout: 30))
        let segmentURL = site.server.url("/clear/missing.ts").absoluteString
        #expect(source.failure == .network(url: segmentURL, failure: .httpStatus(code: 404, reason: "Not Found")))
        #expect(await requests(site, "/clear/missing.ts", atLeast: 3).count == 3)
        #expect(events.value.filter { if case .retrying = $0 { true } else { false } }.count == 2)
        // Each wait is drawn from half to all of the (capped) backoff: jitter.
        let actions = source.errorLog.map(\.action)
        #expect(actions.count == 3 && actions.last == "gave up", "\(actions)")
        let waits = actions.dropLast().compactMap { Double($0.replacingOccurrences(of: "retrying in ", with: "").replacingOccurrences(of: " s", with: "")) }
        #expect(waits.count == 2 && waits.allSatisfy { $0 >= 0.125 && $0 <= 0.25 }, "\(actions)")
        // The reader gets the first segment, then the failure.
        do {
            _ = try decodeAll(AudioFile(byteSource: source, name: url.absoluteString, streaming: true))
            Issue.record("a missing segment decoded to the end")
        } catch {
            #expect(error as? TonearmError == .network(url: segmentURL, failure: .httpStatus(code: 404, reason: "Not Found")), "\(error)")
        }
        // A failed stream is not joined (a seek's sound and picture share streams by joining):
        // its first segment is still kept, but another reader would only meet the failure.
        #expect(source.makeReader() == nil, "a reader of a failed stream")
        #expect(source.makeReader(at: 0) == nil, "a reader at 0 s of a failed stream")
    }

    /// A segment whose server never answers times out after the retries: the reader is never
    /// left waiting without bound.
    @Test func aSegmentThatNeverComesTimesOut() async throws {
        let site = try Site()
        try site.write("stuck.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n/hang?seconds=10\n#EXT-X-ENDLIST\n")
        var options = HLSSourceOptions()
        options.limits = NetworkLimits(connectTimeout: 2, readTimeout: 0.5)
        options.retryAttempts = 1
        options.maximumBackoff = 0.25
        let url = site.server.url("/stuck.m3u8")
        let source = HLSByteSource(url: url, options: options)
        source.start()
        do {
            _ = try AudioFile(byteSource: source, name: url.absoluteString, streaming: true)
            Issue.record("a segment that never came opened")
        } catch {
            #expect(error == .network(url: site.server.url("/hang", query: ["seconds": "10"]).absoluteString,
                                      failure: .timedOut(phase: "waiting for data", seconds: 0.5)), "\(error)")
        }
        #expect(await requests(site, "/hang", atLeast: 2).count == 2)
    }

    /// The server drops the connection in the middle of a segment: the segment is resumed with a
    /// Range request, no byte twice, and the audio is the clear audio exactly.
    @Test func aDroppedSegmentIsResumed() async throws {
        let site = try Site()
        let segments = try site.segments("clear")
        var playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
        for (i, s) in segments.enumerated() { playlist += "#EXTINF:\(s.duration),\nclear/\(s.name)\(i == 3 ? "?drop=5000" : "")\n" }
        try site.write("drop.m3u8", playlist + "#EXT-X-ENDLIST\n")
        let url = site.server.url("/drop.m3u8")
        let source = HLSByteSource(url: url)
        source.start()
        let audio = try decodeAll(AudioFile(byteSource: source, name: url.absoluteString, streaming: true))
        let (identical, detail) = same(audio, try reference(site, "clear"))
        #expect(identical, "\(detail)")
        #expect(await site.server.waitForRequests(timeout: 10) { log in log.filter { $0.path == "/clear/seg3.ts" && $0.complete }.count >= 2 })
        let requests = site.server.requests(path: "/clear/seg3.ts")
        #expect(requests.count == 2)
        #expect(requests.first?.dropped == true)
        #expect(requests.last?.rangeStart == 5000)
        let resumed = source.accessLog.filter { $0.mediaSequence == 3 }
        #expect(resumed.map(\.isReconnect) == [false, true])
        #expect(resumed.last?.rangeStart == 5000)
        #expect(resumed.last?.status == 206)
        #expect(resumed.map(\.bytesTransferred).reduce(0, +) == Int64(try site.bytes("clear/seg3.ts").count))
        #expect(source.errorLog.contains { if case .connectionDropped = $0.failure { true } else { false } })
        #expect(segmentSequence(source.accessLog) == Array(0..<segments.count))
    }

    /// A live playlist that claims a target duration of a millisecond (and never changes) is
    /// reloaded at most twice a second, not a thousand times. The server's arrival times are only
    /// bounded from below (a slower machine spreads them more).
    @Test func aLivePlaylistWithATinyTargetIsNotReloadedInAStorm() async throws {
        let site = try Site()
        let first = try #require(try site.segments("clear").first)
        try site.write("tiny.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:0.001\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:\(first.duration),\nclear/\(first.name)\n")
        let source = HLSByteSource(url: site.server.url("/tiny.m3u8"))
        source.start()
        defer { source.cancel() }
        let loads = await requests(site, "/tiny.m3u8", atLeast: 4)
        source.cancel()
        #expect(loads.count >= 4)
        let times = loads.map(\.arrival)
        for i in times.indices.dropFirst(2) {  // the first reload may follow the first load more closely
            #expect(times[i] - times[i - 1] >= 0.4, "reload \(i) after \(times[i] - times[i - 1]) s")
        }
    }
}

extension HLSSourceTests {
    /// Reads `source` to its end, 4096 bytes at a time.
    static func readAll(_ source: HLSByteSource) throws(TonearmError) -> [UInt8] {
        var out: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = try source.read(into: chunk)
            if n == 0 { return out }
            out += chunk[0..<n]
        }
    }

    /// One stream, two readers (a video's demuxer beside the sound's, issue 19): each reads the
    /// whole stream, its segments in order, each fetched once; with a read-ahead of two segments
    /// and little kept behind, the reader ahead waits for the slowest (which still finds every
    /// byte); once the start is forgotten no reader can be added; cancelling one reader leaves
    /// the other reading.
    @Test func twoReadersReadTheStreamFetchedOnce() throws {
        let site = try Site()
        let events = Watched<[HLSSourceEvent]>([])
        var options = HLSSourceOptions()
        options.maximumSegmentsAhead = 2
        options.keptBehind = 1000
        let source = HLSByteSource(url: site.server.url("/clear/index.m3u8"), options: options, onEvent: { e in events.update { $0.append(e) } })
        let second = try #require(source.makeReader(), "a reader at the start of a stream not yet read")
        source.start()
        let expected = try site.concatenated("clear")
        let ahead = Watched<Result<[UInt8], TonearmError>?>(nil)
        let thread = Thread { ahead.update { $0 = Result { () throws(TonearmError) in try Self.readAll(source) } } }
        thread.start()
        #expect(try Self.readAll(second) == expected, "the second reader reads the whole stream")
        #expect(ahead.waitBlocking(timeout: 30) { $0 != nil })
        #expect(try ahead.value?.get() == expected, "the first reader too")
        let loaded = events.value.compactMap { if case .segmentLoaded(let n, _, _) = $0 { n } else { nil } }
        #expect(loaded == Array(0..<(try site.segments("clear").count)), "each segment fetched once: \(loaded)")
        #expect(source.makeReader() == nil, "the start is forgotten")

        // Cancelling one reader of two ends that one only.
        let other = HLSByteSource(url: site.server.url("/clear/index.m3u8"), options: options)
        let video = try #require(other.makeReader())
        other.start()
        other.cancel()
        var one = [UInt8](repeating: 0, count: 16)
        #expect(throws: TonearmError.self) { try one.withUnsafeMutableBytes { try other.read(into: $0) } }
        #expect(try Self.readAll(video) == expected, "the reader left reads on")
    }
}

extension HLSSourceTests {
    /// A reader that joins late (a picture that starts after the sound has read on, issue 19):
    /// `makeReader(at:)` starts at the kept segment that holds the time, reads from there to the
    /// end what the first reader's fetch brought — every segment fetched once — and says where
    /// its first byte starts on the timeline; the start, far behind in bytes but not in time, is
    /// still kept, and a segment both far enough behind in bytes and in seconds is not.
    @Test func aReaderFromTheSegmentThatHoldsATimeReadsWhatWasFetched() throws {
        let site = try Site()
        var options = HLSSourceOptions()
        options.keptBehind = 1000
        options.keptBehindDuration = 5
        let source = HLSByteSource(url: site.server.url("/clear/index.m3u8"), options: options)
        source.start()
        let expected = try site.concatenated("clear")
        #expect(try Self.readAll(source) == expected)
        // The first reader stands at the end (12 s): what ends 5 s or less before it is kept.
        let segments = try site.segments("clear")
        let starts = segments.indices.map { i in segments[..<i].reduce(0) { $0 + $1.duration } }
        let end = starts.last! + segments.last!.duration
        let time = 8.5
        let k = try #require(starts.lastIndex { $0 <= time })
        let late = try #require(source.makeReader(at: time), "the segment that holds \(time) s is kept")
        #expect(abs(late.startOffset - starts[k]) < 1e-6, "the reader starts where its segment does: \(late.startOffset)")
        let fromK = try segments[k...].reduce(into: [UInt8]()) { $0 += try site.bytes("clear/\($1.name)") }
        #expect(try Self.readAll(late) == fromK, "it reads the segments from there to the end")
        let forgotten = try #require(starts.indices.last { starts[$0] + segments[$0].duration <= end - 5 - 1e-6 })
        #expect(source.makeReader(at: starts[forgotten] + 0.1) == nil, "segment \(forgotten) lies 5 s and 1000 bytes behind: forgotten")
        #expect(source.makeReader() == nil, "the start is forgotten")
        // The server's log is read on a thread of its own: a request answered may not be in it
        // yet (a clean-clone run found a segment's count 0). Wait until each segment is there.
        let paths = segments.map { "/clear/\($0.name)" }
        _ = site.server.waitForRequestsBlocking(timeout: 10) { log in paths.allSatisfy { p in log.contains { $0.path == p } } }
        for s in segments {
            #expect(site.server.requests(path: "/clear/\(s.name)").count == 1, "\(s.name) fetched once")
        }
    }
}
