// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmDaemon
import TonearmRender
import TonearmTestSupport

/// Stereo s16le audio arriving in chunks (a snapclient's standard output, an HTTP stream once
/// decoded): each chunk wakes the waiter, which looks at the newest 0.2 s for the tone.
final class ToneWatch: @unchecked Sendable {
    private let samples = Mutex<[Float]>([])  // left channel
    private let pending = Mutex<[UInt8]>([])
    private let arrived = DispatchSemaphore(value: 0)
    let rate: Double

    init(rate: Double = 48_000) { self.rate = rate }

    func feed(_ bytes: [UInt8]) {
        pending.withLock { p in
            p += bytes
            let frames = p.count / 4
            var left: [Float] = []
            left.reserveCapacity(frames)
            for i in 0..<frames {
                let v = Int16(bitPattern: UInt16(p[i * 4]) | UInt16(p[i * 4 + 1]) << 8)
                left.append(Float(v) / 32768)
            }
            p.removeFirst(frames * 4)
            samples.withLock { $0 += left }
        }
        arrived.signal()
    }

    /// Whether the newest 0.2 s holds `freq` (loud, and most of the window's power).
    func hasTone(_ freq: Double) -> Bool {
        let window = Int(rate * 0.2)
        let s = samples.withLock { $0.suffix(window) }
        guard s.count == window, rms(s) > 0.1 else { return false }
        let p = goertzelPower(s, frequency: freq, sampleRate: rate)
        let off = goertzelPower(s, frequency: freq * 1.7, sampleRate: rate)
        return p > 100 * max(off, 1e-9)
    }

    func isSilent() -> Bool {
        let s = samples.withLock { $0.suffix(Int(rate * 0.2)) }
        return s.count == Int(rate * 0.2) && rms(s) < 0.001
    }

    /// Waits, chunk by chunk, until `condition` holds or `timeout` passes.
    func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while !condition() {
            if arrived.wait(timeout: deadline) == .timedOut { return condition() }
        }
        return true
    }
}

/// A TCP port free now (bound to 0, read, released).
func freeTCPPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
    _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
    return Int(UInt16(bigEndian: a.sin_port))
}

/// Debian's snapserver with one pipe source (`pipe`, created by snapserver if missing) and its
/// stream port on `port`, its HTTP and TCP control off, its data and config in `work`; logging to
/// its standard error (captured).
func startSnapserver(in work: TempDir, pipe: String, port: Int) throws -> ChildProcess {
    try """
        [server]
        datadir = \(work.file("snapdata"))
        [stream]
        source = pipe://\(pipe)?name=tonearm&mode=create
        port = \(port)
        [http]
        enabled = false
        [tcp]
        enabled = false
        """.write(toFile: work.file("snapserver.conf"), atomically: true, encoding: .utf8)
    try FileManager.default.createDirectory(atPath: work.file("snapdata"), withIntermediateDirectories: true)
    return try ChildProcess(["snapserver", "-c", work.file("snapserver.conf"), "--logging.sink", "stderr"], captureStandardError: true)
}

/// The daemon with several outputs at once, heard by real programs on loopback: snapserver
/// with a pipe source and two `snapclient --player file` (the audio on their standard output),
/// and an HTTP listener of our own asking for ICY titles; outputs switched live with `mpc`.
@Suite(.serialized)
struct DaemonOutputsTests {
    @Test func snapcastAndHTTPListenersHearTheToneAndOutputsSwitchLive() async throws {
        let work = try TempDir("tonearm-outputs")
        defer { work.remove() }
        let fifo = work.file("snapfifo")
        let streamPort = freeTCPPort(), httpPort = freeTCPPort()
        let logs = Mutex<[String]>([])
        let outputs = DaemonOutputs([.null, .snapcast(path: fifo), .http(host: "127.0.0.1", port: httpPort)]) { m in logs.withLock { $0.append(m) } }
        let d = try await TestDaemon(outputs: outputs)
        try outputs.start()
        defer { outputs.stop() }

        // mpc lists the three (mpc numbers outputs from 1).
        let listed = try d.mpc("outputs")
        let eq = "\tequalizer=\"flat\"\n"
        #expect(listed.stdout == "Output 1 (null) is enabled\n\(eq)Output 2 (Snapcast) is enabled\n\tpath=\"\(fifo)\"\n\(eq)"
            + "Output 3 (HTTP stream) is enabled\n\tbind_to_address=\"127.0.0.1\"\n\tport=\"\(httpPort)\"\n\(eq)", "\(listed.stdout)")

