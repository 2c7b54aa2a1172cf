// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// Names as the CLI prints and takes them: one spelling (kebab-case) for reverb, filter-type and
/// export presets everywhere (the old camel-case spelling still accepted), equalizer bands
/// numbered from 0 in `eq show` as in `effects eq`, and tag names printed whole by `info`.
@Suite(.offThePool)  final class NamingCommandLineTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("naming-cli") }
    deinit { dir.remove() }

    @Test func infoPrintsTagNamesWhole() throws {
        let src = dir.file("tagged.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", "-c:a", "flac", "-metadata", "title=Song",
                             "-metadata", "album_artist=The Band", "-metadata", "compilation=1",
                             "-metadata", "REPLAYGAIN_TRACK_GAIN=-6.50 dB", "-metadata", "REPLAYGAIN_ALBUM_PEAK=0.988", src])
        let r = try run(try tonearmBinary(), ["info", src])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\n  albumArtist The Band\n"), "\(r.stdout)")
        #expect(r.stdout.contains("\n  compilation yes\n"), "\(r.stdout)")
        #expect(r.stdout.contains("\n  replayGainTrackGain -6.50 dB\n"), "\(r.stdout)")
        #expect(r.stdout.contains("\n  replayGainAlbumPeak 0.988000\n"), "\(r.stdout)")
        #expect(r.stdout.contains("\n  title      Song\n"), "short names keep their column: \(r.stdout)")
    }

    @Test func exportPresetsAreKebabCaseAndTheOldSpellingStillWorks() throws {
        let src = dir.file("s.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", src])
        for (preset, out) in [("apple-m4a", "a.m4a"), ("appleM4A", "b.m4a"), ("medium-quality", "c.mp3"), ("mediumQuality", "d.mp3")] {
            let r = try run(try tonearmBinary(), ["convert", src, "-o", dir.file(out), "--preset", preset])
            #expect(r.status == 0, "--preset \(preset): \(r.stderr)")
        }
        for command in ["convert", "extract-audio"] {
            let help = try run(try tonearmBinary(), [command, "--help"])
            #expect(help.stdout.contains("apple-m4a"), "\(command) --help: \(help.stdout)")
            for old in ["appleM4A", "lowQuality", "mediumQuality", "highestQuality"] {
                #expect(!help.stdout.contains(old), "\(command) --help shows \(old)")
            }
        }
        let bad = try run(try tonearmBinary(), ["convert", src, "-o", dir.file("x.m4a"), "--preset", "best"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--preset must be one of passthrough, apple-m4a, low-quality, medium-quality, highest-quality, lossless, pcm, mp3, opus, not 'best'"), "\(bad.stderr)")
        let wrong = try run(try tonearmBinary(), ["convert", src, "-o", dir.file("x.wav"), "--preset", "apple-m4a"])
        #expect(wrong.stderr.contains("the apple-m4a preset cannot write wav files"), "\(wrong.stderr)")
    }

    @Test func effectValueNamesAreKebabCaseEverywhere() throws {
        let effects = try run(try tonearmBinary(), ["effects"])
        #expect(effects.status == 0, "\(effects.stderr)")
        #expect(effects.stdout.contains("default medium-hall (small-room, medium-room, large-room, medium-hall, large-hall, plate, medium-chamber, large-chamber, cathedral, large-room-2, medium-hall-2, medium-hall-3, large-hall-2)"), "\(effects.stdout)")
        #expect(effects.stdout.contains("resonant-low-pass"))
        for camel in ["mediumHall", "smallRoom", ", lowPass", "resonantLowShelf"] {
            #expect(!effects.stdout.contains(camel), "tonearm effects shows \(camel)")
        }
        let json = try run(try tonearmBinary(), ["effects", "reverb", "--json"])
        #expect(json.stdout.contains("\"medium-hall-2\""), "\(json.stdout)")
        // --reverb and --effect take both spellings.
        let src = dir.file("r.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.5", src])
        for (i, args) in [["--reverb", "medium-hall-2"], ["--reverb", "mediumHall2"], ["--reverb", "large-hall:40"],
                          ["--effect", "reverb:preset=medium-chamber"], ["--effect", "reverb:preset=mediumChamber"],
                          ["--effect", "eq:band0.type=low-shelf"]].enumerated() {
            let r = try run(try tonearmBinary(), ["render", src, "-o", dir.file("r\(i).wav")] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let bad = try run(try tonearmBinary(), ["render", src, "-o", dir.file("bad.wav"), "--reverb", "garage"])
        #expect(bad.stderr.contains("presets: small-room, medium-room"), "\(bad.stderr)")
        let badEffect = try run(try tonearmBinary(), ["render", src, "-o", dir.file("bad.wav"), "--effect", "reverb:preset=garage"])
        #expect(badEffect.stderr.contains("one of small-room, medium-room"), "\(badEffect.stderr)")
    }

    /// `eq show` numbers the bands as the equalizer's parameters do (`band0` … `band9`).
    @Test func eqBandsAreNumberedAlikeInEffectsAndEqShow() throws {
        let effects = try run(try tonearmBinary(), ["effects", "eq"])
        let ids = effects.stdout.split(separator: "\n").compactMap { line -> Int? in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("band"), let dot = t.firstIndex(of: "."), t[dot...].hasPrefix(".gain") else { return nil }
            return Int(t[t.index(t.startIndex, offsetBy: 4)..<dot])
        }
        #expect(ids == Array(0..<10), "\(effects.stdout)")
        let show = try run(try tonearmBinary(), ["eq", "show", "rock"])
        let rows = show.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            .filter { $0.count >= 2 && $0[1] == "parametric" }
        #expect(rows.compactMap { Int($0[0]) } == ids, "\(show.stdout)")
        // Band 0 is the 31.25 Hz band in both.
        #expect(rows.first?[2] == "31.25")
        #expect(effects.stdout.contains("band0.frequency    20…22050 hertz, default 31.25"), "\(effects.stdout)")
    }
}
