// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// What the encoders at hand (FFmpeg's, libFLAC through sox) never write, written here bit by
/// bit: variable block sizes (sample numbers in the headers), escaped residual partitions, Rice2
/// parameters, wasted bits, LPC and FIXED subframes; decoded by ``FLACDecoder`` to the samples
/// the frames were made from, and to what FFmpeg decodes.
@Suite(.offThePool) struct FLACHandMadeTests {
    struct BitWriter {
        var bytes: [UInt8] = []
        var bits = 0
        mutating func put(_ value: Int64, _ n: Int) {
            for i in stride(from: n - 1, through: 0, by: -1) {
                if bits % 8 == 0 { bytes.append(0) }
                if (value >> Int64(i)) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (bits % 8)) }
                bits += 1
            }
        }
        mutating func align() { while bits % 8 != 0 { put(0, 1) } }
        mutating func rice(_ v: Int64, k: Int) {
            let u = v >= 0 ? 2 * v : -2 * v - 1
            for _ in 0..<(u >> Int64(k)) { put(0, 1) }
            put(1, 1)
            put(u & ((1 << Int64(k)) - 1), k)
        }
    }

    /// Residual with partition order 2: partition 1 escaped (`escapeBits` per value), the others
    /// Rice with parameter `k`, method 1 (Rice2, 5-bit parameters) when `rice2`.
    private func residual(_ w: inout BitWriter, _ res: [Int64], blockSize: Int, order: Int, k: Int, rice2: Bool) {
        w.put(rice2 ? 1 : 0, 2)
        w.put(2, 4)
        let per = blockSize / 4
        var i = 0
        for part in 0..<4 {
            let n = per - (part == 0 ? order : 0)
            let values = res[i..<(i + n)]
            i += n
            if part == 1 {
                let need = values.map { (v: Int64) -> Int in 65 - (v >= 0 ? v : ~v).leadingZeroBitCount }.max() ?? 1
                w.put(rice2 ? 31 : 15, rice2 ? 5 : 4)
                w.put(Int64(need), 5)
                for v in values { w.put(v & ((1 << Int64(need)) - 1), need) }
            } else {
                w.put(Int64(k), rice2 ? 5 : 4)
                for v in values { w.rice(v, k: k) }
            }
        }
    }

    private func utf8Number(_ n: Int64) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var count = 2
        while count < 7 && n >= Int64(1) << (5 * count + 1) { count += 1 }
        var out = [UInt8](repeating: 0, count: count)
        var v = n
        for i in stride(from: count - 1, to: 0, by: -1) { out[i] = UInt8(0x80 | (v & 0x3F)); v >>= 6 }
        out[0] = UInt8((0xFF00 >> count) & 0xFF) | UInt8(v)
        return out
    }

    @Test func decodesVariableBlocksEscapesRice2AndWastedBits() throws {
        let blockSizes = [1152, 300, 4096, 20, 2000, 1024]
        let total = blockSizes.reduce(0, +)
        // The samples: a tone with noise, 16-bit; channel 1 a multiple of 4 (2 wasted bits).
        var rng = SystemRandomNumberGenerator()
        let left: [Int64] = (0..<total).map { (i: Int) -> Int64 in
            Int64(12000 * sin(Double(i) * 0.031)) + Int64.random(in: -300...300, using: &rng)
        }
        let right: [Int64] = (0..<total).map { (i: Int) -> Int64 in
            4 * (Int64(5000 * sin(Double(i) * 0.007)) + Int64.random(in: -40...40, using: &rng))
        }
        let coefficients: [Int64] = [1900, -900, 40]  // precision 13, shift 10
        var file: [UInt8] = Array("fLaC".utf8)
        var info = BitWriter()
        info.put(1 << 7, 8); info.put(34, 24)  // last block: STREAMINFO
        info.put(16, 16); info.put(4096, 16); info.put(0, 24); info.put(0, 24)
        info.put(44100, 20); info.put(1, 3); info.put(15, 5); info.put(Int64(total), 36)
        info.put(0, 64); info.put(0, 64)  // no MD5
        file += info.bytes
        var start = 0
        for (f, bs) in blockSizes.enumerated() {
            var w = BitWriter()
            w.put(0xFFF9, 16)  // sync, variable block size
            w.put(bs <= 256 ? 6 : 7, 4); w.put(9, 4)  // explicit block size; 44.1 kHz
            w.put(1, 4); w.put(4, 3); w.put(0, 1)     // two independent channels, 16 bits
            for b in utf8Number(Int64(start)) { w.put(Int64(b), 8) }
            if bs <= 256 { w.put(Int64(bs - 1), 8) } else { w.put(Int64(bs - 1), 16) }
            w.put(Int64(FLACCRC.crc8(w.bytes, w.bytes.count)), 8)
            // Channel 0: FIXED order 2 (odd frames: LPC order 3), Rice (odd frames: Rice2).
            let l = Array(left[start..<(start + bs)])
            if f % 2 == 0 {
                w.put(0, 1); w.put(8 + 2, 6); w.put(0, 1)
                for i in 0..<2 { w.put(l[i] & 0xFFFF, 16) }
                let res = (2..<bs).map { (i: Int) -> Int64 in
                    let predicted: Int64 = 2 * l[i - 1] - l[i - 2]
                    return l[i] - predicted
                }
                residual(&w, res, blockSize: bs, order: 2, k: 9, rice2: false)
            } else {
                w.put(0, 1); w.put(32 + 2, 6); w.put(0, 1)
                for i in 0..<3 { w.put(l[i] & 0xFFFF, 16) }
                w.put(12, 4); w.put(10, 5)
                for c in coefficients { w.put(c & 0x1FFF, 13) }
                let res = (3..<bs).map { (i: Int) -> Int64 in
                    var sum: Int64 = coefficients[0] * l[i - 1]
                    sum += coefficients[1] * l[i - 2]
                    sum += coefficients[2] * l[i - 3]
                    return l[i] - (sum >> 10)
                }
                residual(&w, res, blockSize: bs, order: 3, k: 16, rice2: true)
            }
            // Channel 1: 2 wasted bits, FIXED order 1, 14-bit values.
            let r = right[start..<(start + bs)].map { $0 >> 2 }
            w.put(0, 1); w.put(8 + 1, 6); w.put(1, 1); w.put(1, 2)  // wasted: unary "01" = 2
            w.put(r[0] & 0x3FFF, 14)
            residual(&w, (1..<bs).map { (i: Int) -> Int64 in r[i] - r[i - 1] }, blockSize: bs, order: 1, k: 4, rice2: false)
            w.align()
            w.put(Int64(FLACCRC.crc16(w.bytes, w.bytes.count)), 16)
            file += w.bytes
            start += bs
        }
        let dir = try TempDir("flac-handmade")
        defer { dir.remove() }
        let path = dir.file("x.flac")
        try Data(file).write(to: URL(fileURLWithPath: path))

        let fd = open(path, O_RDONLY | O_CLOEXEC)
        let d = try #require(FLACDecoder(name: path, fd: fd, size: file.count, ownsFD: true))
        #expect(d.length == Int64(total))
        var ours = [Float](repeating: 0, count: total * 2)
        let n = try ours.withUnsafeMutableBufferPointer { try d.readInterleaved(into: $0.baseAddress!, count: total) }
        #expect(n == total)
        #expect(d.takeWarnings().isEmpty)
        let made: [Float] = (0..<total).flatMap { (i: Int) -> [Float] in [Float(left[i]) / 32768, Float(right[i]) / 32768] }
        #expect(ours == made)
        let raw = dir.file("ref.raw")
        try Fixtures.ffmpeg(["-i", path, "-f", "s16le", "-c:a", "pcm_s16le", raw])
        let reference = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { b in
            b.bindMemory(to: Int16.self).map { Float(Int16(littleEndian: $0)) / 32768 }
        }
        #expect(ours == reference)
        // Seeking in a variable-block-size stream.
        for t in [0, 1151, 1152, 1453, 5547, 5548, total - 1] {
            try d.seek(to: Int64(t))
            var two = [Float](repeating: 0, count: 2)
            #expect(try two.withUnsafeMutableBufferPointer { try d.readInterleaved(into: $0.baseAddress!, count: 1) } == 1)
            #expect(two == [made[2 * t], made[2 * t + 1]], "seek to \(t)")
        }
    }
}