        // snapserver is not running yet: the daemon waits for the pipe without blocking and says so.
        let tone = try d.tone("room.flac", seconds: 10, freq: 1000, title: "Room tone")
        try d.mpc("add", tone).expectSuccess()
        try d.mpc("play").expectSuccess()

        let server = try startSnapserver(in: work, pipe: fifo, port: streamPort)
        defer { server.terminate() }
        let watches = [ToneWatch(), ToneWatch()]
        var clients: [ChildProcess] = []
        defer { for c in clients { c.terminate() } }
        for (i, w) in watches.enumerated() {
            clients.append(try ChildProcess(["snapclient", "-h", "127.0.0.1", "-p", String(streamPort), "--hostID", "room\(i)",
                                             "--player", "file:filename=stdout", "--logsink", "null"],
                                            captureStandardOutput: true, onStandardOutput: { w.feed($0) }))
        }
        for (i, w) in watches.enumerated() {
            #expect(w.wait(timeout: 15) { w.hasTone(1000) }, "snapclient \(i) hears the tone; \(server.standardErrorText.suffix(400))")
        }
        #expect(logs.withLock { $0.contains { $0.contains("snapcast: cannot open") } } || logs.withLock { $0.contains { $0.contains("snapcast: writing") } })

        // The HTTP stream: FLAC with ICY titles.
        let heard = try HTTPListen(port: httpPort, bytes: 48 * 1024)
        #expect(heard.headers.lowercased().contains("icy-metaint: 8192"), "\(heard.headers)")
        #expect(heard.titles.contains("Tonearm Tests - Room tone"), "\(heard.titles)")
        let flac = work.file("heard.flac"), wav = work.file("heard.wav")
        _ = FileManager.default.createFile(atPath: flac, contents: Data(heard.audio))
        try await Fixtures.ffmpeg(["-i", flac, "-c:a", "pcm_f32le", wav])
        let decoded = try readWAV(wav)
        let left = decoded.channels.first ?? []
        let tail = left.suffix(Int(decoded.sampleRate * 0.3))
        #expect(decoded.sampleRate == 48_000 && tail.count > 1000)
        #expect(goertzelPower(tail, frequency: 1000, sampleRate: 48_000) > 100 * goertzelPower(tail, frequency: 1700, sampleRate: 48_000))

        // Disabled live, the Snapcast rooms go silent; enabled, they hear it again.
        try d.mpc("disable", "2").expectSuccess()
        #expect(try d.mpc("outputs").stdout.contains("Output 2 (Snapcast) is disabled"))
        for w in watches { #expect(w.wait(timeout: 10) { w.isSilent() }, "silent once disabled") }
        try d.mpc("enable", "2").expectSuccess()
        for w in watches { #expect(w.wait(timeout: 10) { w.hasTone(1000) }, "the tone again once enabled") }
        await d.stop()
    }
}

/// Snapcast's own control script for MPD (`meta_mpd.py`, shipped with Debian's snapserver), run
/// as snapserver runs a stream's `controlscript`: JSON-RPC on its standard input and output, MPD
/// on the command line. It reads our metadata and state, and its commands drive the daemon.
@Suite(.serialized)
struct SnapcastControlScriptTests {
    /// The script's JSON lines, each waking a waiter.
    final class Lines: @unchecked Sendable {
        private let lines = Mutex<[String]>([])
        private let partial = Mutex<[UInt8]>([])
        private let arrived = DispatchSemaphore(value: 0)
        func feed(_ data: Data) {
            let done: [String] = partial.withLock { p in
                p += data
                var out: [String] = []
                while let nl = p.firstIndex(of: 10) {
                    out.append(String(decoding: p[..<nl], as: UTF8.self))
                    p.removeSubrange(...nl)
                }
                return out
            }
            lines.withLock { $0 += done }
            arrived.signal()
        }
        var all: [String] { lines.withLock { $0 } }
        /// Waits until a line's JSON object satisfies `condition`.
        func wait(timeout: Double, _ condition: ([String: Any]) -> Bool) -> Bool {
            let deadline = DispatchTime.now() + timeout
            func any() -> Bool {
                all.contains { l in
                    (try? JSONSerialization.jsonObject(with: Data(l.utf8))).flatMap { $0 as? [String: Any] }.map(condition) ?? false
                }
            }
            while !any() {
                if arrived.wait(timeout: deadline) == .timedOut { return any() }
            }
            return true
        }
    }

