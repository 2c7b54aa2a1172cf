// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmCore

/// A WAV file whose writing stopped short gets the sizes of what it holds, cut to whole frames;
/// anything that is not a WAV file it can read is left alone.
@Suite struct WAVRepairTests {
    /// A WAV head as FFmpeg writes it before the data (sizes left at 0), with `extra` chunks.
    static func head(tag: UInt16, channels: UInt16, bits: UInt16, extra: [UInt8] = []) -> [UInt8] {
        func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le16(_ v: UInt16) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        let align = channels * bits / 8
        let fmt = le16(tag) + le16(channels) + le32(48_000) + le32(48_000 * UInt32(align)) + le16(align) + le16(bits)
        return Array("RIFF".utf8) + le32(0) + Array("WAVE".utf8) + Array("fmt ".utf8) + le32(UInt32(fmt.count)) + fmt
            + extra + Array("data".utf8) + le32(0)
    }

    @Test func sizesComeFromTheBytesInTheFileCutToWholeFrames() throws {
        let list: [UInt8] = Array("LIST".utf8) + [10, 0, 0, 0] + Array("INFOISFT".utf8) + [2, 0]
        let h = Self.head(tag: 1, channels: 2, bits: 16, extra: list)
        // 1,001 frames and 3 bytes of the next one on disk.
        let plan = try #require(WAVRepair.plan(head: h, fileLength: h.count + 4_004 + 3))
        #expect(plan.frames == 1_001 && plan.dataSize == 4_004 && plan.length == h.count + 4_004)
        #expect(plan.riffSize == UInt32(plan.length - 8) && plan.dataSizeOffset == h.count - 4 && plan.factOffset == nil)

        let fact: [UInt8] = Array("fact".utf8) + [4, 0, 0, 0] + [0, 0, 0, 0]
        let f = Self.head(tag: 3, channels: 2, bits: 32, extra: fact)
        let floats = try #require(WAVRepair.plan(head: f, fileLength: f.count + 8 * 10 + 7))
        #expect(floats.frames == 10 && floats.factOffset == 44 && floats.length == f.count + 80)

        // 8-bit mono: an odd data size keeps its pad byte when the file has one, else loses a frame.
        let m = Self.head(tag: 1, channels: 1, bits: 8)
        #expect(WAVRepair.plan(head: m, fileLength: m.count + 9)?.frames == 8)
        #expect(WAVRepair.plan(head: m, fileLength: m.count + 9)?.length == m.count + 8)
        let t = Self.head(tag: 1, channels: 1, bits: 24)
        #expect(WAVRepair.plan(head: t, fileLength: t.count + 10)?.frames == 3, "9 bytes of frames and a pad byte")
        #expect(WAVRepair.plan(head: t, fileLength: t.count + 10)?.length == t.count + 10)
        #expect(WAVRepair.plan(head: t, fileLength: t.count + 9)?.frames == 2, "no room for the pad byte: a frame less")
        #expect(WAVRepair.plan(head: m, fileLength: m.count)?.frames == 0, "a header alone: an empty recording")
    }

    @Test func whatIsNotAReadableWAVIsLeftAlone() {
        let h = Self.head(tag: 1, channels: 2, bits: 16)
        #expect(WAVRepair.plan(head: Array("RIFX".utf8) + h.dropFirst(4), fileLength: 1_000) == nil)
        #expect(WAVRepair.plan(head: Array(h.prefix(20)), fileLength: 1_000) == nil, "cut inside the fmt chunk")
        #expect(WAVRepair.plan(head: h, fileLength: h.count - 2) == nil, "the data chunk's header not in the file")
        var noFmt = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8)
        noFmt += Array("data".utf8) + [0, 0, 0, 0]
        #expect(WAVRepair.plan(head: noFmt, fileLength: noFmt.count + 100) == nil, "data before fmt")
        var zeroAlign = h
        zeroAlign[32] = 0
        zeroAlign[33] = 0
        #expect(WAVRepair.plan(head: zeroAlign, fileLength: h.count + 100) == nil)
        #expect(WAVRepair.plan(head: [], fileLength: 0) == nil)
    }

    /// On a file: the header rewritten in place and the partial frame cut off.
    @Test func aFileIsRepairedInPlace() throws {
        let path = NSTemporaryDirectory() + "wav-repair-\(getpid()).wav"
        defer { unlink(path) }
        let h = Self.head(tag: 1, channels: 2, bits: 16)
        try Data(h + [UInt8](repeating: 7, count: 4 * 100 + 2)).write(to: URL(fileURLWithPath: path))
        #expect(try WAVRepair.repair(path: path) == 100)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.count == h.count + 400)
        #expect(bytes[4..<8].elementsEqual([UInt8(truncatingIfNeeded: bytes.count - 8), UInt8((bytes.count - 8) >> 8), 0, 0]))
        #expect(bytes[(h.count - 4)..<h.count].elementsEqual([144, 1, 0, 0]), "400 bytes of data")
        #expect(try WAVRepair.repair(path: path) == 100, "again: nothing changes")
        #expect(throws: TonearmError.self) { try WAVRepair.repair(path: path + ".missing") }
    }
}
