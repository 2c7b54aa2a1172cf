// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmMPDProtocol
import TonearmTestSupport

/// The protocol's text layer against the real peer: the same request lines go to Debian's MPD
/// (``PrivateMPD``, an empty library) and through Tonearm's framer, tokenizer, filter and
/// argument readers, and the answers must be the same, line for line — `OK`, the same `ACK`
/// (code, index, command, message), `list_OK`s, or the connection closed. Nothing of MPD's
/// answers is written here: they are asked for each run. The cases are lines whose answer depends
/// only on reading them (a parse error, or a valid request that an empty library answers `OK`).
@Suite(.serialized) struct MPDPeerParseTests {
    /// How this test reads the commands it sends: their argument counts by ``MPDCommands``, then
    /// their arguments (the daemon's handlers, issue 20, will use the same readers).
    static func check(_ r: MPDRequest) throws(MPDAck) {
        let a = r.arguments
        _ = try MPDCommands.check(r)
        do {
            switch r.command {
            case "ping": break
            case "find", "search":
                var filter = a[...]
                if filter.count >= 2, filter[filter.endIndex - 2] == "window" {
                    _ = try MPDArguments.range(filter.last!)
                    filter = filter.dropLast(2)
                }
                if filter.count >= 2, filter[filter.endIndex - 2] == "sort" { filter = filter.dropLast(2) }
                _ = try MPDFilter.parse(arguments: Array(filter), exact: r.command == "find")
            case "setvol": _ = try MPDArguments.unsigned(a[0], max: 100)
            case "volume": _ = try MPDArguments.integer(a[0], min: -100, max: 100)
            case "crossfade": _ = try MPDArguments.unsigned(a[0])
            case "random", "consume": _ = try MPDArguments.bool(a[0])
            case "single": _ = try MPDArguments.singleMode(a[0])
            case "replay_gain_mode": _ = try MPDArguments.replayGainMode(a[0])
            case "playid": if let s = a.first { _ = try MPDArguments.integer(s) }
            case "playlistinfo", "delete": if let s = a.first { _ = try MPDArguments.range(s) }
            case "swap": _ = try MPDArguments.integer(a[0]); _ = try MPDArguments.integer(a[1])
            case "prio": _ = try MPDArguments.unsigned(a[0], max: 255); for s in a.dropFirst() { _ = try MPDArguments.range(s) }
            case "seekcur", "mixrampdb": _ = try MPDArguments.float(a[0])
            default: break
            }
        } catch let e as MPDArgumentError {
            throw e.ack(command: r.command)
        } catch let e as MPDFilterError {
            throw e.ack(command: r.command)
        } catch let e as MPDAck {
            throw e
        } catch {
            throw MPDAck(.system, "\(error)")
        }
    }

    /// Tonearm's answer to `lines` (one request or one command list), as MPD would send it.
    static func answer(_ lines: [[UInt8]]) -> [String] {
        var framer = MPDRequestFramer()
        var out: [String] = []
        for line in lines {
            switch framer.receive(line: line) {
            case .none: continue
            case .endIdle: out.append("OK")
            case .close: return out + ["<closed>"]
            case .execute(let batch):
                var failed = false
                for (i, l) in batch.lines.enumerated() {
                    do {
                        try check(try MPDRequest(line: l))
                    } catch {
                        out.append(error.at(i, command: "").line)
                        failed = true
                        break
                    }
                    if batch.mode == .list(ok: true) { out.append("list_OK") }
                }
                if !failed { out.append("OK") }
            }
        }
        return out
    }

