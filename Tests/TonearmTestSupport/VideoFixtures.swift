// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Tiny video clips made by ffmpeg for the player's and the command's video tests, and what
/// ffmpeg itself decodes from them.
public enum VideoFixtures {
    /// `testsrc` at 160×90, 25 fps, `seconds` long, H.264 (B-frames, a key frame every 12) in
    /// `path`'s container; with a 440 Hz `sine` as AAC beside it when `audio`.
    public static func clip(_ path: String, seconds: Double = 3, audio: Bool = true) throws {
        var args = ["-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:d=\(seconds)"]
        if audio { args += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)"] }
        args += ["-c:v", "libx264", "-bf", "3", "-g", "12", "-pix_fmt", "yuv420p"]
        if audio { args += ["-c:a", "aac", "-b:a", "96k"] }
        try Fixtures.ffmpeg(args + [path])
    }

    /// Solid colours one after another (ffmpeg's `color` source, names such as `red`, `blue`),
    /// `segment` seconds each, 160×90 at 25 fps, H.264 (a key frame every 12), with a 440 Hz
    /// `sine` as AAC for the whole length: a picture whose colour says which part is shown.
    public static func colorClip(_ path: String, colors: [String], segment: Double = 1) throws {
        var args: [String] = []
        for c in colors { args += ["-f", "lavfi", "-i", "color=c=\(c):size=160x90:rate=25:d=\(segment)"] }
        let total = segment * Double(colors.count)
        args += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(total)"]
        let inputs = colors.indices.map { "[\($0):v]" }.joined()
        args += ["-filter_complex", "\(inputs)concat=n=\(colors.count):v=1:a=0[v]", "-map", "[v]", "-map", "\(colors.count):a",
                 "-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", path]
        try Fixtures.ffmpeg(args)
    }

    /// An HLS stream with video (issue 19): writes `master.m3u8`, `vN/index.m3u8` and
    /// `vN/segK.ts` under `dir`: `testsrc` with a
    /// 440 Hz sine, `seconds` long, cut by ffmpeg's HLS muxer into 2 s segments (a key frame at
    /// each), one variant a size of `sizes` (H.264 with B-frames, AAC). `noisy`: the picture
    /// carries noise (about 300 kB a second at 640×360, where the plain one takes 65 kB): a
    /// stream whose segments are large. `chirp`: the sound is a sweep from 200 Hz rising 300 Hz a
    /// second instead of the sine, so that where a piece of it belongs is unambiguous.
    public static func hls(in dir: String, sizes: [(Int, Int)], seconds: Double = 6, noisy: Bool = false,
                           chirp: Bool = false) throws {
        let (w, h) = sizes[0]
        let noise = noisy ? ",noise=alls=30:allf=t+u" : ""
        let sound = chirp ? "aevalsrc=0.4*sin(2*PI*(200*t+150*t*t)):s=48000:d=\(seconds)"
                          : "sine=frequency=440:sample_rate=48000:duration=\(seconds)"
        var args = ["-f", "lavfi", "-i", "testsrc=size=\(w)x\(h):rate=25:d=\(seconds)\(noise)",
                    "-f", "lavfi", "-i", sound]
        let splits = sizes.indices.map { "[s\($0)]" }.joined()
        let scales = sizes.enumerated().map { i, s in "[s\(i)]scale=\(s.0):\(s.1)[v\(i)]" }.joined(separator: ";")
        args += ["-filter_complex", "[0:v]split=\(sizes.count)\(splits);\(scales)"]
        for i in sizes.indices { args += ["-map", "[v\(i)]"] }
        for _ in sizes { args += ["-map", "1:a"] }
        args += ["-c:v", "libx264", "-bf", "3", "-g", "50", "-force_key_frames", "expr:gte(t,n_forced*2)",
                 "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k"]
        for (i, s) in sizes.enumerated() { args += ["-b:v:\(i)", "\(s.0 * s.1 / 100)k"] }
        args += ["-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_segment_type", "mpegts",
                 "-var_stream_map", sizes.indices.map { "v:\($0),a:\($0)" }.joined(separator: " "),
                 "-master_pl_name", "master.m3u8",
                 "-hls_segment_filename", dir + "/v%v/seg%d.ts", dir + "/v%v/index.m3u8"]
        try Fixtures.ffmpeg(args)
    }

