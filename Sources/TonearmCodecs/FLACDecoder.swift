// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import TonearmCore

/// A FLAC decoder in Swift, for local `.flac` files: ``AudioFile`` plays them without loading
/// FFmpeg (whose libraries take 25–30 ms of CPU to load and most of a player's memory).
///
/// It decodes what the FLAC format defines: frame headers (CRC-8), CONSTANT, VERBATIM, FIXED
/// (orders 0–4) and LPC (orders 1–32) subframes, wasted bits, Rice and Rice2 partitioned
/// residuals with escape codes, left/side, right/side and mid/side stereo, 1–8 channels, 4–24
/// bits per sample, fixed and variable block sizes, and checks every frame's CRC-16. The output
/// is FFmpeg's, bit for bit: FFmpeg's FLAC decoder gives integers (s16 up to 16 bits, s32
/// shifted up above), which the FFmpeg path scales by a power of two into Float32; this one
/// scales the same integers by the same power of two.
///
/// Timeline: as the FFmpeg path's for a FLAC file. Frame positions come from the frame headers
/// (frame number × block size, or the sample number of a variable-block-size stream); the length
/// is STREAMINFO's, capped by where the last intact frame ends (a truncated file: a
/// ``AudioWarning/truncated(path:expectedFrames:actualFrames:)`` warning at open).
///
/// Damage: a frame whose header, subframes or CRC-16 is bad is reported as
/// ``AudioWarning/corruptPacket(path:packetIndex:framePosition:detail:)`` and read as silence
/// (the gap to the next intact frame is filled with zeros, as the FFmpeg path fills gaps);
/// decoding resumes at the next frame whose header and CRC-16 are intact. Nothing in the bytes
/// makes it crash or read outside its buffers (``FLACBitReader``; a fuzz target drives it).
///
/// Seeking is sample-exact: the SEEKTABLE's points narrow the range when the file has one, then
/// a bisection on frame headers (each checked by decoding the frame, CRC-16 included) finds a
/// frame at or before the target, and frames are decoded from there, the samples before the
/// target dropped.
///
/// Cost: the prediction loops are specialised by order and sum width (``FLACPrediction``),
/// the Rice residual is read a 64-bit window a code with the bounds checked once per chunk of
/// samples, and the CRC-16 takes two bytes a step (two 512-byte tables), so that decoding
/// costs fewer instructions than FFmpeg's FLAC decoder although it checks every frame's CRC-16
/// and FFmpeg checks none.
///
/// Memory: a read buffer of a few frames and one frame of samples, allocated at open; decoding
/// allocates nothing after that. Not thread-safe: ``AudioFile`` serialises calls (warnings
/// excepted, which have their own lock).
final class FLACDecoder {
    struct StreamInfo: Equatable {
        var minBlock: Int
        var maxBlock: Int
        var maxFrameSize: Int
        var sampleRate: Int
        var channels: Int
        var bitsPerSample: Int
        /// Frames in the stream; 0: unknown.
        var totalFrames: Int64
    }

    /// What a decoded frame said about itself.
    struct FrameInfo {
        var firstSample: Int64
        var blockSize: Int
        /// The file offset after the frame.
        var end: Int
    }

    enum FrameResult {
        case ok(FrameInfo)
        /// An intact header but bad content (`end`: nil when it could not be found).
        case corrupt(firstSample: Int64, blockSize: Int, end: Int?, detail: String)
        /// No valid frame header at the offset.
        case noFrame
    }

    let name: String
    let info: StreamInfo
    /// The file offset of the first frame.
    let firstFrame: Int
    /// SEEKTABLE points (sample, absolute file offset), sorted; placeholders dropped.
    let seekPoints: [(sample: Int64, offset: Int)]
    let fileSize: Int
    private let fd: Int32
    private let ownsFD: Bool

    // The read buffer: file bytes [ioStart, ioStart + ioCount), zero padding after them.
    private let io: UnsafeMutablePointer<UInt8>
    private let ioCapacity: Int
    private var ioStart = 0
    private var ioCount = 0
    /// The most bytes a frame may take here (larger frames are reported as corrupt).
    private let frameBound: Int

    // One frame's samples: `channels` blocks of `maxBlock` Int32.
    private let samples: UnsafeMutablePointer<Int32>
    private let blockCapacity: Int
    private let coefficients: UnsafeMutablePointer<Int32>

