// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import TonearmCore

/// A fast content hash identifying a file's bytes wherever the file is: FNV-1a (64-bit) over
/// the size and the first and last 64 KiB. Two files of the same size that differ only in
/// their middle collide; the library handles a collision as a duplicate (see
/// ``MediaLibrary``). Called on the scanner's reader threads.
enum ContentHash {
    static let window = 64 * 1024

    /// The hash of the file at `path` of `size` bytes.
    /// - Throws: `TonearmError.notReadable` when it cannot be opened or read.
    static func of(path: String, size: Int64) throws(TonearmError) -> UInt64 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var h = FNV1a()
        withUnsafeBytes(of: size.littleEndian) { h.add($0) }
        var buffer = [UInt8](repeating: 0, count: window)
        func readAt(_ offset: Int64, _ count: Int) throws(TonearmError) {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            guard n >= 0 else { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
            buffer.withUnsafeBytes { h.add(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        try readAt(0, Int(min(size, Int64(window))))
        if size > Int64(window) {
            let tail = min(size - Int64(window), Int64(window))
            try readAt(size - tail, Int(tail))
        }
        return h.value
    }

    /// The hash of bytes in memory (artwork).
    static func of(bytes: [UInt8]) -> UInt64 {
        var h = FNV1a()
        bytes.withUnsafeBytes { h.add($0) }
        return h.value
    }
}

/// 64-bit FNV-1a.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        var v = value
        for b in bytes {
            v ^= UInt64(b)
            v &*= 0x0000_0100_0000_01B3
        }
        value = v
    }
}
