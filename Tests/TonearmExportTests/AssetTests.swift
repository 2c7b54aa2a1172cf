// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmExport
import TonearmTestSupport

/// `Asset`: tracks, durations, languages, tags of generated media, and its errors.
@Suite  final class AssetTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("asset") }
    deinit { dir.remove() }

    @Test func listsEveryTrackOfAVideoWithTwoAudioTracks() async throws {
        let f = dir.file("two.mp4")
        try ExportFixtures.mp4WithTwoAudioTracks(f)
        let asset = Asset(url: URL(fileURLWithPath: f))
        let tracks = try await asset.tracks
        #expect(tracks.map(\.mediaType) == [.video, .audio, .audio])
        let audio = try await asset.tracks(withMediaType: .audio)
        #expect(audio.map(\.trackID) == [1, 2])
        #expect(audio.map(\.codecName) == ["aac", "aac"])
        #expect(audio.map(\.language) == ["eng", "fra"])
        #expect(audio.map(\.formatDescription.sampleRate) == [48000, 44100])
        #expect(audio.allSatisfy { abs($0.timeRange.duration - 2) < 0.05 })
        #expect(tracks[0].formatDescription.width == 64)
        #expect(abs(try await asset.duration - 2) < 0.05)
    }

    @Test func readsCommonAndContainerTags() async throws {
        let f = dir.file("aac.mp4")
        try ExportFixtures.mp4WithAAC(f)
        let m = try await Asset(url: URL(fileURLWithPath: f)).metadata
        #expect(m.common.title == "Clip Title")
        #expect(m.common.artist == "Clip Artist")
        #expect(m.formatSpecific["title"] == "Clip Title")
        #expect(m.formatSpecific["major_brand"] != nil)
    }

    @Test func aVideoWithoutAudioHasNoAudioTracks() async throws {
        let f = dir.file("silent.mp4")
        try ExportFixtures.videoOnly(f)
        let asset = Asset(url: URL(fileURLWithPath: f))
        #expect(try await asset.tracks(withMediaType: .audio).isEmpty)
        #expect(try await asset.tracks(withMediaType: .video).count == 1)
    }

    @Test func badInputGivesTypedErrorsNamingTheFile() async throws {
        let missing = dir.file("missing.mp4")
        await #expect(throws: TonearmError.fileNotFound(path: missing)) { try await Asset(url: URL(fileURLWithPath: missing)).load() }
        let text = dir.file("notes.mp4")
        try "just some words, not a video\n".write(toFile: text, atomically: true, encoding: .utf8)
        do {
            _ = try await Asset(url: URL(fileURLWithPath: text)).load()
            Issue.record("a text file loaded as media")
        } catch {
            guard case .notMediaFile(let p, _) = error else { Issue.record("got \(error)"); return }
            #expect(p == text)
        }
        await #expect(throws: TonearmError.invalidURL("https://example.com/a.mp4")) {
            try await Asset(url: URL(string: "https://example.com/a.mp4")!).load()
        }
    }
}