    @Test func metaMPDShowsOurSongAndControlsUs() async throws {
        let script = "/usr/share/snapserver/plug-ins/meta_mpd.py"
        try #require(FileManager.default.fileExists(atPath: script), "snapserver's meta_mpd.py")
        let d = try await TestDaemon()
        // The first song has no artist: with one, the script looks its cover up on MusicBrainz
        // (network) as soon as it connects, and without a network it stops there (upstream's
        // behaviour, not ours). The second, reached with the script's `next`, has one.
        let first = d.dir.file("music/meta.flac")
        try Fixtures.tone(path: first, codecArgs: ["-c:a", "flac", "-metadata", "title=Control tone", "-metadata", "album=Rooms"], seconds: 30)
        let second = try d.tone("second.flac", seconds: 30, freq: 440, title: "Second room")
        try d.mpc("add", first).expectSuccess()
        try d.mpc("add", second).expectSuccess()
        try d.mpc("play").expectSuccess()

        let p = Process()
        // Debian's python3 (python3-mpd, python3-musicbrainzngs, python3-gi, python3-dbus);
        // snapserver passes --stream, --snapcast-host and --snapcast-port, the source's
        // controlscriptparams the MPD address.
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [script, "--stream=Tonearm", "--snapcast-host=127.0.0.1", "--snapcast-port=1780",
                       "--mpd-host=127.0.0.1", "--mpd-port=\(d.port)"]
        var env = ProcessInfo.processInfo.environment
        // Its album art look-up (MusicBrainz) fails at once instead of going to the network.
        for k in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"] { env[k] = "http://127.0.0.1:9" }
        p.environment = env
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        let lines = Lines()
        output.fileHandleForReading.readabilityHandler = { h in
            let data = h.availableData
            if data.isEmpty { h.readabilityHandler = nil } else { lines.feed(data) }  // the end: stop watching
        }
        try p.run()
        defer {
            output.fileHandleForReading.readabilityHandler = nil
            // The script retries MPD forever: it is ended here, and waited for.
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        func send(_ json: String) { input.fileHandleForWriting.write(Data((json + "\n").utf8)) }

        #expect(lines.wait(timeout: 10) { $0["method"] as? String == "Plugin.Stream.Ready" }, "\(lines.all)")
        // The song's metadata and our state, as snapserver shows them to its clients.
        let shows = lines.wait(timeout: 10) { o in
            guard o["method"] as? String == "Plugin.Stream.Player.Properties", let params = o["params"] as? [String: Any],
                  let meta = params["metadata"] as? [String: Any] else { return false }
            return params["playbackStatus"] as? String == "playing" && meta["title"] as? String == "Control tone"
                && meta["album"] as? String == "Rooms" && (meta["duration"] as? Double).map { abs($0 - 30) < 0.5 } == true
        }
        #expect(shows, "\(lines.all)")

        // Snapcast clients' buttons: pause, then play.
        send(#"{"jsonrpc":"2.0","id":1,"method":"Plugin.Stream.Player.Control","params":{"command":"pause"}}"#)
        #expect(lines.wait(timeout: 10) { $0["id"] as? Int == 1 && $0["result"] as? String == "ok" }, "\(lines.all)")
        #expect(try d.mpc("status").stdout.contains("[paused]"))
        #expect(lines.wait(timeout: 10) { (($0["params"] as? [String: Any])?["playbackStatus"] as? String) == "paused" }, "\(lines.all)")
        send(#"{"jsonrpc":"2.0","id":2,"method":"Plugin.Stream.Player.Control","params":{"command":"play"}}"#)
        #expect(lines.wait(timeout: 10) { $0["id"] as? Int == 2 && $0["result"] as? String == "ok" }, "\(lines.all)")
        #expect(try d.mpc("status").stdout.contains("[playing]"))
        send(#"{"jsonrpc":"2.0","id":3,"method":"Plugin.Stream.Player.SetProperty","params":{"volume":42}}"#)
        #expect(lines.wait(timeout: 10) { $0["id"] as? Int == 3 && $0["result"] as? String == "ok" }, "\(lines.all)")
        #expect(try d.mpc("volume").stdout.contains("42%"))
        send(#"{"jsonrpc":"2.0","id":4,"method":"Plugin.Stream.Player.GetProperties"}"#)
        #expect(lines.wait(timeout: 10) { o in
            o["id"] as? Int == 4 && ((o["result"] as? [String: Any])?["volume"] as? Int) == 42
        }, "\(lines.all)")
        // Next: the second song's title and artist.
        send(#"{"jsonrpc":"2.0","id":5,"method":"Plugin.Stream.Player.Control","params":{"command":"next"}}"#)
        #expect(lines.wait(timeout: 10) { o in
            let meta = (o["params"] as? [String: Any])?["metadata"] as? [String: Any]
            return meta?["title"] as? String == "Second room" && (meta?["artist"] as? [String]) == ["Tonearm Tests"]
        }, "\(lines.all)")
        #expect(try d.mpc("current").stdout.contains("Second room"))
        await d.stop()
    }
}

/// Our own HTTP listener: asks for ICY metadata, keeps the headers, the titles and `bytes` of audio.
struct HTTPListen {
    var headers = ""
    var titles: [String] = []
    var audio: [UInt8] = []

    init(port: Int, bytes: Int, timeout: Double = 15) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let c = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard c == 0 else { throw HTTPListenError("cannot connect to the HTTP output on \(port)") }
        let request = "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\nIcy-MetaData: 1\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var raw: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        let deadline = Date().addingTimeInterval(timeout)
        var metaint = 0, untilMeta = 0, headerEnd: Int? = nil, pos = 0
        while audio.count < bytes {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard poll(&p, 1, left) > 0 else { throw HTTPListenError("the HTTP stream stalled after \(audio.count) bytes") }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { throw HTTPListenError("the HTTP stream ended after \(audio.count) bytes") }
            raw += buffer[0..<n]
            if headerEnd == nil, let r = raw.firstRange(of: [13, 10, 13, 10]) {
                headerEnd = r.upperBound
                headers = String(decoding: raw[..<r.lowerBound], as: UTF8.self)
                for line in headers.split(separator: "\r\n") where line.lowercased().hasPrefix("icy-metaint:") {
                    metaint = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
                untilMeta = metaint
                pos = r.upperBound
            }
            guard headerEnd != nil else { continue }
            // Walks the audio and the metadata blocks.
            while pos < raw.count {
                if metaint == 0 || untilMeta > 0 {
                    let take = metaint == 0 ? raw.count - pos : min(untilMeta, raw.count - pos)
                    audio += raw[pos..<(pos + take)]
                    pos += take
                    untilMeta -= take
                } else {
                    let length = Int(raw[pos]) * 16
                    guard pos + 1 + length <= raw.count else { break }
                    if length > 0 {
                        let text = String(decoding: raw[(pos + 1)..<(pos + 1 + length)], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\0"))
                        if let s = text.range(of: "StreamTitle='"), let e = text.range(of: "';", range: s.upperBound..<text.endIndex) {
                            titles.append(String(text[s.upperBound..<e.lowerBound]))
                        }
                    }
                    pos += 1 + length
                    untilMeta = metaint
                }
            }
        }
    }
}

struct HTTPListenError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Two Snapcast rooms play the daemon's audio in sync with each other (issue 20): snapserver
/// with the daemon's pipe, two `snapclient --player pulse` on loopback, each playing into a
/// one-channel remap sink of a private PulseAudio server — room A onto the left channel of one
/// null sink, room B onto its right. One recording of that sink's monitor holds both rooms on
/// one clock; the lag that best aligns white noise in the left with the right is how far apart
/// the rooms play. Without Snapcast's synchronisation (two clients that joined at different
/// times play as soon as they receive) the rooms are apart by their joining times and buffers.
@Suite(.serialized)
struct SnapcastSyncTests {
    /// Stereo s16le from `parecord --raw`, each chunk waking the waiter.
    final class StereoCapture: @unchecked Sendable {
        private let channels = Mutex<([Float], [Float])>(([], []))
        private let pending = Mutex<[UInt8]>([])
        let frames = Watched(0)

        func feed(_ bytes: [UInt8]) {
            let count: Int = pending.withLock { p in
                p += bytes
                let n = p.count / 4
                var l: [Float] = [], r: [Float] = []
                l.reserveCapacity(n)
                r.reserveCapacity(n)
                for i in 0..<n {
                    l.append(Float(Int16(bitPattern: UInt16(p[i * 4]) | UInt16(p[i * 4 + 1]) << 8)) / 32768)
                    r.append(Float(Int16(bitPattern: UInt16(p[i * 4 + 2]) | UInt16(p[i * 4 + 3]) << 8)) / 32768)
                }
                p.removeFirst(n * 4)
                return channels.withLock { c in
                    c.0 += l
                    c.1 += r
                    return c.0.count
                }
            }
            frames.update { $0 = count }
        }

        /// The newest `count` frames of each channel (fewer when fewer arrived).
        func newest(_ count: Int) -> ([Float], [Float]) {
            channels.withLock { (Array($0.0.suffix(count)), Array($0.1.suffix(count))) }
        }

        /// Whether both channels have been loud for the newest `count` frames.
        func bothLoud(_ count: Int) -> Bool {
            let (l, r) = newest(count)
            return l.count == count && rms(l.prefix(count / 2)) > 0.05 && rms(l.suffix(count / 2)) > 0.05
                && rms(r.prefix(count / 2)) > 0.05 && rms(r.suffix(count / 2)) > 0.05
        }
    }

    /// The lag (frames; positive: `b` plays later) within ±`maxLag` that best aligns `a`'s middle
    /// with `b`, and the normalised correlation there.
    static func alignment(_ a: [Float], _ b: [Float], maxLag: Int) -> (lag: Int, correlation: Double) {
        let n = a.count - 2 * maxLag
        var best = (lag: 0, correlation: -2.0)
        a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in
                var ex = 0.0
                for i in 0..<n { ex += Double(x[maxLag + i]) * Double(x[maxLag + i]) }
                for lag in -maxLag...maxLag {
                    var dot = 0.0, ey = 0.0
                    for i in 0..<n {
                        let v = Double(y[maxLag + lag + i])
                        dot += Double(x[maxLag + i]) * v
                        ey += v * v
                    }
                    let c = dot / max((ex * ey).squareRoot(), 1e-12)
                    if c > best.correlation { best = (lag, c) }
                }
            }
        }
        return best
    }

    @Test func twoRoomsPlayInSyncWithEachOther() async throws {
        let work = try TempDir("tonearm-snapsync")
        defer { work.remove() }
        let pulse = try PrivatePulseServer()
        defer { pulse.stop() }
        for args in [["module-null-sink", "sink_name=rooms", "channels=2", "channel_map=front-left,front-right", "rate=48000"],
                     ["module-remap-sink", "sink_name=roomA", "master=rooms", "channels=1", "channel_map=mono", "master_channel_map=front-left", "remix=no"],
                     ["module-remap-sink", "sink_name=roomB", "master=rooms", "channels=1", "channel_map=mono", "master_channel_map=front-right", "remix=no"]] {
            let r = try await run("pactl", ["load-module"] + args, environment: pulse.environment)
            #expect(r.status == 0, "pactl load-module \(args): \(r.stderr)")
        }

        let fifo = work.file("snapfifo")
        let streamPort = freeTCPPort()
        let outputs = DaemonOutputs([.null, .snapcast(path: fifo)]) { _ in }
        let d = try await TestDaemon(outputs: outputs)
        try outputs.start()
        defer { outputs.stop() }
        // White noise: one lag aligns it (a tone would align at every period).
        let noise = d.dir.file("music/noise.flac")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=white:amplitude=0.5:duration=30:sample_rate=48000:seed=7",
                                   "-ac", "2", "-c:a", "flac", noise])
        try d.mpc("add", noise).expectSuccess()
        try d.mpc("play").expectSuccess()

