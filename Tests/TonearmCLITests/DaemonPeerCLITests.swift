// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm daemon` and a real MPD (``PrivateMPD``) on the same generated music folder (FLACs
/// with CJK tags): the same requests sent to both, the answers compared (issue 20). Nothing of
/// MPD's answers is written here.
@Suite(.serialized)
struct DaemonPeerCLITests {
    /// The music folder: (path, title, artist, album, track).
    static let songs: [(String, String, String, String, String)] = [
        ("歌手/アルバム/01 一.flac", "曲一", "歌手", "アルバム", "1"),
        ("歌手/アルバム/02 二.flac", "曲二", "歌手", "アルバム", "2"),
        ("歌手/アルバム/03 三.flac", "曲三", "歌手", "アルバム", "3"),
        ("Other/Solo/x.flac", "Ex", "Other", "Solo", "1"),
    ]

    /// A real MPD and the daemon, both on one music folder, both updated.
    final class Peers: @unchecked Sendable {
        let mpd: PrivateMPD
        let daemon: ChildProcess
        let daemonSocket: String
        let dir: TempDir

        /// `extraMusic`: makes more files in the music folder (its path) before both read it.
        init(extraConfig: String = "", daemonArguments: [String] = [], extraMusic: (String) throws -> Void = { _ in }) throws {
            mpd = try PrivateMPD(extraConfig: extraConfig, stickers: true)
            let music = mpd.directory.file("music")
            try extraMusic(music)
            for (path, title, artist, album, track) in DaemonPeerCLITests.songs {
                let full = music + "/" + path
                try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Fixtures.tone(path: full, codecArgs: ["-c:a", "flac", "-metadata", "title=\(title)", "-metadata", "artist=\(artist)",
                                                          "-metadata", "album=\(album)", "-metadata", "track=\(track)"],
                                  seconds: 1, rate: 44_100, channels: 1)
            }
            // MPD's update, waited for by its idle event (MPD keeps a client's events while it
            // is busy, so an update that ends between `status` and `idle` is not missed).
            let c = try MPDLineSocket(unixPath: mpd.socketPath)
            c.send(lines: ["update"])
            _ = try c.readAnswer(timeout: 10)
            while true {
                c.send(lines: ["status"])
                guard try c.readAnswer(timeout: 10).contains(where: { $0.hasPrefix("updating_db: ") }) else { break }
                c.send(lines: ["idle update"])
                _ = try c.readAnswer(timeout: 30)
            }
            dir = try TempDir("tonearm-daemon-peer")
            let runtime = dir.file("run")
            daemonSocket = runtime + "/mpd.sock"
            daemon = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "none", "--music", music,
                                       "--runtime-dir", runtime, "--state-dir", dir.file("state")] + daemonArguments,
                                      captureStandardError: true)
            guard daemon.waitForStandardError(containing: "listening on \(daemonSocket)", timeout: 60) else {
                daemon.terminate(SIGKILL)
                throw TestSupportError("the daemon did not start: \(daemon.standardErrorText)")
            }
        }

        func stop() {
            daemon.terminate(SIGTERM)
            _ = daemon.succeeded
            mpd.stop()
            dir.remove()
        }
    }

    /// An answer with what must differ taken out: the songs' `Format` (MPD leaves it out for
    /// songs a stored playlist put in the queue; the daemon always knows it), tag lines sorted within a song (MPD prints
    /// them in the file's order), `stats`' times and `db_update`, and of `status` the queue's
    /// fields only (the mixer, the times and the audio are the outputs').
    static func normalised(_ lines: [String], status: Bool = false) -> [String] {
        let statusKeys: Set<String> = ["repeat", "random", "single", "consume", "playlist", "playlistlength", "state", "song", "songid",
                                       "nextsong", "nextsongid", "mixrampdb"]
        var out: [String] = []
        var tags: [String] = []
        func flush() {
            out += tags.sorted()
            tags.removeAll()
        }
        for line in lines {
            let key = line.split(separator: ":", maxSplits: 1).first.map(String.init) ?? line
            if status {
                if statusKeys.contains(key) || line == "OK" || line.hasPrefix("ACK ") { out.append(line) }
                continue
            }
            if ["Format", "uptime", "playtime", "db_update"].contains(key) { continue }
            if ["Artist", "Album", "AlbumArtist", "Title", "Track", "Genre", "Date", "Disc", "Composer"].contains(key) {
                tags.append(line)
                continue
            }
            flush()
            out.append(line)
        }
        flush()
        return out
    }

    static let transcript: [String] = [
        "stats",
        "findadd artist 歌手", "playlistinfo", "status",
        "searchadd title 曲 position 1", "playlist", "findadd artist x position 99", "findadd foo x",
        "findadd artist 歌手 position +1", "findadd album アルバム sort -Track window 0:2", "findadd artist nobody", "playlist", "status",
        "save 保存", "save 保存", "save \"a/b\"", "save 保存 create", "listplaylist 保存",
        "load 保存 1:3 0", "load 保存 9:", "load nosuch", "load 保存 x", "load 保存 0:1 99", "playlist", "status",
        "playlistfind artist 歌手", "playlistsearch title 曲二", "playlistfind foo x", "playlistfind artist 歌手 sort Title",
        "playlistsearch \"(album contains 'アル')\"",
        "prio 5 0:2", "prio 256 0", "prio 1 99", "prio 1 5:99", "prioid 3 1", "prioid 1 99", "prio 7 2:2", "playlistinfo 0:3", "status",
        "replay_gain_status", "replay_gain_mode track", "replay_gain_status", "replay_gain_mode foo", "replay_gain_mode auto",
        "replay_gain_status",
        "rm 保存", "load 保存", "clear", "findadd \"(title == '曲三')\"", "playlistinfo", "status",
        // add DIR: the folder's songs, as one edit; addid takes songs only.
        "add 歌手", "status", "addid 歌手", "add \"\"", "status", "add / 0", "add 歌手 1", "add 歌手 +1", "playlist", "status",
        "add nosuch", "add \"歌手/アルバム/02 二.flac\" 0", "status",
    ]

    /// Lines with absolute paths (sent on the Unix socket, so both take local files): a folder
    /// and a song inside the music folder (the database's), a folder and a song outside it, a
    /// path that is not there, the music folder itself.
    static func localTranscript(music: String, outside: String) -> [String] {
        ["clear", "add \"\(music)/歌手\"", "playlist", "add \"\(music)/Other/Solo/x.flac\"", "addid \"\(music)/歌手/アルバム\"",
         "add \"\(outside)\"", "add \"\(outside)/\"", "addid \"\(outside)\"", "add \"\(outside)/o.flac\"", "add \"file://\(outside)\"",
         "add \"\(outside)/nosuch.flac\"", "add \"\(music)\"", "add \"file://\(music)/Other\"", "playlist", "status"]
    }

    /// Sends each line of `transcript` to MPD and to the daemon, one at a time, and returns how
    /// their answers (``normalised(_:status:)``) differ, one entry per differing line; the lines
    /// for which `unordered` holds are compared as sets of lines.
    static func differences(_ transcript: [String], mpd theirs: MPDLineSocket, tonearm ours: MPDLineSocket,
                            unordered: (String) -> Bool = { _ in false }) throws -> [String] {
        var differences: [String] = []
        for line in transcript {
            theirs.send(lines: [line])
            ours.send(lines: [line])
            let status = line == "status"
            var a = normalised(try theirs.readAnswer(timeout: 10), status: status)
            var b = normalised(try ours.readAnswer(timeout: 10), status: status)
            if unordered(line) {
                a.sort()
                b.sort()
            }
            if a != b { differences.append("\(line):\n  MPD     \(a.joined(separator: " | "))\n  Tonearm \(b.joined(separator: " | "))") }
        }
        return differences
    }

    /// The commands of issue 20's list the daemon answers (in `commands`), compared with MPD's
    /// `commands`, and the transcript's answers line for line.
    @Test func queueFromTheDatabaseAnswersAsMPDDoes() throws {
        let peers = try Peers()
        defer { peers.stop() }
        let theirs = try MPDLineSocket(unixPath: peers.mpd.socketPath)
        let ours = try MPDLineSocket(unixPath: peers.daemonSocket)
        let differences = try Self.differences(Self.transcript, mpd: theirs, tonearm: ours)
        #expect(differences.isEmpty, Comment(rawValue: "\(differences.count) of \(Self.transcript.count) differ:\n" + differences.joined(separator: "\n")))
        // Local paths (`add /abs/dir` was once taken as a song).
        let outside = peers.dir.file("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Fixtures.tone(path: outside + "/o.flac", codecArgs: ["-c:a", "flac", "-metadata", "title=Out"], seconds: 1, rate: 44_100, channels: 1)
        let localDifferences = try Self.differences(Self.localTranscript(music: peers.mpd.directory.file("music"), outside: outside),
                                                    mpd: theirs, tonearm: ours)
        #expect(localDifferences.isEmpty, Comment(rawValue: localDifferences.joined(separator: "\n")))
        theirs.send(lines: ["commands"])
        ours.send(lines: ["commands"])
        let mpdCommands = Set(try theirs.readAnswer(timeout: 10).filter { $0.hasPrefix("command: ") })
        let daemonCommands = Set(try ours.readAnswer(timeout: 10).filter { $0.hasPrefix("command: ") })
        for c in ["findadd", "searchadd", "searchaddpl", "load", "save", "playlistfind", "playlistsearch", "prio", "prioid",
                  "replay_gain_mode", "replay_gain_status", "stats", "password"] {
            #expect(mpdCommands.contains("command: \(c)") && daemonCommands.contains("command: \(c)"), "\(c)")
        }
        #expect(daemonCommands.isSubset(of: mpdCommands), "\(daemonCommands.subtracting(mpdCommands))")
    }
}

