// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Testing
@testable import TonearmLibrary
import TonearmTestSupport

/// Version 1 of the content hash written out plainly (FNV-1a 64 over the size, then the first
/// and last 64 KiB), as a library made before version 2 stored it.
func versionOneHash(ofFile path: String) throws -> UInt64 {
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let window = 64 * 1024
    var bytes = withUnsafeBytes(of: Int64(data.count).littleEndian) { Array($0) }
    bytes += data.prefix(window)
    if data.count > window { bytes += data.suffix(min(data.count - window, window)) }
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
    return h
}

@Suite struct ContentHashTests {
    func hash(_ bytes: [UInt8]) -> UInt64 {
        var h = WordHash(size: Int64(bytes.count))
        bytes.withUnsafeBytes { h.add($0) }
        return h.value
    }

    /// Any one byte changed, anywhere (in a whole word or in the bytes after the last one),
    /// changes the hash; so do the size and a byte moved from the head to the tail.
    @Test func everyByteCounts() {
        var state: UInt32 = 99
        let bytes = (0..<203).map { _ -> UInt8 in state = state &* 1_664_525 &+ 1_013_904_223; return UInt8(state >> 24) }
        let original = hash(bytes)
        var seen: Set<UInt64> = [original]
        for i in bytes.indices {
            var changed = bytes
            changed[i] ^= 0x01
            seen.insert(hash(changed))
            changed[i] ^= 0x81
            seen.insert(hash(changed))
        }
        #expect(seen.count == 1 + 2 * bytes.count, "no two of the variants collide")
        var split = WordHash(size: Int64(bytes.count))
        bytes.withUnsafeBytes { all in
            split.add(UnsafeRawBufferPointer(rebasing: all[0..<100]))
            split.add(UnsafeRawBufferPointer(rebasing: all[100...]))
        }
        var other = WordHash(size: Int64(bytes.count))
        bytes.withUnsafeBytes { all in
            other.add(UnsafeRawBufferPointer(rebasing: all[0..<101]))
            other.add(UnsafeRawBufferPointer(rebasing: all[101...]))
        }
        #expect(split.value != other.value, "the runs' lengths are part of the hash")
        var sized = WordHash(size: 204)
        bytes.withUnsafeBytes { sized.add($0) }
        #expect(sized.value != original)
    }

    /// ``WordHash`` (four words a turn of its loop) is version 2 written out plainly — the size,
    /// each run's whole words then its last bytes one at a time, then the run's length — for
    /// every length around the loop's steps, in one run and in two.
    @Test func theWordHashIsVersionTwoWrittenOutPlainly() {
        func mix(_ x: UInt64, _ w: UInt64) -> UInt64 {
            let y = (x ^ w) &* 0x9E37_79B9_7F4A_7C15
            return y ^ (y >> 32)
        }
        func plain(size: Int, runs: [[UInt8]]) -> UInt64 {
            var x = mix(0xcbf2_9ce4_8422_2325, UInt64(size))
            for run in runs {
                var i = 0
                while i + 8 <= run.count {
                    var w: UInt64 = 0
                    for k in 0..<8 { w |= UInt64(run[i + k]) << (8 * k) }
                    x = mix(x, w)
                    i += 8
                }
                while i < run.count { x = mix(x, UInt64(run[i])); i += 1 }
                x = mix(x, UInt64(run.count))
            }
            var z = x
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        var state: UInt32 = 7
        let bytes = (0..<300).map { _ -> UInt8 in state = state &* 1_664_525 &+ 1_013_904_223; return UInt8(state >> 24) }
        for n in 1...bytes.count {
            let run = Array(bytes[0..<n])
            #expect(hash(run) == plain(size: n, runs: [run]), "\(n) bytes")
            let cut = n / 3
            var split = WordHash(size: Int64(n))
            run.withUnsafeBytes { all in
                split.add(UnsafeRawBufferPointer(rebasing: all[0..<cut]))
                split.add(UnsafeRawBufferPointer(rebasing: all[cut...]))
            }
            #expect(split.value == plain(size: n, runs: [Array(run[0..<cut]), Array(run[cut...])]), "\(n) bytes in two")
        }
    }

    /// ``ContentHash/legacy(size:head:tail:)`` is version 1 exactly, on a file smaller than the
    /// window and on one with a separate tail.
    @Test func theLegacyHashIsVersionOne() throws {
        let dir = try TempDir("content-hash")
        defer { dir.remove() }
        for size in [5_000, 150_000] {
            var state: UInt32 = UInt32(size)
            let bytes = (0..<size).map { _ -> UInt8 in state = state &* 1_664_525 &+ 1_013_904_223; return UInt8(state >> 24) }
            let path = dir.file("f\(size)")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            let head = try ContentHash.read(fd: fd, path: path, at: 0, count: min(size, ContentHash.window))
            let (current, tail) = try ContentHash.of(fd: fd, path: path, size: Int64(size), head: head)
            #expect(ContentHash.legacy(size: Int64(size), head: head, tail: tail) == (try versionOneHash(ofFile: path)))
            #expect(current != (try versionOneHash(ofFile: path)))
            #expect(current == (try ContentHash.of(path: path, size: Int64(size))))
        }
    }

    /// A library whose rows were hashed with version 1: a file moved after the upgrade keeps its
    /// item (found by its version 1 hash) and its row is hashed again with the current version;
    /// the files that did not change are not read.
    @Test func aFileMovedAfterTheHashChangedKeepsItsItem() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        _ = try await f.library.scanToEnd(folders: [f.root])
        // Make the database what version 1 left: every row's hash of the old kind.
        let queue = try DatabaseQueue(path: f.library.path)
        let rows = try await queue.read { db in try Row.fetchAll(db, sql: "SELECT id, path FROM item").map { ($0["id"] as Int64, $0["path"] as String) } }
        try await queue.write { db in
            for (id, path) in rows {
                try db.execute(sql: "UPDATE item SET contentHash = ?, hashVersion = 1 WHERE id = ?",
                               arguments: [Int64(bitPattern: try versionOneHash(ofFile: path)), id])
            }
        }
        try queue.close()

        let from = "Beyoncé/Lemonade/01 Song 1.mp3", to = "Moved/Song 1.mp3"
        let song = try #require(try f.item(at: from))
        #expect(try f.library.recordPlay(of: song.persistentID, playedSeconds: 0.15) == .played)
        try FileManager.default.createDirectory(atPath: f.path("Moved"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: f.path(from), toPath: f.path(to))

        let s = try await f.library.scanToEnd(folders: [f.root])
        #expect(s.moved == 1 && s.added == 0 && s.removed == 0 && s.filesRead == 0, "\(s)")
        let moved = try #require(try f.item(at: to))
        #expect(moved.persistentID == song.persistentID && moved.playCount == 1)
        let stored = try DatabaseQueue(path: f.library.path).read { db in
            try Row.fetchOne(db, sql: "SELECT contentHash, hashVersion FROM item WHERE path = ?", arguments: [f.path(to)])
        }
        #expect(stored?["hashVersion"] == ContentHash.version)
        #expect(stored.map { UInt64(bitPattern: $0["contentHash"]) } == (try ContentHash.of(path: f.path(to), size: moved.fileSize)))
    }
}
