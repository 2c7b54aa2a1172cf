// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmExport
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
                      ("flac", "flac", 24)])
    func theFileHoldsExactlyTheFramesWritten(ext: String, encoder: String, bits: Int) throws {
        let dir = try TempDir("rec-writer")
        defer { dir.remove() }
        let path = dir.file("w.\(ext)")
        let w = try RecordingFileWriter(path: path, fileType: ext == "flac" ? .flac : .wav, encoder: encoder, bits: bits,
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
}