/// `rangeid`, `readcomments` and `prio` in random mode (issue 20): the same requests to a real
/// MPD and to the daemon, the answers compared as above. Long songs (20 s) so that what plays
/// is still playing when it is asked about.
@Suite(.serialized)
struct DaemonPeerRangeCLITests {
    static let transcript: [String] = [
        // rangeid: set, cleared, printed with the range's length; MPD's errors in its order.
        "findadd artist 歌手", "rangeid 1 0.25:0.5", "rangeid 2 0.5:", "rangeid 3 :0.75", "playlistinfo", "status",
        "rangeid 1 :", "rangeid 2 0.5:9", "playlistinfo 0:2", "plchanges 3", "rangeid 99 1:2", "rangeid 1 x", "rangeid 1 2:1",
        "rangeid 1 -1:", "rangeid 1 5:", "rangeid x 1:2", "rangeid 1 1", "status",
        // readcomments: the file's comments as stored.
        "readcomments \"歌手/アルバム/01 一.flac\"", "readcomments Other/Solo/x.flac", "readcomments nosuch.flac",
        // prio in random mode: with no song played yet, the highest priority plays first and
        // the next highest after it; raised while playing, a song plays next.
        "clear", "add long", "random 1", "prio 50 1", "prio 40 2", "playlistinfo", "status", "play", "pause", "status",
        "prioid 60 7", "status", "prio 70 0", "status", "rangeid 5 1:2", "rangeid 6 1:2", "status", "playlistinfo 2", "random 0", "rangeid 5 0:1", "stop", "rangeid 5 0:1", "playlistinfo 1",
    ]

