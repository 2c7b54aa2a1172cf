// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// YUV4MPEG2 output: parsed back it holds the decoder's frames, and ffmpeg reads it as the
/// frames it decodes itself from the source.
@Suite(.offThePool) struct Y4MWriterTests {
    let dir: TempDir
    init() throws { dir = try TempDir("y4m") }

    /// A minimal YUV4MPEG2 reader: the header's words and each frame's bytes.
    static func parse(_ data: [UInt8]) throws -> (header: [String], frames: [[UInt8]]) {
        guard let nl = data.firstIndex(of: 10) else { throw TestSupportError("no header line") }
        let header = String(decoding: data[..<nl], as: UTF8.self).split(separator: " ").map(String.init)
        guard header.first == "YUV4MPEG2",
              let w = header.first(where: { $0.hasPrefix("W") }).flatMap({ Int($0.dropFirst()) }),
              let h = header.first(where: { $0.hasPrefix("H") }).flatMap({ Int($0.dropFirst()) }) else {
            throw TestSupportError("bad header \(header)")
        }
        let size = w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2)
        var frames: [[UInt8]] = []
        var i = nl + 1
        while i < data.count {
            guard let e = data[i...].firstIndex(of: 10), String(decoding: data[i..<e], as: UTF8.self).hasPrefix("FRAME") else {
                throw TestSupportError("no FRAME at \(i)")
            }
            guard e + 1 + size <= data.count else { throw TestSupportError("short frame at \(i)") }
            frames.append(Array(data[(e + 1)..<(e + 1 + size)]))
            i = e + 1 + size
        }
        return (header, frames)
    }

    @Test func writtenFramesReadBackAsTheDecodersFrames() throws {
        defer { dir.remove() }
        let clip = try VideoClips.make(.init(name: "vp9", ext: "webm", args: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"]), in: dir)
        let d = try VideoDecoder(path: clip)
        let frames = try VideoClips.decodeAll(d)
        let out = dir.file("out.y4m")
        let w = try Y4MWriter(path: out, frameRate: (d.track.frameRateNumerator ?? 0, d.track.frameRateDenominator ?? 0))
        for f in frames { try w.write(f) }
        try w.close()
        #expect(w.framesWritten == frames.count)
        let parsed = try Self.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(Array(parsed.header.prefix(6)) == ["YUV4MPEG2", "W64", "H48", "F25:1", "Ip", "A1:1"])
        #expect(parsed.frames == frames.map(\.packedBytes))
        // ffmpeg reads the file as the same frames it decodes from the source.
        #expect(try VideoClips.frameMD5s(out) == VideoClips.frameMD5s(clip))
        // Only yuv420p goes into YUV4MPEG2; an unwritable path says why.
        let rgba = VideoFrame(pixelFormat: .rgba, width: 1, height: 1, planes: [.init(bytes: [0, 0, 0, 255], bytesPerRow: 4, width: 1, height: 1)], time: 0)
        let w2 = try Y4MWriter(path: dir.file("x.y4m"), frameRate: (25, 1))
        #expect(throws: TonearmError.self) { try w2.write(rgba) }
        #expect(throws: TonearmError.writeFailed(path: "/nonexistent-dir/x.y4m", reason: "No such file or directory")) {
            try Y4MWriter(path: "/nonexistent-dir/x.y4m", frameRate: (25, 1))
        }
    }
}