    // Decoded, trimmed frames waiting to be read.
    private let pending = PendingFrames()
    private let scale: Float

    // Reading state.
    var pos: Int64 = 0
    private(set) var length: Int64 = 0
    /// The sample number of the first frame (not 0 in a stream cut from another by copying
    /// frames): position 0.
    private(set) var origin: Int64 = 0
    /// The file offset of the next frame to decode.
    private var next = 0
    private var frameCounter = 0
    private var reportedTruncation = false
    /// The pictures FFmpeg would list as attached-picture streams (set by ``AudioFile``).
    var pictureCount = 0

    /// Which kinds of subframe and of channel assignment decoding has met (for tests, which
    /// check that a file reached the loop they mean to test): bit `n` of `lpcNarrow` /
    /// `lpcWide` for LPC order `n` summed in 32 / 64 bits, of `fixed` for FIXED order `n`, of
    /// `channelAssignments` for the frame header's assignment code `n`.
    struct Census: Equatable, CustomStringConvertible {
        var lpcNarrow: UInt64 = 0
        var lpcWide: UInt64 = 0
        var fixed: UInt8 = 0
        var channelAssignments: UInt16 = 0

        mutating func add(_ other: Census) {
            lpcNarrow |= other.lpcNarrow
            lpcWide |= other.lpcWide
            fixed |= other.fixed
            channelAssignments |= other.channelAssignments
        }

        var description: String {
            func bits<T: BinaryInteger>(_ v: T, _ width: Int) -> String {
                (0..<width).filter { v >> $0 & 1 == 1 }.map(String.init).joined(separator: ",")
            }
            return "LPC 32-bit [\(bits(lpcNarrow, 33))], LPC 64-bit [\(bits(lpcWide, 33))], FIXED [\(bits(fixed, 5))], "
                + "assignments [\(bits(channelAssignments, 11))]"
        }
    }

    private(set) var census = Census()

    private let warningList = WarningList()

    // MARK: Opening

    /// Opens the FLAC stream in `fd` (`size` bytes; closed when the decoder goes if `ownsFD`);
    /// nil when this decoder leaves the file to FFmpeg: no `fLaC` at the start (an ID3v2 tag
    /// first), damaged metadata blocks, more than 24 bits per sample, a block size over 65535
    /// or under 16, an unknown length, no intact frame near the start or the end.
    init?(name: String, fd: Int32, size: Int, ownsFD: Bool) {
        self.name = name
        self.fd = fd
        self.ownsFD = ownsFD
        fileSize = size
        func read(_ offset: Int, _ count: Int) -> [UInt8]? {
            guard offset >= 0, count >= 0, offset + count <= size else { return nil }
            var b = [UInt8](repeating: 0, count: count)
            let n = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? b : nil
        }
        guard let magic = read(0, 4), magic == Array("fLaC".utf8) else {
            if ownsFD { close(fd) }
            return nil
        }
        var offset = 4, last = false
        var info: StreamInfo?
        var points: [(sample: Int64, offset: Int)] = []
        var seekTable: [(sample: Int64, offset: Int)] = []
        while !last {
            guard let h = read(offset, 4) else { break }
            last = h[0] & 0x80 != 0
            let type = h[0] & 0x7F
            let length = Int(h[1]) << 16 | Int(h[2]) << 8 | Int(h[3])
            offset += 4
            if type == 0, info == nil, length >= 34, let b = read(offset, 34) {
                info = Self.streamInfo(b)
            } else if type == 3, let b = read(offset, length) {
                for k in 0..<(length / 18) {
                    var sample: UInt64 = 0, off: UInt64 = 0
                    for i in 0..<8 { sample = sample << 8 | UInt64(b[k * 18 + i]); off = off << 8 | UInt64(b[k * 18 + 8 + i]) }
                    if sample != .max, sample < UInt64(Int64.max), off < UInt64(size) {
                        seekTable.append((Int64(sample), Int(off)))
                    }
                }
            }
            offset += length
        }
        guard let info, last, offset < size, info.totalFrames > 0 else {
            if ownsFD { close(fd) }
            return nil
        }
        firstFrame = offset
        for p in seekTable where p.offset + offset < size { points.append((p.sample, p.offset + offset)) }
        points.sort { $0.sample < $1.sample }
        seekPoints = points
        self.info = info
        scale = Float(1.0 / Double(Int64(1) << (info.bitsPerSample - 1)))
        blockCapacity = info.maxBlock
        samples = .allocate(capacity: info.channels * blockCapacity)
        coefficients = .allocate(capacity: 32)
        frameBound = max(info.maxFrameSize + 1024, info.maxBlock * info.channels * 4 + 4096)
        ioCapacity = max(2 * frameBound, 128 * 1024)
        io = .allocate(capacity: ioCapacity + FLACBitReader.padding)
        io.initialize(repeating: 0, count: ioCapacity + FLACBitReader.padding)
        pending.reserve(blockCapacity, channels: info.channels)

        // The first frame must decode, and the end is where the last intact frame ends.
        // A stream cut from another keeps its frame numbers: its first frame is position 0.
        guard case .ok(let first) = decodeFrame(at: firstFrame), let end = findEnd() else { return nil }
        origin = first.firstSample
        length = max(0, min(info.totalFrames, end - origin))
        if info.totalFrames > length + Int64(max(4096, info.maxBlock)) {
            addWarning(.truncated(path: name, expectedFrames: info.totalFrames, actualFrames: length))
            reportedTruncation = true
        }
        next = firstFrame
    }

