// SPDX-License-Identifier: GPL-3.0-or-later

/// A big-endian bit reader over one FLAC frame's bytes, for ``FLACDecoder``.
///
/// Reads load 8 bytes at the current byte unaligned, so the memory must hold at least
/// ``FLACBitReader/padding`` readable bytes after the `limitBits / 8` valid ones (the decoder's
/// buffer keeps them zeroed). Reads never check the limit themselves: the decoder checks
/// ``overrun`` after every group of at most `padding - 16` bytes of fixed-size reads, after
/// every sample of a loop, and in the residual's Rice loop after every chunk of samples that
/// cannot read more than `padding - 16` bytes, so that garbage never reads past the padding.
struct FLACBitReader {
    /// Zeroed bytes the memory must hold after the valid ones.
    static let padding = 512

    let base: UnsafePointer<UInt8>
    /// Bits of valid data.
    let limitBits: Int
    /// The bit position of the next read.
    var pos = 0

    init(base: UnsafePointer<UInt8>, bytes: Int) {
        self.base = base
        limitBits = bytes * 8
    }

    /// Whether reads went past the valid data (the frame is truncated or corrupt).
    var overrun: Bool { pos > limitBits }

    /// The next 57 or more bits at the top of a 64-bit word.
    @inline(__always)
    func window() -> UInt64 {
        UInt64(bigEndian: UnsafeRawPointer(base + (pos &>> 3)).loadUnaligned(as: UInt64.self)) &<< UInt64(pos & 7)
    }

    /// `n` (0...32) bits as an unsigned number.
    @inline(__always)
    mutating func bits(_ n: Int) -> UInt32 {
        if n == 0 { return 0 }
        let v = window() &>> UInt64(64 - n)
        pos &+= n
        return UInt32(truncatingIfNeeded: v)
    }

    /// `n` (0...32) bits as a two's-complement signed number.
    @inline(__always)
    mutating func signed(_ n: Int) -> Int32 {
        if n == 0 { return 0 }
        let v = Int64(bitPattern: window()) &>> Int64(64 - n)
        pos &+= n
        return Int32(truncatingIfNeeded: v)
    }

    /// A unary number: the zero bits before the next one bit (which is consumed); nil when it
    /// runs past the valid data.
    @inline(__always)
    mutating func unary() -> UInt32? {
        var q: UInt32 = 0
        while true {
            let w = window()
            if w != 0 {
                let z = w.leadingZeroBitCount
                pos &+= z &+ 1
                return q &+ UInt32(z)
            }
            q &+= 56
            pos &+= 56
            if pos > limitBits { return nil }
        }
    }

    /// Skips to the next byte boundary.
    mutating func alignToByte() { pos = (pos &+ 7) & ~7 }

    /// The byte offset of the position (after ``alignToByte()``).
    var byteOffset: Int { pos &>> 3 }

    /// A UTF-8-style coded number as frame headers hold them (up to 36 bits); nil when invalid.
    mutating func codedNumber() -> Int64? {
        let first = bits(8)
        if first & 0x80 == 0 { return Int64(first) }
        var extra = 0
        var mask: UInt32 = 0x40
        while first & mask != 0 { extra += 1; mask >>= 1 }
        guard first & 0x40 != 0, extra <= 6 else { return nil }
        var v = Int64(first & (mask &- 1))
        for _ in 0..<extra {
            let b = bits(8)
            guard b & 0xC0 == 0x80 else { return nil }
            v = v << 6 | Int64(b & 0x3F)
        }
        return v
    }
}

/// The CRC-8 (polynomial 0x07) of frame headers and the CRC-16 (0x8005) of whole frames.
enum FLACCRC {
    static let table8: [UInt8] = (0..<256).map { i in
        var c = UInt8(i)
        for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
        return c
    }

    static let table16: [UInt16] = (0..<256).map { i in
        var c = UInt16(i) << 8
        for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
        return c
    }

    static func crc8(_ p: UnsafePointer<UInt8>, _ count: Int) -> UInt8 {
        table8.withUnsafeBufferPointer { t in
            var c: UInt8 = 0
            for i in 0..<count { c = t[Int(c ^ p[i])] }
            return c
        }
    }

    /// The CRC-16 of the two bytes `h, 0` from 0, for every `h`: with ``table16`` (that of
    /// `0, l`), the CRC-16 is linear, so two bytes `h, l` take `high[h] ^ table16[l]`.
    static let table16High: [UInt16] = table16.map { c in (c << 8) ^ table16[Int(c >> 8)] }

    static func crc16(_ p: UnsafePointer<UInt8>, _ count: Int) -> UInt16 {
        table16.withUnsafeBufferPointer { low in
            table16High.withUnsafeBufferPointer { high in
                let low = low.baseAddress!, high = high.baseAddress!
                // Two bytes a step, eight a load: x = c ^ next 16 bits, c = high[x >> 8] ^ low[x & 0xFF].
                @inline(__always) func step(_ c: UInt16, _ next: UInt16) -> UInt16 {
                    let x = c ^ next
                    return high[Int(x &>> 8)] ^ low[Int(x & 0xFF)]
                }
                var c: UInt16 = 0
                var i = 0
                let raw = UnsafeRawPointer(p)
                while i &+ 8 <= count {
                    let w = UInt64(bigEndian: (raw + i).loadUnaligned(as: UInt64.self))
                    c = step(c, UInt16(truncatingIfNeeded: w &>> 48))
                    c = step(c, UInt16(truncatingIfNeeded: w &>> 32))
                    c = step(c, UInt16(truncatingIfNeeded: w &>> 16))
                    c = step(c, UInt16(truncatingIfNeeded: w))
                    i &+= 8
                }
                while i &+ 2 <= count {
                    c = step(c, UInt16(p[i]) << 8 | UInt16(p[i &+ 1]))
                    i &+= 2
                }
                if i < count { c = (c << 8) ^ low[Int(UInt8(truncatingIfNeeded: c >> 8) ^ p[i])] }
                return c
            }
        }
    }
}
