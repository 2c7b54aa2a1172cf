// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// One generated fixture: how to encode it and what decoding it must give.
struct FormatCase: Sendable, CustomTestStringConvertible {
    var name: String
    var ext: String
    var args: [String]
    var rate = 48000
    var channels = 2
    var video: [String]? = nil
    /// The exact length the decoder must report (nil: the number of frames ffmpeg decodes).
    var expectedLength: Int64? = nil
    var codec: String
    var container: String
    var testDescription: String { name }
}

let seconds = 2.0
/// SILK's float state after a canonical segment boundary (Opus restarts every 20 s with 2 s of
/// preroll; measured up to 7.5e-6 on a 12 kb/s tone), against ffmpeg's continuous decode.
let silkTolerance: Float = 1e-5

let formatCases: [FormatCase] = [
    FormatCase(name: "wav-s16", ext: "wav", args: ["-c:a", "pcm_s16le"], expectedLength: 96000, codec: "pcm_s16le", container: "WAV"),
    FormatCase(name: "wav-u8-8k-mono", ext: "wav", args: ["-c:a", "pcm_u8"], rate: 8000, channels: 1, expectedLength: 16000, codec: "pcm_u8", container: "WAV"),
    FormatCase(name: "wav-s24-44k", ext: "wav", args: ["-c:a", "pcm_s24le"], rate: 44100, expectedLength: 88200, codec: "pcm_s24le", container: "WAV"),
    FormatCase(name: "wav-s32-96k", ext: "wav", args: ["-c:a", "pcm_s32le"], rate: 96000, expectedLength: 192000, codec: "pcm_s32le", container: "WAV"),
    FormatCase(name: "wav-f32", ext: "wav", args: ["-c:a", "pcm_f32le"], expectedLength: 96000, codec: "pcm_f32le", container: "WAV"),
    FormatCase(name: "wav-f64-192k-mono", ext: "wav", args: ["-c:a", "pcm_f64le"], rate: 192000, channels: 1, expectedLength: 384000, codec: "pcm_f64le", container: "WAV"),
    FormatCase(name: "wav-extensible-5.1", ext: "wav", args: ["-c:a", "pcm_s16le"], channels: 6, expectedLength: 96000, codec: "pcm_s16le", container: "WAV"),
    FormatCase(name: "rf64", ext: "wav", args: ["-c:a", "pcm_s16le", "-rf64", "always"], expectedLength: 96000, codec: "pcm_s16le", container: "WAV"),
    FormatCase(name: "aiff", ext: "aiff", args: ["-c:a", "pcm_s16be"], rate: 44100, expectedLength: 88200, codec: "pcm_s16be", container: "AIFF"),
    FormatCase(name: "aiff-c-float", ext: "aifc", args: ["-c:a", "pcm_f32be", "-f", "aiff"], expectedLength: 96000, codec: "pcm_f32be", container: "AIFF"),
    FormatCase(name: "caf-lpcm", ext: "caf", args: ["-c:a", "pcm_s24le"], expectedLength: 96000, codec: "pcm_s24le", container: "CAF"),
    FormatCase(name: "caf-alac", ext: "caf", args: ["-c:a", "alac"], rate: 44100, expectedLength: 88200, codec: "alac", container: "CAF"),
    FormatCase(name: "flac-16", ext: "flac", args: ["-c:a", "flac"], rate: 44100, expectedLength: 88200, codec: "flac", container: "FLAC"),
    FormatCase(name: "flac-24-96k-5.1", ext: "flac", args: ["-c:a", "flac", "-sample_fmt", "s32"], rate: 96000, channels: 6, expectedLength: 192000, codec: "flac", container: "FLAC"),
    FormatCase(name: "mp3-vbr", ext: "mp3", args: ["-c:a", "libmp3lame", "-q:a", "4"], rate: 44100, expectedLength: 88200, codec: "mp3", container: "MP3"),
    FormatCase(name: "mp3-cbr-mono-22k", ext: "mp3", args: ["-c:a", "libmp3lame", "-b:a", "32k"], rate: 22050, channels: 1, expectedLength: 44100, codec: "mp3", container: "MP3"),
    // FFmpeg's AAC encoder uses perceptual noise substitution (PNS), whose noise FFmpeg's decoder
    // draws from a generator that survives a flush: AAC is decoded canonically (a fresh decoder
    // per segment), so seeks are bit-identical with PNS too. Longer files: `LongCase`.
    FormatCase(name: "aac-m4a", ext: "m4a", args: ["-c:a", "aac"], expectedLength: 96000, codec: "aac", container: "M4A"),
    FormatCase(name: "aac-m4a-no-pns", ext: "m4a", args: ["-c:a", "aac", "-aac_pns", "0"], expectedLength: 96000, codec: "aac", container: "M4A"),
    FormatCase(name: "aac-m4a-5.1", ext: "m4a", args: ["-c:a", "aac"], rate: 44100, channels: 6, expectedLength: 88200, codec: "aac", container: "M4A"),
    FormatCase(name: "aac-m4a-5.1-no-pns", ext: "m4a", args: ["-c:a", "aac", "-aac_pns", "0"], rate: 44100, channels: 6, expectedLength: 88200, codec: "aac", container: "M4A"),
    // ADTS stores no encoder delay or padding: the length is what FFmpeg decodes.
    FormatCase(name: "aac-adts", ext: "aac", args: ["-c:a", "aac"], codec: "aac", container: "ADTS"),
    FormatCase(name: "aac-adts-no-pns", ext: "aac", args: ["-c:a", "aac", "-aac_pns", "0"], codec: "aac", container: "ADTS"),
    FormatCase(name: "alac-m4a", ext: "m4a", args: ["-c:a", "alac"], rate: 44100, expectedLength: 88200, codec: "alac", container: "M4A"),
    FormatCase(name: "vorbis-ogg", ext: "ogg", args: ["-c:a", "libvorbis"], rate: 44100, expectedLength: 88200, codec: "vorbis", container: "Ogg"),
    FormatCase(name: "opus", ext: "opus", args: ["-c:a", "libopus"], expectedLength: 96000, codec: "opus", container: "Ogg"),
    // Low bit rates use SILK, whose float LPC state in FFmpeg's decoder never converges after a
    // seek: such streams are decoded canonically, so seeks are bit-identical too.
    FormatCase(name: "opus-mono-low", ext: "opus", args: ["-c:a", "libopus", "-b:a", "16k"], channels: 1, expectedLength: 96000, codec: "opus", container: "Ogg"),
    FormatCase(name: "mp4-video-aac", ext: "mp4", args: ["-c:a", "aac", "-aac_pns", "0", "-shortest"], video: ["-c:v", "libx264", "-preset", "ultrafast"], expectedLength: 96000, codec: "aac", container: "MP4"),
    // Matroska stores no exact end for Vorbis (no granule position): the length is what FFmpeg decodes.
    FormatCase(name: "mkv-video-vorbis", ext: "mkv", args: ["-c:a", "libvorbis", "-shortest"], rate: 44100, video: ["-c:v", "mpeg4"], codec: "vorbis", container: "Matroska"),
    FormatCase(name: "mkv-video-mp3", ext: "mkv", args: ["-c:a", "libmp3lame", "-shortest"], rate: 44100, video: ["-c:v", "mpeg4"], codec: "mp3", container: "Matroska"),
    FormatCase(name: "webm-vp8-opus", ext: "webm", args: ["-c:a", "libopus", "-shortest"], video: ["-c:v", "libvpx", "-deadline", "realtime"], expectedLength: 96000, codec: "opus", container: "WebM"),
    FormatCase(name: "webm-vp9-vorbis", ext: "webm", args: ["-c:a", "libvorbis", "-shortest"], rate: 44100, video: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"], codec: "vorbis", container: "WebM"),
]

/// Reads the whole file from the current position, planar.
func readAll(_ file: AudioFile, chunk: Int = 4096) throws -> [[Float]] {
    let ch = file.processingFormat.channelCount
    var out = [[Float]](repeating: [], count: ch)
    let buffer = AudioPCMBuffer(format: file.processingFormat, frameCapacity: chunk)!
    while true {
        try file.read(into: buffer)
        if buffer.frameLength == 0 { break }
        for c in 0..<ch { out[c] += buffer.channel(c) }
    }
    return out
}

/// Reads `count` frames interleaved from the current position.
func readInterleaved(_ file: AudioFile, count: Int) throws -> [Float] {
    let ch = file.processingFormat.channelCount
    var out = [Float](repeating: .nan, count: count * ch)
    var got = 0
    try out.withUnsafeMutableBufferPointer { p in
        while got < count {
            let n = try file.readInterleaved(into: p.baseAddress! + got * ch, frameCount: min(1000, count - got))
            if n == 0 { break }
            got += n
        }
    }
    return Array(out.prefix(got * ch))
}

/// Frequency of a sine by counting upward zero crossings.
func frequency(_ x: ArraySlice<Float>, rate: Int) -> Double {
    var crossings = 0
    var first = -1, last = -1
    for i in x.indices.dropFirst() where x[i - 1] < 0 && x[i] >= 0 {
        if first < 0 { first = i }
        last = i
        crossings += 1
    }
    guard crossings > 1 else { return 0 }
    return Double(crossings - 1) * Double(rate) / Double(last - first)
}

/// A fixture long enough to cross the canonical segment boundaries (AAC: every 256 packets, about
/// 5.5 s; Opus with SILK: every 20 s).
struct LongCase: Sendable, CustomTestStringConvertible {
    var name: String
    var ext: String
    var args: [String]
    var seconds: Double
    var rate = 48000
    var channels = 2
    /// Pink noise under the tone (gives PNS bands to fill; makes libopus mix CELT and hybrid).
    var noise = true
    /// Largest difference allowed between a straight read and ffmpeg's continuous decode (0: bit-exact).
    var straightTolerance: Float = 0
    var testDescription: String { name }
}

/// PNS noise bands of the long fixtures (pink noise at 0.1) after a segment boundary (AAC
/// restarts its decoder every 256 packets), against ffmpeg's continuous decode (measured up to 0.015).
let pnsNoiseTolerance: Float = 0.05

let longCases: [LongCase] = [
    LongCase(name: "aac-m4a-pns", ext: "m4a", args: ["-c:a", "aac"], seconds: 13, straightTolerance: pnsNoiseTolerance),
    LongCase(name: "aac-adts-pns-44k", ext: "aac", args: ["-c:a", "aac"], seconds: 13, rate: 44100, straightTolerance: pnsNoiseTolerance),
    LongCase(name: "aac-m4a-no-pns", ext: "m4a", args: ["-c:a", "aac", "-aac_pns", "0"], seconds: 13),
    LongCase(name: "aac-adts-no-pns", ext: "aac", args: ["-c:a", "aac", "-aac_pns", "0"], seconds: 13),
    // Tone only at 12 kb/s: every packet is SILK (wideband).
    LongCase(name: "opus-mono-silk", ext: "opus", args: ["-c:a", "libopus", "-b:a", "12k"], seconds: 45, channels: 1, noise: false, straightTolerance: silkTolerance),
    // With noise at 16 kb/s: CELT and hybrid packets mixed.
    LongCase(name: "webm-opus-mono-hybrid", ext: "webm", args: ["-c:a", "libopus", "-b:a", "16k"], seconds: 45, channels: 1, straightTolerance: silkTolerance),
    // CELT only: decoded continuously (its state converges within the 2 s seek preroll).
    LongCase(name: "opus-celt", ext: "opus", args: ["-c:a", "libopus", "-b:a", "96k"], seconds: 45),
]

@Suite("AudioFile formats", .offThePool)
struct AudioFileFormatTests {
    /// Across segment boundaries: the straight read matches ffmpeg (bit-exact without PNS or
    /// SILK), and every seek gives exactly the straight read's samples, PNS and SILK included.
    @Test(arguments: longCases)
    func seeksAreBitIdenticalAcrossSegments(_ lc: LongCase) throws {
        let dir = try TempDir("tonearm-codecs")
        defer { dir.remove() }
        let path = dir.file("\(lc.name).\(lc.ext)")
        let source = "aevalsrc=exprs=\(Fixtures.toneExpression(channels: lc.channels, freq: 440)):s=\(lc.rate):d=\(lc.seconds)"
        if lc.noise {
            let layout = lc.channels == 1 ? "mono" : "stereo"
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", source, "-f", "lavfi", "-i", "anoisesrc=c=pink:a=0.1:r=\(lc.rate):d=\(lc.seconds)",
                                 "-filter_complex", "[1]aformat=channel_layouts=\(layout)[n];[0][n]amix=inputs=2:normalize=0"]
                                + lc.args + [path])
        } else {
            try Fixtures.tone(path: path, codecArgs: lc.args, seconds: lc.seconds, rate: lc.rate, channels: lc.channels)
        }
        let reference = try Fixtures.decodeWithFFmpeg(path)
        let ch = lc.channels
        let file = try AudioFile(path: path)
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        let full = try readAll(file, chunk: 3000)
        #expect(full[0].count == Int(file.length))
        let compared = min(full[0].count, reference.count / ch)
        #expect(compared >= Int(file.length) - 2048)
        var mismatches = 0
        var worst: Float = 0
        for i in 0..<compared {
            for c in 0..<ch where full[c][i] != reference[i * ch + c] {
                mismatches += 1
                worst = max(worst, abs(full[c][i] - reference[i * ch + c]))
            }
        }
        if lc.straightTolerance == 0 {
            #expect(mismatches == 0, "\(mismatches) samples differ from ffmpeg's decoding, by up to \(worst)")
        } else {
            #expect(worst <= lc.straightTolerance, "\(mismatches) samples differ from ffmpeg's decoding by up to \(worst)")
        }

        // Seeks: random positions, and ones around every second (segment boundaries fall between).
        var rng = SystemRandomNumberGenerator()
        var positions: [Int64] = []
        for _ in 0..<8 { positions.append(Int64.random(in: 0..<file.length, using: &rng)) }
        for s in stride(from: Int64(lc.rate), to: file.length, by: lc.rate * 5 / 2) {
            positions.append(s - Int64.random(in: 0..<2048, using: &rng))
        }
        for p in positions {
            file.framePosition = p
            let got = try readInterleaved(file, count: lc.rate * 3)
            let expected = min(lc.rate * 3, Int(file.length - p))
            #expect(got.count == expected * ch, "at \(p)")
            var bad = 0
            var first = -1
            for i in 0..<min(got.count / ch, expected) {
                for c in 0..<ch where got[i * ch + c] != full[c][Int(p) + i] {
                    if first < 0 { first = i }
                    bad += 1
                }
            }
            #expect(bad == 0, "\(bad) samples differ after seeking to \(p) of \(file.length) (first at +\(first))")
        }
        for start in [file.length / 3, file.length * 2 / 3 + 5] {
            file.framePosition = start
            let rest = try readAll(file, chunk: 4096)
            #expect(rest[0].count == Int(file.length - start))
            var same = true
            for c in 0..<ch where rest[c] != Array(full[c][Int(start)...]) { same = false }
            #expect(same, "reading from \(start) to the end differs from the straight read")
        }
        #expect(file.takeWarnings().isEmpty)
    }

    @Test(arguments: formatCases)
    func decodesExactlyAndSeeksSampleAccurately(_ fc: FormatCase) throws {
        let dir = try TempDir("tonearm-codecs")
        defer { dir.remove() }
        let path = dir.file("\(fc.name).\(fc.ext)")
        try Fixtures.tone(path: path, codecArgs: fc.args, seconds: seconds, rate: fc.rate, channels: fc.channels, video: fc.video)
        let reference = try Fixtures.decodeWithFFmpeg(path)
        let refFrames = reference.count / fc.channels

        let file = try AudioFile(path: path)
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        #expect(file.fileFormat.codecName == fc.codec)
        #expect(file.fileFormat.containerName == fc.container)
        #expect(file.fileFormat.sampleRate == fc.rate)
        #expect(file.fileFormat.channelCount == fc.channels)
        var plain = file.processingFormat
        plain.channelLayout = nil
        #expect(plain == .standard(sampleRate: Double(fc.rate), channels: fc.channels))
        // The fixtures have FFmpeg's default layout for their channel count: the format carries it,
        // or (plain WAV, AIFF: no layout in the file) it is the default taken.
        #expect(file.processingFormat.effectiveChannelLayout == .defaultLayout(channelCount: fc.channels))
        if let expected = fc.expectedLength {
            #expect(file.length == expected, "length \(file.length), expected \(expected)")
        } else {
            #expect(file.length == Int64(refFrames), "length \(file.length), ffmpeg decodes \(refFrames)")
        }
        #expect(abs(file.duration - Double(file.length) / Double(fc.rate)) < 1e-9)

        // A straight read gives exactly `length` frames, the same samples ffmpeg decodes.
        let full = try readAll(file)
        #expect(full[0].count == Int(file.length))
        #expect(file.framePosition == file.length)
        let compared = min(full[0].count, refFrames)
        #expect(compared >= Int(file.length) - 2048)
        var mismatches = 0
        for i in 0..<compared {
            for c in 0..<fc.channels where full[c][i] != reference[i * fc.channels + c] { mismatches += 1 }
        }
        #expect(mismatches == 0, "\(mismatches) samples differ from ffmpeg's decoding")

        // The content is the tone: 440 Hz on channel 0, 550 Hz on channel 1.
        let mid = full[0].count / 4 ..< full[0].count * 3 / 4
        #expect(abs(frequency(full[0][mid], rate: fc.rate) - 440) < 2)
        if fc.channels > 1 { #expect(abs(frequency(full[1][mid], rate: fc.rate) - 550) < 2) }

        // Seeking: bit-identical to the straight read at several positions, including the edges.
        var rng = SystemRandomNumberGenerator()
        var positions: [Int64] = [0, 1, 1151, 1152, 4095, file.length - 700, file.length - 1, file.length].filter { $0 >= 0 && $0 <= file.length }
        for _ in 0..<6 where file.length > 0 { positions.append(Int64.random(in: 0..<file.length, using: &rng)) }
        for p in positions.shuffled() {
            file.framePosition = p
            #expect(file.framePosition == p)
            let got = try readInterleaved(file, count: 1500)
            let expected = min(1500, Int(file.length - p))
            #expect(got.count == expected * fc.channels, "at \(p)")
            var bad = 0
            var worst: Float = 0
            for i in 0..<min(got.count / fc.channels, expected) {
                for c in 0..<fc.channels where got[i * fc.channels + c] != full[c][Int(p) + i] {
                    bad += 1
                    worst = max(worst, abs(got[i * fc.channels + c] - full[c][Int(p) + i]))
                }
            }
            #expect(bad == 0, "\(bad) samples differ after seeking to \(p) of \(file.length) (by up to \(worst))")
        }
        // After a seek, reading to the end gives the rest exactly.
        file.framePosition = file.length / 3
        let rest = try readAll(file, chunk: 777)
        #expect(rest[0].count == Int(file.length - file.length / 3))
        let restWorst = zip(rest[0], full[0][Int(file.length / 3)...]).map { abs($0 - $1) }.max() ?? 0
        #expect(restWorst == 0, "after seeking to \(file.length / 3) the rest differs by up to \(restWorst)")
        // Back to the start: a fresh decoder, so the bits are again exactly the straight read.
        file.framePosition = 0
        let again = try readInterleaved(file, count: 5000)
        #expect(again.count == min(5000, Int(file.length)) * fc.channels)
        var againBad = 0
        for i in 0..<again.count / fc.channels {
            for c in 0..<fc.channels where again[i * fc.channels + c] != full[c][i] { againBad += 1 }
        }
        #expect(againBad == 0, "\(againBad) samples differ after seeking back to 0")
        #expect(file.takeWarnings().isEmpty)
    }

    /// A 10 s AAC file decodes to exactly what the encoder was given: 480000 frames, aligned with
    /// the source at offset 0 (a chirp, so no period can fake the alignment; the encoder delay of
    /// 1024 frames is removed once, from the edit list).
    @Test(arguments: ["m4a", "mp4"])
    func aacHasTheExactEncodedLengthAndAlignment(_ ext: String) throws {
        let dir = try TempDir("tonearm-codecs")
        defer { dir.remove() }
        let path = dir.file("ten.\(ext)")
        let source = try Fixtures.signal(path: path, expressions: "0.4*sin(2*PI*(200+300*t)*t)|0.4*sin(2*PI*(300+200*t)*t)",
                                         codecArgs: ["-c:a", "aac"], seconds: 10, rate: 48000)
        #expect(source.count == 960_000)
        let file = try AudioFile(forReading: URL(fileURLWithPath: path))
        #expect(file.length == 480_000)
        #expect(file.duration == 10)
        let all = try readAll(file, chunk: 48000)
        #expect(all[0].count == 480_000)
        // Squared error against the source over a window, for lags around the known delays.
        let window = 20_000 ..< 24_096
        func error(lag: Int) -> Double {
            var e = 0.0
            for i in window { let d = Double(all[0][i + lag] - source[2 * i]); e += d * d }
            return e / Double(window.count)
        }
        var best = (lag: Int.max, error: Double.infinity)
        for lag in -2200...2200 {
            let e = error(lag: lag)
            if e < best.error { best = (lag, e) }
        }
        #expect(best.lag == 0, "decoded audio is offset by \(best.lag) frames from the source")
        #expect(best.error < 1e-3)
        // The last frames are the end of the source, too (no padding kept, none cut).
        var tail = 0.0
        for i in 479_000 ..< 480_000 { let d = Double(all[1][i] - source[2 * i + 1]); tail += d * d }
        #expect(tail / 1000 < 1e-3)
    }

    @Test func decodesFromMemoryLikeFromAFile() throws {
        let dir = try TempDir("tonearm-codecs")
        defer { dir.remove() }
        let path = dir.file("mem.mp3")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "libmp3lame"], seconds: 2, rate: 44100, channels: 2)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let fromFile = try AudioFile(path: path)
        let fromMemory = try AudioFile(data: bytes, nameHint: "mem.mp3")
        #expect(fromMemory.length == 88200)
        #expect(fromMemory.path == "mem.mp3")
        #expect(fromMemory.fileFormat == fromFile.fileFormat)
        let a = try readAll(fromFile), b = try readAll(fromMemory)
        let same = a == b
        #expect(same)
        fromMemory.framePosition = 50_000
        let tail = try readAll(fromMemory)
        let tailSame = tail[1] == Array(a[1][50_000...])
        #expect(tailSame)
    }

    /// The long run's Ogg Vorbis files at 96 kHz were shown at "4294967 kb/s": libvorbis
    /// states no nominal rate there (-1 in the header), which FFmpeg reads as 2³² − 1.
    @Test func aVorbisFileWithoutANominalBitRateHasTheContainersRate() throws {
        let dir = try TempDir("tonearm-codecs")
        defer { dir.remove() }
        let path = dir.file("v96.ogg")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "libvorbis", "-q:a", "5"], seconds: 1, rate: 96000, channels: 1)
        let rate = try #require(try AudioFile(path: path).fileFormat.bitRate)
        #expect(rate > 8_000 && rate < 500_000, "\(rate) b/s")
        #expect(try MediaProbe(path: path).fileFormat.bitRate == rate)
    }

    @Test func readRespectsFrameCountAndCapacity() throws {
        let dir = try TempDir("tonearm-codecs")
        defer { dir.remove() }
        let path = dir.file("short.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le"], seconds: 0.1, rate: 8000, channels: 1)
        let file = try AudioFile(path: path)
        #expect(file.length == 800)
        #expect(file.fileFormat.bitsPerSample == 16)
        #expect(file.fileFormat.bitRate == 128_000)
        #expect(file.fileFormat.channelLayout == "mono" || file.fileFormat.channelLayout == "1 channels")
        let buffer = AudioPCMBuffer(format: file.processingFormat, frameCapacity: 500)!
        try file.read(into: buffer, frameCount: 123)
        #expect(buffer.frameLength == 123)
        #expect(file.framePosition == 123)
        try file.read(into: buffer, frameCount: 10_000)
        #expect(buffer.frameLength == 500)
        try file.read(into: buffer)
        #expect(buffer.frameLength == 177)
        try file.read(into: buffer)
        #expect(buffer.frameLength == 0)
        let stereo = AudioPCMBuffer(format: .standard(sampleRate: 8000, channels: 2), frameCapacity: 10)!
        #expect(throws: TonearmError.self) { try file.read(into: stereo) }
        #expect(throws: TonearmError.self) { try file.seek(toFrame: 801) }
    }
}