    @Test func rangeidReadcommentsAndRandomPriorityAnswerAsMPDDoes() throws {
        let peers = try DaemonPeerCLITests.Peers { music in
            try FileManager.default.createDirectory(atPath: music + "/long", withIntermediateDirectories: true)
            for i in 0..<4 {
                try Fixtures.tone(path: music + "/long/\(i).flac", codecArgs: ["-c:a", "flac", "-metadata", "title=L\(i)"],
                                  seconds: 20, rate: 8_000, channels: 1)
            }
        }
        defer { peers.stop() }
        let theirs = try MPDLineSocket(unixPath: peers.mpd.socketPath)
        let ours = try MPDLineSocket(unixPath: peers.daemonSocket)
        // The comments' order is the file's; ours for FLAC too, but compared as a set.
        let differences = try DaemonPeerCLITests.differences(Self.transcript, mpd: theirs, tonearm: ours,
                                                             unordered: { $0.hasPrefix("readcomments") })
        #expect(differences.isEmpty, Comment(rawValue: "\(differences.count) of \(Self.transcript.count) differ:\n" + differences.joined(separator: "\n")))
    }
}

/// A network stream's own tags (a FLAC's comments), answered as MPD answers them: none while it
/// has not played; once it plays, `currentsong` and `playlistinfo` carry them, the playlist
/// version moves on by one and `plchanges` lists the stream — the same stream, from one real HTTP
/// server on 127.0.0.1, added to MPD and to the daemon, each woken from `idle playlist`.
@Suite(.serialized)
struct DaemonStreamTagsPeerTests {
    @Test func aStreamShowsTheTagsItCarriesOnceItPlays() throws {
        let peers = try DaemonPeerCLITests.Peers()
        defer { peers.stop() }
        let served = peers.dir.file("served")
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        try Fixtures.tone(path: served + "/stream.flac", codecArgs: ["-c:a", "flac", "-metadata", "title=流れ", "-metadata", "artist=歌手",
                                                                   "-metadata", "album=Net Album"],
                          seconds: 20, rate: 44_100, channels: 1)
        let server = try PrivateHTTPServer(root: served)
        defer { server.stop() }
        let url = server.url("/stream.flac").absoluteString
        let theirs = try MPDLineSocket(unixPath: peers.mpd.socketPath)
        let ours = try MPDLineSocket(unixPath: peers.daemonSocket)
        let before = ["clear", "add \"\(url)\"", "playlistinfo", "status", "play", "status"]
        var differences = try DaemonPeerCLITests.differences(before, mpd: theirs, tonearm: ours)
        // Each woken from `idle playlist` (the first answers at once: `clear` and `add` changed the
        // queue since this connection last idled) until its current song has the stream's title.
        for (name, c) in [("MPD", theirs), ("Tonearm", ours)] {
            var titled = false
            for _ in 0..<5 {
                c.send(lines: ["currentsong"])
                titled = try c.readAnswer(timeout: 10).contains { $0.hasPrefix("Title: ") }
                if titled { break }
                c.send(lines: ["idle playlist"])
                _ = try c.readAnswer(timeout: 30)
            }
            #expect(titled, "\(name)'s current song has no title")
        }
        theirs.send(lines: ["status"])
        let version = try theirs.readAnswer(timeout: 10).first { $0.hasPrefix("playlist: ") }.flatMap { Int($0.dropFirst(10)) } ?? 0
        differences += try DaemonPeerCLITests.differences(["currentsong", "playlistinfo", "status", "plchanges \(version - 1)"],
                                                          mpd: theirs, tonearm: ours)
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
        ours.send(lines: ["currentsong"])
        #expect(try ours.readAnswer(timeout: 10).contains("Title: 流れ"))
    }
}

