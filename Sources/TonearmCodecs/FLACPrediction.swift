// SPDX-License-Identifier: GPL-3.0-or-later

/// The prediction filters of FLAC's FIXED and LPC subframes, for ``FLACDecoder``: each turns the
/// residual that follows a subframe's warm-up samples into samples, in place.
///
/// Both are specialised by order: every LPC order 1–32 has a loop of its own, its taps
/// unrolled, the coefficients held in locals (registers for the common orders, 8 and 12), and
/// the FIXED predictors keep the last samples in registers. The LPC sums are 32-bit
/// when they provably fit (sample bits + coefficient precision + ⌊log₂ order⌋ ≤ 32, FFmpeg's
/// `lpc16` condition), 64-bit otherwise; both give what a 64-bit sum gives for any stream whose
/// samples fit their bits. The arithmetic wraps, as FFmpeg's does, so damaged data never traps.
enum FLACPrediction {
    /// The FIXED predictor of `order` (0...4) over `s[order..<count]`.
    static func fixed(_ s: UnsafeMutablePointer<Int32>, count: Int, order: Int) {
        guard count > order else { return }
        switch order {
        case 1:
            var a = s[0]
            for i in 1..<count { a = s[i] &+ a; s[i] = a }
        case 2:
            var a = s[1], b = s[0]
            for i in 2..<count {
                let v = s[i] &+ 2 &* a &- b
                s[i] = v; b = a; a = v
            }
        case 3:
            var a = s[2], b = s[1], c = s[0]
            for i in 3..<count {
                let v = s[i] &+ 3 &* (a &- b) &+ c
                s[i] = v; c = b; b = a; a = v
            }
        case 4:
            var a = s[3], b = s[2], c = s[1], d = s[0]
            for i in 4..<count {
                let v = s[i] &+ 4 &* (a &+ c) &- 6 &* b &- d
                s[i] = v; d = c; c = b; b = a; a = v
            }
        default:
            break
        }
    }

    /// Whether an LPC subframe's sums fit in 32 bits: FFmpeg's test (`bits` after wasted bits
    /// are removed, the side channel's extra bit included).
    static func narrow(bits: Int, precision: Int, order: Int) -> Bool {
        bits + precision + (Int.bitWidth - 1 - order.leadingZeroBitCount) <= 32
    }

    /// LPC of `order` (1...32) over `s[order..<count]`: `c[j]` multiplies `s[i - order + j]`
    /// (oldest first), the sum shifted right by `shift` (0...15) and added to the residual.
    static func lpc(_ s: UnsafeMutablePointer<Int32>, count: Int, coefficients c: UnsafePointer<Int32>,
                    order: Int, shift: Int, narrow: Bool) {
        guard count > order, (1...32).contains(order) else { return }
        if narrow {
            lpc(Int32.self, s, count, c, order, Int32(truncatingIfNeeded: shift))
        } else {
            lpc(Int64.self, s, count, c, order, Int64(shift))
        }
    }

    @inline(__always)
    private static func lpc<A: FixedWidthInteger & SignedInteger>(_ type: A.Type, _ s: UnsafeMutablePointer<Int32>,
                                                                 _ n: Int, _ c: UnsafePointer<Int32>, _ order: Int, _ sh: A) {
        // One unrolled loop per order: the constant order lets the compiler unroll the taps and
        // keep the coefficients out of memory.
        switch order {
        case 1: run(type, s, n, c, 1, sh)
        case 2: run(type, s, n, c, 2, sh)
        case 3: run(type, s, n, c, 3, sh)
        case 4: run(type, s, n, c, 4, sh)
        case 5: run(type, s, n, c, 5, sh)
        case 6: run(type, s, n, c, 6, sh)
        case 7: run(type, s, n, c, 7, sh)
        case 8: run(type, s, n, c, 8, sh)
        case 9: run(type, s, n, c, 9, sh)
        case 10: run(type, s, n, c, 10, sh)
        case 11: run(type, s, n, c, 11, sh)
        case 12: run(type, s, n, c, 12, sh)
        case 13: run(type, s, n, c, 13, sh)
        case 14: run(type, s, n, c, 14, sh)
        case 15: run(type, s, n, c, 15, sh)
        case 16: run(type, s, n, c, 16, sh)
        case 17: run(type, s, n, c, 17, sh)
        case 18: run(type, s, n, c, 18, sh)
        case 19: run(type, s, n, c, 19, sh)
        case 20: run(type, s, n, c, 20, sh)
        case 21: run(type, s, n, c, 21, sh)
        case 22: run(type, s, n, c, 22, sh)
        case 23: run(type, s, n, c, 23, sh)
        case 24: run(type, s, n, c, 24, sh)
        case 25: run(type, s, n, c, 25, sh)
        case 26: run(type, s, n, c, 26, sh)
        case 27: run(type, s, n, c, 27, sh)
        case 28: run(type, s, n, c, 28, sh)
        case 29: run(type, s, n, c, 29, sh)
        case 30: run(type, s, n, c, 30, sh)
        case 31: run(type, s, n, c, 31, sh)
        default: run(type, s, n, c, 32, sh)
        }
    }

    /// One sample a pass, every tap unrolled. (The two-samples-a-pass scheme of FFmpeg's C
    /// code, written here the same way, took more: 89.7M instructions against 87.0M for 30 s
    /// of order-8 stereo, as baseline x86-64 has no SIMD multiply of 32 or 64 bits to use.)
    @inline(__always)
    private static func run<A: FixedWidthInteger & SignedInteger>(_: A.Type, _ s: UnsafeMutablePointer<Int32>,
                                                                 _ n: Int, _ cp: UnsafePointer<Int32>, _ order: Int, _ sh: A) {
        var c = InlineArray<32, A>(repeating: 0)
        for j in 0..<order { c[j] = A(truncatingIfNeeded: cp[j]) }
        var h = s
        var i = order
        while i < n {
            var sum: A = 0
            for j in 0..<order { sum = sum &+ c[j] &* A(truncatingIfNeeded: h[j]) }
            h[order] = h[order] &+ Int32(truncatingIfNeeded: sum &>> sh)
            h += 1
            i &+= 1
        }
    }
}
