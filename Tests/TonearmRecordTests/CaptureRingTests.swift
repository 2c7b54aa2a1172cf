// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmExport
import TonearmRender
import TonearmTestSupport
@testable import TonearmRecord

/// The ring between the read callback and the writer, and the file writer, offline.
@Suite struct CaptureRingTests {
    /// Frames keep their order across the wrap; a write that does not fit takes what fits; a
    /// hole (nil) is written as silence.
    @Test func framesWrapInOrderAndHolesAreSilence() {
        let ring = CaptureRing(capacityFrames: 5, channels: 3)
        var input = (0..<12).map(Float.init)  // 4 frames
        var out = [Float](repeating: -1, count: 15)
        #expect(ring.write(&input, frames: 4) == 4)
        #expect(ring.read(into: &out, maxFrames: 3) == 3)
        #expect(Array(out[0..<9]) == (0..<9).map(Float.init))
        // 1 frame left in the ring; 4 fit, past the end of the storage.
        // 5 frames from an unaligned address (libpulse's memory blocks need not be aligned).
        let more = [UInt8(0)] + (100..<115).map(Float.init).withUnsafeBytes { Array($0) }
        #expect(more.withUnsafeBytes { ring.write($0.baseAddress! + 1, frames: 5) } == 4)
        #expect(ring.availableFrames == 5)
        #expect(ring.read(into: &out, maxFrames: 10) == 5)
        #expect(out == [9, 10, 11] + (100..<112).map(Float.init))
        #expect(ring.write(nil, frames: 2) == 2)
        #expect(ring.read(into: &out, maxFrames: 10) == 2)
        #expect(Array(out[0..<6]) == [0, 0, 0, 0, 0, 0])
    }

    /// The file writer's header states exactly the frames given, for each format the recorder
    /// writes (FFmpeg reads the length back), and the samples are those given.
    @Test(arguments: [("wav", "pcm_s16le", 16), ("wav", "pcm_s24le", 24), ("wav", "pcm_f32le", 32), ("flac", "flac", 16),
                      ("flac", "flac", 24), ("m4a", "alac", 16), ("m4a", "alac", 24), ("caf", "alac", 24), ("caf", "pcm_s24le", 24)])
    func theFileHoldsExactlyTheFramesWritten(ext: String, encoder: String, bits: Int) throws {
        let dir = try TempDir("rec-writer")
        defer { dir.remove() }
        let path = dir.file("w.\(ext)")
        let w = try RecordingFileWriter(path: path, fileType: try #require(ExportFileType(pathExtension: ext)), encoder: encoder, bits: bits,
                                        bitRate: nil, sampleRate: 44_100, channels: 2)
        #expect(FileManager.default.fileExists(atPath: path))
        let frames = 10_007
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0..<frames {
            samples[2 * i] = 0.5 * Float(sin(Double(i) * 0.05))
            samples[2 * i + 1] = -samples[2 * i]
        }
        try w.write(samples, frames: 6_000)
        try samples.withUnsafeBufferPointer { try w.write($0.baseAddress! + 12_000, frames: frames - 6_000) }
        try w.finish()
        let decoded = try Fixtures.decodeWithFFmpeg(path)
        #expect(decoded.count == frames * 2)
        let worst = zip(decoded, samples).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < (bits == 16 ? 1e-4 : 1e-6), "largest difference \(worst)")
    }

    /// AAC and Opus, written as a recording comes (chunks of uneven sizes): the file plays for the
    /// length written — to within the encoder's priming and last packet, which the container
    /// may not trim — and holds the tone at its level; the bit rate asked reaches the encoder (a
    /// file at twice the rate is about twice the size: Opus's VBR spends more than asked on a
    /// pure tone, as FFmpeg's own command does).
    @Test(arguments: [("m4a", "aac"), ("aac", "aac"), ("opus", "libopus"), ("ogg", "libopus")])
    func aLossyFileHoldsTheToneForItsLength(ext: String, encoder: String) throws {
        let dir = try TempDir("rec-writer-lossy")
        defer { dir.remove() }
        let rate = 48_000
        let frames = 48_017
        let tone = sineWave(frequency: 1_000, amplitude: 0.5, seconds: Double(frames) / Double(rate), sampleRate: Double(rate))
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0..<frames { (samples[2 * i], samples[2 * i + 1]) = (tone[i], tone[i]) }
        var sizes: [Int] = []
        for bitRate in [64_000, 128_000] {
            let path = dir.file("w\(bitRate).\(ext)")
            let w = try RecordingFileWriter(path: path, fileType: try #require(ExportFileType(pathExtension: ext)), encoder: encoder,
                                            bits: nil, bitRate: bitRate, sampleRate: rate, channels: 2)
            var done = 0
            for size in [1_000, 7, 4_096, 10_000] {
                try samples.withUnsafeBufferPointer { try w.write($0.baseAddress! + done * 2, frames: size) }
                done += size
            }
            try samples.withUnsafeBufferPointer { try w.write($0.baseAddress! + done * 2, frames: frames - done) }
            try w.finish()
            #expect(w.framesWritten == Int64(frames))
            sizes.append(try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
            guard bitRate == 128_000 else { continue }
            let decoded = try Fixtures.decodeWithFFmpeg(path)
            let decodedFrames = decoded.count / 2
            #expect(abs(decodedFrames - frames) <= 2_048, "\(decodedFrames) frames decoded for \(frames) written")
            let left = stride(from: 0, to: decoded.count, by: 2).map { decoded[$0] }
            let middle = left[4_800..<(min(left.count, frames) - 4_800)]
            let level = 20 * log10(rms(middle) / rms(tone[4_800..<(frames - 4_800)]))
            #expect(abs(level) < 0.5, "the tone's level changed by \(level) dB")
            let atTone = goertzelPower(middle, frequency: 1_000, sampleRate: Double(rate))
            let beside = goertzelPower(middle, frequency: 1_500, sampleRate: Double(rate))
            #expect(atTone > 1_000 * beside, "the tone is the signal: \(atTone) at 1 kHz, \(beside) at 1.5 kHz")
        }
        let ratio = Double(sizes[1]) / Double(sizes[0])
        #expect(ratio > 1.4 && ratio < 2.6, "\(sizes[1]) bytes at 128 kb/s, \(sizes[0]) at 64 kb/s")
    }

    /// record(atTime:)'s gate: of a read's frames (the last captured now, the others a frame
    /// period apart before it), those captured at or after the start time are kept.
    @Test func theStartGateKeepsWhatWasCapturedFromItsTimeOn() {
        let rate = 48_000
        let second: UInt64 = 1_000_000_000
        func keep(_ frames: Int, nowAfterStart: Double) -> Int {
            let start = 10 * second
            let now = UInt64(Int64(start) + Int64((nowAfterStart * 1e9).rounded()))
            return PulseRecordStream.framesCaptured(since: start, of: frames, now: now, rate: rate)
        }
        #expect(keep(960, nowAfterStart: -0.001) == 0, "all captured before the start")
        #expect(keep(960, nowAfterStart: 0) == 1, "only the last frame, captured at the start")
        #expect(keep(960, nowAfterStart: 0.01) == 481, "the last 10 ms and the frame at the start")
        #expect(keep(960, nowAfterStart: 0.0199) == 956)
        #expect(keep(960, nowAfterStart: 0.02) == 960, "the start at or before the read's first frame")
        #expect(keep(96_000, nowAfterStart: 1.6) == 76_801, "a 2 s block read 1.6 s after the start")
        #expect(PulseRecordStream.framesCaptured(since: 5, of: 100, now: 4, rate: rate) == 0)
    }
}