        let server = try startSnapserver(in: work, pipe: fifo, port: streamPort)
        defer { server.terminate() }

        let capture = StereoCapture()
        let recorder = try ChildProcess(["parecord", "--raw", "-d", "rooms.monitor", "--latency-msec=20", "--format=s16le", "--rate=48000",
                                         "--channels=2", "--channel-map=front-left,front-right"],
                                        environment: pulse.environment, captureStandardOutput: true, onStandardOutput: { capture.feed($0) })
        defer { recorder.terminate(SIGINT) }
        var clients: [ChildProcess] = []
        defer { for c in clients { c.terminate() } }
        // Room B joins after room A has been heard, so that the two start apart.
        for (room, side) in [("roomA", 0), ("roomB", 1)] {
            clients.append(try ChildProcess(["snapclient", "-h", "127.0.0.1", "-p", String(streamPort), "--hostID", room, "-s", room,
                                             "--player", "pulse:server=\(pulse.serverString)", "--logsink", "stderr"],
                                            environment: pulse.environment, captureStandardError: true))
            let heard = capture.frames.waitBlocking(timeout: 30) { _ in
                let (l, r) = capture.newest(24_000)
                return rms(side == 0 ? l : r) > 0.05
            }
            #expect(heard, "\(room) is heard; snapclient: \(clients.last!.standardErrorText.suffix(600)) snapserver: \(server.standardErrorText.suffix(400))")
            if !heard { return }
        }
        // Both rooms loud for a whole second, then compared over its newest half second.
        #expect(capture.frames.waitBlocking(timeout: 20) { _ in capture.bothLoud(48_000) }, "both rooms play")
        let start = capture.frames.value
        #expect(capture.frames.waitBlocking(timeout: 20) { $0 >= start + 48_000 }, "a second more")
        // Ten windows of 0.1 s, each aligned within ±50 ms. Snapcast keeps the rooms in step by
        // dropping or adding a sample now and then, and a window holding such a step (or a
        // dropout) correlates less; most must align, and every one that does, within 5 ms.
        let maxLag = 2_400, window = 4_800
        let (l, r) = capture.newest(10 * window + 2 * maxLag)
        let found = (0..<10).map { w in
            Self.alignment(Array(l[(w * window)..<(w * window + window + 2 * maxLag)]),
                           Array(r[(w * window)..<(w * window + window + 2 * maxLag)]), maxLag: maxLag)
        }
        let aligned = found.filter { $0.correlation > 0.8 }
        let described = found.map { "\($0.lag) (\(String(format: "%.2f", $0.correlation)))" }.joined(separator: ", ")
        #expect(aligned.count >= 6, "the same audio in both rooms within ±50 ms in most windows; lag (correlation) a window: \(described)")
        #expect(found.filter { $0.correlation > 0.5 }.allSatisfy { abs($0.lag) <= 240 }, "at most 5 ms apart: \(described)")
        await d.stop()
    }
}
