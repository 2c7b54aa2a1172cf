// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import TonearmCore

/// Writes AAC packets into a Core Audio Format file (FFmpeg 5.1's CAF muxer refuses AAC).
///
/// Layout, all big-endian: the `caff` header; `desc` (rate, `aac `, 1024 frames per packet,
/// channels); `kuki` (the MPEG-4 ES descriptor holding the AudioSpecificConfig, as Core Audio
/// and FFmpeg read it); `info` (tags); `data` (an edit count, then the packets back to back;
/// its size patched at the end); `pakt` after it (packet count, valid, priming and remainder
/// frames, then every packet's size as a variable-length integer), so players know the encoder
/// delay and the end padding. Used on one worker thread; failures are `writeFailed` naming the
/// target path.
final class CAFAACWriter {
    private let target: OutputTarget
    private let fd: Int32
    private var sizes: [Int] = []
    private var dataBytes: Int64 = 0
    private var dataSizeOffset: Int64 = 0
    private var closed = false
    static let framesPerPacket: Int64 = 1024

    /// Creates the temporary file and writes everything up to the packets.
    init(target: OutputTarget, sampleRate: Int, channels: Int, audioSpecificConfig: [UInt8], tags: ExportTags) throws(TonearmError) {
        self.target = target
        fd = open(target.temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 { throw .writeFailed(path: target.path, reason: String(cString: strerror(errno))) }
        var head = Bytes()
        head.ascii("caff"); head.u16(1); head.u16(0)
        head.ascii("desc"); head.u64(32)
        head.u64(Double(sampleRate).bitPattern)
        head.ascii("aac "); head.u32(2)  // MPEG-4 AAC LC
        head.u32(0); head.u32(UInt32(Self.framesPerPacket)); head.u32(UInt32(channels)); head.u32(0)
        let cookie = Self.esds(audioSpecificConfig)
        head.ascii("kuki"); head.u64(UInt64(cookie.count)); head.bytes += cookie
        let info = Self.info(tags)
        if !info.isEmpty { head.ascii("info"); head.u64(UInt64(info.count)); head.bytes += info }
        head.ascii("data")
        dataSizeOffset = Int64(head.bytes.count)
        head.u64(4); head.u32(0)  // size patched in finish(); edit count 0
        try put(head.bytes)
    }

    deinit { if !closed { close(fd) } }

    /// Appends one packet's bytes.
    func write(_ data: UnsafePointer<UInt8>, count: Int) throws(TonearmError) {
        try put(UnsafeBufferPointer(start: data, count: count))
        sizes.append(count)
        dataBytes += Int64(count)
    }

    /// Writes the packet table, patches the data size, flushes to disk and closes.
    /// `priming`: encoder delay in frames; `validFrames`: the real audio length (nil: all but the priming).
    func finish(priming: Int64, validFrames: Int64?) throws(TonearmError) {
        let total = Int64(sizes.count) * Self.framesPerPacket
        let valid = min(validFrames ?? (total - priming), total - priming)
        var pakt = Bytes()
        pakt.u64(UInt64(sizes.count)); pakt.u64(UInt64(max(0, valid)))
        pakt.u32(UInt32(priming)); pakt.u32(UInt32(max(0, total - priming - valid)))
        for s in sizes { pakt.varint(UInt64(s)) }
        var chunk = Bytes()
        chunk.ascii("pakt"); chunk.u64(UInt64(pakt.bytes.count))
        try put(chunk.bytes + pakt.bytes)
        var size = Bytes()
        size.u64(UInt64(dataBytes + 4))
        let w = size.bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(dataSizeOffset)) }
        if w != 8 { throw .writeFailed(path: target.path, reason: String(cString: strerror(errno))) }
        if fsync(fd) != 0 { throw .writeFailed(path: target.path, reason: String(cString: strerror(errno))) }
        closed = true
        if close(fd) != 0 { throw .writeFailed(path: target.path, reason: String(cString: strerror(errno))) }
    }

    private func put<C: Collection>(_ bytes: C) throws(TonearmError) where C.Element == UInt8 {
        let array = Array(bytes)
        var off = 0
        while off < array.count {
            let n = array.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(path: target.path, reason: String(cString: strerror(errno)))
            }
            off += n
        }
    }

    /// The `kuki` payload: version/flags, then an ES descriptor with a decoder config holding
    /// the AudioSpecificConfig, then the SL config.
    static func esds(_ asc: [UInt8]) -> [UInt8] {
        func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
            let n = body.count
            return [tag, 0x80 | UInt8((n >> 21) & 0x7F), 0x80 | UInt8((n >> 14) & 0x7F), 0x80 | UInt8((n >> 7) & 0x7F), UInt8(n & 0x7F)] + body
        }
        let specific = descriptor(0x05, asc)
        let config = descriptor(0x04, [0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] + specific)
        let es = descriptor(0x03, [0, 0, 0] + config + descriptor(0x06, [0x02]))
        return [0, 0, 0, 0] + es
    }

    /// The `info` payload: the entry count, then NUL-terminated key/value pairs (CAF's keys).
    static func info(_ tags: ExportTags) -> [UInt8] {
        let keys = ["title": "title", "artist": "artist", "album": "album", "composer": "composer",
                    "genre": "genre", "date": "year", "comment": "comments", "track": "track number"]
        let pairs = keys.compactMap { k, cafKey in tags.entries[k].map { (cafKey, $0) } }.sorted { $0.0 < $1.0 }
        guard !pairs.isEmpty else { return [] }
        var b = Bytes()
        b.u32(UInt32(pairs.count))
        for (k, v) in pairs { b.bytes += Array(k.utf8) + [0] + Array(v.utf8) + [0] }
        return b.bytes
    }
}

/// A big-endian byte builder.
struct Bytes {
    var bytes: [UInt8] = []
    mutating func ascii(_ s: String) { bytes += Array(s.utf8) }
    mutating func u16(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(v & 0xFF)] }
    mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((v >> UInt32(s)) & 0xFF)) } }
    mutating func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((v >> UInt64(s)) & 0xFF)) } }
    /// CAF's variable-length integer: 7 bits a byte, most significant first, high bit = more follow.
    mutating func varint(_ v: UInt64) {
        var groups: [UInt8] = [UInt8(v & 0x7F)]
        var rest = v >> 7
        while rest > 0 { groups.append(UInt8(rest & 0x7F) | 0x80); rest >>= 7 }
        bytes += groups.reversed()
    }
}
