// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// The config file and the remembered settings as a user meets them: through the real
/// binary, measured in what `play --output file:` writes.
@Suite(.serialized) struct ConfigCLITests {
    let dir: TempDir
    let tone: String
    /// Everything the binary reads points into the test's folder.
    let env: [String: String]

    init() throws {
        dir = try TempDir("config-cli")
        tone = dir.file("tone.wav")
        // 1 kHz at amplitude 0.25, 1 s, 48 kHz float: what an EQ band at 1 kHz and the volume act on.
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*1000*t):s=48000:d=1", "-c:a", "pcm_f32le", tone])
        env = ["HOME": dir.path, "XDG_CONFIG_HOME": dir.file("config"), "XDG_STATE_HOME": dir.file("state"),
               "XDG_DATA_HOME": dir.file("data"), "TONEARM_CONFIG": ""]
    }

    /// Runs tonearm with the test's environment (and `extra`).
    func tonearm(_ arguments: [String], _ extra: [String: String] = [:]) throws -> RunResult {
        try run(try tonearmBinary(), arguments, environment: env.merging(extra) { $1 })
    }

    func write(_ text: String, to name: String) throws -> String {
        let path = dir.file(name)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The level of the middle of a written WAV relative to the tone's, in dB.
    func level(_ wav: String) throws -> Double {
        let w = try readWAV(wav)
        let body = w.channels[0][9600..<(w.frameCount - 9600)]
        return 20 * log10(Double(rms(body)) / (0.25 / 2.0.squareRoot()))
    }

    /// Expects the middle of `wav` at `db` relative to the tone.
    func expectLevel(_ wav: String, _ db: Double, within tolerance: Double, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let measured = try level(wav)
        #expect(abs(measured - db) < tolerance, "\(measured) dB, not \(db)", sourceLocation: sourceLocation)
    }

    @Test func flagsWinOverTheFileWhichWinsOverTheDefaults() throws {
        let fromFile = dir.file("from-file.wav")
        let config = try write("""
            [playback]
            output = "file:\(fromFile)"
            eq = "1k:-6"
            """, to: "config/tonearm/config.toml")
        // The file: its output and its EQ.
        let a = try tonearm(["play", tone])
        #expect(a.status == 0, "\(a.stderr)")
        try expectLevel(fromFile, -6, within: 0.2)
        // A flag over the file.
        let fromFlag = dir.file("from-flag.wav")
        let b = try tonearm(["play", "--output", "file:\(fromFlag)", "--eq", "1k:-12", tone])
        #expect(b.status == 0, "\(b.stderr)")
        try expectLevel(fromFlag, -12, within: 0.2)
        // No file: the defaults (flat).
        try FileManager.default.removeItem(atPath: config)
        let byDefault = dir.file("default.wav")
        let c = try tonearm(["play", "--output", "file:\(byDefault)", tone])
        #expect(c.status == 0, "\(c.stderr)")
        try expectLevel(byDefault, 0, within: 0.1)

        // `tonearm config --json` says where each came from.
        let named = try write("[playback]\neq = \"rock\"\nshuffle = true\n\n[keys]\nquit = [\"q\", \"x\"]\n", to: "named.toml")
        let shown = try tonearm(["--config", named, "config", "--json", "--crossfade", "2", "--no-shuffle"])
        #expect(shown.status == 0, "\(shown.stderr)")
        struct Shown: Decodable {
            struct Source: Decodable { var source: String; var file: String?; var line: Int?; var flag: String?; var variable: String? }
            struct Value: Decodable { var source: String; var file: String?; var line: Int?; var flag: String? }
            var configFile: Source
            var settings: [String: Value]
        }
        let s = try JSONDecoder().decode(Shown.self, from: Data(shown.stdout.utf8))
        #expect(s.configFile.source == "flag" && s.configFile.flag == "--config")
        #expect(s.settings["playback.eq"]?.source == "file" && s.settings["playback.eq"]?.line == 2 && s.settings["playback.eq"]?.file == named)
        #expect(s.settings["playback.crossfade"]?.source == "flag" && s.settings["playback.crossfade"]?.flag == "--crossfade")
        #expect(s.settings["playback.shuffle"]?.flag == "--no-shuffle")
        #expect(s.settings["playback.replaygain"]?.source == "default")
        #expect(s.settings["keys.quit"]?.line == 6)
        #expect(s.settings["library.database"]?.source == "environment")
        // The same as text: one line per setting with its source.
        let text = try tonearm(["config", "--config", named, "--volume", "30"])
        #expect(text.stdout.contains("Config file: \(named) (flag --config)"), "\(text.stdout)")
        #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix("playback.eq ") && $0.hasSuffix("config file \(named):2") },
                "\(text.stdout)")
        #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix("playback.volume ") && $0.contains(" 30 ") && $0.hasSuffix("flag --volume") },
                "\(text.stdout)")
    }

    /// The file's device goes with a PulseAudio output only: another output passes it over, and
    /// a --device flag against the file's output that is not PulseAudio is refused.
    @Test func aDeviceAppliesToPulseAudioOnly() throws {
        _ = try write("[playback]\ndevice = \"phones\"\n", to: "config/tonearm/config.toml")
        let out = dir.file("null-device.wav")
        let r = try tonearm(["play", "--output", "file:\(out)", tone])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: out))
        let shown = try tonearm(["config", "--output", "null"])
        #expect(shown.stdout.split(separator: "\n").contains { $0.hasPrefix("playback.device ") && $0.hasSuffix(" default") }, "\(shown.stdout)")
        _ = try write("[playback]\noutput = \"null\"\n", to: "config/tonearm/config.toml")
        let refused = try tonearm(["play", "--device", "phones", tone])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--device chooses a PulseAudio output; it does not apply to the config file's output null"),
                "\(refused.stderr)")
    }

    @Test func theVolumeIsTheLastRunsUnlessAFlagSetsIt() throws {
        let config = try write("[playback]\nvolume = 50\n", to: "config/tonearm/config.toml")
        // The first run: the file's volume.
        let first = dir.file("first.wav")
        #expect(try tonearm(["play", "--output", "file:\(first)", tone]).status == 0)
        try expectLevel(first, 20 * log10(0.5), within: 0.1)
        // --volume 25 for one run…
        let flagged = dir.file("flagged.wav")
        #expect(try tonearm(["play", "--output", "file:\(flagged)", "--volume", "25", tone]).status == 0)
        try expectLevel(flagged, 20 * log10(0.25), within: 0.1)
        // …is where the next one starts, over the file's 50.
        let next = dir.file("next.wav")
        let r = try tonearm(["play", "--output", "file:\(next)", tone])
        #expect(r.status == 0, "\(r.stderr)")
        try expectLevel(next, 20 * log10(0.25), within: 0.1)
        let shown = try tonearm(["config"])
        #expect(shown.stdout.split(separator: "\n").contains {
            $0.hasPrefix("playback.volume ") && $0.contains(" 25 ") && $0.hasSuffix("remembered in \(dir.file("state"))/tonearm/queue.json")
        }, "\(shown.stdout)")
        _ = config
    }

    @Test func anInvalidFileIsAnErrorBeforeAnythingPlays() throws {
        let config = try write("""
            [playback]
            volume = 150
            shufle = true

            [library]
            folders = [1, 2]
            """, to: "config/tonearm/config.toml")
        let out = dir.file("never.wav")
        let r = try tonearm(["play", "--output", "file:\(out)", tone])
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(config):2: 'playback.volume' must be between 0 and 100, not 150"), "\(r.stderr)")
        #expect(r.stderr.contains("\(config):3: unknown key 'playback.shufle'; did you mean 'playback.shuffle'?"), "\(r.stderr)")
        #expect(r.stderr.contains("\(config):6: 'library.folders' must be a string or an array of strings"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(r.stdout.isEmpty)
        // Not TOML at all: the line and column.
        try "[playback\nvolume = 1\n".write(toFile: config, atomically: true, encoding: .utf8)
        let syntax = try tonearm(["config"])
        #expect(syntax.status == 1)
        #expect(syntax.stderr.contains("\(config):1:"), "\(syntax.stderr)")
        #expect(syntax.stderr.contains("not valid TOML"), "\(syntax.stderr)")
        // A file named by --config or TONEARM_CONFIG must exist.
        let missing = dir.file("missing.toml")
        for (args, extra) in [(["--config", missing, "play", tone], [String: String]()), (["play", tone], ["TONEARM_CONFIG": missing])] {
            let m = try tonearm(args, extra)
            #expect(m.status == 1)
            #expect(m.stderr.contains("\(missing): cannot be read: there is no such file"), "\(m.stderr)")
        }
    }

    @Test func configPathAndInit() throws {
        let byDefault = dir.file("config") + "/tonearm/config.toml"
        #expect(try tonearm(["config", "--path"]).stdout == byDefault + "\n")
        let home = try tonearm(["config", "--path"], ["XDG_CONFIG_HOME": ""])
        #expect(home.stdout == dir.path + "/.config/tonearm/config.toml\n")
        #expect(try tonearm(["config", "--path"], ["TONEARM_CONFIG": "/etc/t.toml"]).stdout == "/etc/t.toml\n")
        #expect(try tonearm(["--config", "/x/y.toml", "config", "--path"], ["TONEARM_CONFIG": "/etc/t.toml"]).stdout == "/x/y.toml\n")

        let written = try tonearm(["config", "--init"])
        #expect(written.status == 0, "\(written.stderr)")
        let text = try String(contentsOfFile: byDefault, encoding: .utf8)
        #expect(text.contains("# volume = 80"))
        // Valid, and every setting commented out: all defaults.
        let shown = try tonearm(["config"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Config file: \(byDefault) (environment XDG_CONFIG_HOME)"))
        #expect(!shown.stdout.contains("config file \(byDefault):"), "\(shown.stdout)")
        // Never overwritten without --force.
        try "[playback]\nvolume = 7\n".write(toFile: byDefault, atomically: true, encoding: .utf8)
        let again = try tonearm(["config", "--init"])
        #expect(again.status == 1 && again.stderr.contains("already exists; use --force to overwrite it"), "\(again.stderr)")
        #expect(try String(contentsOfFile: byDefault, encoding: .utf8) == "[playback]\nvolume = 7\n")
        #expect(try tonearm(["config", "--init", "--force"]).status == 0)
        #expect(try String(contentsOfFile: byDefault, encoding: .utf8) == text)
        #expect(try tonearm(["config", "--force"]).status == 64)
    }

    /// `[library] database` is where the library commands and `play --artist` look when `--db`
    /// is not given (relative to the config file's folder).
    @Test func theLibraryDatabaseComesFromTheFile() throws {
        _ = try write("[library]\ndatabase = \"lib/music.sqlite\"\n", to: "config/tonearm/config.toml")
        let stats = try tonearm(["library", "stats"])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("config/tonearm/lib/music.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: dir.file("data/tonearm/library.sqlite")))
        let other = dir.file("other.sqlite")
        #expect(try tonearm(["library", "stats", "--db", other]).status == 0)
        #expect(FileManager.default.fileExists(atPath: other))
        let named = try write("[library]\ndatabase = \"\(dir.file("named.sqlite"))\"\n", to: "named.toml")
        #expect(try tonearm(["--config", named, "library", "stats"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: dir.file("named.sqlite")))
        let play = try tonearm(["play", "--output", "file:\(dir.file("x.wav"))", "--artist", "nobody"])
        #expect(play.stderr.contains("the library is empty"), "\(play.stderr)")
    }

    /// `--resume` brings back the EQ and speed the last run ended with, and `play --resume DIR`
    /// does not add DIR's files to the saved queue a second time.
    @Test func resumeRestoresTheSoundAndDoesNotAppendTheSameFilesAgain() throws {
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        for name in ["a", "b"] {
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*1000*t):s=48000:d=1", "-c:a", "pcm_f32le",
                                 "\(music)/\(name).wav"])
        }
        let first = dir.file("first.wav")
        let r1 = try tonearm(["play", "--output", "file:\(first)", "--eq", "1k:-6", "--rate", "2", music])
        #expect(r1.status == 0, "\(r1.stderr)")
        let resumed = dir.file("resumed.wav")
        let r2 = try tonearm(["play", "--resume", "--output", "file:\(resumed)", music])
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(r2.stdout.contains("Playing 2/2"), "\(r2.stdout)")
        #expect(!r2.stdout.contains("/4"), "\(r2.stdout)")
        struct Saved: Decodable { var items: [Item]; struct Item: Decodable {} }
        let saved = try JSONDecoder().decode(Saved.self, from: Data(contentsOf: URL(fileURLWithPath: dir.file("state/tonearm/queue.json"))))
        #expect(saved.items.count == 2)
        // Twice as fast (2 s of tone in about 1 s) and 6 dB down, as the first run.
        let w = try readWAV(resumed)
        let sounding = try #require(nonSilentSpan(w.channels[0], sampleRate: 48000))
        #expect(abs(sounding.count - 48000) <= 1920, "sounding \(sounding.count) frames")
        let body = w.channels[0][(sounding.lowerBound + 4800)..<(sounding.upperBound - 4800)]
        let db = 20 * log10(Double(rms(body)) / (0.25 / 2.0.squareRoot()))
        #expect(abs(db + 6) < 0.5, "\(db) dB")
        // A flag still wins over what is resumed.
        let flat = dir.file("flat.wav")
        #expect(try tonearm(["play", "--resume", "--output", "file:\(flat)", "--eq", "flat"]).status == 0)
        try expectLevel(flat, 0, within: 0.5)
    }
}
