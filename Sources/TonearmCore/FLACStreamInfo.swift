// SPDX-License-Identifier: GPL-3.0-or-later

/// The bytes of a FLAC file's STREAMINFO that a repair rewrites (``FLACRepair`` in TonearmExport:
/// a recording cut short by a full disk): where its sample count is, and that count set. Pure;
/// any bytes are safe (fuzzed by FuzzWAV).
package enum FLACStreamInfo {
    /// STREAMINFO is the first metadata block, right after `fLaC`: its 4-byte block header, then
    /// 34 bytes. The 8 bytes at ``fieldOffset`` hold the sample rate (20 bits), channels − 1 (3),
    /// bits − 1 (5) and the total samples (36); the MD5 follows at ``md5Offset``.
    package static let fieldOffset = 18
    package static let md5Offset = 26

    /// Whether a file starting with `head` has STREAMINFO where ``fieldOffset`` says: `fLaC`, a
    /// first block of type 0 and length 34. Pure; any bytes are safe.
    package static func hasStreamInfo(head: [UInt8]) -> Bool {
        guard head.count >= md5Offset + 16, head[0] == 0x66, head[1] == 0x4C, head[2] == 0x61, head[3] == 0x43 else { return false }
        let type = head[4] & 0x7F
        let length = Int(head[5]) << 16 | Int(head[6]) << 8 | Int(head[7])
        return type == 0 && length == 34
    }

    /// The 8 bytes at ``fieldOffset`` with the total samples set to `samples` (kept to 36 bits;
    /// 0, "unknown", when it does not fit) and the sample rate, channels and bits kept. Pure.
    package static func field(_ field: [UInt8], samples: Int64) -> [UInt8] {
        guard field.count == 8 else { return field }
        var value: UInt64 = 0
        for b in field { value = value << 8 | UInt64(b) }
        let total = samples >= 0 && samples < (1 << 36) ? UInt64(samples) : 0
        value = (value & ~((1 << 36) - 1)) | total
        return (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) }
    }

}
