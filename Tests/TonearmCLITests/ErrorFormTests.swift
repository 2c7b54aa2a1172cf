// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// Every subcommand reports a bad invocation in one form, through the real binary:
/// `tonearm: <what failed>: <why>` on standard error, nothing on standard output, exit status 64
/// for a usage error (with the command's own usage line and where its help is) and 1 for a
/// failure, and never a crash or a stack trace.
@Suite struct ErrorFormTests {
    /// A bad invocation and what it must give.
    struct Case: CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        /// Text the message must hold (after `tonearm: `).
        var says: String
        /// Whether standard output may have a summary (`play`'s "Done: 0 played, 1 failed").
        var summary = false
        var description: String { "tonearm " + arguments.joined(separator: " ") }
    }

    /// A library with one scanned song (artist "Nina"), an existing WAV, and missing paths.
    struct Setting {
        let dir: TempDir
        let db: String, song: String, wav: String, m4a: String, long: String, missing: String, env: [String: String]

        init() throws {
            dir = try TempDir("error-form")
            let music = dir.file("Music")
            try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
            song = "\(music)/song.flac"
            try Fixtures.tone(path: song, codecArgs: ["-c:a", "flac", "-metadata", "artist=Nina", "-metadata", "title=Song"], seconds: 0.5)
            wav = dir.file("out.wav")
            try Fixtures.tone(path: wav, codecArgs: ["-c:a", "pcm_s16le"], seconds: 0.2)
            long = dir.file("long.flac")
            try Fixtures.tone(path: long, codecArgs: ["-c:a", "flac"], seconds: 31, rate: 8000, channels: 1)
            m4a = dir.file("taken.mka")
            try Data("taken".utf8).write(to: URL(fileURLWithPath: m4a))
            db = dir.file("library.sqlite")
            missing = dir.file("nothing-here.flac")
            // No sound server and no session bus: nothing outside the test is touched.
            env = ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state"), "PULSE_SERVER": "unix:\(dir.file("no-pulse"))",
                   "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.file("no-bus"))"]
            let scan = try run(try tonearmBinary(), ["library", "scan", music, "--db", db, "--quiet"], environment: env)
            guard scan.status == 0 else { throw TestSupportError("scan failed: \(scan.stderr)") }
        }
    }

    /// One bad invocation (at least) of every subcommand.
    static func cases(_ s: Setting) -> [Case] {
        let db = ["--db", s.db]
        return [
            Case(arguments: ["plya"], status: 64, says: "plya: not a tonearm command; did you mean 'play'?"),
            Case(arguments: ["library", "sacn"], status: 64, says: "sacn: not a subcommand of tonearm library; did you mean 'scan'?"),
            Case(arguments: ["--bogus"], status: 64, says: "--bogus: unknown option"),
            Case(arguments: ["play"], status: 64, says: "play: give files, folders or playlists to play"),
            Case(arguments: ["play", "--volume", "200", s.song], status: 64, says: "play: --volume must be between 0 and 100, not 200"),
            Case(arguments: ["play", "--vlume", "3", s.song], status: 64, says: "play: unknown option '--vlume'; did you mean '--volume'?"),
            Case(arguments: ["play", "--repeat", "twice", s.song], status: 64, says: "play: --repeat must be off, one or all"),
            Case(arguments: ["play", "--output", "null", s.missing], status: 1, says: "\(s.missing): file not found", summary: true),
            Case(arguments: ["play", "--output", "null", "--artist", "chen"] + db, status: 1, says: "play: nothing in the library matches artist 'chen'"),
            Case(arguments: ["play", "--output", "null", "--playlist", "nope"] + db, status: 1, says: "no playlist named 'nope'"),
            Case(arguments: ["pick", "--view", "shelves"] + db, status: 64, says: "pick: --view must be songs, artists, albums, genres or playlists"),
            // Checked before the terminal: no terminal needed to be told.
            Case(arguments: ["pick", "--type", "podcast"] + db, status: 1, says: "pick: the library at \(s.db) has no podcasts (1 songs, 0 podcasts, 0 audiobooks)"),
            Case(arguments: ["pick"] + db, status: 2, says: "pick: standard input is not a terminal"),
            Case(arguments: ["play", "--output", "null", "--artist", "chen", "--db", s.dir.file("empty.sqlite")], status: 1,
                 says: "\(s.dir.file("empty.sqlite")): the library is empty; scan folders into it: tonearm library scan DIR"),
            Case(arguments: ["info"], status: 64, says: "info: missing expected argument '<files> ...'"),
            Case(arguments: ["info", s.missing], status: 1, says: "\(s.missing): file not found"),
            Case(arguments: ["extract-audio", s.song, "-o", s.m4a], status: 1, says: "\(s.m4a): already exists; use --force to overwrite it"),
            Case(arguments: ["extract-audio", s.song, "-o", s.dir.file("x.m4a"), "--preset", "best"], status: 64, says: "extract-audio: --preset must be one of"),
            Case(arguments: ["convert", s.song, "-o", s.wav], status: 1, says: "\(s.wav): already exists; use --force to overwrite it"),
            Case(arguments: ["convert", s.song, "-o", s.dir.file("x.wav"), "--start", "soon"], status: 64, says: "convert: --start must be seconds"),
            Case(arguments: ["thumbnail", s.song, "--at", "0", "-o", s.dir.file("t.png")], status: 1, says: "\(s.song): has no video track"),
            Case(arguments: ["thumbnail", s.song, "--at", "soon", "-o", s.dir.file("t.png")], status: 64, says: "thumbnail: --at must be seconds"),
            Case(arguments: ["thumbnail", s.song, "-o", s.dir.file("t.png")], status: 64, says: "thumbnail: give at least one --at TIME"),
            Case(arguments: ["video-frames", s.song, "-o", s.dir.file("v.y4m")], status: 1, says: "\(s.song): has no video track"),
            Case(arguments: ["video-frames", s.missing, "-o", s.dir.file("v.y4m")], status: 1, says: "\(s.missing): file not found"),
            Case(arguments: ["render", s.song, "-o", s.wav], status: 1, says: "\(s.wav): already exists; use --force to overwrite it"),
            Case(arguments: ["render", s.song, "-o", s.dir.file("x.mp3")], status: 64, says: "render: -o: the output must be a .wav file"),
            Case(arguments: ["library", "playlist", "delte", "x"], status: 64,
                 says: "delte: not a subcommand of tonearm library playlist; did you mean 'delete'?"),
            Case(arguments: ["library", "scan"], status: 64, says: "library scan: missing expected argument '<DIR> ...'"),
            Case(arguments: ["library", "watch", s.dir.path, "--debounce=-5"] + db, status: 64, says: "library watch: --debounce must be 0 or more"),
            Case(arguments: ["library", "songs", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["library", "albums", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["library", "artists", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["library", "genres", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["library", "composers", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["library", "podcasts", "--bogus"] + db, status: 64, says: "library podcasts: unknown option '--bogus'"),
            Case(arguments: ["library", "audiobooks", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["install-extras", "--completion", "tcsh"], status: 64, says: "install-extras: --completion must be bash, zsh or fish, not 'tcsh'"),
            Case(arguments: ["install-extras", "--prefix", "/proc/tonearm"], status: 1, says: "/proc/tonearm/share/man/man1/tonearm.1: cannot be written"),
            Case(arguments: ["library", "stats", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["library", "rate", "9", "--id", "1"] + db, status: 64, says: "library rate: a rating is 0 (none) to 5 stars, not 9"),
            Case(arguments: ["library", "rate", "3", "--artist", "chen"] + db, status: 1, says: "library rate: nothing in the library matches artist 'chen'"),
            Case(arguments: ["library", "playlists", "--db", s.song], status: 1, says: "\(s.song): media library"),
            Case(arguments: ["library", "playlist", "show", "nope"] + db, status: 1, says: "library playlist show: no playlist named 'nope'"),
            Case(arguments: ["library", "playlist", "create"] + db, status: 64, says: "library playlist create: missing expected argument '<name>'"),
            Case(arguments: ["library", "playlist", "add", "mix"] + db, status: 64, says: "library playlist add: give files, --id, --search, --artist or --album"),
            Case(arguments: ["library", "playlist", "rename", "a", "b"] + db, status: 1, says: "no playlist named 'a'"),
            Case(arguments: ["library", "playlist", "remove", "a", "one"] + db, status: 64, says: "library playlist remove: the value 'one' is invalid for '<position>'"),
            Case(arguments: ["library", "playlist", "move", "a", "1", "2"] + db, status: 1, says: "no playlist named 'a'"),
            Case(arguments: ["library", "playlist", "export", "a", s.dir.file("a.m3u8"), "--format", "doc"] + db, status: 64,
                 says: "library playlist export: --format is m3u, m3u8, pls or xspf"),
            Case(arguments: ["library", "playlist", "import", s.missing] + db, status: 1, says: s.missing),
            Case(arguments: ["library", "playlist", "delete", "a"] + db, status: 1, says: "no playlist named 'a'"),
            Case(arguments: ["eq", "shwo", "Rock"], status: 64, says: "shwo: not a subcommand of tonearm eq; did you mean 'show'?"),
            Case(arguments: ["eq", "list", "extra"], status: 64, says: "eq list: unexpected argument 'extra'"),
            Case(arguments: ["eq", "show", "loudest"], status: 64, says: "eq show: unknown EQ preset 'loudest'; presets: "),
            Case(arguments: ["effects", "fuzz"], status: 64, says: "effects: unknown effect 'fuzz'; effects: eq, "),
            Case(arguments: ["outputs", "--set", " "], status: 64, says: "outputs: --set needs the name of an output"),
            Case(arguments: ["inputs", "--set", " "], status: 64, says: "inputs: --set needs the name of an input"),
            Case(arguments: ["inputs", "--gain", "150"], status: 64, says: "inputs: --gain is a percentage from 0 to 100, not 150"),
            Case(arguments: ["inputs", "--mute", "--unmute"], status: 64, says: "inputs: --mute and --unmute exclude each other"),
            Case(arguments: ["inputs", "--input", "mic"], status: 64, says: "inputs: --input names the input --gain, --mute or --unmute change"),
            Case(arguments: ["outputs"], status: 1, says: "outputs: "),
            Case(arguments: ["daemon", "--listen", "nowhere"], status: 64, says: "daemon: --listen 'nowhere': expected ADDR:PORT, as in 127.0.0.1:6600"),
            Case(arguments: ["daemon", "--output", "file:x.wav"], status: 64, says: "daemon: --output: unknown output 'file:x.wav'; choose one of pulse|null|snapcast:FIFO[:RATE:BITS:CHANNELS]|http:ADDR:PORT[:flac|mp3|opus]"),
            // The daemon's client: no daemon at the address is a failure of its own (69, EX_UNAVAILABLE).
            Case(arguments: ["remote", "status", "--host", s.dir.file("no.sock")], status: 69,
                 says: "remote status: no daemon at \(s.dir.file("no.sock"))"),
            Case(arguments: ["remote", "play", "x"], status: 64, says: "remote play: the value 'x' is invalid for '<position>'"),
            Case(arguments: ["remote", "seek", "abc"], status: 64, says: "remote seek: seek takes SECONDS, [H:]M:SS, +/- before either, or N% (0–100), not 'abc'"),
            Case(arguments: ["remote", "volume", "200"], status: 64, says: "remote volume: volume takes 0–100, +N or -N, not '200'"),
            Case(arguments: ["remote", "add"], status: 64, says: "remote add: missing expected argument '<WHAT> ...'"),
            Case(arguments: ["remote", "insert"], status: 64, says: "remote insert: missing expected argument '<WHAT> ...'"),
            Case(arguments: ["remote", "search"], status: 64, says: "remote search: missing expected argument '<QUERY> ...'"),
        ] + ["pause", "toggle", "stop", "next", "prev", "clear", "queue", "current", "outputs", "idle", "screen"].map {
            Case(arguments: ["remote", $0, "--bogus"], status: 64, says: "remote \($0): unknown option '--bogus'")
        } + [
            Case(arguments: ["volume", "200"], status: 64, says: "volume: '200' is not a volume"),
            Case(arguments: ["volume", "10", "20"], status: 64, says: "volume: give one volume value, not 2"),
            Case(arguments: ["record", s.dir.file("r.wav"), "--bits", "20"], status: 64, says: "record: --bits 20: integer PCM is 8, 16, 24 or 32 bits"),
            Case(arguments: ["record", s.dir.file("r.opus"), "--rate", "44100"], status: 64,
                 says: "record: --rate 44100: Opus is recorded at 8000, 12000, 16000, 24000, 48000 Hz"),
            Case(arguments: ["record", s.dir.file("r.m4a"), "--codec", "mp3"], status: 64,
                 says: "--codec mp3: not a format the recorder writes (pcm, flac, aac, alac, opus)"),
            Case(arguments: ["record", s.dir.file("r.m4a"), "--quality", "loud"], status: 64, says: "--quality loud: not one of min, low, medium, high, max"),
            Case(arguments: ["record", s.dir.file("r.mp3")], status: 1, says: "cannot record to a '.mp3' file; the recorder writes .wav, .flac, .caf, .m4a, .aac, .opus, .ogg"),
            Case(arguments: ["sound"], status: 64, says: "sound: missing expected argument '<files> ...'"),
            Case(arguments: ["sound", "--title", "x", s.song], status: 64, says: "sound: --title and --body go with --alert"),
            Case(arguments: ["sound", s.missing], status: 1, says: "\(s.missing): file not found"),
            Case(arguments: ["sound", s.long], status: 1, says: "sound: \(s.long): a system sound may last at most 30 s; this one lasts 31.0 s"),
            Case(arguments: ["config", "--force"], status: 64, says: "config: --force goes with --init"),
            Case(arguments: ["config", "--path", "--json"], status: 64, says: "config: --path prints the path only"),
            Case(arguments: ["--config", s.missing, "config"], status: 1, says: "config: the config file has problems:"),
            Case(arguments: ["bench-eq", "--seconds", "0"], status: 64, says: "bench-eq: --seconds, --channels"),
            Case(arguments: ["bench-sound"], status: 64, says: "bench-sound: missing expected argument '<file>'"),
            Case(arguments: ["bench-library", "--runs", "0"], status: 64, says: "bench-library: missing expected argument"),
        ]
    }

    @Test func everyBadInvocationIsReportedInOneForm() throws {
        let s = try Setting()
        defer { s.dir.remove() }
        let bin = try tonearmBinary()
        let tree = try CommandTree.load(bin: bin)
        for c in Self.cases(s) {
            let r = try run(bin, c.arguments, environment: s.env)
            let first = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            #expect(r.status == c.status, "\(c): status \(r.status)\n\(r.stderr)")
            #expect(first.hasPrefix("tonearm: "), "\(c): \(r.stderr)")
            // `<what failed>: <why>`, both said.
            let rest = first.dropFirst("tonearm: ".count)
            #expect(rest.range(of: ": ").map { $0.lowerBound > rest.startIndex && $0.upperBound < rest.endIndex } == true, "\(c): \(first)")
            #expect(first.contains(c.says), "\(c): expected “\(c.says)” in\n\(r.stderr)")
            #expect(r.stdout.isEmpty || c.summary, "\(c): standard output \(r.stdout)")
            for bad in ["Error:", "error:", "Fatal error", "Stack dump", "Backtrace", "💣", "ValidationError", "TonearmError", "AudioPlayer"] {
                #expect(!r.stderr.contains(bad), "\(c): “\(bad)” in\n\(r.stderr)")
            }
            if c.status == 64 {
                // The usage of the command called (the words typed), and where its help is.
                let called = ["tonearm"] + Self.commandPath(c.arguments, in: tree)
                #expect(r.stderr.contains("\nUsage: \(called.joined(separator: " "))"), "\(c): \(r.stderr)")
                #expect(r.stderr.contains("See '\(called.joined(separator: " ")) --help' for more."), "\(c): \(r.stderr)")
            } else {
                #expect(!r.stderr.contains("Usage:"), "\(c): a failure is not a usage error\n\(r.stderr)")
            }
        }
    }

    /// The table has a case for every command the root configuration declares that runs (the
    /// leaves of the tree; a group alone prints its help), from the binary's own description of
    /// itself, not a list here.
    @Test func theTableCoversEverySubcommand() throws {
        let s = try Setting()
        defer { s.dir.remove() }
        let commands = try CommandTree.load(bin: try tonearmBinary())
        let covered = Set(Self.cases(s).map { Self.commandPath($0.arguments, in: commands).joined(separator: " ") })
        for (path, command) in commands.all where (command.subcommands ?? []).allSatisfy({ $0.commandName == "help" }) {
            #expect(covered.contains(path.joined(separator: " ")), "no bad invocation of tonearm \(path.joined(separator: " "))")
        }
    }

    /// `help`, `--help` and `--version` are not errors: standard output, status 0.
    @Test func helpAndVersionAreNotErrors() throws {
        let bin = try tonearmBinary()
        for args in [["--help"], ["--version"], ["help", "play"], ["play", "--help"], ["library", "playlist", "add", "-h"], ["library"], []] {
            let r = try run(bin, args)
            #expect(r.status == 0 && r.stderr.isEmpty && !r.stdout.isEmpty, "\(args): \(r.status) \(r.stderr)")
        }
    }

    /// The words of `arguments` that name commands (`library playlist show`), as the binary
    /// would resolve them: leading words that are not options, up to the first that is not a
    /// command of the one before.
    static func commandPath(_ arguments: [String], in tree: CommandTree) -> [String] {
        var node = tree
        var path: [String] = []
        for a in arguments where !a.hasPrefix("-") {
            guard let next = node.subcommand(named: a) else { break }
            path.append(a)
            node = next
        }
        return path
    }
}

/// The commands of `tonearm` as its `--experimental-dump-help` describes them.
struct CommandTree: Decodable, Sendable {
    struct Argument: Decodable, Sendable {
        struct Names: Decodable, Sendable { var kind: String; var name: String }
        var kind: String
        var names: [Names]?
        var valueName: String?
        var shouldDisplay: Bool
        var isOptional: Bool?
        var isRepeating: Bool?
        var allValues: [String]?

        /// ArgumentParser's own `-h/--help` and `--version`.
        var isHelpOrVersion: Bool { (names ?? []).contains { $0.name == "help" || $0.name == "version" } }
    }
    var commandName: String
    var aliases: [String]?
    var shouldDisplay: Bool?
    var abstract: String?
    var discussion: String?
    var arguments: [Argument]?
    var subcommands: [CommandTree]?

    private struct Dump: Decodable { var command: CommandTree }

    /// The tree of `bin` (read once per process).
    static func load(bin: String) throws -> CommandTree {
        let r = try run(bin, ["--experimental-dump-help"])
        guard r.status == 0 else { throw TestSupportError("--experimental-dump-help failed: \(r.stderr)") }
        return try JSONDecoder().decode(Dump.self, from: Data(r.stdout.utf8)).command
    }

    /// The subcommand called `name` (its name or an alias); `help` is ArgumentParser's own.
    func subcommand(named name: String) -> CommandTree? {
        subcommands?.first { $0.commandName == name || ($0.aliases ?? []).contains(name) }
    }

    /// Every command's path below this one (this one's is `[]`), ArgumentParser's `help` left out.
    var allPaths: [[String]] {
        [[]] + (subcommands ?? []).filter { $0.commandName != "help" }.flatMap { sub in sub.allPaths.map { [sub.commandName] + $0 } }
    }

    /// Every command below this one with its path, this one first.
    var all: [(path: [String], command: CommandTree)] {
        [([], self)] + (subcommands ?? []).filter { $0.commandName != "help" }.flatMap { sub in
            sub.all.map { ([sub.commandName] + $0.path, $0.command) }
        }
    }
}
