// SPDX-License-Identifier: GPL-3.0-or-later

/// Ogg pages (RFC 3533) of one logical stream, one packet per page, for a live stream: a
/// listener joins at any page's start after the stream's header pages. One thread.
struct OggPageWriter {
    let serial: UInt32
    private var sequence: UInt32 = 0

    init(serial: UInt32) { self.serial = serial }

    /// The page holding `packet` whole (at most 255 × 255 − 1 bytes; longer is cut), with
    /// `granule` (the samples up to the packet's end), BOS on the stream's first page, EOS when `last`.
    mutating func page(_ packet: UnsafeRawBufferPointer, granule: Int64, last: Bool = false) -> [UInt8] {
        let size = min(packet.count, 255 * 255 - 1)
        var flags: UInt8 = sequence == 0 ? 0x02 : 0
        if last { flags |= 0x04 }
        var p: [UInt8] = Array("OggS".utf8) + [0, flags]
        p.reserveCapacity(27 + size / 255 + 1 + size)
        p += withUnsafeBytes(of: UInt64(bitPattern: granule).littleEndian, Array.init)
        p += withUnsafeBytes(of: serial.littleEndian, Array.init)
        p += withUnsafeBytes(of: sequence.littleEndian, Array.init)
        p += [0, 0, 0, 0]  // CRC, below
        p.append(UInt8(size / 255 + 1))
        p += [UInt8](repeating: 255, count: size / 255)
        p.append(UInt8(size % 255))
        p += UnsafeRawBufferPointer(rebasing: packet[0..<size])
        let crc = Self.crc(p)
        p[22] = UInt8(crc & 0xff)
        p[23] = UInt8((crc >> 8) & 0xff)
        p[24] = UInt8((crc >> 16) & 0xff)
        p[25] = UInt8(crc >> 24)
        sequence &+= 1
        return p
    }

    mutating func page(_ packet: [UInt8], granule: Int64, last: Bool = false) -> [UInt8] {
        packet.withUnsafeBytes { page($0, granule: granule, last: last) }
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value and final XOR 0.
    static func crc(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0
        for b in bytes { c = (c << 8) ^ table[Int(((c >> 24) ^ UInt32(b)) & 0xff)] }
        return c
    }

    private static let table: [UInt32] = (0..<256).map { i in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = (r & 0x8000_0000) != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }
}
