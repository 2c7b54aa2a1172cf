// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import TonearmCore

/// A fast content hash identifying a file's bytes wherever the file is: a 64-bit hash of the
/// size and the first and last 64 KiB. Two files of the same size that differ only in their
/// middle collide; the library handles a collision as a duplicate (see ``MediaLibrary``).
/// Called on the scanner's reader threads.
///
/// Version 2 (``version``) takes the bytes 8 at a time (``WordHash``); version 1, byte by
/// byte (FNV-1a), was most of a reader's time. Rows keep the version their hash was made with
/// (`item.hashVersion`), and a file that may be a moved version-1 row is also hashed the old
/// way (``legacy(size:head:tail:)``), so a move keeps the item's identity across the change.
enum ContentHash {
    static let window = 64 * 1024
    /// The version of the hash ``of(fd:path:size:head:)`` makes.
    static let version = 2

    /// The (version 2) hash of the file at `path` of `size` bytes.
    /// - Throws: `TonearmError.notReadable` when it cannot be opened or read.
    static func of(path: String, size: Int64) throws(TonearmError) -> UInt64 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        let head = try read(fd: fd, path: path, at: 0, count: Int(min(size, Int64(window))))
        return try of(fd: fd, path: path, size: size, head: head).hash
    }

    /// The (version 2) hash of the open file `fd` of `size` bytes whose first bytes (up to
    /// ``window``) are `head`, with the last bytes it read (empty when the head covers the file).
    static func of(fd: Int32, path: String, size: Int64, head: [UInt8]) throws(TonearmError) -> (hash: UInt64, tail: [UInt8]) {
        var tail: [UInt8] = []
        if size > Int64(window) {
            let count = min(size - Int64(window), Int64(window))
            tail = try read(fd: fd, path: path, at: size - count, count: Int(count))
        }
        var h = WordHash(size: size)
        head.prefix(window).withUnsafeBytes { h.add($0) }
        tail.withUnsafeBytes { h.add($0) }
        return (h.value, tail)
    }

    /// The version 1 hash (FNV-1a) of a file of `size` bytes whose first and last bytes are
    /// `head` and `tail`, as ``of(fd:path:size:head:)`` read them.
    static func legacy(size: Int64, head: [UInt8], tail: [UInt8]) -> UInt64 {
        var h = FNV1a()
        withUnsafeBytes(of: size.littleEndian) { h.add($0) }
        head.prefix(window).withUnsafeBytes { h.add($0) }
        tail.withUnsafeBytes { h.add($0) }
        return h.value
    }

    /// Up to `count` bytes at `offset` (fewer at the end of the file). The buffer is not
    /// zeroed first: `pread` fills it (zeroing a file's 64 KiB window cost more instructions
    /// in a library scan than hashing it).
    ///
    /// `probe` (not yet fired): the first read asks for bytes in memory only
    /// (`preadv2(RWF_NOWAIT)`, one system call like `pread`) and tells the probe whether it got
    /// them all; what it did not get is read as usual. See ``ColdStart``.
    static func read(fd: Int32, path: String, at offset: Int64, count: Int, probe: ColdStart? = nil) throws(TonearmError) -> [UInt8] {
        var failure: Int32 = 0
        let buffer = [UInt8](unsafeUninitializedCapacity: count) { bytes, initialized in
            var done = 0
            if let probe, count > 0, !probe.isFired {
                if let preadv2 = Self.preadv2 {
                    var iov = iovec(iov_base: UnsafeMutableRawPointer(bytes.baseAddress!), iov_len: count)
                    let n = preadv2(fd, &iov, 1, off_t(offset), Self.rwfNoWait)
                    if n > 0 { done = n }
                    if n < 0 && errno != EAGAIN {
                        probe.fire()  // the kernel cannot say
                    } else {
                        // Short: the rest is not in memory (the size is the walk's: the end is
                        // not before `count` bytes unless the file shrank, which costs a miss).
                        probe.record(hit: n == count)
                    }
                } else {
                    probe.fire()
                }
            }
            while done < count {
                let n = pread(fd, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { failure = errno; break }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        if failure != 0 { throw .notReadable(path: path, reason: String(cString: strerror(failure))) }
        return buffer
    }

    /// `preadv2`, found at run time (glibc declares it only under _GNU_SOURCE); nil where the C
    /// library has none.
    private typealias PreadV2 = @convention(c) (Int32, UnsafePointer<iovec>?, Int32, off_t, Int32) -> Int
    private static let preadv2: PreadV2? = dlsym(nil, "preadv2").map { unsafeBitCast($0, to: PreadV2.self) }
    /// Linux's `RWF_NOWAIT`: fail with `EAGAIN` rather than wait for the disk.
    private static let rwfNoWait: Int32 = 0x08

    /// The hash of bytes in memory (artwork).
    static func of(bytes: [UInt8]) -> UInt64 {
        var h = FNV1a()
        bytes.withUnsafeBytes { h.add($0) }
        return h.value
    }
}

/// A 64-bit hash of byte runs taken 8 bytes at a time. Each little-endian word is xored in,
/// the state multiplied by an odd constant (the golden ratio's, 0x9E3779B97F4A7C15) and xored
/// with its own upper half: three one-to-one steps, so two runs that differ in one word never
/// collide, and the upper bits reach the lower ones at the next multiply (FNV's multiply alone
/// never carries a change of the top bit down: flipping it in any word gave the same hash).
/// The bytes after the last whole word are taken one by one the same way, each run's length is
/// mixed in after it (runs cannot shift into one another), and the result goes through
/// SplitMix64's finaliser.
struct WordHash {
    private var v: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// Starts with the file's size.
    init(size: Int64) { v = Self.mix(v, UInt64(bitPattern: size)) }

    @inline(__always)
    private static func mix(_ x: UInt64, _ w: UInt64) -> UInt64 {
        let y = (x ^ w) &* multiplier
        return y ^ (y >> 32)
    }

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        var x = v
        var i = 0
        // Four words a turn of the loop, the same hash: the loop's own counting and its
        // overflow check were half of its 12 instructions a word (a library scan's largest
        // single cost).
        func word(_ at: Int) -> UInt64 { UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        let whole = n & ~31
        while i < whole {
            x = Self.mix(x, word(i))
            x = Self.mix(x, word(i &+ 8))
            x = Self.mix(x, word(i &+ 16))
            x = Self.mix(x, word(i &+ 24))
            i &+= 32
        }
        while i &+ 8 <= n {
            x = Self.mix(x, word(i))
            i &+= 8
        }
        while i < n {
            x = Self.mix(x, UInt64(base.load(fromByteOffset: i, as: UInt8.self)))
            i &+= 1
        }
        v = Self.mix(x, UInt64(n))
    }

    var value: UInt64 {
        var z = v
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// 64-bit FNV-1a: version 1 of the content hash, and the hash of artwork bytes.
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