    deinit {
        samples.deallocate()
        coefficients.deallocate()
        io.deallocate()
        if ownsFD { close(fd) }
    }

    /// STREAMINFO's fields; nil for values this decoder leaves to FFmpeg.
    static func streamInfo(_ b: [UInt8]) -> StreamInfo? {
        let minBlock = Int(b[0]) << 8 | Int(b[1]), maxBlock = Int(b[2]) << 8 | Int(b[3])
        let maxFrame = Int(b[7]) << 16 | Int(b[8]) << 8 | Int(b[9])
        let rate = Int(b[10]) << 12 | Int(b[11]) << 4 | Int(b[12]) >> 4
        let channels = Int((b[12] >> 1) & 0x07) + 1
        let bits = Int(b[12] & 0x01) << 4 + Int(b[13] >> 4) + 1
        let frames = Int64(b[13] & 0x0F) << 32 | Int64(b[14]) << 24 | Int64(b[15]) << 16 | Int64(b[16]) << 8 | Int64(b[17])
        guard minBlock >= 16, maxBlock >= minBlock, rate > 0, (4...24).contains(bits) else { return nil }
        return StreamInfo(minBlock: minBlock, maxBlock: maxBlock, maxFrameSize: maxFrame, sampleRate: rate,
                          channels: channels, bitsPerSample: bits, totalFrames: frames)
    }

    /// Where the last intact frame ends, in samples: the frames starting in the file's last
    /// bytes are tried from the last back. Nil when none is found there.
    private func findEnd() -> Int64? {
        var from = max(firstFrame, fileSize - 2 * frameBound)
        while true {
            var candidates: [Int] = []
            var o = from
            while let c = findSync(from: o, before: fileSize) { candidates.append(c); o = c + 1 }
            for c in candidates.reversed() {
                if case .ok(let f) = decodeFrame(at: c) { return f.firstSample + Int64(f.blockSize) }
            }
            if from == firstFrame { return nil }
            // Nothing intact at the end (a long damaged tail): look further back, a little.
            if fileSize - from > 16 * frameBound { return nil }
            from = max(firstFrame, from - 2 * frameBound)
        }
    }

    // MARK: Warnings

    func addWarning(_ w: AudioWarning) { warningList.add(w) }

    func takeWarnings() -> [AudioWarning] { warningList.take() }

    // MARK: Buffering

    /// Makes the bytes from `offset` (up to `frameBound` of them, fewer at the end of the file)
    /// buffered; returns a pointer to them and how many there are.
    private func buffered(at offset: Int) -> (UnsafePointer<UInt8>, Int) {
        let want = min(frameBound, fileSize - offset)
        if offset < ioStart || offset + want > ioStart + ioCount {
            var keep = 0
            if offset >= ioStart && offset < ioStart + ioCount {
                keep = ioStart + ioCount - offset
                memmove(io, io + (offset - ioStart), keep)
            }
            ioStart = offset
            ioCount = keep
            while ioCount < ioCapacity && ioStart + ioCount < fileSize {
                let n = pread(fd, io + ioCount, min(ioCapacity - ioCount, fileSize - ioStart - ioCount),
                              off_t(ioStart + ioCount))
                if n <= 0 { break }
                ioCount += n
            }
            (io + ioCount).update(repeating: 0, count: FLACBitReader.padding)
        }
        return (UnsafePointer(io + (offset - ioStart)), ioStart + ioCount - offset)
    }

