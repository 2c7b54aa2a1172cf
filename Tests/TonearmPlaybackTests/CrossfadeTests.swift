// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// Crossfades between queue items: the overlap has both, the length shrinks by the overlap, and
/// consecutive tracks of one album stay gapless.
@Suite  final class CrossfadeTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("crossfade") }
    deinit { dir.remove() }

    func tone(_ name: String, _ freq: Int, album: String, track: Int, rate: Int = 44100, seconds: Int = 3) throws -> String {
        let path = dir.file(name)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i",
                             "aevalsrc=exprs=0.3*sin(2*PI*\(freq)*t)|0.3*sin(2*PI*\(freq)*t):s=\(rate):d=\(seconds)",
                             "-metadata", "album=\(album)", "-metadata", "track=\(track)", "-c:a", "flac", path])
        return path
    }

    func play(_ paths: [String], crossfade: Double, name: String) async throws -> [Float] {
        let out = dir.file("\(name).wav")
        let q = QueuePlayer(items: paths.map { QueueItem(path: $0) }, output: { FileOutput(path: out) })
        defer { q.stop() }
        q.crossfadeDuration = crossfade
        let events = q.events
        q.play()
        _ = try await waitForEvent(events, timeout: 60, "the queue to finish") { $0 == .finished }
        return try readWAV(out).channels[0]
    }

    func decode(_ path: String) throws -> [Float] {
        let f = try AudioFile(path: path)
        let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: Int(f.length))!
        try f.read(into: buf)
        return buf.channelArrays()[0]
    }

    func power(_ x: [Float], at second: Double, _ freq: Double) -> Double {
        let start = Int(second * 44100)
        return goertzelPower(x[start..<(start + 4410)], frequency: freq, sampleRate: 44100)
    }

    @Test func itemsOfDifferentAlbumsOverlapByTheCrossfade() async throws {
        let a = try tone("a.flac", 440, album: "First", track: 1)
        let b = try tone("b.flac", 660, album: "Second", track: 1)
        let out = try await play([a, b], crossfade: 1, name: "faded")
        // 3 s + 3 s − the 1 s overlap.
        #expect(out.count == 5 * 44100, "\(out.count) frames")
        // Before the overlap only A, in its middle both, after it only B.
        #expect(power(out, at: 1.0, 440) > 100 * power(out, at: 1.0, 660))
        let mid440 = power(out, at: 2.45, 440), mid660 = power(out, at: 2.45, 660)
        #expect(mid440 > 0.1 * mid660 && mid660 > 0.1 * mid440, "overlap: \(mid440) vs \(mid660)")
        #expect(power(out, at: 3.5, 660) > 100 * power(out, at: 3.5, 440))
        // Equal power: no dip or bump in level across the overlap (two unrelated tones).
        let before = rms(out[(1 * 44100)..<(1 * 44100 + 4410)])
        let middle = rms(out[Int(2.45 * 44100)..<Int(2.45 * 44100 + 4410)])
        #expect(abs(20 * log10(middle / before)) < 1, "level \(before) → \(middle)")
    }

    @Test func itemsOfDifferentSampleRatesAreCrossfadedToo() async throws {
        // A 44.1 kHz file then a 48 kHz one (say an MP3, then an Opus): the output runs at 44.1 kHz.
        let a = try tone("r44.flac", 440, album: "First", track: 1, rate: 44100, seconds: 6)
        let b = try tone("r48.flac", 660, album: "Second", track: 1, rate: 48000, seconds: 6)
        let out = try await play([a, b], crossfade: 3, name: "rates")
        // 6 s + 6 s − the 3 s overlap, to within 5 ms (the resampler's edges).
        #expect(abs(out.count - 9 * 44100) <= 220, "\(out.count) frames, \(Double(out.count) / 44100) s")
        // Before the overlap only A, in its middle both, after it only B (converted to 44.1 kHz).
        #expect(power(out, at: 1.5, 440) > 100 * power(out, at: 1.5, 660))
        let mid440 = power(out, at: 4.45, 440), mid660 = power(out, at: 4.45, 660)
        #expect(mid440 > 0.1 * mid660 && mid660 > 0.1 * mid440, "overlap: \(mid440) vs \(mid660)")
        #expect(power(out, at: 7.5, 660) > 100 * power(out, at: 7.5, 440))
        // Equal power across the overlap, and no jump where the overlap hands over to B's rest.
        let before = rms(out[(1 * 44100)..<(1 * 44100 + 4410)])
        let middle = rms(out[Int(4.45 * 44100)..<Int(4.45 * 44100 + 4410)])
        #expect(abs(20 * log10(middle / before)) < 1, "level \(before) → \(middle)")
        let seam = 6 * 44100
        let step = (seam - 200..<seam + 200).map { abs(out[$0 + 1] - out[$0]) }.max() ?? 0
        #expect(step < 0.1, "largest sample step around the end of the overlap: \(step)")
    }

    /// A mono item crossfaded into a stereo queue, at the queue's rate and at another: in the
    /// overlap it was converted by libswresample (mono on two channels at -3 dB), after it mapped
    /// by the node (at full level), so its level jumped by 3 dB where the overlap ends.
    @Test(arguments: [44100, 48000]) func aMonoItemHasOneLevelInTheOverlapAndAfterIt(rate: Int) async throws {
        let a = try tone("st\(rate).flac", 440, album: "First", track: 1, seconds: 6)
        let b = dir.file("mono\(rate).flac")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.3*sin(2*PI*660*t):s=\(rate):d=6",
                                   "-metadata", "album=Second", "-metadata", "track=1", "-c:a", "flac", b])
        let out = try await play([a, b], crossfade: 2, name: "mono\(rate)")
        // The overlap ends at 6 s: just before it A has faded out, B (660 Hz) is all there is.
        let seam = 6 * 44100, span = 441 * 4
        let before = rms(out[(seam - span - 100)..<(seam - 100)]), after = rms(out[(seam + 100)..<(seam + span + 100)])
        let full: Float = 0.3 / Float(2).squareRoot()
        #expect(abs(20 * log10(after / full)) < 0.1, "after the overlap \(after), the file's \(full)")
        #expect(abs(20 * log10(before / after)) < 0.25, "level at the end of the overlap \(before), after it \(after)")
    }

    @Test func consecutiveTracksOfOneAlbumStayGapless() async throws {
        let a = try tone("s1.flac", 440, album: "Same", track: 1)
        let b = try tone("s2.flac", 660, album: "Same", track: 2)
        let out = try await play([a, b], crossfade: 2, name: "album")
        #expect(out.count == 6 * 44100)
        let expected = try decode(a) + decode(b)
        #expect(out == expected)
    }

    @Test func noCrossfadeIsGapless() async throws {
        let a = try tone("n1.flac", 440, album: "One", track: 1)
        let b = try tone("n2.flac", 660, album: "Two", track: 1)
        let out = try await play([a, b], crossfade: 0, name: "none")
        #expect(out == (try decode(a) + decode(b)))
    }
}