    /// Rewrites the MP4 at `path` (its `moov` before its `mdat`: `-movflags +faststart`, 32-bit
    /// chunk offsets) as a poorly interleaved one, in place: the same samples and index, but the
    /// media data of each track together, the first track's chunks all before the second's (a
    /// player reads the picture at the start of the file and the sound for the same instant
    /// near its end). Returns each track's first chunk offset after the rewrite.
    @discardableResult
    public static func deinterleave(_ path: String) throws -> [Int] {
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ i: Int) -> Int { Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3]) }
        func put32(_ v: Int, _ i: Int) { for k in 0..<4 { data[i + k] = UInt8((v >> (8 * (3 - k))) & 0xFF) } }
        /// The boxes in `range`: type, start of the payload, end.
        func boxes(_ range: Range<Int>) -> [(type: String, body: Int, end: Int)] {
            var out: [(String, Int, Int)] = []
            var i = range.lowerBound
            while i + 8 <= range.upperBound {
                let size = u32(i)
                guard size >= 8, i + size <= range.upperBound else { break }
                out.append((String(decoding: data[(i + 4)..<(i + 8)], as: UTF8.self), i + 8, i + size))
                i += size
            }
            return out
        }
        func child(_ range: Range<Int>, _ path: [String]) -> Range<Int>? {
            var r = range
            for name in path {
                guard let b = boxes(r).first(where: { $0.type == name }) else { return nil }
                r = b.body..<b.end
            }
            return r
        }
        let top = boxes(0..<data.count)
        guard let moov = top.first(where: { $0.type == "moov" }), let mdat = top.first(where: { $0.type == "mdat" }),
              moov.end <= mdat.body else { throw TestSupportError("\(path): not an MP4 with its moov before its mdat") }
        // Each track's chunks (offset, length) and where its offset table is.
        var tracks: [(table: Int, chunks: [(offset: Int, length: Int)])] = []
        for trak in boxes(moov.body..<moov.end) where trak.type == "trak" {
            guard let stbl = child(trak.body..<trak.end, ["mdia", "minf", "stbl"]),
                  let stco = child(stbl, ["stco"]), let stsz = child(stbl, ["stsz"]), let stsc = child(stbl, ["stsc"]) else {
                throw TestSupportError("\(path): a track without 32-bit chunk offsets")
            }
            let count = u32(stco.lowerBound + 4)
            let offsets = (0..<count).map { u32(stco.lowerBound + 8 + 4 * $0) }
            let fixed = u32(stsz.lowerBound + 4), samples = u32(stsz.lowerBound + 8)
            let sizes = fixed != 0 ? Array(repeating: fixed, count: samples) : (0..<samples).map { u32(stsz.lowerBound + 12 + 4 * $0) }
            let entries = (0..<u32(stsc.lowerBound + 4)).map { (first: u32(stsc.lowerBound + 8 + 12 * $0), perChunk: u32(stsc.lowerBound + 12 + 12 * $0)) }
            var chunks: [(Int, Int)] = []
            var sample = 0
            for c in 0..<count {
                let per = entries.last { $0.first <= c + 1 }?.perChunk ?? 1
                chunks.append((offsets[c], sizes[sample..<(sample + per)].reduce(0, +)))
                sample += per
            }
            tracks.append((stco.lowerBound + 8, chunks))
        }
        var payload: [UInt8] = []
        var firsts: [Int] = []
        for track in tracks {
            for (k, chunk) in track.chunks.enumerated() {
                put32(mdat.body + payload.count, track.table + 4 * k)
                if k == 0 { firsts.append(mdat.body + payload.count) }
                payload += data[chunk.offset..<(chunk.offset + chunk.length)]
            }
        }
        guard payload.count <= mdat.end - mdat.body else { throw TestSupportError("\(path): the chunks overlap") }
        // The old offsets were read before any was written: the payload was gathered from the
        // original bytes (the tables live in moov, before mdat).
        data.replaceSubrange(mdat.body..<(mdat.body + payload.count), with: payload)
        try Data(data).write(to: URL(fileURLWithPath: path))
        return firsts
    }

    /// `ffmpeg -f framemd5` of the file's first video stream as `pixelFormat` (not turned by its
    /// display matrix): one MD5 a frame, in order. `inputOptions` go before `-i` (a seek, `-ss`).
    public static func frameMD5s(_ path: String, pixelFormat: String = "yuv420p", inputOptions: [String] = []) throws -> [String] {
        let r = try run("ffmpeg", ["-v", "error", "-noautorotate"] + inputOptions + ["-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                                   "-pix_fmt", pixelFormat, "-f", "framemd5", "-"])
        guard r.status == 0 else { throw TestSupportError("ffmpeg framemd5 of \(path): \(r.stderr)") }
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// ffprobe's presentation times of the frames (seconds from the container's start), in
    /// presentation order, and which are key frames.
    public static func frameTimes(_ path: String) throws -> [(time: Double, key: Bool)] {
        let start = try run("ffprobe", ["-v", "error", "-show_entries", "format=start_time", "-of", "csv=p=0", path])
        let origin = Double(start.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let r = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                    "frame=best_effort_timestamp_time,key_frame", "-of", "csv=p=0", path])
        return r.stdout.split(separator: "\n").compactMap { line in
            let p = line.split(separator: ",")
            guard p.count >= 2, let k = Int(p[0]), let t = Double(p[1]) else { return nil }
            return (t - origin, k == 1)
        }.sorted { $0.time < $1.time }
    }

    /// The frames of a YUV4MPEG2 file (4:2:0), each as its packed planes.
    public static func y4mFrames(_ path: String) throws -> [[UInt8]] {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let headerEnd = data.firstIndex(of: 0x0A) else { throw TestSupportError("\(path): no Y4M header") }
        let header = String(decoding: data[..<headerEnd], as: UTF8.self).split(separator: " ")
        guard header.first == "YUV4MPEG2",
              let w = header.first(where: { $0.hasPrefix("W") }).flatMap({ Int($0.dropFirst()) }),
              let h = header.first(where: { $0.hasPrefix("H") }).flatMap({ Int($0.dropFirst()) }) else {
            throw TestSupportError("\(path): not a Y4M header")
        }
        let size = w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2)
        var frames: [[UInt8]] = []
        var i = headerEnd + 1
        while i < data.count {
            guard let eol = data[i...].firstIndex(of: 0x0A), data[i..<eol].starts(with: Array("FRAME".utf8)),
                  eol + 1 + size <= data.count else { throw TestSupportError("\(path): a damaged frame at byte \(i)") }
            frames.append(Array(data[(eol + 1)..<(eol + 1 + size)]))
            i = eol + 1 + size
        }
        return frames
    }
}