    /// The offset of the first frame header (sync code, valid CRC-8, this stream's parameters)
    /// at or after `from` and before `before`.
    func findSync(from: Int, before: Int) -> Int? {
        var o = max(from, firstFrame)
        while o < before - 1 {
            let (p, n) = buffered(at: o)
            if n < 2 { return nil }
            let scan = min(n - 1, before - 1 - o, max(1, n - 32))
            var i = 0
            while i < scan {
                if p[i] == 0xFF && p[i + 1] & 0xFE == 0xF8 {
                    var r = FLACBitReader(base: p + i, bytes: n - i)
                    if parseHeader(&r) != nil { return o + i }
                }
                i += 1
            }
            if o + scan >= fileSize - 1 { return nil }
            o += scan
        }
        return nil
    }

    // MARK: Frames

    struct Header {
        var firstSample: Int64
        var blockSize: Int
        var channelAssignment: Int
        var bits: Int
    }

    /// Parses a frame header at the reader's position (byte aligned) and checks its CRC-8 and
    /// that it fits this stream; nil when it is no valid header.
    private func parseHeader(_ r: inout FLACBitReader) -> Header? {
        let start = r.pos >> 3
        guard r.bits(15) == 0x7FFC else { return nil }
        let variable = r.bits(1) == 1
        let bsCode = Int(r.bits(4)), rateCode = Int(r.bits(4))
        let chCode = Int(r.bits(4)), bitsCode = Int(r.bits(3))
        guard r.bits(1) == 0, bsCode != 0, rateCode != 15, chCode <= 10, bitsCode != 3 else { return nil }
        guard let number = r.codedNumber() else { return nil }
        var blockSize: Int
        switch bsCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (bsCode - 2)
        case 6: blockSize = Int(r.bits(8)) + 1
        case 7: blockSize = Int(r.bits(16)) + 1
        default: blockSize = 256 << (bsCode - 8)
        }
        var rate: Int
        switch rateCode {
        case 0: rate = info.sampleRate
        case 12: rate = Int(r.bits(8)) * 1000
        case 13: rate = Int(r.bits(16))
        case 14: rate = Int(r.bits(16)) * 10
        default: rate = [0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000][rateCode]
        }
        let bits = [info.bitsPerSample, 8, 12, 0, 16, 20, 24, 32][bitsCode]
        let channels = chCode < 8 ? chCode + 1 : 2
        let headerBytes = r.pos >> 3 - start
        let crc = UInt8(r.bits(8))
        guard !r.overrun, FLACCRC.crc8(r.base + start, headerBytes) == crc else { return nil }
        // FFmpeg rejects frames whose parameters differ from the stream's; so does this.
        guard rate == info.sampleRate, bits == info.bitsPerSample, channels == info.channels,
              blockSize <= blockCapacity else { return nil }
        let first = variable ? number : number * Int64(info.maxBlock)
        return Header(firstSample: first, blockSize: blockSize, channelAssignment: chCode, bits: bits)
    }

    /// Decodes the frame at file offset `offset` into ``samples``.
    func decodeFrame(at offset: Int) -> FrameResult {
        let (p, n) = buffered(at: offset)
        var r = FLACBitReader(base: p, bytes: n)
        guard let h = parseHeader(&r) else { return .noFrame }
        let bs = h.blockSize
        census.channelAssignments |= 1 << UInt16(h.channelAssignment)
        for c in 0..<info.channels {
            var bits = h.bits
            if (h.channelAssignment == 8 || h.channelAssignment == 10) && c == 1 { bits += 1 }
            if h.channelAssignment == 9 && c == 0 { bits += 1 }
            if let problem = decodeSubframe(&r, into: samples + c * blockCapacity, count: bs, bits: bits) {
                return .corrupt(firstSample: h.firstSample, blockSize: bs, end: nil, detail: problem)
            }
        }
        r.alignToByte()
        let crcAt = r.byteOffset
        let crc = UInt16(r.bits(16))
        if r.overrun {
            return .corrupt(firstSample: h.firstSample, blockSize: bs, end: nil, detail: "the frame is cut short")
        }
        if FLACCRC.crc16(p, crcAt) != crc {
            return .corrupt(firstSample: h.firstSample, blockSize: bs, end: offset + crcAt + 2, detail: "CRC mismatch")
        }
        decorrelate(h.channelAssignment, count: bs)
        return .ok(FrameInfo(firstSample: h.firstSample, blockSize: bs, end: offset + crcAt + 2))
    }

    private func decorrelate(_ assignment: Int, count: Int) {
        guard assignment >= 8 else { return }
        let a = samples, b = samples + blockCapacity
        switch assignment {
        case 8:  // left, side
            for i in 0..<count { b[i] = a[i] &- b[i] }
        case 9:  // side, right
            for i in 0..<count { a[i] = a[i] &+ b[i] }
        default:  // mid, side
            for i in 0..<count {
                let side = b[i]
                let mid = (a[i] &<< 1) | (side & 1)
                a[i] = (mid &+ side) >> 1
                b[i] = (mid &- side) >> 1
            }
        }
    }

    /// Decodes one subframe of `count` samples of `bits` bits; returns what is wrong, or nil.
    private func decodeSubframe(_ r: inout FLACBitReader, into out: UnsafeMutablePointer<Int32>,
                                count: Int, bits sampleBits: Int) -> String? {
        guard r.bits(1) == 0 else { return "a subframe's padding bit is set" }
        let type = Int(r.bits(6))
        var bits = sampleBits
        var wasted = 0
        if r.bits(1) == 1 {
            guard let w = r.unary() else { return "the frame is cut short" }
            wasted = Int(w) + 1
            guard wasted < bits else { return "invalid wasted bits" }
            bits -= wasted
        }
        guard bits <= 32 else { return "invalid sample size" }
        switch type {
        case 0:
            out.update(repeating: r.signed(bits), count: count)
        case 1:
            for i in 0..<count {
                out[i] = r.signed(bits)
                if r.overrun { return "the frame is cut short" }
            }
        case 8...12:
            let order = type - 8
            guard order <= count else { return "invalid predictor order" }
            for i in 0..<order { out[i] = r.signed(bits) }
            if r.overrun { return "the frame is cut short" }
            if let e = decodeResidual(&r, into: out, count: count, order: order) { return e }
            FLACPrediction.fixed(out, count: count, order: order)
            census.fixed |= 1 << UInt8(order)
        case 32...63:
            let order = type - 31
            guard order <= count else { return "invalid predictor order" }
            for i in 0..<order { out[i] = r.signed(bits) }
            let precision = Int(r.bits(4)) + 1
            guard precision <= 15 else { return "invalid coefficient precision" }
            let shift = Int(r.signed(5))
            guard shift >= 0 else { return "negative LPC shift" }
            // Stored oldest-first: coefficient 0 multiplies the newest sample.
            for i in 0..<order { coefficients[order - 1 - i] = r.signed(precision) }
            if r.overrun { return "the frame is cut short" }
            if let e = decodeResidual(&r, into: out, count: count, order: order) { return e }
            let narrow = FLACPrediction.narrow(bits: bits, precision: precision, order: order)
            FLACPrediction.lpc(out, count: count, coefficients: coefficients, order: order, shift: shift, narrow: narrow)
            if narrow { census.lpcNarrow |= 1 << UInt64(order) } else { census.lpcWide |= 1 << UInt64(order) }
        default:
            return "reserved subframe type \(type)"
        }
        if r.overrun { return "the frame is cut short" }
        if wasted > 0 {
            for i in 0..<count { out[i] = out[i] &<< Int32(wasted) }
        }
        return nil
    }

    /// Reads the partitioned Rice residual into `out[order..<count]`.
    ///
    /// The Rice codes are read from one 64-bit window a sample: the unary quotient by a
    /// leading-zero count, the remainder by two shifts of the same word. The window holds at
    /// least 57 bits past the position, so a code of at most 57 bits (quotient + 1 + parameter)
    /// needs no other load; longer ones take the general path. The position is checked against
    /// the data's end once per ``residualChunk`` samples: a chunk reads at most
    /// 57 × ``residualChunk`` bits, well inside the reader's zeroed padding.
    private func decodeResidual(_ r: inout FLACBitReader, into out: UnsafeMutablePointer<Int32>,
                                count: Int, order: Int) -> String? {
        let method = r.bits(2)
        guard method <= 1 else { return "reserved residual coding method" }
        let paramBits = method == 0 ? 4 : 5
        let escape = UInt32(method == 0 ? 15 : 31)
        let partitionOrder = Int(r.bits(4))
        let partitions = 1 << partitionOrder
        let perPartition = count >> partitionOrder
        guard perPartition << partitionOrder == count, perPartition >= order else {
            return "invalid residual partition order"
        }
        var i = order
        let limit = r.limitBits
        let base = UnsafeRawPointer(r.base)
        for part in 0..<partitions {
            let end = (part + 1) * perPartition
            let k = r.bits(paramBits)
            if k == escape {
                let n = Int(r.bits(5))
                while i < end {
                    out[i] = r.signed(n)
                    i += 1
                    if r.pos > limit { return "the frame is cut short" }
                }
                continue
            }
            if r.pos > limit { return "the frame is cut short" }
            let shift = Int(k)
            // A code fits the window when quotient + 1 + k ≤ 57.
            let room = 57 &- shift
            let down = UInt64(63 &- shift)
            let take = shift &+ 1
            let stop = UInt64(1) &<< UInt64(shift)
            var pos = r.pos
            while i < end {
                let chunkEnd = min(end, i &+ Self.residualChunk)
                while i < chunkEnd {
                    let w = UInt64(bigEndian: (base + (pos &>> 3)).loadUnaligned(as: UInt64.self)) &<< UInt64(pos & 7)
                    let z = w.leadingZeroBitCount
                    let v: UInt32
                    if z < room {
                        // The stop bit at the top, then the remainder: the top k + 1 bits are
                        // 1 << k | remainder, and the value is q << k | remainder.
                        let x = w &<< UInt64(z)
                        v = UInt32(truncatingIfNeeded: (x &>> down) &+ (UInt64(truncatingIfNeeded: z) &<< UInt64(shift)) &- stop)
                        pos &+= z &+ take
                    } else {
                        r.pos = pos
                        guard let q = r.unary() else { return "the frame is cut short" }
                        v = (q &<< UInt32(shift)) | r.bits(shift)
                        pos = r.pos
                        if pos > limit { return "the frame is cut short" }
                    }
                    out[i] = Int32(bitPattern: (v &>> 1) ^ (0 &- (v & 1)))
                    i &+= 1
                }
                if pos > limit { r.pos = pos; return "the frame is cut short" }
            }
            r.pos = pos
        }
        return nil
    }

    /// Samples of a residual read between checks of the position (see ``decodeResidual``).
    static let residualChunk = 64

    // MARK: Reading

    /// Decodes until there are pending frames; false at the end of the stream.
    private func fillPending() -> Bool {
        while pending.count == 0 {
            if pos >= length { return false }
            if next >= fileSize { return endOfData() }
            switch decodeFrame(at: next) {
            case .ok(let f):
                next = f.end
                frameCounter += 1
                place(f.firstSample - origin, f.blockSize, decoded: true)
            case .corrupt(let first, let n, let end, let detail):
                addWarning(.corruptPacket(path: name, packetIndex: frameCounter, framePosition: pos, detail: detail))
                frameCounter += 1
                if let end { next = end; place(first - origin, n, decoded: false) } else if !resync(after: next) { return endOfData() }
            case .noFrame:
                addWarning(.corruptPacket(path: name, packetIndex: frameCounter, framePosition: pos,
                                          detail: "no frame header where a frame should start"))
                if !resync(after: next) { return endOfData() }
            }
        }
        return true
    }

    /// Moves ``next`` to the next intact frame after `offset` (header and CRC-16 intact).
    private func resync(after offset: Int) -> Bool {
        var o = offset + 1
        while let c = findSync(from: o, before: fileSize) {
            if case .ok = decodeFrame(at: c) { next = c; return true }
            o = c + 1
        }
        next = fileSize
        return false
    }

    /// The end of the bytes: a truncation warning when it comes before the length.
    private func endOfData() -> Bool {
        if pos < length && !reportedTruncation {
            reportedTruncation = true
            addWarning(.truncated(path: name, expectedFrames: length, actualFrames: pos))
        }
        return false
    }

    /// Moves the decoded frame (or silence for a damaged one) that starts at `first` into the
    /// pending frames, trimmed to the position and the length, as the FFmpeg path does.
    private func place(_ first: Int64, _ n: Int, decoded: Bool) {
        var drop: Int64 = 0, gap: Int64 = 0
        let count = Int64(n)
        if first < pos {
            drop = pos - first
            if drop >= count { return }
        } else if first > pos {
            gap = first - pos
            if gap > Int64(info.sampleRate) { pos = first; gap = 0 }
        }
        // A frame numbered at or past the end (a damaged or spliced stream) adds nothing.
        if pos >= length { return }
        gap = min(gap, length - pos)
        let take = max(0, min(count - drop, length - pos - gap))
        let total = Int(gap + take)
        if total <= 0 { return }
        pending.reserve(total, channels: info.channels)
        let out = pending.channelData
        for c in 0..<info.channels {
            let dst = out[c]
            if gap > 0 { dst.update(repeating: 0, count: Int(gap)) }
            if decoded {
                let src = samples + c * blockCapacity + Int(drop)
                let d = dst + Int(gap)
                let s = scale
                for i in 0..<Int(take) { d[i] = Float(src[i]) * s }
            } else {
                (dst + Int(gap)).update(repeating: 0, count: Int(take))
            }
        }
        pending.filled(total)
    }

    func read(into out: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, count: Int) throws(TonearmError) -> Int {
        var done = 0
        while done < count {
            if pending.count == 0 { guard fillPending() else { break } }
            let n = pending.take(into: out, offset: offset + done, frames: count - done)
            pos += Int64(n); done += n
        }
        return done
    }

    func readInterleaved(into out: UnsafeMutablePointer<Float>, count: Int) throws(TonearmError) -> Int {
        var done = 0
        while done < count {
            if pending.count == 0 { guard fillPending() else { break } }
            let n = pending.takeInterleaved(into: out + done * info.channels, frames: count - done)
            pos += Int64(n); done += n
        }
        return done
    }

    /// The decoded samples of the last frame of ``decodeFrame(at:)`` (for tests and the fuzzer).
    func frameSamples(channel: Int) -> UnsafePointer<Int32> { UnsafePointer(samples + channel * blockCapacity) }

    // MARK: Seeking

    /// Moves to frame `target` (0...length) exactly.
    func seek(to target: Int64) throws(TonearmError) {
        pending.clear()
        let target = max(0, min(target, length))
        pos = target
        if target == length { next = fileSize; return }
        var lo = firstFrame, hi = fileSize
        let goal = target + origin
        if let p = seekPoints.last(where: { $0.sample <= goal }), p.offset >= firstFrame { lo = p.offset }
        if let p = seekPoints.first(where: { $0.sample > goal }), p.offset > lo { hi = p.offset }
        // Check the seek point: an intact frame starting at or before the target.
        if lo != firstFrame {
            if case .ok(let f) = decodeFrame(at: lo), f.firstSample <= goal {} else { lo = firstFrame; hi = fileSize }
        }
        while hi - lo > 2 * frameBound {
            let mid = lo + (hi - lo) / 2
            var o = mid
            var found: FrameInfo?
            while let c = findSync(from: o, before: hi) {
                if case .ok(let f) = decodeFrame(at: c) { found = f; o = c; break }
                o = c + 1
            }
            guard let f = found else { hi = mid; continue }
            if f.firstSample <= goal { lo = o } else { hi = mid }
        }
        next = lo
    }
}

/// What ``AudioFile`` needs of the decoder behind it (FFmpeg's, or the FLAC one).
protocol AudioFileDecoder: AnyObject {
    /// The frame the next read starts at.
    var pos: Int64 { get }
    func seek(to target: Int64) throws(TonearmError)
    func read(into out: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, count: Int) throws(TonearmError) -> Int
    func readInterleaved(into out: UnsafeMutablePointer<Float>, count: Int) throws(TonearmError) -> Int
    func takeWarnings() -> [AudioWarning]
    /// The number of the stream decoded, as FFmpeg's demuxer numbers the file's streams.
    var streamIndex: Int32 { get }
}

extension FFmpegDecoder: AudioFileDecoder {}
extension FLACDecoder: AudioFileDecoder {
    /// A FLAC file's one audio stream: FFmpeg's demuxer lists it first.
    var streamIndex: Int32 { 0 }
}