/// `--password` and `--default-permissions`: malformed values are refused naming them; a
/// client without the password has the default permissions, with it the password's (driven by
/// the real `mpc`, which sends `password` for `MPD_HOST=SECRET@HOST`).
@Suite(.serialized)
struct DaemonPasswordCLITests {
    @Test func malformedValuesAreRefusedNamingThem() throws {
        let dir = try TempDir("tonearm-daemon-pw")
        defer { dir.remove() }
        for (args, message) in [(["--password", "secret"], "--password: \"@\" not found in password string \"secret\""),
                                (["--password", "pw@read,rule"], "unknown permission \"rule\""),
                                (["--default-permissions", "read,root"], "--default-permissions: unknown permission \"root\"")] {
            let r = try run(try tonearmBinary(), ["daemon", "--output", "null", "--listen", "none", "--runtime-dir", dir.file("run"),
                                                  "--state-dir", dir.file("state")] + args)
            #expect(r.status != 0)
            #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("run/mpd.sock")))
        }
    }

    @Test func mpcWithAndWithoutThePassword() throws {
        let dir = try TempDir("tonearm-daemon-pw")
        defer { dir.remove() }
        let runtime = dir.file("run")
        let daemon = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime,
                                       "--state-dir", dir.file("state"), "--password", "adm@read,add,control,admin",
                                       "--default-permissions", "read"], captureStandardError: true)
        defer { daemon.terminate(SIGKILL) }
        #expect(daemon.waitForStandardError(containing: "listening on \(runtime)/mpd.sock", timeout: 30), "\(daemon.standardErrorText)")
        let socket = runtime + "/mpd.sock"
        let reader = try run("mpc", ["status"], environment: ["MPD_HOST": socket])
        #expect(reader.status == 0, "\(reader.stderr)")
        let refused = try run("mpc", ["repeat", "on"], environment: ["MPD_HOST": socket])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("you don't have permission for \"repeat\""), "\(refused.stderr)")
        let wrong = try run("mpc", ["repeat", "on"], environment: ["MPD_HOST": "nope@" + socket])
        #expect(wrong.stderr.contains("incorrect password"), "\(wrong.stderr)")
        let allowed = try run("mpc", ["repeat", "on"], environment: ["MPD_HOST": "adm@" + socket])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try run("mpc", ["status"], environment: ["MPD_HOST": socket]).stdout.contains("repeat: on"))
        daemon.terminate(SIGTERM)
        #expect(daemon.succeeded, "\(daemon.standardErrorText)")
    }
}