/// MD5 (RFC 1321), to compare frames with `ffmpeg -f framemd5` without another library.
public enum FrameMD5 {
    private static let s: [UInt32] = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                      5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
                                      4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                      6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21]
    private static let k: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4294967296)) }

    public static func hex(_ message: [UInt8]) -> String {
        var a0: UInt32 = 0x67452301, b0: UInt32 = 0xefcdab89, c0: UInt32 = 0x98badcfe, d0: UInt32 = 0x10325476
        var m = message
        let bitLength = UInt64(message.count) * 8
        m.append(0x80)
        while m.count % 64 != 56 { m.append(0) }
        for i in 0..<8 { m.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }
        var w = [UInt32](repeating: 0, count: 16)
        for chunk in stride(from: 0, to: m.count, by: 64) {
            for i in 0..<16 {
                let b = chunk + i * 4
                w[i] = UInt32(m[b]) | UInt32(m[b + 1]) << 8 | UInt32(m[b + 2]) << 16 | UInt32(m[b + 3]) << 24
            }
            var a = a0, b = b0, c = c0, d = d0
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16: f = (b & c) | (~b & d); g = i
                case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * i) % 16
                }
                f = f &+ a &+ k[i] &+ w[g]
                a = d; d = c; c = b
                b = b &+ (f << s[i] | f >> (32 - s[i]))
            }
            a0 = a0 &+ a; b0 = b0 &+ b; c0 = c0 &+ c; d0 = d0 &+ d
        }
        return [a0, b0, c0, d0].flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
            .map { String(format: "%02x", $0) }.joined()
    }
}
