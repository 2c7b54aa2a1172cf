// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import Glibc
import Testing
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// The one FFmpeg AVIO bridge, its read and seek callbacks called as libavformat calls them, over
/// each of its readers (memory, a byte source, a file): reads, the size, seeks from the start, the position
/// and the end, refused seeks, the end of the bytes, and a byte source's failure kept for the
/// caller and reported to FFmpeg as an I/O error.
@Suite struct AVIOBridgeTests {
    /// Bytes 0…N-1 (mod 256) as a byte source that fails after `failAfter` bytes, if set.
    final class Source: ByteSource, @unchecked Sendable {
        let bytes: [UInt8]
        let failAfter: Int?
        var position: Int64 = 0
        init(count: Int, failAfter: Int? = nil) {
            bytes = (0..<count).map { UInt8($0 & 0xFF) }
            self.failAfter = failAfter
        }
        var length: Int64? { Int64(bytes.count) }
        var isSeekable: Bool { true }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(TonearmError) -> Int {
            if let f = failAfter, position >= Int64(f) { throw .network(url: "test://source", failure: .connectionFailed(detail: "reset")) }
            let n = min(buffer.count, bytes.count - Int(position))
            guard n > 0 else { return 0 }
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(position), byteCount: n) }
            position += Int64(n)
            return n
        }
        func seek(to offset: Int64) -> Bool {
            guard offset >= 0, offset <= Int64(bytes.count) else { return false }
            position = offset
            return true
        }
    }

    /// Calls the bridge's read callback as libavformat does: the bytes read, or the error code.
    private func read(_ io: AVIOBridge, _ count: Int) -> Result<[UInt8], AVIOError> {
        let ctx = io.context!
        var out = [UInt8](repeating: 0, count: count)
        let n = out.withUnsafeMutableBufferPointer { ctx.pointee.read_packet!(ctx.pointee.opaque, $0.baseAddress, Int32(count)) }
        return n >= 0 ? .success(Array(out.prefix(Int(n)))) : .failure(AVIOError(code: n))
    }

    struct AVIOError: Error, Equatable { var code: Int32 }

    /// Calls the bridge's seek callback as libavformat does.
    private func seek(_ io: AVIOBridge, _ offset: Int64, _ whence: Int32) -> Int64 {
        let ctx = io.context!
        return ctx.pointee.seek!(ctx.pointee.opaque, offset, whence)
    }

    /// What every reader must do the same through the bridge (bytes i mod 256, `size` of them).
    private func checkContract(_ io: AVIOBridge, size: Int) {
        let b = { (r: Range<Int>) in r.map { UInt8($0 & 0xFF) } }
        #expect(seek(io, 0, AVSEEK_SIZE) == Int64(size))
        #expect(read(io, 4) == .success([0, 1, 2, 3]))
        #expect(seek(io, 1000, SEEK_SET) == 1000)
        #expect(read(io, 2) == .success(b(1000..<1002)))
        #expect(seek(io, 10, SEEK_CUR) == 1012)
        #expect(read(io, 1) == .success(b(1012..<1013)))
        #expect(seek(io, -3, SEEK_END) == Int64(size - 3))
        #expect(read(io, 10) == .success(b(size - 3..<size)))
        #expect(read(io, 10) == .failure(AVIOError(code: tonearm_averror_eof())), "the end of the bytes is FFmpeg's end of file")
        #expect(seek(io, -1, SEEK_SET) < 0, "a seek before the start is refused")
        #expect(seek(io, 0, 3) == -1, "an unknown whence is refused")
        #expect(seek(io, 0, SEEK_SET) == 0)
        #expect(read(io, 3) == .success([0, 1, 2]))
    }

    let size = 200_000

    @Test func memory() throws {
        let bytes = (0..<size).map { UInt8($0 & 0xFF) }
        let io = try #require(AVIOBridge(reader: AVIOMemoryReader(bytes: bytes), bufferSize: 4096))
        checkContract(io, size: size)
        #expect(seek(io, Int64(size + 1), SEEK_SET) < 0, "memory: a seek past the end is refused")
    }

    @Test func byteSource() throws {
        let io = try #require(AVIOBridge(reader: AVIOByteSourceReader(source: Source(count: size)), bufferSize: 4096))
        checkContract(io, size: size)
    }

    @Test func file() throws {
        let dir = try TempDir("avio-bridge")
        defer { dir.remove() }
        let path = dir.file("bytes")
        try Data((0..<size).map { UInt8($0 & 0xFF) }).write(to: URL(fileURLWithPath: path))
        let reader = try #require(TagFileReader(path: path))
        let io = try #require(AVIOBridge(reader: AVIOFileReader(file: reader), bufferSize: 4096))
        checkContract(io, size: size)
    }

    /// A source's failure: FFmpeg sees an I/O error, the reader keeps the failure itself.
    @Test func aByteSourcesFailureIsKept() throws {
        let reader = AVIOByteSourceReader(source: Source(count: size, failAfter: 8192))
        let io = try #require(AVIOBridge(reader: reader, bufferSize: 4096))
        #expect(read(io, 8192) == .success((0..<8192).map { UInt8($0 & 0xFF) }))
        #expect(read(io, 8192) == .failure(AVIOError(code: tonearm_averror(EIO))))
        #expect(reader.failure == .network(url: "test://source", failure: .connectionFailed(detail: "reset")))
    }
}
