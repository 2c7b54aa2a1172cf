// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
import TonearmConfig
@testable import TonearmCLI

/// `config.toml` read and checked: every key, and every kind of problem with its line and key.
@Suite struct ConfigFileTests {
    let path = "/home/u/.config/tonearm/config.toml"

    func parse(_ text: String) throws -> ConfigFile { try ConfigFile.parse(text, path: path) }

    /// The problems `text` has, as (line, key, message).
    func problems(_ text: String) -> [ConfigProblem] {
        do {
            _ = try ConfigFile.parse(text, path: path)
            Issue.record("no error for:\n\(text)")
            return []
        } catch {
            #expect(error.path == path)
            return error.problems
        }
    }

    @Test func everyKeyIsRead() throws {
        let c = try parse("""
            # a comment
            [playback]
            output = "file:/tmp/out.wav"
            device = "second"
            volume = 70
            eq = "rock"
            replaygain = "album"
            preamp = -3.5
            crossfade = 2          # an integer is a number too
            repeat = "all"
            shuffle = true

            [keys]
            quit = ["q", "Q"]
            next = "n"
            "volume up" = ["+", "="]

            [library]
            database = "~/music/library.sqlite"
            folders = ["/srv/music", "Music", "~/More Music"]
            """)
        let p = c.playback
        #expect(p.output == .file(path: "/tmp/out.wav"))
        #expect(p.device == "second")
        #expect(p.volume == 70)
        #expect(p.eq?.description == "rock")
        #expect(p.replayGain == .album)
        #expect(p.preamp == -3.5)
        #expect(p.crossfade == 2)
        #expect(p.repeatMode == .all)
        #expect(p.shuffle == true)
        #expect(c.keys == ["quit": ["q", "Q"], "next": ["n"], "volume up": ["+", "="]])
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        #expect(c.library.database == home + "/music/library.sqlite")
        #expect(c.library.folders == ["/srv/music", "/home/u/.config/tonearm/Music", home + "/More Music"])
        // Each key's line.
        #expect(c.line(of: "playback.output") == 3)
        #expect(c.line(of: "playback.crossfade") == 9)
        #expect(c.line(of: "playback.shuffle") == 11)
        #expect(c.line(of: "keys.quit") == 14)
        #expect(c.line(of: "keys.volume up") == 16)
        #expect(c.line(of: "library.folders") == 20)
    }

    @Test func anEmptyFileAndEmptyTablesSetNothing() throws {
        for text in ["", "# nothing\n", "[playback]\n[keys]\n[library]\n"] {
            let c = try parse(text)
            #expect(c.playback.volume == nil && c.playback.output == nil && c.keys.isEmpty && c.library.database == nil)
        }
        // A band spec for the EQ; off for repeat.
        let c = try parse("[playback]\neq = \"31:+3,1k:-2\"\nrepeat = \"off\"\nshuffle = false\n")
        #expect(c.playback.eq?.description == "31:+3.0,1000:-2.0")
        #expect(c.playback.repeatMode == RepeatMode.none)
        #expect(c.playback.shuffle == false)
    }

    @Test func dottedKeysAndInlineTablesHaveTheirLines() throws {
        let c = try parse("""
            playback.volume = 40
            library = { database = "/db.sqlite" }
            [keys]
            pause = [
              " ",
              "p",
            ]
            seek = ["left"]
            """)
        #expect(c.playback.volume == 40)
        #expect(c.line(of: "playback.volume") == 1)
        #expect(c.library.database == "/db.sqlite")
        #expect(c.line(of: "library.database") == 2)
        #expect(c.keys["pause"] == [" ", "p"])
        #expect(c.line(of: "keys.pause") == 4)
        #expect(c.line(of: "keys.seek") == 8)
    }

