// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// The Swift FLAC decoder (``FLACDecoder``) against FFmpeg's decoding of the same files, made
/// by `ffmpeg` and `sox` (libFLAC) over encoder settings, bit depths, channel counts and rates.
@Suite(.offThePool) struct FLACDecoderTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var source: String
        var args: [String]
        var description: String { name }
    }

    static let pink = "anoisesrc=color=pink:a=0.4:d=1.5"
    static let cases: [Case] = [
        Case(name: "16-bit stereo 44.1k level 0", source: pink + ":r=44100", args: ["-ac", "2", "-compression_level", "0"]),
        Case(name: "16-bit stereo 44.1k level 5", source: pink + ":r=44100", args: ["-ac", "2", "-compression_level", "5"]),
        Case(name: "16-bit stereo 44.1k level 8", source: pink + ":r=44100", args: ["-ac", "2", "-compression_level", "8"]),
        Case(name: "16-bit stereo 48k level 12", source: pink + ":r=48000", args: ["-ac", "2", "-compression_level", "12"]),
        Case(name: "24-bit stereo 96k", source: pink + ":r=96000", args: ["-ac", "2", "-sample_fmt", "s32"]),
        Case(name: "24-bit mono 192k level 12", source: pink + ":r=192000", args: ["-sample_fmt", "s32", "-compression_level", "12"]),
        Case(name: "16-bit mono 8k", source: pink + ":r=8000", args: []),
        Case(name: "16-bit mono 22.05k", source: pink + ":r=22050", args: []),
        Case(name: "5.1 16-bit 48k", source: pink + ":r=48000", args: ["-af", "aformat=channel_layouts=5.1"]),
        Case(name: "7.1 24-bit 48k", source: pink + ":r=48000", args: ["-af", "aformat=channel_layouts=7.1", "-sample_fmt", "s32"]),
        Case(name: "left/side", source: pink, args: ["-ac", "2", "-ch_mode", "left_side"]),
        Case(name: "right/side", source: pink, args: ["-ac", "2", "-ch_mode", "right_side"]),
        Case(name: "mid/side", source: pink, args: ["-ac", "2", "-ch_mode", "mid_side"]),
        Case(name: "independent", source: pink, args: ["-ac", "2", "-ch_mode", "indep"]),
        Case(name: "LPC order 32, exact Rice", source: pink, args: ["-ac", "2", "-max_prediction_order", "32", "-exact_rice_parameters", "1", "-lpc_type", "cholesky"]),
        Case(name: "fixed predictors", source: pink, args: ["-lpc_type", "fixed"]),
        Case(name: "no prediction", source: pink, args: ["-lpc_type", "none"]),
        Case(name: "block size 192", source: pink, args: ["-frame_size", "192"]),
        Case(name: "block size 16384", source: pink, args: ["-frame_size", "16384", "-compression_level", "8"]),
        Case(name: "white noise at full scale (verbatim)", source: "anoisesrc=color=white:a=1:d=1", args: ["-ac", "2"]),
        Case(name: "silence (constant)", source: "anullsrc=r=44100:cl=stereo", args: ["-t", "1"]),
        Case(name: "wasted bits: 16-bit content in 24 bits", source: pink, args: ["-af", "aformat=sample_fmts=s16,aformat=sample_fmts=s32", "-sample_fmt", "s32"]),
        Case(name: "wasted bits: 8-bit content in 16 bits", source: pink, args: ["-af", "aformat=sample_fmts=u8,aformat=sample_fmts=s16"]),
    ]

    @Test(arguments: cases)
    func decodesAsFFmpegDoes(_ c: Case) throws {
        let dir = try TempDir("flac-decoder")
        defer { dir.remove() }
        let path = dir.file("x.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", c.source] + c.args + ["-c:a", "flac", path])
        let reference = try FLACTestDecoding.ffmpegDecode(path, dir: dir)
        let d = try FLACTestDecoding.openNative(path)
        let ours = try FLACTestDecoding.decodeAll(d)
        #expect(!reference.isEmpty)
        #expect(ours.count == reference.count && ours.elementsEqual(reference) { $0.bitPattern == $1.bitPattern },
                "\(c.name): first difference \(FLACTestDecoding.firstDifference(ours, reference))")
        #expect(d.takeWarnings().isEmpty)
    }

    /// libFLAC's encoder (through sox): 8, 16 and 24 bits, its own choices of subframes.
    @Test(arguments: [8, 16, 24])
    func decodesLibFLACFilesAsFFmpegDoes(bits: Int) throws {
        let dir = try TempDir("flac-decoder-sox")
        defer { dir.remove() }
        let path = dir.file("x.flac")
        let r = try run("sox", ["-n", "-b", "\(bits)", "-r", "44100", "-c", "2", path, "synth", "2", "pinknoise", "sine", "440", "vol", "0.5"])
        #expect(r.status == 0, "\(r.stderr)")
        let reference = try FLACTestDecoding.ffmpegDecode(path, dir: dir)
        let ours = try FLACTestDecoding.decodeAll(try FLACTestDecoding.openNative(path))
        #expect(ours.count == reference.count && ours.elementsEqual(reference) { $0.bitPattern == $1.bitPattern },
                "\(bits) bits: first difference \(FLACTestDecoding.firstDifference(ours, reference))")
    }

    /// A local `.flac` file is read by the Swift decoder, and ``AudioFile`` gives what its FFmpeg
    /// path gives: formats, length, metadata and samples.
    @Test func audioFileReadsFLACWithoutFFmpegAsFFmpegDoes() throws {
        let dir = try TempDir("flac-audiofile")
        defer { dir.remove() }
        for (i, channels) in [1, 2].enumerated() {
            let path = dir.file("\(i).flac")
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", Self.pink, "-ac", "\(channels)", "-metadata", "title=Song \(i)",
                                 "-metadata", "artist=Someone", "-c:a", "flac", path])
            let native = try AudioFile(path: path)
            let ffmpeg = try AudioFile(path: path, audioStream: nil, native: false)
            #expect(native.decoder is FLACDecoder)
            #expect(ffmpeg.decoder is FFmpegDecoder)
            #expect(native.fileFormat == ffmpeg.fileFormat)
            #expect(native.processingFormat == ffmpeg.processingFormat)
            #expect(native.length == ffmpeg.length)
            #expect(native.metadata == ffmpeg.metadata)
            #expect(native.warnings.isEmpty && ffmpeg.warnings.isEmpty)
            let n = Int(native.length)
            let a = AudioPCMBuffer(format: native.processingFormat, frameCapacity: AudioFrameCount(n + 100))!
            let b = AudioPCMBuffer(format: ffmpeg.processingFormat, frameCapacity: AudioFrameCount(n + 100))!
            try native.read(into: a)
            try ffmpeg.read(into: b)
            #expect(a.frameLength == b.frameLength && Int(a.frameLength) == n)
            for c in 0..<channels {
                #expect(memcmp(a.floatChannelData[c], b.floatChannelData[c], n * 4) == 0, "channel \(c)")
            }
        }
    }

    /// Inserts a SEEKTABLE (a point every `every` frames) after STREAMINFO, found by decoding.
    private func addSeekTable(_ path: String, every: Int) throws -> Int {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let d = try FLACTestDecoding.openNative(path)
        var points: [(Int64, Int)] = []
        var offset = d.firstFrame, k = 0
        while offset < bytes.count, case .ok(let f) = d.decodeFrame(at: offset) {
            if k % every == 0 { points.append((f.firstSample, offset - d.firstFrame)) }
            offset = f.end
            k += 1
        }
        var block: [UInt8] = [3, 0, 0, 0]
        let length = points.count * 18
        block[1] = UInt8(length >> 16); block[2] = UInt8((length >> 8) & 0xFF); block[3] = UInt8(length & 0xFF)
        for (sample, off) in points {
            for i in (0..<8).reversed() { block.append(UInt8((UInt64(sample) >> (8 * UInt64(i))) & 0xFF)) }
            for i in (0..<8).reversed() { block.append(UInt8((UInt64(off) >> (8 * UInt64(i))) & 0xFF)) }
            block += [0x10, 0x00]
        }
        // STREAMINFO is at 4...41; it is not the last block (comments follow) in FFmpeg's files.
        #expect(bytes[4] & 0x80 == 0)
        bytes.insert(contentsOf: block, at: 42)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return points.count
    }

    /// After a seek to a random frame, reads give what a straight read gives from there, with a
    /// SEEKTABLE and without one.
    @Test(arguments: [false, true])
    func seeksSampleExactly(seekTable: Bool) throws {
        let dir = try TempDir("flac-seek")
        defer { dir.remove() }
        let path = dir.file("x.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:a=0.4:d=20", "-ac", "2", "-c:a", "flac", path])
        if seekTable { #expect(try addSeekTable(path, every: 10) > 5) }
        let d = try FLACTestDecoding.openNative(path)
        #expect(d.seekPoints.isEmpty != seekTable)
        let all = try FLACTestDecoding.decodeAll(d)
        let length = Int(d.length)
        #expect(all.count == length * 2)
        var rng = SystemRandomNumberGenerator()
        var targets = (0..<25).map { _ in Int.random(in: 0..<length, using: &rng) }
        targets += [0, 1, 4095, 4096, 4097, length - 1, length - 5000]
        var buf = [Float](repeating: 0, count: 3000 * 2)
        for t in targets {
            try d.seek(to: Int64(t))
            #expect(d.pos == Int64(t))
            let n = try buf.withUnsafeMutableBufferPointer { try d.readInterleaved(into: $0.baseAddress!, count: 3000) }
            #expect(n == min(3000, length - t))
            #expect(buf[0..<(2 * n)].elementsEqual(all[(2 * t)..<(2 * t + 2 * n)]) { $0.bitPattern == $1.bitPattern }, "seek to \(t)")
        }
        try d.seek(to: Int64(length))
        #expect(try buf.withUnsafeMutableBufferPointer { try d.readInterleaved(into: $0.baseAddress!, count: 10) } == 0)
    }

    /// The CRC-16 taken two bytes a step (eight a load) is the CRC-16 computed bit by bit, at
    /// every length (the tails of odd lengths and of lengths not a multiple of eight included),
    /// and so is the CRC-8.
    @Test func crcsAreTheBitwiseCRCs() {
        func bitwise16(_ b: [UInt8]) -> UInt16 {
            var c: UInt16 = 0
            for byte in b {
                c ^= UInt16(byte) << 8
                for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
            }
            return c
        }
        func bitwise8(_ b: [UInt8]) -> UInt8 {
            var c: UInt8 = 0
            for byte in b {
                c ^= byte
                for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
            }
            return c
        }
        var rng = SystemRandomNumberGenerator()
        for length in Array(0...40) + [255, 1000, 4097] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(FLACCRC.crc16(bytes, bytes.count) == bitwise16(bytes), "length \(length)")
            #expect(FLACCRC.crc8(bytes, bytes.count) == bitwise8(bytes), "length \(length)")
        }
        // FLAC's check value for "123456789".
        #expect(FLACCRC.crc16(Array("123456789".utf8), 9) == 0xFEE8)
    }

    /// A damaged frame (CRC mismatch) is reported and read as silence; the rest is intact.
    @Test func aCorruptFrameGivesAWarningAndSilence() throws {
        let dir = try TempDir("flac-corrupt")
        defer { dir.remove() }
        let path = dir.file("x.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:a=0.4:d=5", "-ac", "2", "-c:a", "flac", path])
        let good = try FLACTestDecoding.decodeAll(try FLACTestDecoding.openNative(path))
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let at = bytes.count / 2
        bytes[at] ^= 0x5A
        bytes[at + 1] ^= 0x21
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let d = try FLACTestDecoding.openNative(path)
        let damaged = try FLACTestDecoding.decodeAll(d)
        let warnings = d.takeWarnings()
        #expect(warnings.contains { if case .corruptPacket = $0 { true } else { false } }, "\(warnings)")
        #expect(damaged.count == good.count)
        let differing = zip(damaged, good).filter { $0.bitPattern != $1.bitPattern }.count
        #expect(differing > 0 && differing <= 2 * 2 * 4608, "\(differing) samples differ")
        // Through AudioFile: the warning comes out of takeWarnings.
        let f = try AudioFile(path: path)
        let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: AudioFrameCount(f.length))!
        try f.read(into: buf)
        #expect(Int64(buf.frameLength) == f.length)
        #expect(f.takeWarnings().contains { if case .corruptPacket = $0 { true } else { false } })
    }

    /// A file cut short opens with a truncation warning, its length where the last intact frame
    /// ends, and reads to there.
    /// Found by FuzzFLAC (600 s run, session 10): a frame numbered far past the stream's length
    /// moved the position beyond it, and the frame's placement went negative (a trap in
    /// `PendingFrames`). The input is kept in the fuzz corpus; it must read to its end and seek.
    @Test func aFrameNumberedPastTheEndIsNotACrash() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/FuzzFLAC/regression-frame-past-the-end.flac").path
        let decoder = try FLACTestDecoding.openNative(path)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * decoder.info.channels)
        defer { out.deallocate() }
        var total = 0
        while let n = try? decoder.readInterleaved(into: out, count: 4096), n > 0 { total += n }
        #expect(Int64(total) <= decoder.length)
        try? decoder.seek(to: decoder.length / 2)
        _ = try? decoder.readInterleaved(into: out, count: 4096)
    }

    @Test func aTruncatedFileGivesAWarning() throws {
        let dir = try TempDir("flac-truncated")
        defer { dir.remove() }
        let path = dir.file("x.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:a=0.4:d=5", "-ac", "2", "-c:a", "flac", path])
        let good = try FLACTestDecoding.decodeAll(try FLACTestDecoding.openNative(path))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try Data(bytes[0..<(bytes.count * 3 / 5)]).write(to: URL(fileURLWithPath: path))
        let f = try AudioFile(path: path)
        #expect(f.decoder is FLACDecoder)
        #expect(f.warnings.contains { if case .truncated = $0 { true } else { false } }, "\(f.warnings)")
        #expect(f.length > 0 && Int(f.length) < good.count / 2)
        let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: AudioFrameCount(f.length + 10))!
        try f.read(into: buf)
        #expect(Int64(buf.frameLength) == f.length)
        for i in 0..<Int(buf.frameLength) where buf.floatChannelData[0][i].bitPattern != good[2 * i].bitPattern {
            Issue.record("sample \(i) differs"); break
        }
        // FFmpeg's path finds the same end.
        let ffmpeg = try AudioFile(path: path, audioStream: nil, native: false)
        #expect(ffmpeg.length == f.length)
    }

    /// Bytes that are no FLAC stream, or a FLAC stream this decoder leaves to FFmpeg, open
    /// through FFmpeg as before.
    @Test func leavesToFFmpegWhatItDoesNotRead() throws {
        let dir = try TempDir("flac-fallback")
        defer { dir.remove() }
        let surround = dir.file("surround.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", Self.pink, "-af", "aformat=channel_layouts=5.1", "-c:a", "flac", surround])
        let s = try AudioFile(path: surround)
        #expect(s.decoder is FFmpegDecoder)
        #expect(s.processingFormat.channelCount == 6)
        let ogg = dir.file("x.ogg")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", Self.pink, "-c:a", "flac", ogg])
        #expect(try AudioFile(path: ogg).decoder is FFmpegDecoder)
    }

    /// A stream cut from another by copying frames (`-c copy` from 1.5 s) keeps the frame
    /// numbers: its first frame is position 0, as on FFmpeg's path; reads and seeks agree.
    @Test func aStreamCutFromAnotherStartsAtItsFirstFrame() throws {
        let dir = try TempDir("flac-cut")
        defer { dir.remove() }
        let whole = dir.file("whole.flac"), path = dir.file("cut.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:a=0.4:d=4", "-ac", "2", "-c:a", "flac", whole])
        try Fixtures.ffmpeg(["-ss", "1.5", "-i", whole, "-c", "copy", path])
        let native = try AudioFile(path: path)
        let ffmpeg = try AudioFile(path: path, audioStream: nil, native: false)
        #expect(native.decoder is FLACDecoder)
        #expect(native.length == ffmpeg.length && native.length > 0, "\(native.length) vs \(ffmpeg.length)")
        #expect(native.warnings == ffmpeg.warnings)
        for start in [Int64(0), native.length / 3] {
            try native.seek(toFrame: start)
            try ffmpeg.seek(toFrame: start)
            let n = Int(native.length - start)
            let a = AudioPCMBuffer(format: native.processingFormat, frameCapacity: AudioFrameCount(n + 100))!
            let b = AudioPCMBuffer(format: ffmpeg.processingFormat, frameCapacity: AudioFrameCount(n + 100))!
            try native.read(into: a)
            try ffmpeg.read(into: b)
            #expect(a.frameLength == b.frameLength && Int(a.frameLength) == n)
            for c in 0..<2 { #expect(memcmp(a.floatChannelData[c], b.floatChannelData[c], n * 4) == 0, "from \(start)") }
        }
    }
}

