// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmDaemon
import TonearmExport
@testable import TonearmRender
import TonearmTestSupport

/// A raw HTTP listener on loopback: sends the request, then (when `reading`) receives on a
/// thread of its own, every arrival waking `wait`.
final class RawListener: @unchecked Sendable {
    let fd: Int32
    private let bytes = Mutex<[UInt8]>([])
    private let ended = Atomic<Bool>(false)
    private let arrived = DispatchSemaphore(value: 0)

    /// Connects (nil when refused). `receiveBuffer`: SO_RCVBUF set before connecting (a small one
    /// makes a listener that does not read fall behind at once).
    init?(port: Int, icy: Bool = false, receiveBuffer: Int32? = nil) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let c = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard c == 0 else { close(fd); return nil }
        let request = "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n" + (icy ? "Icy-MetaData: 1\r\n" : "") + "\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
    }

    deinit { close(fd) }

    /// Connects, starts reading, and waits up to `timeout` seconds for the answer's headers;
    /// throws when refused or when no headers came.
    static func reading(port: Int, icy: Bool = false, timeout: Double = 10) throws -> RawListener {
        guard let l = RawListener(port: port, icy: icy) else { throw TestSupportError("127.0.0.1:\(port) refused the connection") }
        l.startReading()
        guard l.wait(timeout: timeout, { l.headers != nil }) else { throw TestSupportError("no answer's headers from 127.0.0.1:\(port) in \(timeout) s") }
        return l
    }

    /// Receives until the end of the stream, on a thread of its own.
    func startReading() {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                bytes.withLock { $0 += buffer[0..<n] }
                arrived.signal()
            }
            ended.store(true, ordering: .releasing)
            arrived.signal()
        }
    }

    var received: [UInt8] { bytes.withLock { $0 } }
    var pendingInKernel: Int32 { var n: Int32 = 0; _ = ioctl(fd, UInt(FIONREAD), &n); return n }
    var count: Int { bytes.withLock { $0.count } }
    var isEnded: Bool { ended.load(ordering: .acquiring) }
    var headers: String? {
        let b = received
        return b.firstRange(of: [13, 10, 13, 10]).map { String(decoding: b[..<$0.lowerBound], as: UTF8.self) }
    }
    /// The body (after the headers).
    var body: [UInt8] {
        let b = received
        return b.firstRange(of: [13, 10, 13, 10]).map { Array(b[$0.upperBound...]) } ?? []
    }

    /// Waits, arrival by arrival, until `condition` holds or `timeout` passes.
    func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while !condition() {
            if arrived.wait(timeout: deadline) == .timedOut { return condition() }
        }
        return true
    }
}

/// Log lines, each waking a waiter.
final class LogWatch: @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    private let arrived = DispatchSemaphore(value: 0)
    var log: @Sendable (String) -> Void { { [self] m in lines.withLock { $0.append(m) }; arrived.signal() } }
    var all: [String] { lines.withLock { $0 } }
    func wait(for text: String, timeout: Double) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while !all.contains(where: { $0.contains(text) }) {
            if arrived.wait(timeout: deadline) == .timedOut { return all.contains { $0.contains(text) } }
        }
        return true
    }
}

/// The HTTP output fed faster than real time: the test is the render thread (it feeds the tap
/// directly), the output's own thread encodes and sends. Each format's stream, as a listener
/// receives it, decodes (ffprobe, ffmpeg) to the right codec at 48 kHz holding the tone; an
/// Ogg Opus stream chains a new Ogg stream with the new title's OpusTags; a listener that stops
/// reading is dropped once more than 1 MiB behind while another one receives all; disabled,
/// the output closes its listeners and its port, and listens again once enabled.
@Suite(.offThePool) struct HTTPStreamOutputTests {
    /// A tone (or noise) period by period.
    final class Feeder {
        let hub: OutputHub
        let tap: OutputTap
        private var phase = 0
        private var seed: UInt64 = 12345
        init(seconds: Double) {
            tap = OutputTap(seconds: seconds)
            tap.isEnabled = true
            hub = OutputHub(taps: [tap])
        }
        func feed(seconds: Double, noise: Bool = false) {
            let frames = 4800
            var buffer = [Float](repeating: 0, count: frames * 2)
            for _ in 0..<Int((seconds * 10).rounded(.up)) {
                for i in 0..<frames * 2 {
                    if noise {
                        // Each channel its own (FLAC would store equal channels once).
                        seed = seed &* 6364136223846793005 &+ 1442695040888963407
                        buffer[i] = Float(Int32(truncatingIfNeeded: seed >> 32)) / Float(Int32.max) * 0.9
                    } else {
                        buffer[i] = 0.5 * Float(sin(2 * Double.pi * 1000 * Double(phase + i / 2) / 48_000))
                    }
                }
                phase += frames
                buffer.withUnsafeMutableBufferPointer { hub.feed($0.baseAddress!, frames: frames, channels: 2, sampleRate: 48_000) }
            }
        }
    }

