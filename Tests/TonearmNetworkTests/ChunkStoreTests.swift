// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmNetwork

/// The one store of a network stream's bytes: ranges that arrive out of order merge, overlaps
/// keep what is held, reads stop at a chunk's end, and what lies behind the reader is dropped
/// (whole segments for HLS, the head of a chunk for an endless stream).
@Suite struct ChunkStoreTests {
    private func bytes(_ r: Range<Int>) -> ArraySlice<UInt8> { ArraySlice(r.map { UInt8($0 & 0xFF) }) }

    private func read<I>(_ s: ChunkStore<I>, at p: Int64, _ count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        guard let n = out.withUnsafeMutableBytes({ s.copy(at: p, into: $0) }) else { return nil }
        return Array(out.prefix(n))
    }

    @Test func rangesMergeInAnyOrderAndOverlapsKeepWhatIsHeld() {
        var s = ChunkStore<Void>()
        s.store(bytes(100..<200), at: 100)
        s.store(bytes(300..<400), at: 300)
        #expect(s.ranges == [100..<200, 300..<400])
        s.store(bytes(0..<50), at: 0)
        #expect(s.ranges == [0..<50, 100..<200, 300..<400])
        s.store(bytes(150..<320), at: 150)   // overlaps two: one chunk from 100 to 400
        #expect(s.ranges == [0..<50, 100..<400])
        s.store(bytes(50..<100), at: 50)     // closes the gap
        #expect(s.ranges == [0..<400])
        #expect(read(s, at: 0, 400) == Array(bytes(0..<400)))
        #expect(s.available(at: 390) == 10)
        #expect(read(s, at: 400, 4) == nil, "nothing held there")
        #expect(s.available(at: 400) == 0)
    }

    @Test func readsStopAtTheEndOfTheChunk() {
        var s = ChunkStore<Void>()
        s.store(bytes(0..<10), at: 0)
        s.store(bytes(20..<30), at: 20)
        #expect(read(s, at: 5, 100) == Array(bytes(5..<10)))
        #expect(read(s, at: 10, 1) == nil)
        #expect(s.start == 0 && s.end == 30)
    }

    @Test func anEndlessStreamDropsTheHeadBehindTheReader() {
        var s = ChunkStore<Void>()
        s.store(bytes(0..<1000), at: 0)
        s.dropBehind(900, keeping: 100, atLeast: 1000)
        #expect(s.ranges == [0..<1000], "too little to drop")
        s.dropBehind(900, keeping: 100, atLeast: 500)
        #expect(s.ranges == [800..<1000])
        #expect(read(s, at: 800, 3) == Array(bytes(800..<803)))
    }

    @Test func segmentsKeepTheirInfoAndGoWholeBehindTheReader() {
        var s = ChunkStore<Double>()
        s.append(Array(bytes(0..<100)), at: 0, info: 2.0)
        s.append(Array(bytes(100..<250)), at: 100, info: 3.0)
        s.append([], at: 250, info: 0.5)
        s.append(Array(bytes(250..<300)), at: 250, info: 1.0)
        #expect(s.chunks.map(\.info) == [2, 3, 0.5, 1])
        #expect(read(s, at: 240, 50) == Array(bytes(240..<250)), "up to the segment's end")
        #expect(read(s, at: 250, 50) == Array(bytes(250..<300)), "an empty segment holds nothing")
        s.removeChunks(endingBy: 120)
        #expect(s.chunks.map(\.info) == [3, 0.5, 1])
        s.removeChunks(endingBy: 250)
        #expect(s.chunks.map(\.info) == [1])
        #expect(s.start == 250)
    }
}
