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
        let head = try read(fd: fd, path: path, at: 0, count: Int(min(size, Int64(window))))
        return try of(fd: fd, path: path, size: size, head: head).hash
    }

    /// The hash of the open file `fd` of `size` bytes whose first bytes (up to ``window``) are
    /// `head`, with the last bytes it read (empty when the head covers the file).
    static func of(fd: Int32, path: String, size: Int64, head: [UInt8]) throws(TonearmError) -> (hash: UInt64, tail: [UInt8]) {
        var h = FNV1a()
        withUnsafeBytes(of: size.littleEndian) { h.add($0) }
        head.prefix(window).withUnsafeBytes { h.add($0) }
        var tail: [UInt8] = []
        if size > Int64(window) {
            let count = min(size - Int64(window), Int64(window))
            tail = try read(fd: fd, path: path, at: size - count, count: Int(count))
            tail.withUnsafeBytes { h.add($0) }
        }
        return (h.value, tail)
    }

    /// Up to `count` bytes at `offset` (fewer at the end of the file).
    static func read(fd: Int32, path: String, at offset: Int64, count: Int) throws(TonearmError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            done += n
        }
        if done < count { buffer.removeLast(count - done) }
        return buffer
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
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var v = value
        var i = 0
        let n = bytes.count
        while i < n {
            v = (v ^ UInt64(base[i])) &* 0x0000_0100_0000_01B3
            i &+= 1
        }
        value = v
    }
}
