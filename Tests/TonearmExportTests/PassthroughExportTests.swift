// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmExport
import TonearmTestSupport

/// Passthrough exports of generated videos: the packets and the decoded samples are the source's.
@Suite  final class PassthroughExportTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("passthrough") }
    deinit { dir.remove() }

    func export(_ source: String, to out: String, track: Int? = nil) async throws -> AssetExportSession {
        let session = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: source)), presetName: .passthrough)
        session.outputURL = URL(fileURLWithPath: out)
        session.audioTrackID = track
        try await session.export()
        return session
    }

    @Test(arguments: ["m4a", "mka", "mp4", "aac", "caf"])
    func aacFromMP4KeepsPacketsAndSamples(ext: String) async throws {
        let src = dir.file("aac-\(ext).mp4"), out = dir.file("out.\(ext)")
        try ExportFixtures.mp4WithAAC(src)
        let session = try await export(src, to: out)
        #expect(session.status == .completed)
        #expect(session.progress == 1)
        #expect(try ExportFixtures.packetDigests(out) == ExportFixtures.packetDigests(src))
        // Decoded by Tonearm's own decoder (encoder delay and padding honoured): the same samples.
        let a = try AudioFile(path: src), b = try AudioFile(path: out)
        #expect(b.fileFormat.codecName == "aac")
        switch ext {
        case "aac", "mka", "caf":
            // Neither ADTS nor FFmpeg 5.1's Matroska muxer can state AAC's encoder delay, and
            // FFmpeg's CAF reader ignores the one the packet table states: decoded by FFmpeg,
            // the output gives the 1024 priming samples, then exactly the source's samples.
            let ref = try ExportFixtures.decode(src), got = try ExportFixtures.decode(out)
            #expect(got.count >= ref.count + 2048)
            #expect(Array(got[2048..<(2048 + ref.count)]) == ref)
        default:
            #expect(b.length == a.length, "\(ext): \(b.length) frames, source \(a.length)")
            #expect(try samples(b) == samples(a))
        }
        #expect(ExportFixtures.listing(dir.path).filter { $0.hasPrefix(".") }.isEmpty, "temporary files left")
    }

    @Test func aacInCAFStatesTheEncoderDelayAndLength() async throws {
        let src = dir.file("aac.mp4"), out = dir.file("out.caf")
        try ExportFixtures.mp4WithAAC(src)
        _ = try await export(src, to: out)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        func be(_ o: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 << 8 | Int(bytes[o + $1]) } }
        let pakt = try #require((0..<(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual("pakt".utf8) })
        let body = pakt + 12
        #expect(be(body, 8) == 95)           // packets: (96000 + 1024) / 1024 rounded up
        #expect(be(body + 8, 8) == 96000)    // valid frames: the source's length
        #expect(be(body + 16, 4) == 1024)    // priming frames
        #expect(be(body + 20, 4) == 95 * 1024 - 96000 - 1024)
        #expect(try await Asset(url: URL(fileURLWithPath: out)).metadata.common.title == "Clip Title")
    }

    @Test(arguments: ["opus", "ogg", "mka"])
    func opusFromMKVKeepsPacketsAndSamples(ext: String) async throws {
        let src = dir.file("opus-\(ext).mkv"), out = dir.file("out.\(ext)")
        try ExportFixtures.mkvWithOpus(src)
        _ = try await export(src, to: out)
        #expect(try ExportFixtures.packetDigests(out) == ExportFixtures.packetDigests(src))
        let a = try AudioFile(path: src), b = try AudioFile(path: out)
        #expect(b.length == a.length)
        #expect(try samples(b) == samples(a))
        #expect(try AudioFile(path: out).metadata.title == "Opus Clip")
    }

    @Test func chosenTrackOfATwoTrackVideo() async throws {
        let src = dir.file("two.mp4"), out = dir.file("second.m4a")
        try ExportFixtures.mp4WithTwoAudioTracks(src)
        _ = try await export(src, to: out, track: 2)
        #expect(try ExportFixtures.packetDigests(out) == ExportFixtures.packetDigests(src, map: "0:a:1"))
        #expect(try AudioFile(path: out).fileFormat.sampleRate == 44100)
        #expect(try ExportFixtures.decode(out) == ExportFixtures.decode(src, map: "0:a:1"))
        // The default is the first audio track.
        let first = dir.file("first.m4a")
        _ = try await export(src, to: first)
        #expect(try ExportFixtures.packetDigests(first) == ExportFixtures.packetDigests(src, map: "0:a:0"))
        // A video track is not an audio track.
        await #expect(throws: TonearmError.noSuchTrack(path: src, track: 0, detail: "it is a video track; audio tracks: #1, #2")) {
            _ = try await export(src, to: dir.file("video.m4a"), track: 0)
        }
    }

    @Test func aPassthroughTrimKeepsThePacketsOverlappingTheRange() async throws {
        let src = dir.file("trim.mp4"), out = dir.file("trim.m4a")
        try ExportFixtures.mp4WithAAC(src, seconds: 4)
        let session = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: .passthrough)
        session.outputURL = URL(fileURLWithPath: out)
        session.timeRange = AssetTimeRange(start: 1, end: 2.5)
        try await session.export()
        let all = try ExportFixtures.packetDigests(src), kept = try ExportFixtures.packetDigests(out)
        // AAC packets are 1024 frames; the source's first starts at -1024 (the encoder delay).
        // Packets overlapping 48000 ..< 120000: those starting at 47104 … 119808.
        let first = (47104 + 1024) / 1024, last = (119808 + 1024) / 1024
        #expect(kept == Array(all[first...last]))
        #expect(abs(try await Asset(url: URL(fileURLWithPath: out)).duration - Double(kept.count * 1024) / 48000) < 0.03)
    }

    @Test(arguments: ["opus", "mka"])
    func aTrimmedOpusPassthroughStartsAtZero(ext: String) async throws {
        let src = dir.file("opus-trim-\(ext).mkv"), out = dir.file("trim.\(ext)")
        try ExportFixtures.mkvWithOpus(src, seconds: 3)
        let session = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: .passthrough)
        session.outputURL = URL(fileURLWithPath: out)
        session.timeRange = AssetTimeRange(start: 1, end: 2)
        try await session.export()
        let track = try #require(try await Asset(url: URL(fileURLWithPath: out)).tracks(withMediaType: .audio).first)
        #expect(track.timeRange.start < 0.001, "starts at \(track.timeRange.start) s")
        // 20 ms packets overlapping the second: 50 of them, or 51 when the range cuts one.
        let kept = try ExportFixtures.packetDigests(out)
        #expect((50...51).contains(kept.count), "\(kept.count) packets")
        let all = try ExportFixtures.packetDigests(src)
        let at = try #require(all.firstIndex(of: kept[0]))
        #expect(Array(all[at..<(at + kept.count)]) == kept)
    }

    @Test func tagsAndLanguageAreCarriedOver() async throws {
        let src = dir.file("tagged.mp4"), out = dir.file("tagged.mka")
        try ExportFixtures.mp4WithAAC(src)
        _ = try await export(src, to: out)
        let asset = Asset(url: URL(fileURLWithPath: out))
        let m = try await asset.metadata
        #expect(m.common.title == "Clip Title")
        #expect(m.common.artist == "Clip Artist")
        #expect(m.formatSpecific["major_brand"] == nil)
        #expect(try await asset.tracks(withMediaType: .audio).first?.language == "eng")
    }

    @Test func aVideoWithoutAudioIsAClearError() async throws {
        let src = dir.file("silent.mp4")
        try ExportFixtures.videoOnly(src)
        await #expect(throws: TonearmError.noAudioTrack(path: src)) { _ = try await export(src, to: dir.file("x.m4a")) }
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.m4a")))
    }

    @Test func aacIntoWAVIsNotCompatibleAndSaysWhatIs() async throws {
        let src = dir.file("aac.mp4"), out = dir.file("out.wav")
        try ExportFixtures.mp4WithAAC(src)
        let session = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: src)), presetName: .passthrough)
        #expect(session.supportedFileTypes.contains(.wav))
        let compatible = try await session.compatibleFileTypes()
        #expect(compatible == [.m4a, .mp4, .caf, .mka, .aac])
        session.outputURL = URL(fileURLWithPath: out)
        do {
            try await session.export()
            Issue.record("AAC was written into WAV")
        } catch {
            #expect(error == .incompatibleFileType(path: out, codec: "aac", fileType: "wav", compatible: ["m4a", "mp4", "caf", "mka", "aac"]))
            #expect(error.description.contains("compatible file types: m4a, mp4, caf, mka, aac"))
        }
        #expect(session.status == .failed)
        #expect(ExportFixtures.listing(dir.path) == ["aac.mp4"])
    }

    /// Every sample of `f`, interleaved.
    func samples(_ f: AudioFile) throws -> [Float] {
        let n = Int(f.length), ch = f.processingFormat.channelCount
        var out = [Float](repeating: 0, count: n * ch)
        let got = try out.withUnsafeMutableBufferPointer { try f.readInterleaved(into: $0.baseAddress!, frameCount: n) }
        return Array(out.prefix(got * ch))
    }
}