/// `albumart` and `readpicture` through the daemon's server: the binary answers (`binary: N`,
/// N bytes, a newline, `OK`) in `binarylimit` chunks from an offset, compared byte for byte with
/// a real MPD's on the same folder, and the pictures the real `mpc` gets from both compared with
/// the cover file and the picture embedded in the song.
@Suite(.serialized)
struct DaemonPictureCLITests {
    /// One answer as bytes: its lines up to `OK` or `ACK`, with the bytes a `binary: N` line
    /// announces (and the newline after them) read as they are.
    static func rawAnswer(_ c: MPDLineSocket, _ line: String) throws -> [UInt8] {
        c.send(lines: [line])
        var out: [UInt8] = []
        while true {
            guard let l = try c.readLine(timeout: 10) else { return out + Array("<closed>".utf8) }
            out += Array((l + "\n").utf8)
            if l == "OK" || l.hasPrefix("ACK ") { return out }
            if l.hasPrefix("binary: "), let n = Int(l.dropFirst(8)) {
                while c.pending.count < n + 1 {
                    guard try c.fill(timeout: 10) else { return out + c.pending + Array("<closed>".utf8) }
                }
                out += c.pending.prefix(n + 1)
                c.pending.removeFirst(n + 1)
            }
        }
    }

    @Test func picturesAreSentAsMPDSendsThem() throws {
        var embedded: [UInt8] = [], cover: [UInt8] = []
        let peers = try DaemonPeerCLITests.Peers { music in
            let folder = music + "/Art/Pics"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // Noise (PNG cannot shrink it): more than one 8192-byte chunk each.
            func noise(_ size: Int, _ path: String) throws -> [UInt8] {
                try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "nullsrc=s=\(size)x\(size),geq=lum='random(1)*255':cb=128:cr=128",
                                        "-frames:v", "1", path])
                return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            }
            embedded = try noise(160, music + "/embedded.png")
            cover = try noise(176, folder + "/cover.png")
            try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=1", "-i", music + "/embedded.png", "-map", "0", "-map", "1",
                                    "-c:a", "flac", "-c:v", "copy", "-disposition:v", "attached_pic", "-metadata", "title=Pic",
                                    folder + "/p.flac"])
            try FileManager.default.removeItem(atPath: music + "/embedded.png")
        }
        defer { peers.stop() }
        #expect(embedded.count > 8192 && cover.count > 8192, "\(embedded.count) \(cover.count)")
        let song = "\"Art/Pics/p.flac\""
        let requests: [(String, Int?)] = [
            ("albumart \(song) 0", nil), ("albumart \(song) 8192", nil), ("albumart \(song) \(cover.count)", nil),
            ("albumart \(song) \(cover.count + 1)", nil), ("albumart \"Other/Solo/x.flac\" 0", nil), ("albumart nosuch 0", nil),
            ("albumart \(song) x", nil), ("albumart \(song)", nil),
            ("readpicture \(song) 0", nil), ("readpicture \(song) 100", nil), ("readpicture \(song) \(embedded.count + 1)", nil),
            ("readpicture \"Other/Solo/x.flac\" 0", nil), ("readpicture nosuch 0", nil),
            ("readpicture \(song) 0", 64), ("readpicture \(song) 1000", 64), ("albumart \(song) 4000", 100),
        ]
        var differences: [String] = []
        for (line, limit) in requests {
            let theirs = try MPDLineSocket(unixPath: peers.mpd.socketPath), ours = try MPDLineSocket(unixPath: peers.daemonSocket)
            if let limit {
                _ = try Self.rawAnswer(theirs, "binarylimit \(limit)")
                _ = try Self.rawAnswer(ours, "binarylimit \(limit)")
            }
            let a = try Self.rawAnswer(theirs, line), b = try Self.rawAnswer(ours, line)
            if a != b {
                differences.append("\(line): MPD \(a.count) bytes \(String(decoding: a.prefix(60), as: UTF8.self).debugDescription), "
                                   + "Tonearm \(b.count) bytes \(String(decoding: b.prefix(60), as: UTF8.self).debugDescription)")
            }
        }
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
        // In a command list, between text answers.
        let list = ["command_list_ok_begin", "ping", "readpicture \(song) 13000", "ping", "command_list_end"]
        let theirs = try MPDLineSocket(unixPath: peers.mpd.socketPath), ours = try MPDLineSocket(unixPath: peers.daemonSocket)
        theirs.send(lines: Array(list.dropLast()))
        ours.send(lines: Array(list.dropLast()))
        #expect(try Self.rawAnswer(theirs, list.last!) == Self.rawAnswer(ours, list.last!))
        // The real mpc reads the whole pictures (chunk by chunk, at offsets) from both.
        for (command, expected) in [("albumart", cover), ("readpicture", embedded)] {
            for (name, socket) in [("MPD", peers.mpd.socketPath), ("Tonearm", peers.daemonSocket)] {
                let out = peers.dir.file("\(command)-\(name).bin")
                let r = try run("/bin/sh", ["-c", "mpc \(command) \"$1\" > \"$2\"", "sh", "Art/Pics/p.flac", out],
                                environment: ["MPD_HOST": socket])
                #expect(r.status == 0, "\(name) \(command): \(r.stderr)")
                let got = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data())
                #expect(got == expected, "\(name) \(command): \(got.count) bytes, expected \(expected.count)")
            }
        }
    }
}

