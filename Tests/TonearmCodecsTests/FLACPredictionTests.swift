// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// ``FLACPrediction``'s loops, specialised by order and by sum width, against FFmpeg's decoding
/// of the same files: every LPC order 1–32 with 32-bit and with 64-bit sums, every FIXED order
/// 0–4, at 8, 16 and 24 bits, mono and all four stereo modes. The decoder's census says which
/// loops a file really reached, so a test cannot pass on subframes of another kind.
@Suite(.offThePool) struct FLACPredictionTests {
    /// Decodes `path` and compares it with FFmpeg's decode, bit for bit; returns the census.
    private func decodeAndCompare(_ path: String, dir: TempDir, _ what: String) throws -> FLACDecoder.Census {
        let reference = try FLACTestDecoding.ffmpegDecode(path, dir: dir)
        let d = try FLACTestDecoding.openNative(path)
        let ours = try FLACTestDecoding.decodeAll(d)
        #expect(!reference.isEmpty)
        #expect(ours.count == reference.count && ours.elementsEqual(reference) { $0.bitPattern == $1.bitPattern },
                "\(what): first difference \(FLACTestDecoding.firstDifference(ours, reference))")
        #expect(d.takeWarnings().isEmpty, "\(what)")
        return d.census
    }

    static let modes = ["indep", "left_side", "right_side", "mid_side"]
    /// The channel assignment codes of those modes in frame headers.
    static let modeCodes: [String: Int] = ["indep": 1, "left_side": 8, "right_side": 9, "mid_side": 10]
    static let pink = "anoisesrc=color=pink:a=0.5:d=0.5:r=44100"

    /// ⌊log₂ n⌋.
    private static func log2(_ n: Int) -> Int { Int.bitWidth - 1 - n.leadingZeroBitCount }

    /// FFmpeg's encoder forced to LPC order `order`: 16-bit stereo with 15-bit coefficients
    /// (64-bit sums from order 2 on), 16-bit stereo with the most precise coefficients whose
    /// sums still fit 32 bits in the side channel (the boundary), and 24-bit mono (64-bit sums).
    @Test(arguments: 1...32)
    func everyLPCOrderDecodesAsFFmpegDoes(order: Int) throws {
        let dir = try TempDir("flac-lpc-\(order)")
        defer { dir.remove() }
        let forced = ["-lpc_type", "levinson", "-min_prediction_order", "\(order)", "-max_prediction_order", "\(order)",
                      "-frame_size", "1152"]
        let wideMode = Self.modes[order % 4], narrowMode = Self.modes[(order + 1) % 4]
        let narrowPrecision = 32 - 17 - Self.log2(order)
        let files: [(String, [String], String)] = [
            ("wide", ["-ac", "2", "-sample_fmt", "s16", "-ch_mode", wideMode, "-lpc_coeff_precision", "15"], wideMode),
            ("narrow", ["-ac", "2", "-sample_fmt", "s16", "-ch_mode", narrowMode, "-lpc_coeff_precision", "\(narrowPrecision)"], narrowMode),
            ("24-bit", ["-ac", "1", "-sample_fmt", "s32", "-lpc_coeff_precision", "15"], "mono"),
        ]
        var census = FLACDecoder.Census()
        for (name, args, mode) in files {
            let path = dir.file("\(name).flac")
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", Self.pink] + args + forced + ["-c:a", "flac", path])
            let c = try decodeAndCompare(path, dir: dir, "order \(order), \(name)")
            if let code = Self.modeCodes[mode] { #expect(c.channelAssignments & (1 << code) != 0, "\(name): \(mode) used") }
            census.add(c)
        }
        // The file reached this order's loop with 32-bit and with 64-bit sums.
        #expect(census.lpcNarrow & (1 << order) != 0, "order \(order) with 32-bit sums: \(census)")
        #expect(census.lpcWide & (1 << order) != 0, "order \(order) with 64-bit sums: \(census)")
    }

    /// FFmpeg's encoder forced to FIXED order `order`, 16-bit (each stereo mode) and 24-bit.
    /// (Without `-sample_fmt s16`, FFmpeg makes 24-bit files of `lavfi`'s float sources.)
    @Test(arguments: 0...4)
    func everyFixedOrderDecodesAsFFmpegDoes(order: Int) throws {
        let dir = try TempDir("flac-fixed-\(order)")
        defer { dir.remove() }
        let forced = ["-lpc_type", "fixed", "-min_prediction_order", "\(order)", "-max_prediction_order", "\(order)"]
        var census = FLACDecoder.Census()
        for (i, mode) in Self.modes.enumerated() {
            let path = dir.file("\(i).flac")
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", Self.pink, "-ac", "2", "-sample_fmt", "s16", "-ch_mode", mode] + forced
                                + ["-c:a", "flac", path])
            census.add(try decodeAndCompare(path, dir: dir, "fixed \(order), \(mode)"))
        }
        let path = dir.file("24.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", Self.pink, "-ac", "1", "-sample_fmt", "s32"] + forced + ["-c:a", "flac", path])
        census.add(try decodeAndCompare(path, dir: dir, "fixed \(order), 24-bit"))
        #expect(census.fixed & (1 << order) != 0, "\(census)")
        #expect(census.channelAssignments & 0b111_0000_0010 == 0b111_0000_0010, "\(census)")
    }

    // MARK: Hand-made frames at the limits of the sums

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
    }

    /// The subframe's kind: FIXED of an order, or LPC of an order with coefficients of a precision.
    enum Predictor {
        case fixed(Int)
        case lpc(order: Int, precision: Int, extreme: Bool)
    }

    /// One subframe of `values` (each fits `bits` bits): the predictor, its residual escaped
    /// (verbatim, in as many bits as the largest needs).
    private static func subframe(_ w: inout BitWriter, _ values: [Int64], bits: Int, _ p: Predictor, rng: inout some RandomNumberGenerator) {
        let n = values.count
        var predicted = [Int64](repeating: 0, count: n)
        let order: Int
        switch p {
        case .fixed(let o):
            order = o
            w.put(0, 1); w.put(Int64(8 + o), 6); w.put(0, 1)
            for i in o..<n {
                let s = values
                switch o {
                case 0: predicted[i] = 0
                case 1: predicted[i] = s[i - 1]
                case 2: predicted[i] = 2 * s[i - 1] - s[i - 2]
                case 3: predicted[i] = 3 * s[i - 1] - 3 * s[i - 2] + s[i - 3]
                default: predicted[i] = 4 * s[i - 1] - 6 * s[i - 2] + 4 * s[i - 3] - s[i - 4]
                }
            }
            for i in 0..<o { w.put(values[i] & ((1 << Int64(bits)) - 1), bits) }
        case .lpc(let o, let precision, let extreme):
            order = o
            let shift = precision - 1
            // Extreme: every coefficient the most negative, so that a run of the most negative
            // samples makes the largest sum the precision allows.
            let low = -(Int64(1) << Int64(precision - 1)), high = (Int64(1) << Int64(precision - 1)) - 1
            let q: [Int64] = (0..<o).map { _ in extreme ? low : Int64.random(in: low...high, using: &rng) }
            w.put(0, 1); w.put(Int64(32 + o - 1), 6); w.put(0, 1)
            for i in 0..<o { w.put(values[i] & ((1 << Int64(bits)) - 1), bits) }
            w.put(Int64(precision - 1), 4); w.put(Int64(shift), 5)
            for c in q { w.put(c & ((1 << Int64(precision)) - 1), precision) }
            for i in o..<n {
                var sum: Int64 = 0
                for j in 0..<o { sum += q[j] * values[i - 1 - j] }
                predicted[i] = sum >> Int64(shift)
            }
        }
        let residual = (order..<n).map { values[$0] - predicted[$0] }
        let need = residual.map { 65 - ($0 >= 0 ? $0 : ~$0).leadingZeroBitCount }.max() ?? 1
        precondition(need <= 31, "residual too large for an escaped partition")
        w.put(0, 2); w.put(0, 4); w.put(15, 4); w.put(Int64(need), 5)
        for v in residual { w.put(v & ((1 << Int64(need)) - 1), need) }
    }

    /// A FLAC file of 256-sample frames at `bits` bits, mono or stereo: one frame per
    /// predictor, stereo frames cycling through the four channel assignments. Samples: the
    /// first half of each frame at the most negative value (the largest sums), the rest random
    /// at full scale. Returns the bytes and the samples, interleaved.
    private static func handMade(bits: Int, channels: Int, predictors: [Predictor]) -> ([UInt8], [Int64]) {
        var rng = SystemRandomNumberGenerator()
        let bs = 256
        let total = bs * predictors.count
        var file: [UInt8] = Array("fLaC".utf8)
        var info = BitWriter()
        info.put(1 << 7, 8); info.put(34, 24)
        info.put(Int64(bs), 16); info.put(Int64(bs), 16); info.put(0, 24); info.put(0, 24)
        info.put(44100, 20); info.put(Int64(channels - 1), 3); info.put(Int64(bits - 1), 5); info.put(Int64(total), 36)
        info.put(0, 64); info.put(0, 64)
        file += info.bytes
        let sizeCode: [Int: Int64] = [8: 1, 12: 2, 16: 4, 20: 5, 24: 6]
        let most = (Int64(1) << Int64(bits - 1)) - 1, least = -(Int64(1) << Int64(bits - 1))
        var interleaved: [Int64] = []
        for (f, p) in predictors.enumerated() {
            let assignment = channels == 1 ? 0 : [1, 8, 9, 10][f % 4]
            var w = BitWriter()
            w.put(0xFFF8, 16); w.put(8, 4); w.put(9, 4)  // fixed block size; 256; 44.1 kHz
            w.put(Int64(assignment), 4); w.put(sizeCode[bits]!, 3); w.put(0, 1)
            w.put(Int64(f), 8)  // frame number (< 128)
            w.put(Int64(FLACCRC.crc8(w.bytes, w.bytes.count)), 8)
            // Left, then right: the most negative in the first half (right the most positive in
            // a stereo frame, so that side and mid are at their limits too), then random.
            let ch: [[Int64]] = (0..<channels).map { c in
                (0..<bs).map { i in i < bs / 2 ? (c == 0 ? least : most) : Int64.random(in: least...most, using: &rng) }
            }
            for i in 0..<bs { for c in 0..<channels { interleaved.append(ch[c][i]) } }
            var subframes: [([Int64], Int)] = []
            switch assignment {
            case 0, 1: subframes = ch.map { ($0, bits) }
            case 8: subframes = [(ch[0], bits), (zip(ch[0], ch[1]).map { $0 - $1 }, bits + 1)]
            case 9: subframes = [(zip(ch[0], ch[1]).map { $0 - $1 }, bits + 1), (ch[1], bits)]
            default: subframes = [(zip(ch[0], ch[1]).map { ($0 + $1) >> 1 }, bits), (zip(ch[0], ch[1]).map { $0 - $1 }, bits + 1)]
            }
            for (values, b) in subframes {
                var predictor = p
                // The precision at the 32-bit boundary is the subframe's own (the side channel
                // has one bit more).
                if case .lpc(let o, let precision, let extreme) = p, b != bits { predictor = .lpc(order: o, precision: max(1, precision - 1), extreme: extreme) }
                subframe(&w, values, bits: b, predictor, rng: &rng)
            }
            w.align()
            w.put(Int64(FLACCRC.crc16(w.bytes, w.bytes.count)), 16)
            file += w.bytes
        }
        return (file, interleaved)
    }

    /// 8 and 24 bits, mono and stereo in every mode: every LPC order with coefficients of the
    /// most precision whose sums fit 32 bits (at the boundary, all at the most negative value,
    /// over a run of the most negative samples), one bit more (64-bit sums, where 15 bits
    /// allow it), and every FIXED order; decoded to the samples they were made from, and to
    /// what FFmpeg decodes.
    @Test(arguments: [(8, 1), (8, 2), (24, 1), (24, 2)])
    func sumsAtTheirLimitsDecodeExactly(bits: Int, channels: Int) throws {
        var predictors: [Predictor] = (0...4).map { .fixed($0) }
        for order in 1...32 {
            let boundary = min(15, 32 - bits - Self.log2(order))
            predictors.append(.lpc(order: order, precision: boundary, extreme: true))
            predictors.append(.lpc(order: order, precision: boundary, extreme: false))
            if boundary < 15 { predictors.append(.lpc(order: order, precision: boundary + 1, extreme: true)) }
        }
        let (file, samples) = Self.handMade(bits: bits, channels: channels, predictors: predictors)
        let dir = try TempDir("flac-limits")
        defer { dir.remove() }
        let path = dir.file("x.flac")
        try Data(file).write(to: URL(fileURLWithPath: path))
        let census = try decodeAndCompare(path, dir: dir, "\(bits)-bit, \(channels) channels")
        let d = try FLACTestDecoding.openNative(path)
        let ours = try FLACTestDecoding.decodeAll(d)
        let scale = Float(1.0 / Double(Int64(1) << Int64(bits - 1)))
        #expect(ours == samples.map { Float($0) * scale })
        #expect(census.fixed == 0b11111)
        #expect(census.lpcNarrow == (1...32).reduce(0) { $0 | (1 << $1) })
        if bits == 24 { #expect(census.lpcWide == (1...32).reduce(0) { $0 | (1 << $1) }) }
        if channels == 2 { #expect(census.channelAssignments == 0b111_0000_0010) }
    }
}
