// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
@testable import TonearmCodecs
import TonearmTestSupport

/// What the FLAC suites (FLACDecoderTests, FLACPredictionTests) share: the reference decode by
/// FFmpeg, the Swift decoder opened on a file and read to its end, and a bit-exact comparison.
enum FLACTestDecoding {
    /// FFmpeg's decode of `path` as Float32 the way the FFmpeg path converts it: s32 / 2³¹.
    static func ffmpegDecode(_ path: String, dir: TempDir) throws -> [Float] {
        let raw = dir.file("ref-\(UUID().uuidString).raw")
        try Fixtures.ffmpeg(["-threads", "1", "-i", path, "-f", "s32le", "-c:a", "pcm_s32le", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { b in
            b.bindMemory(to: Int32.self).map { Float(Double(Int32(littleEndian: $0)) * (1.0 / 2147483648.0)) }
        }
    }

    /// The Swift decoder on `path` (it owns the descriptor).
    static func openNative(_ path: String) throws -> FLACDecoder {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0, "cannot open \(path)")
        var st = stat()
        fstat(fd, &st)
        return try #require(FLACDecoder(name: path, fd: fd, size: Int(st.st_size), ownsFD: true))
    }

    /// Everything the decoder gives, interleaved, read `chunk` frames at a time.
    static func decodeAll(_ d: FLACDecoder, chunk: Int = 4000) throws -> [Float] {
        let ch = d.info.channels
        var out: [Float] = []
        var buf = [Float](repeating: 0, count: chunk * ch)
        while true {
            let n = try buf.withUnsafeMutableBufferPointer { try d.readInterleaved(into: $0.baseAddress!, count: chunk) }
            if n == 0 { break }
            out += buf[0..<(n * ch)]
        }
        return out
    }

    /// Where two decodes first differ, bit for bit ("none" when they are identical).
    static func firstDifference(_ a: [Float], _ b: [Float]) -> String {
        if a.count != b.count { return "lengths \(a.count) and \(b.count)" }
        guard let i = a.indices.first(where: { a[$0].bitPattern != b[$0].bitPattern }) else { return "none" }
        return "sample \(i): \(a[i]) vs \(b[i])"
    }
}
