// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmExport
import TonearmTestSupport

/// A FLAC file cut short as a full disk leaves it (FFmpeg's trailer has already written the
/// count of every sample it was given into STREAMINFO; the last frame is cut): the repair keeps
/// the frames that decode whole, cuts the file after the last, and makes STREAMINFO say their
/// count (MD5 zeroed) — FFmpeg then decodes exactly that many samples, without an error. And the
/// pure parts alone: STREAMINFO recognised only where it must be; the count written into its
/// 36 bits, the rate, channels and bits kept.
@Suite(.offThePool) struct FLACRepairTests {
    @Test func aFileCutShortSaysWhatItHoldsAndDecodesWithoutAnError() throws {
        let dir = try TempDir("flac-repair")
        defer { dir.remove() }
        let path = dir.file("cut.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=5", "-ac", "2", "-c:a", "flac", path])
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        try whole.prefix(51_200).write(to: URL(fileURLWithPath: path))
        let before = try run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(before.stderr.contains("Invalid data"), "the cut frame fails before the repair: \(before.stderr)")
        let frames = try #require(try FLACRepair.repair(path: path))
        #expect(frames > 48_000 && frames < 240_000 && frames % 4_608 == 0, "\(frames) frames: whole 4608-sample frames")
        let cut = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(cut.count < 51_200 && cut.count > 10_000)
        let head = [UInt8](cut.prefix(42))
        var total: UInt64 = 0
        for b in head[18..<26] { total = total << 8 | UInt64(b) }
        #expect(total & ((1 << 36) - 1) == UInt64(frames), "STREAMINFO says the frames held")
        #expect(head[26..<42].allSatisfy { $0 == 0 }, "the MD5 no longer matches: zeroed")
        let raw = dir.file("decoded.raw")
        let after = try run("ffmpeg", ["-v", "error", "-i", path, "-f", "s16le", "-ac", "1", raw])
        #expect(after.status == 0 && after.stderr.isEmpty, "\(after.stderr)")
        let decoded = try #require(try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int)
        #expect(Int64(decoded / 2) == frames, "FFmpeg decodes exactly the frames said")
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(frames)")
    }

    @Test func aFileThatIsNotFLACIsLeftAsItIs() throws {
        let dir = try TempDir("flac-repair-not")
        defer { dir.remove() }
        let path = dir.file("not.flac")
        let bytes = Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(try FLACRepair.repair(path: path) == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func theStreamInfoFieldKeepsTheFormatAndTakesTheCount() {
        var head: [UInt8] = [0x66, 0x4C, 0x61, 0x43, 0x80, 0, 0, 34] + [UInt8](repeating: 0, count: 34)
        #expect(FLACStreamInfo.hasStreamInfo(head: head), "a last-block flag is allowed")
        head[7] = 33
        #expect(!FLACStreamInfo.hasStreamInfo(head: head), "STREAMINFO is 34 bytes")
        head[7] = 34; head[4] = 4
        #expect(!FLACStreamInfo.hasStreamInfo(head: head), "the first block must be STREAMINFO")
        #expect(!FLACStreamInfo.hasStreamInfo(head: Array(head.prefix(41))))
        // 48 kHz, 2 channels, 16 bits, 240000 samples: 0x0BB8_02F0_0003_A980.
        let field: [UInt8] = [0x0B, 0xB8, 0x02, 0xF0, 0x00, 0x03, 0xA9, 0x80]
        #expect(FLACStreamInfo.field(field, samples: 115_200) == [0x0B, 0xB8, 0x02, 0xF0, 0x00, 0x01, 0xC2, 0x00])
        #expect(FLACStreamInfo.field(field, samples: 1 << 36) == [0x0B, 0xB8, 0x02, 0xF0, 0x00, 0x00, 0x00, 0x00], "too many: unknown")
        #expect(FLACStreamInfo.field(field, samples: -1) == [0x0B, 0xB8, 0x02, 0xF0, 0x00, 0x00, 0x00, 0x00])
    }
}
