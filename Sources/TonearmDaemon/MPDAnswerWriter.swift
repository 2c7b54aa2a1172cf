// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmMPDProtocol

/// An answer written straight into bytes: `key: value` lines appended to one growing buffer,
/// numbers written digit by digit, no `String` built per line and no Foundation formatting. The
/// song listings (`playlistinfo` of a 10,000-song queue is about 3 MB) are written this way;
/// the bytes are the same as ``MPDResponse/pair(_:_:)`` and `String(format: "%.3f")` give.
public struct MPDAnswerWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    /// `key: value\n`, the value on one line (CR, LF and CR LF each become a space, as
    /// ``MPDResponse/oneLine(_:)`` does).
    public mutating func pair(_ key: String, _ value: String) {
        head(key)
        oneLine(value)
        bytes.append(10)
    }

    /// `key: N\n`.
    public mutating func pair(_ key: String, _ n: Int) {
        head(key)
        integer(n)
        bytes.append(10)
    }

    /// `key: N.NNN\n`, as `String(format: "%.3f", x)` writes it.
    public mutating func pair(_ key: String, fixed3 x: Double) {
        head(key)
        fixed3(x)
        bytes.append(10)
    }

    /// `key: ` (a pair's start).
    private mutating func head(_ key: String) {
        bytes.append(contentsOf: key.utf8)
        bytes.append(0x3A)
        bytes.append(0x20)
    }

    /// Raw text, as it is.
    public mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func oneLine(_ text: String) {
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        guard bytes[start...].contains(where: { $0 == 10 || $0 == 13 }) else { return }
        // Rare: a line break in a value. CR LF is one character, so one space.
        var i = start, out = start
        while i < bytes.count {
            let b = bytes[i]
            if b == 13, i + 1 < bytes.count, bytes[i + 1] == 10 {
                bytes[out] = 0x20
                i += 2
            } else {
                bytes[out] = b == 10 || b == 13 ? 0x20 : b
                i += 1
            }
            out += 1
        }
        bytes.removeSubrange(out...)
    }

    /// A decimal integer.
    public mutating func integer(_ n: Int) {
        if n < 0 {
            bytes.append(0x2D)
            if n == .min {
                bytes.append(contentsOf: String(n).utf8.dropFirst())
                return
            }
        }
        var v = UInt(n.magnitude)
        if v < 10 {
            bytes.append(0x30 + UInt8(v))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 {
                d[19 - n] = 0x30 + UInt8(v % 10)
                v /= 10
                n += 1
            }
            bytes.append(contentsOf: d[(20 - n)...])
        }
    }

    /// `x` with three decimals, rounded as `printf("%.3f")` rounds (the exact binary value, ties
    /// to even). Written by hand where that is certain; a value exactly between two thousandths
    /// after scaling, a negative one or a very large one goes through `String(format:)`.
    public mutating func fixed3(_ x: Double) {
        let scaled = x * 1000
        guard x.isFinite, x.sign == .plus, scaled < 1e15 else {
            bytes.append(contentsOf: String(format: "%.3f", x).utf8)
            return
        }
        // The product is correctly rounded and k + 0.5 is representable here, so only a
        // product of exactly k + 0.5 may hide which side of the tie `x` is on.
        let rounded = scaled.rounded(.toNearestOrEven)
        guard abs(scaled - rounded) != 0.5 else {
            bytes.append(contentsOf: String(format: "%.3f", x).utf8)
            return
        }
        let thousandths = Int(rounded)
        integer(thousandths / 1000)
        bytes.append(0x2E)
        let f = thousandths % 1000
        bytes.append(0x30 + UInt8(f / 100))
        bytes.append(0x30 + UInt8(f / 10 % 10))
        bytes.append(0x30 + UInt8(f % 10))
    }

    /// A time as ``MPDResponse/time(_:)`` writes it.
    public mutating func time(_ seconds: Int64) {
        bytes.append(contentsOf: MPDResponse.time(seconds).utf8)
    }
}
