// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// Sample-exact gapless playback: one continuous recording split at an arbitrary sample, each half
/// encoded on its own, played by a ``QueuePlayer`` into the file output, must come out as the
/// unbroken original — nothing missing, nothing added, no click at the join.
@Suite  final class GaplessTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("gapless") }
    deinit { dir.remove() }

    /// Two tones per channel: any gap, overlap or repeated sample at the join shows as a large
    /// error against the original.
    static let expressions = "0.3*sin(2*PI*440*t)+0.1*sin(2*PI*3001*t)|0.3*sin(2*PI*660*t)+0.05*sin(2*PI*1234*t)"

    struct Split {
        var original: [[Float]]    // per channel, the recording as generated
        var first: String, second: String
        var join: Int
    }

    /// Generates the recording at `rate`, splits it at frame `join`, and encodes each half with
    /// `codecArgs` into files with extension `ext`.
    func split(ext: String, codecArgs: [String], rate: Int = 44100, seconds: Double = 4, join: Int) throws -> Split {
        let whole = dir.file("whole-\(ext)-\(rate).wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(Self.expressions):s=\(rate):d=\(seconds)",
                             "-c:a", "pcm_f32le", whole])
        let a = dir.file("a-\(ext).\(ext)"), b = dir.file("b-\(ext).\(ext)")
        try Fixtures.ffmpeg(["-i", whole, "-af", "atrim=end_sample=\(join)"] + codecArgs + [a])
        try Fixtures.ffmpeg(["-i", whole, "-af", "atrim=start_sample=\(join),asetpts=N/SR/TB"] + codecArgs + [b])
        return Split(original: try readWAV(whole).channels, first: a, second: b, join: join)
    }

    func decode(_ path: String) throws -> [[Float]] {
        let f = try AudioFile(path: path)
        let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: Int(f.length))!
        try f.read(into: buf)
        return buf.channelArrays()
    }

    /// Plays `paths` as a queue into a WAV file and returns its channels (and the events seen).
    func playQueue(_ paths: [String], name: String) async throws -> [[Float]] {
        try await playQueueWithEvents(paths, name: name).channels
    }

    func playQueueWithEvents(_ paths: [String], name: String) async throws -> (channels: [[Float]], events: [QueuePlayerEvent]) {
        let out = dir.file("\(name).wav")
        let q = QueuePlayer(items: paths.map { QueueItem(path: $0) }, output: { FileOutput(path: out) })
        defer { q.stop() }  // also when the wait fails: a runaway file output must not go on
        let events = q.events
        let collector = eventsUntilFinished(events)
        q.play()
        let seen = try await finished(collector, timeout: 60)
        let failures = seen.filter { if case .itemFailed = $0 { return true }; return false }
        #expect(failures.isEmpty, "\(name): \(failures)")
        return (try readWAV(out).channels, seen)
    }

    /// RMS of `a − b` over `range`, relative to the RMS of `b` there, in dB.
    func errorDB(_ a: [Float], _ b: [Float], _ range: Range<Int>) -> Double {
        var e = 0.0, s = 0.0
        for i in range {
            e += Double(a[i] - b[i]) * Double(a[i] - b[i])
            s += Double(b[i]) * Double(b[i])
        }
        return 10 * log10(max(e, 1e-30) / max(s, 1e-30))
    }

    /// The lag (−maxLag…maxLag frames) at which `a` best matches `b` over `range`.
    func bestLag(_ a: [Float], _ b: [Float], _ range: Range<Int>, maxLag: Int = 8) -> Int {
        var best = (lag: 0, error: Double.infinity)
        for lag in -maxLag...maxLag {
            var e = 0.0
            for i in range { let d = Double(a[i + lag] - b[i]); e += d * d }
            if e < best.error { best = (lag, e) }
        }
        return best.lag
    }

    /// `joinLimit`: the largest error (dB) allowed in the 4096 frames around the join. nil for
    /// AAC: FFmpeg's AAC encoder smears the abrupt start of the second half over its first
    /// frames (about −5 dB for 256 frames — the same samples FFmpeg's own decoder gives), so only
    /// the exact length, the sample-for-sample match with the decoded halves and the alignment
    /// after the join are checked there.
    static let formats: [(ext: String, args: [String], rate: Int, joinLimit: Double?)] = [
        ("wav", ["-c:a", "pcm_f32le"], 44100, -200),
        ("flac", ["-c:a", "flac", "-sample_fmt", "s32"], 44100, -90),
        ("mp3", ["-c:a", "libmp3lame", "-b:a", "256k"], 44100, -20),
        ("m4a", ["-c:a", "aac", "-b:a", "256k"], 44100, nil),
        ("ogg", ["-c:a", "libvorbis", "-q:a", "8"], 44100, -20),
        ("opus", ["-c:a", "libopus", "-b:a", "256k"], 48000, -20),
    ]

    @Test(arguments: formats.indices)
    func twoHalvesPlayAsTheUnbrokenOriginal(_ index: Int) async throws {
        let f = Self.formats[index]
        let s = try split(ext: f.ext, codecArgs: f.args, rate: f.rate, join: 100_003)
        let halves = [try decode(s.first), try decode(s.second)]
        // The decoder gives exactly the encoded halves (delay and padding removed) ...
        #expect(halves[0][0].count == s.join, "\(f.ext): first half \(halves[0][0].count) frames, cut at \(s.join)")
        #expect(halves[0][0].count + halves[1][0].count == s.original[0].count, "\(f.ext): halves do not add up")
        // ... and the queue plays them back to back, sample for sample.
        let out = try await playQueue([s.first, s.second], name: "out-\(f.ext)")
        #expect(out[0].count == s.original[0].count, "\(f.ext): played \(out[0].count) frames of \(s.original[0].count)")
        for c in 0..<2 {
            #expect(out[c] == halves[0][c] + halves[1][c], "\(f.ext): channel \(c) is not the two halves back to back")
        }
        // Around the join the result is the original (no click): as close as the codec gets
        // elsewhere. A one-sample gap would be about −24 dB at 440 Hz; this is far below.
        let n = min(out[0].count, s.original[0].count)
        guard n > s.join + 8192 else { return }
        for c in 0..<2 {
            // After the join the second half lines up with the original to the sample (a gap
            // or an overlap would shift it).
            #expect(bestLag(out[c], s.original[c], (s.join + 2048)..<(s.join + 20_000)) == 0, "\(f.ext) channel \(c) is shifted")
            guard let limit = f.joinLimit else { continue }
            let atJoin = errorDB(out[c], s.original[c], (s.join - 2048)..<(s.join + 2048))
            let elsewhere = errorDB(out[c], s.original[c], 40_000..<44_096)
            #expect(atJoin < limit, "\(f.ext) channel \(c): error at the join \(atJoin) dB (elsewhere \(elsewhere) dB)")
        }
    }

    /// Across formats: the first half FLAC, the second MP3 (and the other way round).
    @Test func acrossFormatsTheJoinStaysUnbroken() async throws {
        let flac = try split(ext: "flac", codecArgs: ["-c:a", "flac", "-sample_fmt", "s32"], join: 77_777)
        let mp3 = try split(ext: "mp3", codecArgs: ["-c:a", "libmp3lame", "-b:a", "256k"], join: 77_777)
        for (first, second, name) in [(flac.first, mp3.second, "flac-mp3"), (mp3.first, flac.second, "mp3-flac")] {
            let halves = [try decode(first), try decode(second)]
            let out = try await playQueue([first, second], name: name)
            #expect(out[0].count == flac.original[0].count, "\(name): \(out[0].count) frames")
            for c in 0..<2 {
                #expect(out[c] == halves[0][c] + halves[1][c], "\(name): channel \(c)")
                #expect(bestLag(out[c], flac.original[c], (77_777 + 2048)..<(77_777 + 20_000)) == 0, "\(name) is shifted")
                #expect(errorDB(out[c], flac.original[c], (77_777 - 2048)..<(77_777 + 2048)) < -20, "\(name): click at the join")
            }
        }
    }

    /// The measure above notices a single missing sample.
    @Test func theJoinMeasureNoticesOneMissingSample() {
        let x = (0..<20_000).map { Float(0.3 * sin(2 * Double.pi * 440 * Double($0) / 44100)) }
        var gap = x
        gap.remove(at: 10_000)
        gap.append(0)
        #expect(errorDB(gap, x, 8000..<12_000) > -30)
        #expect(errorDB(x, x, 8000..<12_000) < -200)
        #expect(bestLag(gap, x, 11_000..<15_000) == -1)
        #expect(bestLag(x, x, 11_000..<15_000) == 0)
    }

    /// Across a sample-rate change: the second half at 48 kHz is resampled to the queue's 44.1 kHz
    /// without a gap.
    @Test func acrossASampleRateChangeTheJoinStaysUnbroken() async throws {
        let s = try split(ext: "flac", codecArgs: ["-c:a", "flac", "-sample_fmt", "s32"], join: 88_200)
        let b48 = dir.file("b-48k.flac")
        try await Fixtures.ffmpeg(["-i", s.second, "-af", "aresample=48000:filter_size=64", "-c:a", "flac", "-sample_fmt", "s32", b48])
        let out = try await playQueue([s.first, b48], name: "out-resampled")
        #expect(abs(out[0].count - s.original[0].count) <= 2, "\(out[0].count) frames of \(s.original[0].count)")
        for c in 0..<2 {
            let atJoin = errorDB(out[c], s.original[c], (s.join - 2048)..<(s.join + 2048))
            #expect(atJoin < -40, "channel \(c): \(atJoin) dB at the join")
        }
    }

    /// A third format after two others, and a file that cannot be opened in between (reported,
    /// skipped, the rest still joins).
    @Test func aBadItemIsSkippedAndReported() async throws {
        let a = dir.file("ok-a.flac"), b = dir.file("ok-b.mp3")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "flac"], seconds: 0.5, rate: 44100)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "libmp3lame"], seconds: 0.5, rate: 44100)
        let bad = dir.file("bad.flac")
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: bad))
        let out = dir.file("skip.wav")
        let q = QueuePlayer(items: [a, bad, b].map { QueueItem(path: $0) }, output: { FileOutput(path: out) })
        defer { q.stop() }
        let events = q.events
        let collector = eventsUntilFinished(events)
        q.play()
        let seen = try await finished(collector, timeout: 30)
        let failures = seen.compactMap { e -> (Int, QueueItem, TonearmError)? in
            if case .itemFailed(let i, let item, let error) = e { return (i, item, error) }
            return nil
        }
        #expect(failures.count == 1)
        if let (i, item, error) = failures.first {
            #expect(i == 1 && item.path.hasSuffix("bad.flac"))
            #expect(error.description.contains("bad.flac"))
        }
        let played = try readWAV(out).channels[0].count
        let expected = try decode(a)[0].count + decode(b)[0].count
        #expect(played == expected)
    }
}
