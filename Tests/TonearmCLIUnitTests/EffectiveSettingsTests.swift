// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
@testable import TonearmCLI

/// Flags over what the last run left over the config file over the defaults, for every setting,
/// with each one's source.
@Suite struct EffectiveSettingsTests {
    let path = "/c/config.toml"
    let file: ConfigFile

    init() throws {
        file = try ConfigFile.parse("""
            [playback]
            output = "null"
            device = "second"
            volume = 40
            eq = "rock"
            replaygain = "track"
            preamp = -2
            crossfade = 3
            repeat = "one"
            shuffle = true
            [keys]
            quit = ["q", "x"]
            [library]
            database = "/db.sqlite"
            folders = "/music"
            """, path: path)
    }

    func settings(_ flags: [String], file: ConfigFile?, volume: Float? = nil, resumed: SavedPlaybackSettings? = nil) throws -> EffectiveSettings {
        try EffectiveSettings(flags: try PlaybackOptions.parse(flags), file: file,
                              rememberedVolume: volume.map { Setting(value: $0, source: .remembered(path: "/s/queue.json")) },
                              resumed: resumed.map { Setting(value: $0, source: .remembered(path: "/s/settings.json")) },
                              environment: [:])
    }

    @Test func theFileOverTheDefaults() throws {
        let s = try settings([], file: file)
        #expect(s.output.value == .null && s.output.source == .file(path: path, line: 2))
        #expect(s.device.value == "second" && s.device.source == .file(path: path, line: 3))
        #expect(s.volume.value == 40 && s.volume.source == .file(path: path, line: 4))
        #expect(s.eq.value.description == "rock" && s.eq.source == .file(path: path, line: 5))
        #expect(s.replayGain.value == .track && s.replayGain.source == .file(path: path, line: 6))
        #expect(s.preamp.value == -2 && s.preamp.source == .file(path: path, line: 7))
        #expect(s.crossfade.value == 3 && s.crossfade.source == .file(path: path, line: 8))
        #expect(s.repeatMode.value == .one && s.repeatMode.source == .file(path: path, line: 9))
        #expect(s.shuffle.value == true && s.shuffle.source == .file(path: path, line: 10))
        #expect(s.keys["quit"]?.value == ["q", "x"] && s.keys["quit"]?.source == .file(path: path, line: 12))
        #expect(s.libraryDatabase.value == "/db.sqlite" && s.libraryDatabase.source == .file(path: path, line: 14))
        #expect(s.musicFolders.value == ["/music"] && s.musicFolders.source == .file(path: path, line: 15))
        let session = try s.sessionSettings(mix: false, resume: false, effects: try EffectOptions(reverb: nil, pitch: nil, effects: []))
        #expect(session.keyBindings == ["quit": ["q", "x"]])
        #expect(session.keys.action(for: "x", queueFocused: false) == .quit, "the file's [keys] reach the play screen's bindings")
        #expect(session.keyBindingPlaces == ["quit": "/c/config.toml:12"])
        #expect(session.volume == 0.4 && session.repeatMode == .one && session.shuffle && session.crossfade == 3)
    }

    @Test func flagsOverTheFile() throws {
        let s = try settings(["--output", "pulse", "--device", "third", "--volume", "70", "--eq", "jazz", "--replaygain", "album",
                              "--preamp", "1", "--crossfade", "0", "--repeat", "off", "--no-shuffle", "--rate", "1.5"], file: file)
        #expect(s.output.value == .pulse() && s.output.source == .flag("--output"))
        #expect(s.device.value == "third" && s.device.source == .flag("--device"))
        #expect(s.volume.value == 70 && s.volume.source == .flag("--volume"))
        #expect(s.eq.value.description == "jazz" && s.eq.source == .flag("--eq"))
        #expect(s.replayGain.value == .album && s.replayGain.source == .flag("--replaygain"))
        #expect(s.preamp.value == 1 && s.preamp.source == .flag("--preamp"))
        #expect(s.crossfade.value == 0 && s.crossfade.source == .flag("--crossfade"))
        #expect(s.repeatMode.value == RepeatMode.none && s.repeatMode.source == .flag("--repeat"))
        #expect(s.shuffle.value == false && s.shuffle.source == .flag("--no-shuffle"))
        #expect(s.rate.value == 1.5 && s.rate.source == .flag("--rate"))
        let db = try EffectiveSettings(flags: try PlaybackOptions.parse([]), db: "/flag.sqlite", file: file, rememberedVolume: nil,
                                       resumed: nil, environment: [:])
        #expect(db.libraryDatabase.value == "/flag.sqlite" && db.libraryDatabase.source == .flag("--db"))
    }

    @Test func theDefaultsWithoutAFile() throws {
        let s = try settings([], file: nil)
        #expect(s.output.value == nil && s.device.value == nil && s.volume.value == nil && s.repeatMode.value == nil)
        #expect(s.eq.value.description == "flat" && s.replayGain.value == .off && s.preamp.value == 0 && s.crossfade.value == 0)
        #expect(!s.shuffle.value && s.rate.value == 1 && s.keys.isEmpty && s.musicFolders.value.isEmpty)
        for source in [s.output.source, s.device.source, s.volume.source, s.eq.source, s.replayGain.source, s.preamp.source,
                       s.crossfade.source, s.repeatMode.source, s.shuffle.source, s.rate.source, s.libraryDatabase.source] {
            #expect(source == .default)
        }
        #expect(s.libraryDatabase.value == MediaLibrary.defaultPath)
    }

    /// The last run's volume over the file's; with --resume its EQ and speed over the file's EQ;
    /// flags over both.
    @Test func whatTheLastRunLeft() throws {
        let s = try settings([], file: file, volume: 0.25, resumed: SavedPlaybackSettings(eq: "31:+3.0", rate: 0.5))
        #expect(s.volume.value == 25 && s.volume.source == .remembered(path: "/s/queue.json"))
        #expect(s.eq.value.description == "31:+3.0" && s.eq.source == .remembered(path: "/s/settings.json"))
        #expect(s.rate.value == 0.5 && s.rate.source == .remembered(path: "/s/settings.json"))
        let flagged = try settings(["--volume", "90", "--eq", "pop", "--rate", "2"], file: file, volume: 0.25,
                                   resumed: SavedPlaybackSettings(eq: "31:+3.0", rate: 0.5))
        #expect(flagged.volume.value == 90 && flagged.eq.value.description == "pop" && flagged.rate.value == 2)
        // Not resuming: no remembered EQ or speed (the caller passes none), the file's EQ.
        let fresh = try settings([], file: file, volume: 0.25)
        #expect(fresh.eq.value.description == "rock" && fresh.rate.value == 1)
    }
}
