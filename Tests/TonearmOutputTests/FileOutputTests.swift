// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
import TonearmTestSupport

struct FileOutputTests {
    @Test func theFileOutputLosesNothingToAFlush() async throws {
        let dir = try TempDir("file-flush")
        defer { dir.remove() }
        let out = FileOutput(path: dir.file("out.wav"))
        try out.open(format: .interleavedFloat(sampleRate: 48_000, channels: 2))
        let source = NoiseSource(channels: 2, totalFrames: 48_000)
        let ran = Atomic<Bool>(false)
        out.flush { ran.store(true, ordering: .relaxed) }  // before start: replace only
        let replaced = ran.load(ordering: .relaxed)
        #expect(replaced)
        let drained = EventRecorder(out.events)
        try out.start(source: source)
        out.flush()
        #expect(await drained.wait(timeout: 10) { $0 == .drained })
        out.close()
        #expect(out.framesPlayed == 48_000)
        let wav = try readWAV(dir.file("out.wav"))
        #expect(wav.frameCount == 48_000)
        let expected = NoiseSource.expected(channels: 2, totalFrames: 48_000)
        #expect(wav.channels[0].enumerated().allSatisfy { $0.element == expected[$0.offset * 2] })
    }

    @Test func float32FileHoldsTheSourceSamplesExactly() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("out.wav")
        let out = FileOutput(path: path, blockFrames: 1_000)
        try out.open(format: .interleavedFloat(sampleRate: 44_100, channels: 3))
        let events = EventRecorder(out.events)
        let total = 10_007
        let source = NoiseSource(channels: 3, totalFrames: total)
        try out.start(source: source)
        #expect(await events.wait(timeout: 20) { $0 == .drained })
        #expect(out.framesPlayed == Int64(total))
        out.close()
        #expect(source.realtimeCalls.load(ordering: .relaxed) == 0)
        #expect(source.offlineCalls.load(ordering: .relaxed) > 0)

        let wav = try readWAV(path)
        #expect(wav.formatTag == 3 && wav.bitsPerSample == 32)
        #expect(wav.sampleRate == 44_100 && wav.channelCount == 3)
        #expect(wav.frameCount == total)
        let expected = NoiseSource.expected(channels: 3, totalFrames: total)
        var mismatches = 0
        for i in 0..<total { for c in 0..<3 where wav.channels[c][i].bitPattern != expected[i * 3 + c].bitPattern { mismatches += 1 } }
        #expect(mismatches == 0)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(size == 80 + total * 3 * 4, "three channels: a WAVE_FORMAT_EXTENSIBLE header")
    }

    @Test func int16FileIsRoundedPCM() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("out16.wav")
        let out = FileOutput(path: path, sampleFormat: .int16)
        try out.open(format: .interleavedFloat(sampleRate: 48_000, channels: 2))
        let events = EventRecorder(out.events)
        try out.start(source: SineSource(frequency: 997, amplitude: 0.5, seconds: 0.5))
        #expect(await events.wait(timeout: 20) { $0 == .drained })
        out.close()
        let wav = try readWAV(path)
        #expect(wav.formatTag == 1 && wav.bitsPerSample == 16)
        #expect(wav.frameCount == 24_000)
        let expected = sineWave(frequency: 997, amplitude: 0.5, seconds: 0.5, sampleRate: 48_000)
        var worst: Float = 0
        for i in 0..<expected.count { worst = max(worst, abs(wav.channels[1][i] - expected[i])) }
        #expect(worst < 2.0 / 32_767, "largest error \(worst)")
    }

    @Test func unwritableFolderFailsOpenWithWriteFailed() throws {
        let path = "/nonexistent-tonearm-folder/out.wav"
        #expect(throws: TonearmError.writeFailed(path: path, reason: "No such file or directory")) {
            try FileOutput(path: path).open(format: .interleavedFloat(sampleRate: 48_000, channels: 2))
        }
    }

    @Test func fullDiskReportsDeviceLostNamingThePath() async throws {
        // /dev/full accepts open() and fails every write with ENOSPC; it is not a regular file,
        // so the driver must not remove it.
        let out = FileOutput(path: "/dev/full")
        try out.open(format: .interleavedFloat(sampleRate: 48_000, channels: 2))
        let events = EventRecorder(out.events)
        try out.start(source: SineSource(seconds: 1))
        #expect(await events.wait {
            if case .deviceLost(let reason) = $0 { reason.contains("/dev/full") && reason.contains("space") } else { false }
        })
        out.close()
        #expect(FileManager.default.fileExists(atPath: "/dev/full"))
        #expect(!events.events.contains(.drained))
    }

    @Test func stopLeavesAValidFile() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("stopped.wav")
        let out = FileOutput(path: path, blockFrames: 256)
        try out.open(format: .interleavedFloat(sampleRate: 48_000, channels: 2))
        // Never ends; holds the render that passes 10 000 frames until released, so the writer
        // cannot race on to the 4 GiB WAV limit while this test waits for a turn on a busy machine.
        let source = SineSource(holdAfterFrames: 10_001)
        try out.start(source: source)
        // The writer renders a block only after writing the one before, so once the source has
        // rendered more than 10 000 frames, all but the last block of them are in the file.
        #expect(await source.waitFor(renderedFramesAtLeast: 10_001))
        out.pause()      // the held block is written, then the writer waits...
        source.release()
        out.stop()       // ...and stops without rendering more.
        let written = out.framesPlayed
        out.close()
        #expect(written > 10_000 - 256 && written <= 10_240, "wrote \(written) frames")
        let wav = try readWAV(path)
        #expect(Int64(wav.frameCount) == written)
    }
}