/// The config file's `[daemon]` table: the same settings as the flags, read by the daemon; a
/// bad value ends it before it listens, naming the file, the line and the key.
@Suite(.serialized)
struct DaemonConfigCLITests {
    @Test func theDaemonTableSetsPasswordsAndPermissions() throws {
        let dir = try TempDir("tonearm-daemon-config")
        defer { dir.remove() }
        let runtime = dir.file("run")
        let config = dir.file("config.toml")
        try """
            [daemon]
            listen = []
            outputs = ["null"]
            password = ["adm@read,add,control,admin"]
            default_permissions = "read"
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try ChildProcess([try tonearmBinary(), "daemon", "--config", config, "--runtime-dir", runtime,
                                       "--state-dir", dir.file("state")], captureStandardError: true)
        defer { daemon.terminate(SIGKILL) }
        #expect(daemon.waitForStandardError(containing: "listening on \(runtime)/mpd.sock", timeout: 30), "\(daemon.standardErrorText)")
        let socket = runtime + "/mpd.sock"
        let refused = try run("mpc", ["repeat", "on"], environment: ["MPD_HOST": socket])
        #expect(refused.stderr.contains("you don't have permission for \"repeat\""), "\(refused.stderr)")
        #expect(try run("mpc", ["repeat", "on"], environment: ["MPD_HOST": "adm@" + socket]).status == 0)
        // listen = []: no TCP; outputs = ["null"].
        #expect(!daemon.standardErrorText.contains("listening on 127.0.0.1"), "\(daemon.standardErrorText)")
        #expect(daemon.standardErrorText.contains("output: null"), "\(daemon.standardErrorText)")
        // The file holds a password and others may read it (written 0644): said once.
        #expect(daemon.standardErrorText.contains("\(config) holds passwords and others may read it (chmod 600 \(config))"),
                "\(daemon.standardErrorText)")
        daemon.terminate(SIGTERM)
        #expect(daemon.succeeded, "\(daemon.standardErrorText)")

        // A flag wins: --default-permissions lets everyone change the options. (Readable by the
        // user only now: no warning.)
        #expect(chmod(config, 0o600) == 0)
        let second = try ChildProcess([try tonearmBinary(), "daemon", "--config", config, "--runtime-dir", runtime,
                                       "--state-dir", dir.file("state"), "--default-permissions", "read,control"], captureStandardError: true)
        defer { second.terminate(SIGKILL) }
        #expect(second.waitForStandardError(containing: "listening on \(runtime)/mpd.sock", timeout: 30), "\(second.standardErrorText)")
        #expect(try run("mpc", ["repeat", "off"], environment: ["MPD_HOST": socket]).status == 0)
        #expect(!second.standardErrorText.contains("holds passwords"), "\(second.standardErrorText)")
        second.terminate(SIGTERM)
        #expect(second.succeeded, "\(second.standardErrorText)")

        // A bad value: refused before listening, with the file, the line and the key.
        try "[daemon]\nlisten = []\npassword = [\"nosecret\"]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let bad = try run(try tonearmBinary(), ["daemon", "--config", config, "--runtime-dir", runtime, "--state-dir", dir.file("state")])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("\(config):3: 'daemon.password': item 1: \"@\" not found in password string \"nosecret\""), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}

/// A typical client session written with python3-mpd (Debian's, as MPD clients in Python use
/// it), run against the real MPD and against `tonearm daemon` on the same music folder; the
/// two transcripts must be the same. Normalised in the script: the songs' `last-modified` and
/// `format` (the daemon's queue entries carry neither), `status` reduced to the queue's fields,
/// `stats` to the database's counts. Ids and playlist versions are compared as they are.
@Suite(.serialized)
struct DaemonPythonMPDCLITests {
    static let script = #"""
        import json, sys, threading
        from mpd import MPDClient, CommandError

        sock = sys.argv[1]
        out = []
        STATUS = {"repeat", "random", "single", "consume", "playlist", "playlistlength", "state", "song", "songid",
                  "nextsong", "nextsongid"}

        def clean(x):
            if isinstance(x, list):
                return [clean(i) for i in x]
            if isinstance(x, dict):
                return {k: clean(v) for k, v in sorted(x.items()) if k not in ("last-modified", "format")}
            return x

        def rec(name, f):
            try:
                r = clean(f())
            except CommandError as e:
                r = "error: " + str(e)
            out.append([name, r])

        a = MPDClient()
        a.timeout = 10
        a.connect(sock)
        rec("status", lambda: {k: v for k, v in a.status().items() if k in STATUS})
        rec("stats", lambda: {k: v for k, v in a.stats().items() if k in ("artists", "albums", "songs", "db_playtime")})
        rec("lsinfo", lambda: a.lsinfo("歌手/アルバム"))
        rec("find", lambda: a.find("artist", "歌手"))
        rec("search", lambda: a.search("title", "曲"))
        rec("list", lambda: a.list("album", "group", "artist"))
        rec("count", lambda: a.count("artist", "歌手"))
        rec("add", lambda: a.add("Other/Solo/x.flac"))
        rec("addid", lambda: a.addid("歌手/アルバム/02 二.flac", 0))
        rec("findadd", lambda: a.findadd("album", "アルバム"))
        rec("searchadd", lambda: a.searchadd("title", "ex"))
        rec("playlistinfo", lambda: a.playlistinfo())
        rec("move", lambda: a.move(0, 3))
        rec("swapid", lambda: a.swapid(1, 2))
        rec("deleteid", lambda: a.deleteid(3))
        rec("delete", lambda: a.delete((0, 1)))
        rec("playlistid", lambda: a.playlistid())
        rec("playlistfind", lambda: a.playlistfind("title", "曲二"))
        rec("prioid", lambda: a.prioid(9, 4))
        rec("plchangesposid", lambda: a.plchangesposid(3))
        rec("random", lambda: a.random(1))
        rec("consume", lambda: a.consume(1))
        rec("single", lambda: a.single("oneshot"))
        rec("repeat", lambda: a.repeat(1))
        rec("status after modes", lambda: {k: v for k, v in a.status().items() if k in STATUS})
        rec("bad index", lambda: a.play(99))
        rec("bad id", lambda: a.playid(99))
        rec("bad move", lambda: a.move(7, 0))
        rec("bad find", lambda: a.find("nosuchtag", "x"))
        rec("no such file", lambda: a.add("nosuch.flac"))
        rec("save", lambda: a.save("保存"))
        rec("listplaylists", lambda: [p["playlist"] for p in a.listplaylists()])
        rec("listplaylist", lambda: a.listplaylist("保存"))
        rec("clear", lambda: a.clear())
        rec("load", lambda: a.load("保存"))
        rec("rm", lambda: a.rm("保存"))
        # Everything this connection changed, in one idle (answered at once: they are pending).
        rec("idle after own changes", lambda: sorted(a.idle()))
        # A change from a second connection wakes the first one's idle (waiting in a thread;
        # should the change come first, it is pending and answers the idle as well).
        b = MPDClient()
        b.timeout = 10
        b.connect(sock)
        woken = []
        waiter = threading.Thread(target=lambda: woken.append(a.idle("playlist", "mixer")))
        waiter.start()
        b.add("歌手/アルバム/01 一.flac")
        waiter.join(10)
        out.append(["idle woken by another client", woken])
        rec("status at the end", lambda: {k: v for k, v in b.status().items() if k in STATUS})
        b.close(); b.disconnect()
        a.close(); a.disconnect()
        print(json.dumps(out, ensure_ascii=False, indent=1))
        """#

    @Test func aPythonMPDSessionIsTheSameOnBoth() throws {
        let peers = try DaemonPeerCLITests.Peers()
        defer { peers.stop() }
        let path = peers.dir.file("session.py")
        try Self.script.write(toFile: path, atomically: true, encoding: .utf8)
        // Debian's python3 (python3-mpd is a Debian package), not another one first in PATH.
        let theirs = try run("/usr/bin/python3", [path, peers.mpd.socketPath])
        let ours = try run("/usr/bin/python3", [path, peers.daemonSocket])
        #expect(theirs.status == 0, "\(theirs.stderr)")
        #expect(ours.status == 0, "\(ours.stderr)")
        let a = theirs.stdout.split(separator: "\n"), b = ours.stdout.split(separator: "\n")
        #expect(a.count > 100)
        let differences = zip(a, b).enumerated().filter { $0.element.0 != $0.element.1 }
            .map { "line \($0.offset + 1):\n  MPD     \($0.element.0)\n  Tonearm \($0.element.1)" }
        #expect(differences.isEmpty && a.count == b.count,
                Comment(rawValue: differences.prefix(20).joined(separator: "\n") + "\n\nMPD:\n\(theirs.stdout)\n\nTonearm:\n\(ours.stdout)"))
    }
}