    /// What is inside multi-line strings, comments and multi-line arrays is not a key.
    @Test func keysInsideStringsAndCommentsAreNotKeys() throws {
        let c = try parse(#"""
            [keys]
            help = '''
            volume = 3
            [playback]
            '''
            # shuffle = true
            pause = [ # a comment [with brackets
              "p", "[",
              " ]" ]
            quit = """q"""   # one line
            next = "n" # [library]
            """#)
        #expect(c.keys["help"] == ["volume = 3\n[playback]\n"])
        #expect(c.keys["pause"] == ["p", "[", " ]"])
        #expect(c.keys["quit"] == ["q"])
        #expect(c.line(of: "keys.pause") == 7)
        #expect(c.line(of: "keys.quit") == 10)
        #expect(c.line(of: "keys.next") == 11)
        #expect(c.line(of: "keys.volume") == 1)  // no such key: its table's line
        #expect(c.playback.volume == nil && c.playback.shuffle == nil)
    }

    @Test func aSyntaxErrorNamesItsLineAndColumn() {
        let p = problems("""
            [playback]
            volume = 70
            eq = "rock
            """)
        #expect(p.count == 1)
        #expect(p.first?.line == 3)
        #expect(p.first?.column != nil)
        guard case .syntax? = p.first?.kind else { Issue.record("\(p)"); return }
        // Twice the same key is not TOML either.
        let twice = problems("[playback]\nvolume = 1\nvolume = 2\n")
        #expect(twice.first?.line == 3)
    }

    @Test func unknownKeysAreNamedWithTheNearestKnownOne() throws {
        let p = problems("""
            [playback]
            volum = 70
            replay_gain = "track"
            database = "/x.sqlite"
            colour = "red"
            [library]
            folder = ["/m"]
            [playbak]
            volume = 3
            """)
        #expect(p.map(\.line) == [2, 3, 4, 5, 7, 8])
        #expect(p.map(\.key) == ["playback.volum", "playback.replay_gain", "playback.database", "playback.colour", "library.folder", "playbak"])
        #expect(p.map(\.kind) == [.unknownKey(suggestion: "playback.volume"), .unknownKey(suggestion: "playback.replaygain"),
                                  .unknownKey(suggestion: "library.database"), .unknownKey(suggestion: nil),
                                  .unknownKey(suggestion: "library.folders"), .unknownTable(suggestion: "playback")])
        // At the top level, a setting that belongs in a table.
        let top = problems("volume = 50\nshufle = true\n")
        #expect(top.map(\.kind) == [.unknownKey(suggestion: "playback.volume"), .unknownKey(suggestion: "playback.shuffle")])
        #expect(top.map(\.line) == [1, 2])
        let error = ConfigError(path: path, problems: p)
        #expect(error.description.components(separatedBy: "\n")[0]
                == "/home/u/.config/tonearm/config.toml:2: unknown key 'playback.volum'; did you mean 'playback.volume'?")
        #expect(error.description.contains("config.toml:8: unknown table [playbak]; did you mean [playback]?"))
        #expect(error.description.contains("config.toml:5: unknown key 'playback.colour'\n"))
    }

    @Test func keyBindingsAreCheckedAgainstThePlayScreensActionsAndKeys() throws {
        let c = try parse("""
            [keys]
            quit = ["q", "x"]
            pasue = "p"
            mute = "ctrl-shift-banana"
            """)
        let p = c.keyBindingProblems()
        #expect(p.map(\.key) == ["keys.mute", "keys.pasue"] && p.map(\.line) == [4, 3], "\(p)")
        let text = ConfigError(path: path, problems: p).description
        #expect(text.contains("config.toml:3: 'keys.pasue': unknown key action 'pasue'"), "\(text)")
        #expect(text.contains("did you mean 'pause'?"), "\(text)")
        #expect(text.contains("config.toml:4: 'keys.mute': unknown key 'ctrl-shift-banana' for 'mute'"), "\(text)")
        #expect(try parse("[keys]\nquit = [\"q\", \"ctrl-q\"]\npause = \"space\"\n").keyBindingProblems().isEmpty,
                "good bindings are no problem")
    }

    @Test func wrongTypesAreNamedWithWhatWasExpected() {
        let p = problems("""
            [playback]
            volume = "loud"
            shuffle = "yes"
            preamp = "3 dB"
            output = 1
            [keys]
            quit = 113
            next = ["n", 2]
            [library]
            folders = "/music"
            database = ["/a", "/b"]
            """)
        // A single folder as a string is accepted (like a single key).
        #expect(p.map(\.line) == [2, 3, 4, 5, 7, 8, 11])
        #expect(p.map(\.key) == ["playback.volume", "playback.shuffle", "playback.preamp", "playback.output", "keys.quit", "keys.next",
                                 "library.database"])
        #expect(p[0].kind == .wrongType(expected: "an integer", found: "a string (\"loud\")"))
        #expect(p[1].kind == .wrongType(expected: "true or false", found: "a string (\"yes\")"))
        #expect(p[2].kind == .wrongType(expected: "a number", found: "a string (\"3 dB\")"))
        #expect(p[3].kind == .wrongType(expected: "a string", found: "an integer (1)"))
        #expect(p[4].kind == .wrongType(expected: "a string or an array of strings", found: "an integer (113)"))
        #expect(p[5].kind == .wrongType(expected: "a string or an array of strings", found: "an array holding an integer (2) (item 2)"))
        #expect(p[6].kind == .wrongType(expected: "a string", found: "an array"))
        #expect(ConfigError(path: path, problems: [p[0]]).description
                == "/home/u/.config/tonearm/config.toml:2: 'playback.volume' must be an integer, not a string (\"loud\")")
        // A table where a setting was expected, and a value where a table was.
        let t = problems("playback = 3\n[library.database]\nx = 1\n")
        #expect(t.map(\.kind) == [.wrongType(expected: "a table ([playback])", found: "an integer (3)"),
                                  .wrongType(expected: "a string", found: "a table")])
        #expect(t.map(\.line) == [1, 2])
    }

    @Test func valuesOutOfRangeOrNotAcceptedAreNamed() {
        let p = problems("""
            [playback]
            volume = 101
            preamp = -21
            crossfade = 30.5
            replaygain = "loud"
            repeat = "twice"
            eq = "funky"
            output = "alsa"
            device = " "
            [keys]
            quit = ""
            [library]
            database = ""
            """)
        #expect(p.map(\.line) == [2, 3, 4, 5, 6, 7, 8, 9, 11, 13])
        #expect(p[0].kind == .outOfRange(value: "101", allowed: "between 0 and 100"))
        #expect(p[1].kind == .outOfRange(value: "-21", allowed: "between -20 and +20 dB"))
        #expect(p[2].kind == .outOfRange(value: "30.5", allowed: "between 0 and 30 seconds"))
        #expect(p[3].kind == .invalidValue("must be off, track or album, not 'loud'"))
        #expect(p[4].kind == .invalidValue("must be off, one or all, not 'twice'"))
        guard case .invalidValue(let eq) = p[5].kind, case .invalidValue(let output) = p[6].kind else { Issue.record("\(p)"); return }
        #expect(eq.contains("unknown EQ preset 'funky'"))
        #expect(output.contains("unknown output 'alsa'"))
        #expect(p[7].kind == .invalidValue("needs an output name (see tonearm outputs)"))
        #expect(p[8].kind == .invalidValue("is an empty string"))
        #expect(p[9].kind == .invalidValue("needs a path"))
        #expect(ConfigError(path: path, problems: [p[0]]).description
                == "/home/u/.config/tonearm/config.toml:2: 'playback.volume' must be between 0 and 100, not 101")
    }

    /// The `[daemon]` table: `tonearm daemon`'s settings, read and checked.
    @Test func theDaemonTableIsRead() throws {
        let c = try parse("""
            [daemon]
            music = ["/srv/music", "More"]
            listen = ["0.0.0.0:6601", "[::1]:6602"]
            outputs = ["null"]
            password = ["pw@read,add", "adm@read,add,control,admin"]
            default_permissions = "read"
            local_permissions = "read,add,control"
            """)
        let d = c.daemon
        #expect(d.music == ["/srv/music", "/home/u/.config/tonearm/More"])
        #expect(d.listen == [.tcp(host: "0.0.0.0", port: 6601), .tcp(host: "::1", port: 6602)])
        #expect(d.outputs == [.null])
        #expect(d.passwords == ["pw@read,add", "adm@read,add,control,admin"])
        #expect(d.defaultPermissions == [.read])
        #expect(d.localPermissions == [.read, .add, .control, .player])
        #expect(c.line(of: "daemon.listen") == 3 && c.line(of: "daemon.local_permissions") == 7)
        // No TCP at all; one music folder as a string.
        let none = try parse("[daemon]\nlisten = []\nmusic = \"/m\"\n").daemon
        #expect(none.listen == [] && none.music == ["/m"])
        #expect(try parse("[daemon]\n").daemon.listen == nil)
    }

    @Test func badDaemonValuesAreNamedWithTheirLines() {
        let p = problems("""
            [daemon]
            music = [""]
            listen = ["127.0.0.1:6600", "/run/mpd.sock"]
            outputs = ["pulse", "snapcast:"]
            password = ["secret", "ok@read"]
            default_permissions = "read,root"
            local_permissions = ["read"]
            port = 6600
            """)
        #expect(p.map(\.line) == [2, 3, 4, 5, 6, 7, 8], "\(p)")
        #expect(p.map(\.key) == ["daemon.music", "daemon.listen", "daemon.outputs", "daemon.password", "daemon.default_permissions",
                                 "daemon.local_permissions", "daemon.port"])
        #expect(p[0].kind == .invalidValue("item 1 is an empty string"))
        #expect(p[1].kind == .invalidValue("item 2 '/run/mpd.sock' is not ADDR:PORT, as in 127.0.0.1:6600 (the Unix socket is always there)"))
        #expect(p[2].kind == .invalidValue("item 2: invalid argument: output 'snapcast:' needs the pipe's path, as in snapcast:/tmp/snapfifo"), "\(p[2])")
        #expect(p[3].kind == .invalidValue("item 1: \"@\" not found in password string \"secret\" (expected SECRET@read,add,control,admin)"))
        #expect(p[4].kind == .invalidValue("unknown permission \"root\" in \"read,root\" (known: read, add, player, control, admin)"))
        #expect(p[5].kind == .wrongType(expected: "a string", found: "an array"))
        #expect(p[6].kind == .unknownKey(suggestion: nil))
        #expect(ConfigError(path: path, problems: [p[3]]).description
                == "/home/u/.config/tonearm/config.toml:5: 'daemon.password': item 1: \"@\" not found in password string \"secret\" (expected SECRET@read,add,control,admin)")
        let outputs = problems("[daemon]\noutputs = [\"file:/tmp/x.wav\"]\n")
        #expect(outputs.first?.kind == .invalidValue("item 1: invalid argument: unknown output 'file:/tmp/x.wav'; choose one of pulse|null|snapcast:FIFO[:RATE:BITS:CHANNELS]|http:ADDR:PORT[:flac|mp3|opus]"), "\(outputs)")
        let several = try? ConfigFile.parse("[daemon]\noutputs = [\"null\", \"snapcast:/tmp/f\", \"http:127.0.0.1:8000\"]\n", path: path)
        #expect(several?.daemon.outputs == [.null, .snapcast(path: "/tmp/f"), .http(host: "127.0.0.1", port: 8000)])
        // A daemon key in another table is pointed at.
        #expect(problems("[library]\nlocal_permissions = \"read\"\n").first?.kind == .unknownKey(suggestion: "daemon.local_permissions"))
    }

    @Test func anUnreadableFileIsAnError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try ConfigFile.load(path: dir + "/none.toml") == nil)
        let binary = dir + "/binary.toml"
        try Data([0xFF, 0xFE, 0x00, 0x41]).write(to: URL(fileURLWithPath: binary))
        do {
            _ = try ConfigFile.load(path: binary)
            Issue.record("no error")
        } catch {
            #expect(error.problems.first?.kind == .unreadable("it is not UTF-8 text"))
            #expect(error.description.hasPrefix(binary + ": cannot be read"))
        }
    }

    /// The example `config --init` writes parses, and so does every setting in it uncommented.
    @Test func theExampleIsValidCommentedAndUncommented() throws {
        let commented = try parse(ConfigExample.text)
        #expect(commented.playback.volume == nil && commented.keys.isEmpty)
        let uncommented = ConfigExample.text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("# ") && $0.contains(" = ") ? String($0.dropFirst(2)) : String($0) }
            .joined(separator: "\n")
        let all = try parse(uncommented)
        #expect(all.playback.output == .pulse())
        #expect(all.playback.volume == 80)
        #expect(all.playback.shuffle == false)
        #expect(all.keys["quit"] == ["q", "Q"])
        #expect(all.library.folders?.count == 1)
        #expect(all.daemon.listen == [.tcp(host: "127.0.0.1", port: 6600)] && all.daemon.passwords?.count == 1)
        #expect(all.daemon.localPermissions == .all && all.daemon.outputs == [.pulse])
        for key in ConfigSchema.allKeys {
            #expect(all.line(of: key) != nil, "the example has no \(key)")
        }
    }

    /// A quoted key written with escapes (`"vol\u0075me"`, `"a\tb"`) is found on its line under
    /// the name TOML reads (`volume`): the problem names the line (it had none at the top level,
    /// and the table's header line inside a table).
    @Test func quotedKeysWithEscapesHaveTheirLines() throws {
        let p = problems("# settings\n\"vol\\u0075me\" = 50\n[playback]\n\n\"sh\\U00000075ffle\" = \"yes\"\n\"a\\tb\" = 1\n")
        #expect(p.map(\.key) == ["volume", "playback.shuffle", "playback.a\tb"])
        #expect(p.map(\.line) == [2, 5, 6])
        let c = try parse("[keys]\n\n\"\\u0071uit\" = \"x\"\n")
        #expect(c.keys == ["quit": ["x"]])
        #expect(c.line(of: "keys.quit") == 3)
    }

    /// Found by fuzzing (scripts/fuzz, FuzzConfig): a control character at the start of a table
    /// header's key (`[\u{13}l= 70`) made toml++ fail an assertion and abort the program. A
    /// control character (TOML allows none but tab and the line ends) is refused with its line
    /// and column before the TOML parser sees the text.
    @Test func aControlCharacterIsASyntaxErrorNotACrash() {
        for (text, line, column, code) in [("[\u{13}l= 70\neq = \"rock\n", 1, 2, "U+0013"),
                                           ("[playback]\nvolume = 7\u{7F}0\n", 2, 11, "U+007F"),
                                           ("# ok\t\r\n[keys]\nquit = \"\u{0}\"\n", 3, 9, "U+0000")] {
            let p = problems(text)
            #expect(p.count == 1)
            #expect(p.first?.line == line && p.first?.column == column, "\(p)")
            #expect(p.first?.kind == .syntax("a control character (\(code)) is not allowed in TOML"), "\(p)")
        }
    }

    /// Found by fuzzing (scripts/fuzz, FuzzConfig): a table header with no name after its `[`
    /// (`[` then the line's end, `[ =`, `[[#`) made toml++ fail an assertion and abort the
    /// program. It is refused with its line and column; a nested array starting a line inside a
    /// multi-line array is no header and still reads.
    @Test func aTableHeaderWithoutANameIsASyntaxErrorNotACrash() throws {
        for (text, line, column) in [("[\nshuffle = true\n", 1, 2), ("# c\n[playback]\nvolume = 1\n[ =x]\n", 4, 3),
                                     ("[[#a]]\n", 1, 3), ("[keys]\n  [\r\n", 2, 4), ("[]\n", 1, 2),
                                     // `[` and a combining mark are one Character (found by fuzzing too).
                                     ("[\u{35F}\n", 1, 2), ("a = 1\n[\u{301}keys]\n", 2, 2)] {
            let p = problems(text)
            #expect(p.count == 1)
            #expect(p.first?.line == line && p.first?.column == column, "\(text.debugDescription): \(p)")
            #expect(p.first?.kind == .syntax("a table header needs a name: [name] or [[name]]"), "\(p)")
        }
        let nested = try ConfigDocument(parsing: "[t]\nx = [\n  [\n1], [ 2 ],\n[\"a\"]]\ny = 3\n", path: path)
        #expect(nested.lines.unparseable == nil)
        #expect(nested.lines.line(of: ["t", "y"]) == 6)
    }

    /// Found by fuzzing (scripts/fuzz, FuzzConfig): a `}` closing an array (`pause = [}`) made
    /// toml++ fail an assertion in parse_value and abort the program, and so does a line
    /// separator (U+2028) between array items. Those, and the other mismatched closers (which
    /// toml++ reports itself), are refused with their place before toml++ sees them.
    @Test func mismatchedBracketsAndLineSeparatorsAreSyntaxErrorsNotCrashes() throws {
        for (text, line, column, reason) in [("[keys]\npause = [}\n", 2, 10, "a '}' closes a '['"),
                                             ("[keys]\npause = [\n \"p\",\n}\n", 4, 1, "a '}' closes a '['"),
                                             ("a = { b = [1, 2 }\n", 1, 17, "a '}' closes a '['"),
                                             ("a = { b = 1 ]\n", 1, 13, "a ']' closes a '{'"),
                                             ("a = [1,\u{2028}2]\n", 1, 8, "a line separator (U+2028) outside a string")] {
            let p = problems(text)
            #expect(p.count == 1)
            #expect(p.first?.line == line && p.first?.column == column, "\(text.debugDescription): \(p)")
            #expect(p.first?.kind == .syntax(reason), "\(p)")
        }
        // Found by fuzzing too: a date-time whose 'T' is not followed by the time's digits
        // (toml++'s parse_time assertion).
        let t = problems("[library]\nwhen = 1979-05-27Tite32:00Z\n")
        #expect(t.first?.line == 2 && t.first?.column == 19 && t.first?.kind == .syntax("a date's 'T' is followed by a time (HH:MM:SS)"), "\(t)")
        #expect(try ConfigDocument(parsing: "when = 1979-05-27T07:32:00Z\nday = 1979-05-27 # T\nx = \"1979-05-27Tx\"\n", path: path).lines.unparseable == nil)
        // And a value that looks like a date to toml++ (ten characters, dashes 5th and 8th),
        // followed by a space and a digit (toml++'s value-scan assertion).
        for text in ["pla= 1978-[2-a= 1#x\n", "x = [1978-[2-a= 1]\n", "x=1978-0a-01 10:00:00\n"] {
            let d = problems(text)
            #expect(d.first?.kind == .syntax("a value that starts like a date (YYYY-MM-DD) is not one")
                    || d.first?.kind == .syntax("a value that starts like a date and time is not YYYY-MM-DD HH:MM:SS"), "\(text.debugDescription): \(d)")
        }
        // A date, a space and one digit (found by the 600 s run: the same assertion).
        for text in ["playb = 1979-05-27 1\n", "a = [1979-05-27 1]\n", "acoJk = 1?79-05-\"3 1\n"] {
            let d = problems(text)
            #expect(d.first?.kind == .syntax("a value that starts like a date and time is not YYYY-MM-DD HH:MM:SS"), "\(text.debugDescription): \(d)")
            #expect(d.first?.column == text.firstIndex(where: \.isNumber).map { text.distance(from: text.startIndex, to: $0) + 1 }, "\(d)")
        }
        #expect(try ConfigDocument(parsing: "a = 1979-05-27 07:32:00\nb = [1979-05-27 07:32:00, 1979-05-27]\n", path: path).lines.unparseable == nil)
        // Inside strings and comments they are text.
        let c = try parse("[keys]\nquit = [\"}\", \"]\", '{]'] # [}\nnext = \"\u{2028}\"\n")
        #expect(c.keys["quit"] == ["}", "]", "{]"])
    }

    /// Found by fuzzing (scripts/fuzz, FuzzConfig): after a byte-order mark the first key had
    /// no line (the scan read the mark as part of it; TOML skips it).
    @Test func aByteOrderMarkDoesNotHideTheFirstKeysLine() throws {
        let p = problems("\u{FEFF}volume = 50\n[playback]\nshuffle = 1\n")
        #expect(p.map(\.key) == ["volume", "playback.shuffle"])
        #expect(p.map(\.line) == [1, 3])
    }

    /// A file with Windows line ends (CRLF) names each problem's own line (it was all line 1:
    /// "\r\n" is one Character, and the lines were split on "\n").
    @Test func crlfLineEndsGiveEachProblemItsLine() throws {
        let p = problems("[playback]\r\nvolume = 70\r\nshuffle = \"yes\"\r\n[keys]\r\nquit = 1\r\n")
        #expect(p.map(\.key) == ["playback.shuffle", "keys.quit"])
        #expect(p.map(\.line) == [3, 5])
    }

    @Test func suggestionsAreNearMissesOnly() {
        #expect(ConfigSchema.suggestion(for: "volmue", among: ConfigSchema.playbackKeys) == "volume")
        #expect(ConfigSchema.suggestion(for: "cross-fade", among: ConfigSchema.playbackKeys) == "crossfade")
        #expect(ConfigSchema.suggestion(for: "xyz", among: ConfigSchema.playbackKeys) == nil)
        #expect(ConfigSchema.suggestion(for: "speed", among: ConfigSchema.playbackKeys) == nil)
    }
}
