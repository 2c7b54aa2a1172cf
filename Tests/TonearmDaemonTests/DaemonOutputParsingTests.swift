// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmDaemon
import TonearmExport
@testable import TonearmRender
import TonearmTestSupport

/// `--output` values with their formats, and the Snapcast output's conversion to snapserver's
/// `sampleformat` (offline).
struct DaemonOutputParsingTests {
    @Test func streamFormatsAndSampleFormatsAreParsed() throws {
        #expect(try DaemonOutput(parsing: "http:0.0.0.0:8000") == .http(host: "0.0.0.0", port: 8000, format: .flac))
        #expect(try DaemonOutput(parsing: "http:0.0.0.0:8000:mp3") == .http(host: "0.0.0.0", port: 8000, format: .mp3))
        #expect(try DaemonOutput(parsing: "http:[::1]:8001:OPUS") == .http(host: "::1", port: 8001, format: .opus))
        #expect(try DaemonOutput(parsing: "http:[::1]:8001:opus").description == "http:::1:8001:opus")
        #expect(throws: TonearmError.invalidArgument("output 'http:h:8000:ogg': unknown stream format 'ogg'; choose flac, mp3 or opus")) {
            try DaemonOutput(parsing: "http:h:8000:ogg")
        }
        #expect(try DaemonOutput(parsing: "snapcast:/tmp/f") == .snapcast(path: "/tmp/f", format: .standard))
        let f = try SnapcastFormat(sampleRate: 44_100, bits: 24, channels: 2)
        #expect(try DaemonOutput(parsing: "snapcast:/tmp/f:44100:24:2") == .snapcast(path: "/tmp/f", format: f))
        #expect(try DaemonOutput(parsing: "snapcast:/tmp/a:b") == .snapcast(path: "/tmp/a:b"))
        #expect(try DaemonOutput(parsing: "snapcast:/tmp/f:44100:24:2").description == "snapcast:/tmp/f:44100:24:2")
        #expect(throws: TonearmError.invalidArgument("output 'snapcast:/tmp/f:44100:12:2': sample format: 12 bits; snapserver takes 8, 16, 24 or 32")) {
            try DaemonOutput(parsing: "snapcast:/tmp/f:44100:12:2")
        }
        #expect(throws: TonearmError.self) { try DaemonOutput(parsing: "snapcast:/tmp/f:44100:16:6") }
        #expect(throws: TonearmError.self) { try DaemonOutput(parsing: "snapcast:/tmp/f:100:16:2") }
    }

    /// Each sample format's bytes: little-endian, 24 bits in the low three bytes of four, one
    /// channel the mean of two, clipped.
    @Test func theSnapcastConversionWritesSnapserversSampleFormat() throws {
        let frames: [Float] = [0.5, -0.5, 1.5, -2, 0.25, 0.75]  // three stereo frames
        func bytes(_ f: SnapcastFormat) -> [UInt8] {
            var out = [UInt8](repeating: 0xee, count: 3 * f.frameBytes + 4)
            let n = frames.withUnsafeBufferPointer { s in out.withUnsafeMutableBytes { f.convert(s.baseAddress!, frames: 3, into: $0.baseAddress!) } }
            #expect(n == 3 * f.frameBytes && out.suffix(4).allSatisfy { $0 == 0xee })
            return Array(out.prefix(n))
        }
        func le16(_ v: Int16) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        #expect(bytes(.standard) == le16(16384) + le16(-16384) + le16(32767) + le16(-32767) + le16(8192) + le16(24575))
        let s24 = bytes(try SnapcastFormat(sampleRate: 44_100, bits: 24, channels: 2))
        #expect(s24 == le32(4_194_304) + le32(-4_194_304) + le32(8_388_607) + le32(-8_388_607) + le32(2_097_152) + le32(6_291_455))
        #expect(s24[3] == 0 && s24[7] == 0xff, "the top byte is the sign's")
        #expect(bytes(try SnapcastFormat(sampleRate: 48_000, bits: 16, channels: 1)) == le16(0) + le16(-8192) + le16(16384))
        #expect(bytes(try SnapcastFormat(sampleRate: 48_000, bits: 8, channels: 2)) == [64, 192, 127, 129, 32, 95])
        let s32 = bytes(try SnapcastFormat(sampleRate: 48_000, bits: 32, channels: 2))
        #expect(s32.count == 24 && s32[8..<12] == le32(2_147_483_520)[...])
    }

    /// A tone through the Snapcast output's whole path (tap, writer thread at 44.1 kHz, 24-bit
    /// conversion) into a pipe, read back: 44.1 kHz frames of 8 bytes holding the tone.
    @Test func theSnapcastOutputWritesTheConfiguredFormatIntoThePipe() throws {
        let work = try TempDir("tonearm-snapfmt")
        defer { work.remove() }
        let fifo = work.file("snapfifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        // Room for all of it: nothing is dropped while the test reads.
        _ = fcntl(reader, 1031 /* F_SETPIPE_SZ */, 1 << 20)
        let tap = OutputTap(seconds: 4)
        tap.isEnabled = true
        let hub = OutputHub(taps: [tap])
        let format = try SnapcastFormat(sampleRate: 44_100, bits: 24, channels: 2)
        let out = SnapcastOutput(path: fifo, tap: tap, format: format) { _ in }
        try out.start()
        defer { out.stop() }
        // 0.5 s of 1 kHz at 48 kHz (right: its negative), fed as the render thread would; the
        // writer's first pass opens the pipe before it delivers anything.
        var buffer = [Float](repeating: 0, count: 24_000 * 2)
        for i in 0..<24_000 {
            let v = 0.5 * Float(sin(2 * Double.pi * 1000 * Double(i) / 48_000))
            buffer[i * 2] = v
            buffer[i * 2 + 1] = -v
        }
        buffer.withUnsafeMutableBufferPointer { hub.feed($0.baseAddress!, frames: 24_000, channels: 2, sampleRate: 48_000) }
        var got: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(15)
        while got.count < 22_000 * 8, Date() < deadline {
            var p = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 1000) >= 0 else { break }
            let n = read(reader, &chunk, chunk.count)
            if n > 0 { got += chunk[0..<n] }
        }
        #expect(out.dropped == 0 && got.count >= 22_000 * 8 && got.count % 8 == 0, "\(got.count) bytes, \(out.dropped) dropped")
        func sample(_ i: Int) -> Int32 {
            Int32(bitPattern: UInt32(got[i]) | UInt32(got[i + 1]) << 8 | UInt32(got[i + 2]) << 16 | UInt32(got[i + 3]) << 24)
        }
        let left = stride(from: 0, to: got.count - 7, by: 8).map { Float(sample($0)) / 8_388_608 }
        #expect(left.allSatisfy { abs($0) <= 0.51 })
        #expect(stride(from: 0, to: got.count - 7, by: 8).allSatisfy { abs(sample($0) + sample($0 + 4)) <= 2 }, "right is left's negative")
        let mid = left[4000..<(4000 + 8820)]
        #expect(goertzel(mid, 1000, 44_100) > 100 * goertzel(mid, 1700, 44_100), "1 kHz at 44.1 kHz")
    }
}

private func goertzel(_ x: ArraySlice<Float>, _ f: Double, _ rate: Double) -> Double {
    let w = 2 * Double.pi * f / rate
    var s1 = 0.0, s2 = 0.0
    for v in x { let s = Double(v) + 2 * cos(w) * s1 - s2; s2 = s1; s1 = s }
    return s1 * s1 + s2 * s2 - 2 * cos(w) * s1 * s2
}