    static let lines: [String] = [
        // Reading the line.
        "ping", "ping\r", "ping   ", "Ping", "1ping", "", "GET / HTTP/1.1", "pi-ng", "ping x", "nosuch",
        "find \"artist", "find \"artist\"x", "find 'artist' 'x'", #"find artist "a\"b""#, "find artist a\"b", "find artist a'b",
        "find\tartist\tx", "find  artist   \"x\"   ", #"find artist "a\b""#, "find artist \"\"",
        // Filters.
        #"find "(artist == \"x\")""#, "find \"(artist == 'x')\"", #"find "(Artist == x)""#, #"find "(artist = \"x\")""#,
        #"find "(foo == \"x\")""#, #"find "(artist == \"x\"""#, #"find "((artist == \"x\") AND (album == \"y\"))""#,
        #"find "((artist == \"x\")AND(album == \"y\"))""#, #"find "((artist == \"x\") OR (album == \"y\"))""#,
        #"find "((artist == \"x\") and (album == \"y\"))""#, #"find "((artist == \"x\") AND (album == \"y\")""#,
        #"find "(!(artist == \"x\"))""#, #"find "(!  (artist == \"x\") )""#, #"find "(! x)""#, #"find "(!)""#, #"find "()""#, #"find "(" "#,
        #"find "(artist contains \"x\")""#, #"find "(artist contains\"x\")""#, #"find "(artist starts_with \"x\")""#,
        #"find "(artist != \"x\")""#, #"find "(artist !~ \"x\")""#, #"find "(any == \"x\")""#, #"find "(file == \"x\")""#,
        #"find "(ARTIST == \"x\")""#, #"find "(albumartist == \"x\")""#, #"find "(musicbrainz_trackid == \"x\")""#,
        #"find "(Base \"x\")""#, #"find "(base == \"x\")""#, #"find "(artist == \"x)""#, #"find "(artist == \"x\")x""#,
        #"find "(artist == \"x\") ""#, #"find "((artist == \"x\"))""#, #"find "(artist == \"x\\\"y\")""#,
        #"find "(modified-since \"2020\")""#, #"find "(modified-since \"2020-01-02T03:04:05Z\")""#, #"find "(modified-since \"-5\")""#,
        #"find "(modified-since \"2020-13\")""#, "find modified-since bogus",
        #"find "(AudioFormat == \"44100:16:2\")""#, #"find "(AudioFormat =~ \"44100:*:2\")""#, #"find "(AudioFormat == \"44100:f:2\")""#,
        #"find "(AudioFormat == \"44100:16\")""#, #"find "(AudioFormat == \"0:16:2\")""#, #"find "(AudioFormat == \"44100:12:2\")""#,
        #"find "(AudioFormat == \"44100:16:0\")""#, #"find "(AudioFormat == \"44100:16:x\")""#, #"find "(AudioFormat == \"*:16:2\")""#,
        #"find "(AudioFormat =~ \"*:*:*\")""#, #"find "(AudioFormat == \"44100:16:2 \")""#, #"find "(AudioFormat < \"x\")""#,
        #"find "(artist == \"x\")" "(album == \"y\")""#, #"find "(artist == \"x\") (album == \"y\")""#, #"find "(artist == \"x\")" sort"#,
        "find artist", "find foo bar", "find artist x album", "find \"\" x", "find ANY x", "find Base x", "find filename x",
        "find artist x sort title window 0:2", "find artist x window 1:x", "search artist x", "search \"(title contains 'a')\"",
        // Arguments.
        "setvol -1", "setvol x", "setvol 1.5", "setvol 101", "setvol 99999999999999999999", "volume 200", "volume -200", "volume x",
        "crossfade -1", "crossfade x", "random 01", "random 2", "random -1", "random \"\"", "consume oneshot", "single oneshot",
        "single 2", "replay_gain_mode bogus", "playid x", "playid -1", "playlistinfo -1", "playlistinfo 0:", "playlistinfo 1:x",
        "playlistinfo 1:2:3", "playlistinfo -2:3", "playlistinfo 3:-1", "playlistinfo 5:2", "playlistinfo 99999999999",
        "delete x", "delete 1:x", "swap x 1", "prio 256 0", "prio -1 0", "prio x 0", "seekcur x", "mixrampdb x",
    ]

    static let commandLists: [[String]] = [
        ["command_list_begin", "ping", "pi-ng", "command_list_end"],
        ["command_list_ok_begin", "ping", "ping", "command_list_end"],
        ["command_list_ok_begin", "ping", "setvol x", "ping", "command_list_end"],
        ["command_list_begin", "ping", "nosuch", "command_list_end"],
        ["command_list_begin", "command_list_end"],
        ["command_list_begin", "ping", "Ping", "command_list_end"],
        ["noidle", "ping"],
    ]

    /// MPD's `commands` are ``MPDCommands``' names, and for each command sent too few, just
    /// enough, the most and too many arguments, MPD's count errors are the table's, word for word
    /// (`idle` is left out: MPD waits for events there; and `kill`, which MPD carries out with any
    /// number of arguments). On MPD's local socket every permission is granted, so every command
    /// is listed.
    @Test func theCommandsAndTheirArgumentCountsAreMPDs() throws {
        // With a sticker database, as the daemon's library is one: `sticker` is listed.
        let mpd = try PrivateMPD(stickers: true)
        defer { mpd.stop() }
        let listed = try mpd.exchange([Array("commands".utf8)]).compactMap { $0.hasPrefix("command: ") ? String($0.dropFirst(9)) : nil }
        #expect(listed == MPDCommands.all.map(\.name))
        var differences: [String] = []
        var checked = 0
        for spec in MPDCommands.all where spec.name != "idle" && spec.name != "kill" {
            var counts = [spec.minArguments, spec.minArguments - 1, (spec.maxArguments ?? spec.minArguments + 3)]
            if let most = spec.maxArguments { counts.append(most + 1) }
            for n in Set(counts) where n >= 0 {
                let line = ([spec.name] + Array(repeating: "x", count: n)).joined(separator: " ")
                let theirs = try mpd.exchange([Array(line.utf8)]).last ?? ""
                let ours: String?
                do {
                    _ = try MPDCommands.check(MPDRequest(line: Array(line.utf8)))
                    ours = nil
                } catch {
                    ours = error.line
                }
                let theirsIsACount = theirs.contains(" arguments for \"")
                if theirsIsACount || ours != nil, theirs != ours { differences.append("\(line): MPD \(theirs), Tonearm \(ours ?? "accepted")") }
                checked += 1
            }
        }
        #expect(differences.isEmpty, Comment(rawValue: "\(differences.count) of \(checked) differ:\n" + differences.joined(separator: "\n")))
    }

    @Test func theSameLinesGetTheSameAnswersAsFromMPD() throws {
        let mpd = try PrivateMPD()
        defer { mpd.stop() }
        var differences: [String] = []
        let cases = Self.lines.map { [$0] } + Self.commandLists
        for c in cases {
            let request = c.map { Array($0.utf8) }
            let theirs = try mpd.exchange(request)
            let ours = Self.answer(request)
            if theirs != ours { differences.append("\(c): MPD \(theirs), Tonearm \(ours)") }
        }
        #expect(differences.isEmpty, Comment(rawValue: "\(differences.count) of \(cases.count) differ:\n" + differences.joined(separator: "\n")))
    }
}