    private func probe(_ path: String) throws -> [String: String] {
        let r = try run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "default=nw=1", path])
        var d: [String: String] = [:]
        for line in r.stdout.split(separator: "\n") {
            let kv = line.split(separator: "=", maxSplits: 1)
            if kv.count == 2, d[String(kv[0])] == nil { d[String(kv[0])] = String(kv[1]) }
        }
        return d
    }

    /// Decodes `path` and returns its left channel at 48 kHz.
    private func decode(_ path: String, work: TempDir) throws -> [Float] {
        let wav = path + ".wav"
        try Fixtures.ffmpeg(["-i", path, "-c:a", "pcm_f32le", wav])
        return try readWAV(wav).channels.first ?? []
    }

    private func hasTone(_ left: [Float]) -> Bool {
        guard left.count > 24_000 else { return false }
        let mid = left[(left.count / 2 - 4800)..<(left.count / 2 + 4800)]
        return goertzelPower(mid, frequency: 1000, sampleRate: 48_000) > 100 * goertzelPower(mid, frequency: 1700, sampleRate: 48_000)
    }

    @Test(arguments: [LiveStreamFormat.flac, .mp3, .opus])
    func eachFormatDecodesToTheTone(format: LiveStreamFormat) throws {
        let work = try TempDir("tonearm-httpfmt")
        defer { work.remove() }
        let feeder = Feeder(seconds: 8)
        let port = freeTCPPort()
        let logs = LogWatch()
        let out = HTTPStreamOutput(host: "127.0.0.1", port: port, format: format, tap: feeder.tap, log: logs.log)
        out.setTitle(.init(text: "Band - One", artist: "Band", title: "One"))
        try out.start()
        defer { out.stop() }
        let listener = try RawListener.reading(port: port, icy: true)
        let headers = listener.headers ?? ""
        #expect(headers.contains("Content-Type: \(format.contentType)"), "\(headers)")
        // ICY for FLAC and MP3; Ogg carries its titles itself (no icy-metaint).
        #expect(headers.contains("icy-metaint: 8192") == !format.titlesInStream, "\(headers)")

        feeder.feed(seconds: 4)
        // The first title is in the stream before it changes: past the first ICY block (at
        // metaInterval bytes of audio) for FLAC and MP3 — waiting for less let a loaded run
        // change the title before the first block was written (FLAC's tone is ~4 KB/s).
        let first = format.titlesInStream ? 8000 : HTTPStreamOutput.metaInterval + 1 + 64
        #expect(listener.wait(timeout: 15) { out.bytesEncoded > 8000 && listener.count > first }, "the first seconds arrive")
        out.setTitle(.init(text: "Band - Two", artist: "Band", title: "Two"))
        feeder.feed(seconds: 3)
        // All of it is sent: what the listener holds is at least what was encoded (plus headers).
        let enough = { listener.body.count >= out.bytesEncoded && feeder.tap.ring.availableFrames == 0 && out.bytesEncoded > 20_000 }
        #expect(listener.wait(timeout: 15) { enough() }, "the stream arrives")
        out.stop()
        #expect(listener.wait(timeout: 5) { listener.isEnded })

        var body = listener.body
        if !format.titlesInStream {
            // Takes the ICY blocks out, keeping their titles.
            var audio: [UInt8] = [], titles: [String] = [], pos = 0
            while pos < body.count {
                let take = min(HTTPStreamOutput.metaInterval, body.count - pos)
                audio += body[pos..<(pos + take)]
                pos += take
                guard pos < body.count else { break }
                let length = Int(body[pos]) * 16
                if length > 0, pos + 1 + length <= body.count {
                    titles.append(String(decoding: body[(pos + 1)..<(pos + 1 + length)], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\0")))
                }
                pos += 1 + length
            }
            body = audio
            #expect(titles.first == "StreamTitle='Band - One';" && titles.last == "StreamTitle='Band - Two';", "\(titles)")
        } else {
            // Two chained Ogg streams: the first ends (EOS), the second begins with OpusHead and
            // OpusTags holding the new title.
            let pages = oggPages(body)
            let serials = pages.map(\.serial).reduce(into: [UInt32]()) { if $0.last != $1 { $0.append($1) } }
            #expect(serials.count == 2, "\(serials)")
            #expect(pages.filter { $0.flags & 0x04 != 0 }.count == 1 && pages.filter { $0.flags & 0x02 != 0 }.count == 2)
            let second = pages.filter { $0.serial == serials.last }
            #expect(second.first.map { $0.body.starts(with: Array("OpusHead".utf8)) } == true)
            let tags = second.dropFirst().first.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
            #expect(tags.hasPrefix("OpusTags") && tags.contains("TITLE=Two") && tags.contains("ARTIST=Band"), "\(tags)")
            let firstTags = pages.filter { $0.serial == serials.first }.dropFirst().first.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
            #expect(firstTags.contains("TITLE=One"), "\(firstTags)")
        }
        let file = work.file("heard.\(format.rawValue == "opus" ? "ogg" : format.rawValue)")
        _ = FileManager.default.createFile(atPath: file, contents: Data(body))
        let info = try probe(file)
        #expect(info["codec_name"] == format.rawValue && info["sample_rate"] == "48000" && info["channels"] == "2", "\(info)")
        let left = try decode(file, work: work)
        // Every second fed is heard (both chained streams of the Opus one), holding the tone.
        #expect(left.count > 48_000 * 4, "\(left.count) samples decoded")
        #expect(hasTone(left))
    }

    @Test func aListenerThatStopsReadingIsDroppedAndTheOtherHearsOn() throws {
        let feeder = Feeder(seconds: 62)
        let port = freeTCPPort()
        let logs = LogWatch()
        let out = HTTPStreamOutput(host: "127.0.0.1", port: port, format: .flac, tap: feeder.tap, log: logs.log)
        try out.start()
        defer { out.stop() }
        // Connects and never reads, with a small receive buffer.
        let stuck = try #require(RawListener(port: port, receiveBuffer: 4096))
        let reader = try RawListener.reading(port: port)
        // Noise (FLAC cannot shrink it: ~190 kB a second), fed 0.3 s at a time, each
        // once the reader is within 200 kB of what was encoded, until the stuck one is dropped.
        var fed = 0.0
        while !logs.all.contains(where: { $0.contains("too slow") }), fed < 60 {
            feeder.feed(seconds: 0.3, noise: true)
            fed += 0.3
            #expect(reader.wait(timeout: 10) { reader.body.count + 200_000 >= out.bytesEncoded }, "the reader keeps receiving")
        }
        #expect(logs.wait(for: "a listener was dropped: too slow (more than 1 MiB unsent)", timeout: 10),
                "\(logs.all) stuck holds \(stuck.pendingInKernel) fed \(fed) s, encoded \(out.bytesEncoded), received \(reader.count), tap dropped \(feeder.tap.dropped)")
        // The stuck one was at least 1 MiB behind when dropped.
        #expect(out.bytesEncoded > 1 << 20)
        // The reader goes on: the next second arrives, and only one listener is left.
        let before = reader.count
        feeder.feed(seconds: 1, noise: true)
        #expect(reader.wait(timeout: 10) { reader.count > before + 100_000 })
        #expect(out.listeners == 1)
        #expect(!logs.all.contains { $0.contains("dropped") && !$0.contains("too slow") })
        _ = stuck
    }

    @Test func disabledTheOutputClosesItsListenersAndPortAndEnabledListensAgain() throws {
        let feeder = Feeder(seconds: 4)
        let port = freeTCPPort()
        let logs = LogWatch()
        let out = HTTPStreamOutput(host: "127.0.0.1", port: port, format: .mp3, tap: feeder.tap, log: logs.log)
        try out.start()
        defer { out.stop() }
        let listener = try RawListener.reading(port: port)
        feeder.feed(seconds: 0.5)
        #expect(listener.wait(timeout: 10) { listener.body.count > 1000 })

        out.setEnabled(false)
        #expect(listener.wait(timeout: 10) { listener.isEnded }, "the listener is closed")
        #expect(logs.wait(for: "disabled", timeout: 10))
        #expect(RawListener(port: port) == nil, "new connections are refused")
        #expect(out.listeners == 0)

        out.setEnabled(true)
        #expect(logs.wait(for: "listening on 127.0.0.1:\(port) again", timeout: 10))
        let again = try #require(RawListener(port: port))
        again.startReading()
        #expect(again.wait(timeout: 10) { again.headers?.contains("audio/mpeg") == true })
        feeder.feed(seconds: 0.5)
        #expect(again.wait(timeout: 10) { again.body.count > 1000 }, "served again")
    }
}

/// Ogg pages: serial, header flags, the packet data.
func oggPages(_ b: [UInt8]) -> [(serial: UInt32, flags: UInt8, body: [UInt8])] {
    var pages: [(serial: UInt32, flags: UInt8, body: [UInt8])] = []
    var p = 0
    while p + 27 <= b.count, b[p..<(p + 4)].elementsEqual("OggS".utf8) {
        let n = Int(b[p + 26])
        guard p + 27 + n <= b.count else { break }
        let size = b[(p + 27)..<(p + 27 + n)].reduce(0) { $0 + Int($1) }
        guard p + 27 + n + size <= b.count else { break }
        let serial = (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[p + 14 + $1]) << (8 * $1) }
        pages.append((serial, b[p + 5], Array(b[(p + 27 + n)..<(p + 27 + n + size)])))
        p += 27 + n + size
    }
    return pages
}
