// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmExport
import TonearmTestSupport

/// Compositions cut, join and reorder audio; exported losslessly they hold exactly the
/// source samples in the composed order.
@Suite struct CompositionTests {
    let dir: TempDir
    let a: String, b: String
    let rate = 48000

    init() throws {
        dir = try TempDir("composition")
        a = dir.file("a.wav")
        b = dir.file("b.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t)|0.4*sin(2*PI*550*t):s=48000:d=1",
                             "-metadata", "title=First", "-c:a", "pcm_s16le", a])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.3*sin(2*PI*880*t)|0.2*sin(2*PI*990*t):s=48000:d=0.5",
                             "-metadata", "title=Second", "-c:a", "pcm_s16le", b])
    }

    /// Interleaved stereo frames `from..<to` of a file.
    func frames(_ path: String, _ from: Int, _ to: Int) throws -> [Float] {
        let f = try AudioFile(path: path)
        try f.seek(toFrame: Int64(from))
        var out = [Float](repeating: 0, count: (to - from) * 2)
        let got = try out.withUnsafeMutableBufferPointer { try f.readInterleaved(into: $0.baseAddress!, frameCount: to - from) }
        return Array(out.prefix(got * 2))
    }

    func export(_ c: Composition, to name: String, preset: ExportPreset = .lossless, range: AssetTimeRange? = nil) async throws -> [Float] {
        let out = dir.file(name)
        let s = AssetExportSession(composition: c, presetName: preset)
        s.outputURL = URL(fileURLWithPath: out)
        s.timeRange = range
        try await s.export()
        let f = try AudioFile(path: out)
        return try frames(out, 0, Int(f.length))
    }

    @Test func joinsTwoFilesEndToEnd() async throws {
        var c = Composition()
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 1), of: Asset(url: URL(fileURLWithPath: a)), at: 0)
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 0.5), of: Asset(url: URL(fileURLWithPath: b)), at: 1)
        #expect(abs(c.duration - 1.5) < 1e-12)
        let got = try await export(c, to: "joined.flac")
        #expect(got == (try frames(a, 0, 48000) + frames(b, 0, 24000)))
        #expect(try AudioFile(path: dir.file("joined.flac")).metadata.title == "First")
    }

    @Test func insertingInTheMiddleSplitsAndReorders() async throws {
        var c = Composition()
        let assetA = Asset(url: URL(fileURLWithPath: a)), assetB = Asset(url: URL(fileURLWithPath: b))
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 1), of: assetA, at: 0)
        try await c.insertTimeRange(AssetTimeRange(start: 0.25, end: 0.5), of: assetB, at: 0.5)
        // And B's first quarter second first of all.
        try await c.insertTimeRange(AssetTimeRange(start: 0, end: 0.25), of: assetB, at: 0)
        #expect(c.segments.count == 4)
        let got = try await export(c, to: "mixed.wav", preset: .pcm)
        let expected = try frames(b, 0, 12000) + frames(a, 0, 24000) + frames(b, 12000, 24000) + frames(a, 24000, 48000)
        #expect(got == expected)
    }

    @Test func removingCutsAndTheTimeRangeTrims() async throws {
        var c = Composition()
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 1), of: Asset(url: URL(fileURLWithPath: a)), at: 0)
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 0.5), of: Asset(url: URL(fileURLWithPath: b)), at: 1)
        c.removeTimeRange(AssetTimeRange(start: 0.75, end: 1.25))  // A's last quarter and B's first quarter
        #expect(abs(c.duration - 1) < 1e-12)
        let cut = try await export(c, to: "cut.flac")
        #expect(cut == (try frames(a, 0, 36000) + frames(b, 12000, 24000)))
        // An export's time range trims the composition: 0.5 … 0.9 s of it.
        let trimmed = try await export(c, to: "trim.flac", range: AssetTimeRange(start: 0.5, end: 0.9))
        #expect(trimmed == (try frames(a, 24000, 36000) + frames(b, 12000, 19200)))
    }

    @Test func segmentsAtAnotherRateOrChannelCountAreConverted() async throws {
        let mono44 = dir.file("mono44.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:duration=1:sample_rate=44100", "-c:a", "pcm_s16le", mono44])
        var c = Composition()
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 0.5), of: Asset(url: URL(fileURLWithPath: a)), at: 0)
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 0.5), of: Asset(url: URL(fileURLWithPath: mono44)), at: 0.5)
        try await c.insertTimeRange(AssetTimeRange(start: 0.5, duration: 0.5), of: Asset(url: URL(fileURLWithPath: a)), at: 1)
        let got = try await export(c, to: "converted.flac")
        let f = try AudioFile(path: dir.file("converted.flac"))
        #expect(f.processingFormat.sampleRate == 48000 && f.processingFormat.channelCount == 2)
        #expect(f.length == 72000)
        // The 48 kHz segments are exact; the middle is the 1 kHz tone, resampled, on both channels.
        #expect(Array(got[0..<48000]) == (try frames(a, 0, 24000)))
        #expect(Array(got[96000..<144000]) == (try frames(a, 24000, 48000)))
        let middle = stride(from: 48000 + 2000, to: 96000 - 2000, by: 2).map { got[$0] }
        let freq = try #require(dominantFrequency(middle, sampleRate: 48000))
        #expect(abs(freq - 1000) < 5, "\(freq) Hz")
        #expect(stride(from: 48000, to: 96000, by: 2).allSatisfy { got[$0] == got[$0 + 1] }, "mono is copied to both channels")
    }

    @Test func badTimesAndSourcesAreClearErrors() async throws {
        var c = Composition()
        try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 1), of: Asset(url: URL(fileURLWithPath: a)), at: 0)
        await #expect(throws: TonearmError.invalidArgument("insert at 3.0 s: the composition is 1.0 s long")) {
            try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 0.1), of: Asset(url: URL(fileURLWithPath: b)), at: 3)
        }
        let silent = dir.file("silent.mp4")
        try Fixtures.videoOnly(path: silent)
        await #expect(throws: TonearmError.noAudioTrack(path: silent)) {
            try await c.insertTimeRange(AssetTimeRange(start: 0, duration: 0.1), of: Asset(url: URL(fileURLWithPath: silent)), at: 0)
        }
        #expect(c.segments.count == 1, "a failed insert changes nothing")
        // Passthrough joins segments of one format only: a 44.1 kHz segment after a 48 kHz one is
        // refused, naming it, and nothing is written.
        let other = dir.file("other.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=44100", "-ac", "2", "-c:a", "pcm_s16le", other])
        var mixed = c
        try await mixed.insertTimeRange(AssetTimeRange(start: 0, duration: 0.5), of: Asset(url: URL(fileURLWithPath: other)), at: 1)
        let pass = AssetExportSession(composition: mixed, presetName: .passthrough)
        pass.outputURL = URL(fileURLWithPath: dir.file("p.wav"))
        await #expect(throws: TonearmError.invalidArgument("\(dir.file("p.wav")): segment 2 (\(other)) has 44100 Hz, not 48000 Hz — a passthrough export joins segments of one format; re-encode with another preset")) {
            try await pass.export()
        }
        let empty = AssetExportSession(composition: Composition(), presetName: .pcm)
        empty.outputURL = URL(fileURLWithPath: dir.file("e.wav"))
        await #expect(throws: TonearmError.invalidArgument("\(dir.file("e.wav")): the composition is empty")) { try await empty.export() }
        #expect(ExportFixtures.listing(dir.path) == ["a.wav", "b.wav", "other.wav", "silent.mp4"])
    }

    /// Seed 003's extraction of a video's sound, as written for iOS: a composition of the audio
    /// track's whole range, exported with the passthrough preset to CAF through
    /// `AssetExportSession(asset: composition, …)` — the packets are the source's, unchanged.
    @Test func aCompositionOfAVideosSoundExportsByPassthrough() async throws {
        let video = dir.file("clip.mp4"), out = dir.file("clip.caf")
        try ExportFixtures.mp4WithAAC(video)
        let asset = Asset(url: URL(fileURLWithPath: video))
        var c = Composition()
        for track in try await asset.tracks(withMediaType: .audio) {
            try await c.insertTimeRange(track.timeRange, of: asset, at: track.timeRange.start, trackID: track.trackID)
        }
        let session = AssetExportSession(asset: c, presetName: .passthrough)
        #expect(try await session.compatibleFileTypes().contains(.caf))
        session.outputFileType = .caf
        session.outputURL = URL(fileURLWithPath: out)
        try await session.export()
        #expect(session.status == .completed)
        #expect(try ExportFixtures.packetDigests(out) == ExportFixtures.packetDigests(video))
    }

    /// Segments of one format are joined packet for packet: two AAC files' packets, in order,
    /// in one M4A, and two PCM files' samples exactly.
    @Test func aPassthroughJoinsSegmentsOfOneFormatPacketForPacket() async throws {
        let one = dir.file("one.mp4"), two = dir.file("two.mp4"), out = dir.file("joined.m4a")
        try ExportFixtures.mp4WithAAC(one, seconds: 1)
        try ExportFixtures.mp4WithAAC(two, seconds: 1.5)
        var c = Composition()
        for path in [one, two] {
            let asset = Asset(url: URL(fileURLWithPath: path))
            try await c.insertTimeRange(AssetTimeRange(start: 0, duration: try await asset.duration), of: asset, at: c.duration)
        }
        let s = AssetExportSession(composition: c, presetName: .passthrough)
        s.outputURL = URL(fileURLWithPath: out)
        try await s.export()
        #expect(try ExportFixtures.packetDigests(out) == (try ExportFixtures.packetDigests(one) + ExportFixtures.packetDigests(two)))
        let joined = try AudioFile(path: out)
        #expect(abs(joined.duration - 2.5) < 0.05, "\(joined.duration) s")

        var pcm = Composition()
        try await pcm.insertTimeRange(AssetTimeRange(start: 0, duration: 1), of: Asset(url: URL(fileURLWithPath: a)), at: 0)
        try await pcm.insertTimeRange(AssetTimeRange(start: 0, duration: 0.5), of: Asset(url: URL(fileURLWithPath: b)), at: 1)
        let got = try await export(pcm, to: "joined.wav", preset: .passthrough)
        #expect(got == (try frames(a, 0, 48000) + frames(b, 0, 24000)))
    }
}
