// SPDX-License-Identifier: GPL-3.0-or-later

/// The bytes of a network stream held in memory: chunks at their byte offsets, in order and not
/// overlapping, each with `Info` about it (an HLS segment's sequence number and duration;
/// nothing for a plain resource). The one store behind ``NetworkByteSource`` (chunks that grow
/// and merge as ranges arrive, ``store(_:at:)``) and ``HLSByteSource`` (one chunk a segment,
/// ``append(_:info:)``). A value with no lock of its own: each owner keeps it under its lock.
struct ChunkStore<Info> {
    struct Chunk {
        var start: Int64
        var bytes: [UInt8]
        var info: Info
        var end: Int64 { start + Int64(bytes.count) }
    }

    /// The chunks, in order of their offsets.
    private(set) var chunks: [Chunk] = []

    /// The byte ranges held, in order.
    var ranges: [Range<Int64>] { chunks.map { $0.start..<$0.end } }

    /// Where the first chunk starts (nil when the store is empty).
    var start: Int64? { chunks.first?.start }
    /// Where the last chunk ends (nil when the store is empty).
    var end: Int64? { chunks.last?.end }

    /// The index of the chunk that holds the byte at `position`.
    func index(holding position: Int64) -> Int? {
        chunks.firstIndex { $0.start <= position && position < $0.end }
    }

    /// Bytes held from `position` on in the chunk that holds it (0 when none does).
    func available(at position: Int64) -> Int64 {
        index(holding: position).map { chunks[$0].end - position } ?? 0
    }

    /// Copies the bytes from `position` on, up to `buffer.count` and to the end of the chunk
    /// that holds `position`, into `buffer`. Returns how many; nil when no chunk holds it.
    func copy(at position: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let i = index(holding: position) else { return nil }
        let c = chunks[i]
        let offset = Int(position - c.start)
        let n = min(buffer.count, c.bytes.count - offset)
        c.bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        return n
    }

    /// Adds a chunk of `bytes` at `start`, which is at or after the end of the last chunk.
    mutating func append(_ bytes: [UInt8], at start: Int64, info: Info) {
        chunks.append(Chunk(start: start, bytes: bytes, info: info))
    }

    /// Forgets the chunks that end at or before `offset`.
    mutating func removeChunks(endingBy offset: Int64) {
        removeChunks { $0.end <= offset }
    }

    /// Forgets the first chunks, as long as `drop` holds for them.
    mutating func removeChunks(while drop: (Chunk) -> Bool) {
        while let first = chunks.first, drop(first) { chunks.removeFirst() }
    }
}

extension ChunkStore where Info == Void {
    /// Stores bytes that start at `position`, merging them with the chunk they extend or
    /// overlap (what is already held is kept) and merging chunks that come to meet.
    mutating func store(_ bytes: ArraySlice<UInt8>, at position: Int64) {
        guard !bytes.isEmpty else { return }
        let end = position + Int64(bytes.count)
        if let i = chunks.firstIndex(where: { $0.end == position }) {
            chunks[i].bytes.append(contentsOf: bytes)
        } else if let i = index(holding: position) {
            // Overlap (a resumption from an earlier point): keep what is new.
            let have = chunks[i].end
            if end > have { chunks[i].bytes.append(contentsOf: bytes.suffix(Int(end - have))) }
        } else {
            chunks.append(Chunk(start: position, bytes: Array(bytes), info: ()))
            chunks.sort { $0.start < $1.start }
        }
        // Merge a chunk that now reaches the next one.
        var k = 0
        while k + 1 < chunks.count {
            if chunks[k].end >= chunks[k + 1].start {
                let next = chunks.remove(at: k + 1)
                if next.end > chunks[k].end {
                    chunks[k].bytes.append(contentsOf: next.bytes.suffix(Int(next.end - chunks[k].end)))
                }
            } else {
                k += 1
            }
        }
    }

    /// Drops the bytes more than `kept` behind `position` in the chunk that holds it (or ends
    /// at it), when they are more than `atLeast` (so that the bytes do not move on every read).
    mutating func dropBehind(_ position: Int64, keeping kept: Int64, atLeast: Int64) {
        guard let i = chunks.firstIndex(where: { $0.start <= position && position <= $0.end }) else { return }
        let drop = position - kept - chunks[i].start
        if drop > atLeast {
            chunks[i].bytes.removeFirst(Int(drop))
            chunks[i].start += drop
        }
    }
}
