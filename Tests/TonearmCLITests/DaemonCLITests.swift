// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm daemon` as a user runs it: in the foreground, logging to standard error, driven by
/// the real `mpc` over its Unix socket; one per user (a second one says where the first is and
/// fails); SIGTERM ends it cleanly (status 0, the socket removed).
@Suite(.serialized)
struct DaemonCLITests {
    @Test func runsIsDrivenByMPCRefusesASecondAndEndsOnSIGTERM() async throws {
        let dir = try TempDir("tonearm-daemon-cli")
        defer { dir.remove() }
        let song = dir.file("song.flac")
        try Fixtures.tone(path: song, codecArgs: ["-c:a", "flac", "-metadata", "title=Daemon tone"], seconds: 20)
        let runtime = dir.file("run")
        let daemon = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "127.0.0.1:0", "--runtime-dir", runtime,
                                       "--state-dir", dir.file("state")],
                                      captureStandardError: true)
        defer { daemon.terminate(SIGKILL) }
        #expect(daemon.waitForStandardError(containing: "listening on 127.0.0.1:", timeout: 30), "\(daemon.standardErrorText)")
        let socket = runtime + "/mpd.sock"
        #expect(daemon.standardErrorText.contains("listening on \(socket)"))
        let env = ["MPD_HOST": socket, "MPD_PORT": "6600"]

        #expect(try await run("mpc", ["add", song], environment: env).status == 0)
        let play = try await run("mpc", ["play"], environment: env)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stdout.contains("[playing] #1/1"), "\(play.stdout)")
        #expect(play.stdout.hasPrefix("Daemon tone\n"))

        let second = try await run(try tonearmBinary(), ["daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime, "--state-dir", dir.file("state")])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running (pid \(daemon.pid), socket \(socket))"), "\(second.stderr)")
        // The first one is untouched.
        #expect(try await run("mpc", ["status"], environment: env).stdout.contains("[playing]"))

        daemon.terminate(SIGTERM)
        #expect(daemon.succeeded, "status \(String(describing: daemon.status)): \(daemon.standardErrorText)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}

/// The daemon's database: `--music DIR` is scanned into the daemon's own library at start, and
/// mpc browses, searches and adds from it as from MPD (issue 20; the answers' format is compared
/// with a real MPD by MPDLibraryPeerTests).
@Suite(.serialized)
struct DaemonDatabaseCLITests {
    @Test func mpcBrowsesSearchesAndAddsFromTheMusicFolder() throws {
        let dir = try TempDir("tonearm-daemon-db")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music + "/Artist/青花", withIntermediateDirectories: true)
        try Fixtures.tone(path: music + "/Artist/青花/01.flac",
                          codecArgs: ["-c:a", "flac", "-metadata", "title=青花瓷", "-metadata", "artist=Artist", "-metadata", "album=青花"], seconds: 2)
        try Fixtures.tone(path: music + "/Artist/青花/02.flac",
                          codecArgs: ["-c:a", "flac", "-metadata", "title=Second", "-metadata", "artist=Artist", "-metadata", "album=青花"], seconds: 2)
        let daemon = try DaemonProcess(dir, music: music)
        func mpc(_ args: String...) throws -> String { try daemon.mpc(args) }
        #expect(try mpc("ls") == "Artist\n")
        #expect(try mpc("ls", "Artist") == "Artist/青花\n")
        #expect(try mpc("listall") == "Artist/青花/01.flac\nArtist/青花/02.flac\n")
        #expect(try mpc("search", "title", "青花") == "Artist/青花/01.flac\n")
        #expect(try mpc("list", "album") == "青花\n")
        // Added by its URI in the music folder (over the socket and, as a library song, over TCP too).
        _ = try mpc("add", "Artist/青花/02.flac")
        #expect(try mpc("playlist") == "Artist - Second\n")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }
}

/// Ratings and play counts (issue 21): the library's, as MPD's stickers. A rating set with
/// `mpc sticker` is read back and is the library's; a song the daemon plays to its end gets its
/// play counted in the library, and an idling client hears `sticker` for each.
@Suite(.serialized)
struct DaemonStickerCLITests {
    @Test func ratingsAndPlayCountsAreTheLibrarysStickers() throws {
        let dir = try TempDir("tonearm-daemon-sticker")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music + "/Album", withIntermediateDirectories: true)
        try Fixtures.tone(path: music + "/Album/a.flac", codecArgs: ["-c:a", "flac", "-metadata", "title=A"], seconds: 1)
        let daemon = try DaemonProcess(dir, music: music)
        func mpc(_ args: String...) throws -> String { try daemon.mpc(args) }
        let idler = try MPDLineSocket(unixPath: daemon.socket)
        #expect(try mpc("sticker", "Album/a.flac", "set", "rating", "4").isEmpty)
        #expect(try mpc("sticker", "Album/a.flac", "get", "rating") == "rating=4\n")
        idler.send(lines: ["idle sticker"])
        #expect(try idler.readAnswer(timeout: 10) == ["changed: sticker", "OK"])
        // A rating the library cannot hold is refused, naming the range.
        let refused = try run("mpc", ["sticker", "Album/a.flac", "set", "rating", "9"], environment: daemon.env)
        #expect(refused.status != 0 && refused.stderr.contains("0 to 5"), "\(refused.stderr)")
        // Played to its end: one play, counted in the library, heard as a sticker change.
        #expect(try mpc("sticker", "Album/a.flac", "list") == "rating=4\n")
        _ = try mpc("add", "Album/a.flac")
        idler.send(lines: ["idle sticker"])
        _ = try mpc("play")
        #expect(try idler.readAnswer(timeout: 30) == ["changed: sticker", "OK"])
        let stickers = try mpc("sticker", "Album/a.flac", "list")
        #expect(stickers.contains("playCount=1\n") && stickers.contains("rating=4\n") && stickers.contains("lastPlayed="), "\(stickers)")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }
}

/// `update` and the watch of the music folder (issue 20): `update` answers a job number at
/// once, `status` shows it while it runs, `mpc update --wait` (which waits on idle `update`)
/// returns once the new song is in the database; files copied in, removed and renamed while the
/// daemon runs are found by its inotify watch, and an idling client hears `database`.
@Suite(.serialized)
struct DaemonUpdateCLITests {
    @Test func updateAndTheFolderWatchChangeTheDatabase() throws {
        let dir = try TempDir("tonearm-daemon-update")
        defer { dir.remove() }
        let music = dir.file("music"), spare = dir.file("spare"), extra = dir.file("extra")
        for d in [music + "/Album", spare, extra] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        for (name, folder) in [("a", music + "/Album"), ("b", spare), ("c", spare)] {
            try Fixtures.tone(path: "\(folder)/\(name).flac", codecArgs: ["-c:a", "flac", "-metadata", "title=\(name)"], seconds: 1)
        }
        // No session bus: the daemon runs without MPRIS and says so once.
        // A second music folder: a top-level folder of the database, watched too.
        let daemon = try DaemonProcess(dir, music: music, options: ["--music", extra])
        #expect(daemon.process.standardErrorText.components(separatedBy: "running without MPRIS").count == 2,
                "\(daemon.process.standardErrorText)")
        func mpc(_ args: String...) throws -> String { try daemon.mpc(args) }
        // Connected before any change: the events it has not heard wait for its next `idle`.
        let watcher = try MPDLineSocket(unixPath: daemon.socket)
        /// Idles on `database` until `mpc listall` says `expected` (each change wakes it).
        func waitForDatabase(_ expected: String) throws {
            var listing = try mpc("listall")
            var wakes = 0
            while listing != expected && wakes < 20 {
                watcher.send(lines: ["idle database"])
                let answer = try watcher.readAnswer(timeout: 30)
                #expect(answer == ["changed: database", "OK"], "\(answer)")
                guard answer.last == "OK" else { return }
                wakes += 1
                listing = try mpc("listall")
            }
            #expect(listing == expected)
        }
        #expect(try mpc("listall") == "Album/a.flac\n")

        // `update`: the job's number at once, in `status` (same command list) while it runs.
        let client = try MPDLineSocket(unixPath: daemon.socket)
        client.send(lines: ["command_list_begin", "update Album", "status", "command_list_end"])
        let answer = try client.readAnswer()
        #expect(answer.first == "updating_db: 1", "\(answer)")
        #expect(answer.contains("updating_db: 1") && answer.filter { $0 == "updating_db: 1" }.count == 2, "\(answer)")
        // A file put in the folder is in the database once `mpc update --wait` returns.
        #expect(rename(spare + "/b.flac", music + "/Album/b.flac") == 0)
        #expect(try mpc("update", "--wait").isEmpty == false)
        #expect(try mpc("listall") == "Album/a.flac\nAlbum/b.flac\n")
        // (The watch saw the rename too: its own job may follow.)
        #expect(try mpc("status").contains("Updating DB (#1)") == false)

        // The watch: a song copied in, one removed, one renamed, each heard as idle `database`;
        // each batch an update job (idle `update`).
        let updates = try MPDLineSocket(unixPath: daemon.socket)
        updates.send(lines: ["idle update"])
        try FileManager.default.copyItem(atPath: spare + "/c.flac", toPath: music + "/c.flac")
        #expect(try updates.readAnswer(timeout: 30) == ["changed: update", "OK"])
        try waitForDatabase("c.flac\nAlbum/a.flac\nAlbum/b.flac\n")  // MPD's order: a folder's songs, then its folders
        try FileManager.default.removeItem(atPath: music + "/Album/a.flac")
        try waitForDatabase("c.flac\nAlbum/b.flac\n")
        #expect(rename(music + "/c.flac", music + "/Album/d.flac") == 0)
        try waitForDatabase("Album/b.flac\nAlbum/d.flac\n")
        #expect(try mpc("-f", "%title%", "search", "title", "c") == "c\n")
        // The second music folder is watched: a song put there is in the database under its name.
        try FileManager.default.copyItem(atPath: spare + "/c.flac", toPath: extra + "/e.flac")
        try waitForDatabase("Album/b.flac\nAlbum/d.flac\nextra/e.flac\n")
        _ = try mpc("add", "extra/e.flac")
        #expect(try mpc("-f", "%file% %title%", "playlist") == "extra/e.flac c\n")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }
}

/// The daemon on the session bus (issue 20): `org.mpris.MediaPlayer2.tonearm` shows and drives
/// the queue the MPD protocol drives — what mpc plays is in playerctl's metadata, a playerctl
/// pause is in `mpc status` and wakes an idling MPD client with `player`.
@Suite(.serialized)
struct DaemonMPRISCLITests {
    @Test func playerctlAndMPCDriveTheSameQueue() async throws {
        let dir = try TempDir("tonearm-daemon-mpris")
        defer { dir.remove() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = dir.file("alpha.flac"), b = dir.file("beta.flac")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "flac", "-metadata", "title=Alpha", "-metadata", "artist=The Testers"], seconds: 30)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "flac", "-metadata", "title=Beta"], seconds: 30, freq: 660)
        let follower = try bus.follow("playerctl", ["-p", "tonearm", "-F", "metadata", "--format", "{{status}} {{title}}"])
        defer { follower.terminate() }
        func sees(_ text: String) async -> Bool { await follower.waitForStandardOutput(timeout: 15) { $0.text.contains(text) } }
        let runtime = dir.file("run")
        let daemon = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime,
                                       "--state-dir", dir.file("state")], environment: bus.environment, captureStandardError: true)
        defer { daemon.terminate(SIGKILL) }
        #expect(daemon.waitForStandardError(containing: "listening on \(runtime)/mpd.sock", timeout: 30), "\(daemon.standardErrorText)")
        let env = ["MPD_HOST": runtime + "/mpd.sock"]
        func mpc(_ args: String...) throws -> String {
            let r = try run("mpc", args, environment: env)
            #expect(r.status == 0, "mpc \(args): \(r.stderr)")
            return r.stdout
        }
        let watcher = try MPDLineSocket(unixPath: runtime + "/mpd.sock")
        _ = try mpc("add", a)
        _ = try mpc("add", b)
        _ = try mpc("play")
        #expect(await sees("Playing Alpha"), "playerctl saw: \(follower.standardOutputText)")
        let meta = try bus.playerctl("-p", "tonearm", "metadata")
        #expect(meta.stdout.contains("The Testers") && meta.stdout.contains("30000000"), "\(meta.stdout)")
        _ = try mpc("next")
        #expect(await sees("Playing Beta"), "\(follower.standardOutputText)")

        // playerctl drives the daemon's queue: mpc sees it, an idling client is woken.
        watcher.send(lines: ["idle player"])
        #expect(try watcher.readAnswer(timeout: 10) == ["changed: player", "OK"])  // mpc's play and next, heard already
        try bus.playerctl("-p", "tonearm", "pause")
        watcher.send(lines: ["idle player"])
        #expect(try watcher.readAnswer(timeout: 10) == ["changed: player", "OK"])
        #expect(try mpc("status").contains("[paused]  #2/2"))
        #expect(await sees("Paused Beta"), "\(follower.standardOutputText)")
        try bus.playerctl("-p", "tonearm", "previous")
        try bus.playerctl("-p", "tonearm", "play")
        let resumed = await follower.waitForStandardOutput(timeout: 15) { o in
            o.text.range(of: "Paused Beta").map { o.text[$0.upperBound...].contains("Playing Alpha") } ?? false
        }
        #expect(resumed, "\(follower.standardOutputText)")
        let status = try mpc("status")
        #expect(status.hasPrefix("The Testers - Alpha\n[playing] #1/2"), "\(status)")
        // The volume and the modes set over MPRIS are MPD's too.
        try bus.playerctl("-p", "tonearm", "volume", "0.5")
        watcher.send(lines: ["idle mixer"])
        #expect(try watcher.readAnswer(timeout: 10) == ["changed: mixer", "OK"])
        #expect(try mpc("volume") == "volume: 50%\n")
        try bus.playerctl("-p", "tonearm", "loop", "Track")
        watcher.send(lines: ["idle options"])
        #expect(try watcher.readAnswer(timeout: 10) == ["changed: options", "OK"])
        #expect(try mpc("status").contains("repeat: on    random: off   single: on "))
        daemon.terminate(SIGTERM)
        #expect(daemon.succeeded, "\(daemon.standardErrorText)")
    }

    /// The daemon's audio session, as iOS's system music player's: a `tonearm play` in a terminal
    /// (an exclusive playback session) interrupts it — the daemon pauses, an idling client hears
    /// `player` — and when that player ends (deactivating with notifyOthersOnDeactivation) the
    /// daemon plays on from where it was. With `--mix` it plays along instead.
    @Test(arguments: [false, true])
    func aTonearmPlayInterruptsTheDaemonWhichPlaysOnAfter(mix: Bool) async throws {
        let dir = try TempDir("tonearm-daemon-session")
        defer { dir.remove() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = dir.file("long.flac"), b = dir.file("short.flac")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "flac"], seconds: 60)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "flac"], seconds: 1.5, freq: 660)
        let runtime = dir.file("run")
        let daemon = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime,
                                       "--state-dir", dir.file("state")] + (mix ? ["--mix"] : []),
                                      environment: bus.environment, captureStandardError: true)
        defer { daemon.terminate(SIGKILL) }
        #expect(daemon.waitForStandardError(containing: "listening on \(runtime)/mpd.sock", timeout: 30), "\(daemon.standardErrorText)")
        let client = try MPDLineSocket(unixPath: runtime + "/mpd.sock")
        func state() throws -> String? {
            client.send(lines: ["status"])
            return try client.readAnswer(timeout: 10).first { $0.hasPrefix("state: ") }.map { String($0.dropFirst(7)) }
        }
        /// Waits on `idle player` until the daemon's state is `wanted` (false after 10 changes).
        func waitForState(_ wanted: String) throws -> Bool {
            for _ in 0..<10 {
                if try state() == wanted { return true }
                client.send(lines: ["idle player"])
                guard try client.readAnswer(timeout: 15).last == "OK" else { return false }
            }
            return false
        }
        client.send(lines: ["command_list_begin", "add \"\(a)\"", "play", "command_list_end"])
        #expect(try client.readAnswer(timeout: 10) == ["OK"])
        #expect(try waitForState("play"))
        var env = bus.environment
        env["XDG_STATE_HOME"] = dir.file("player-state")
        let player = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", b], environment: env, captureStandardOutput: true)
        defer { player.terminate(SIGKILL) }
        if mix {
            #expect(await player.waitForExit(timeout: 30))
            #expect(try state() == "play", "the daemon stopped for a player while --mix")
        } else {
            #expect(try waitForState("pause"), "the daemon played on while tonearm play played")
            #expect(await player.waitForExit(timeout: 30))
            #expect(try waitForState("play"), "the daemon did not play on after tonearm play ended")
        }
        #expect(player.succeeded, "\(player.standardOutputText)")
        daemon.terminate(SIGTERM)
        #expect(await daemon.waitForExit(timeout: 30))
        #expect(daemon.succeeded, "\(daemon.standardErrorText)")
    }
}

/// The daemon's state survives SIGKILL: the queue, the song, the position, the volume and the
/// modes are saved as they change (before the answer goes out), and a new daemon resumes.
@Suite(.serialized)
struct DaemonStateCLITests {
    static func start(_ runtime: String, _ state: String) throws -> ChildProcess {
        let d = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime,
                                  "--state-dir", state], captureStandardError: true)
        guard d.waitForStandardError(containing: "listening on \(runtime)/mpd.sock", timeout: 30) else {
            d.terminate(SIGKILL)
            throw TestSupportError("the daemon did not start: \(d.standardErrorText)")
        }
        return d
    }

    @Test func resumesAfterSIGKILL() async throws {
        let dir = try TempDir("tonearm-daemon-state")
        defer { dir.remove() }
        let a = dir.file("a.flac"), b = dir.file("b.flac")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "flac", "-metadata", "title=First"], seconds: 30)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "flac", "-metadata", "title=Second"], seconds: 30, freq: 660)
        let runtime = dir.file("run"), state = dir.file("state")
        let env = ["MPD_HOST": runtime + "/mpd.sock", "MPD_PORT": "6600"]
        func mpc(_ args: String...) throws -> RunResult { try run("mpc", args, environment: env) }

        let first = try Self.start(runtime, state)
        #expect(try mpc("add", a).status == 0)
        #expect(try mpc("add", b).status == 0)
        #expect(try mpc("play", "2").status == 0)
        #expect(try mpc("seek", "12").status == 0)
        #expect(try mpc("volume", "30").status == 0)
        #expect(try mpc("repeat", "on").status == 0)
        #expect(try mpc("consume", "on").status == 0)
        first.terminate(SIGKILL)

        let second = try Self.start(runtime, state)
        defer { second.terminate(SIGTERM) }
        #expect(second.standardErrorText.contains("resumed the saved queue (2 songs)"))
        let status = try mpc("status")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Second", "\(status.stdout)")
        #expect(lines.count == 3 && lines[1].hasPrefix("[playing] #2/2   0:1"), "\(status.stdout)")
        #expect(lines.last?.hasPrefix("volume: 30%   repeat: on    random: off   single: off   consume: on") == true, "\(status.stdout)")
        #expect(try mpc("playlist").stdout == "First\nSecond\n")
    }
}

/// `--detach` and `--install-user-service`.
@Suite(.serialized)
struct DaemonServiceCLITests {
    @Test func detachReturnsOnceListeningInASessionOfItsOwn() async throws {
        let dir = try TempDir("tonearm-daemon-detach")
        defer { dir.remove() }
        let runtime = dir.file("run"), state = dir.file("state")
        let r = try await run(try tonearmBinary(), ["daemon", "--detach", "--output", "null", "--listen", "none", "--runtime-dir", runtime,
                                                    "--state-dir", state])
        #expect(r.status == 0, "\(r.stderr)")
        let pidText = try #require(r.stdout.split(separator: "(pid ").last?.split(separator: ")").first)
        let pid = try #require(pid_t(pidText))
        defer { kill(pid, SIGKILL) }
        // Listening as soon as the command returned, in a session of its own (a closed terminal
        // does not hang it up).
        let client = try MPDLineSocket(unixPath: runtime + "/mpd.sock")
        #expect(client.greeting == "OK MPD 0.23.5")
        #expect(getsid(pid) == pid)
        // A second --detach fails and says where the first is.
        let second = try await run(try tonearmBinary(), ["daemon", "--detach", "--output", "null", "--listen", "none", "--runtime-dir", runtime,
                                                         "--state-dir", state])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running (pid \(pid)"), "\(second.stderr)")
        // SIGTERM ends it: the open connection is closed.
        kill(pid, SIGTERM)
        #expect(try client.readLine(timeout: 20) == nil)
        let log = try String(contentsOfFile: state + "/daemon.log", encoding: .utf8)
        #expect(log.contains("listening on \(runtime)/mpd.sock"))
    }

    @Test func installsTheRepositorysUserUnitWhichSystemdAccepts() throws {
        let dir = try TempDir("tonearm-daemon-unit")
        defer { dir.remove() }
        let r = try run(try tonearmBinary(), ["daemon", "--install-user-service"], environment: ["XDG_CONFIG_HOME": dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let unit = dir.file("systemd/user/tonearm.service")
        let installed = try String(contentsOfFile: unit, encoding: .utf8)
        let binary = try #require(realpath(try tonearmBinary(), nil).map { p in defer { free(p) }; return String(cString: p) })
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../dist/systemd/tonearm.service").standardized.path
        let shipped = try String(contentsOfFile: repository, encoding: .utf8)
        #expect(installed == shipped.replacingOccurrences(of: "ExecStart=/usr/bin/tonearm daemon", with: "ExecStart=\(binary) daemon"))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            let verify = try run("systemd-analyze", ["verify", unit])
            #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        }
    }

    /// A password is not written into the unit (readable, and shown by `ps` when it runs): the
    /// user is pointed at the config file's `[daemon]` table.
    @Test func theUnitHoldsNoPassword() throws {
        let dir = try TempDir("tonearm-daemon-unit")
        defer { dir.remove() }
        let r = try run(try tonearmBinary(), ["daemon", "--password", "s3cret@read", "--listen", "none", "--install-user-service"],
                        environment: ["XDG_CONFIG_HOME": dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let installed = try String(contentsOfFile: dir.file("systemd/user/tonearm.service"), encoding: .utf8)
        #expect(!installed.contains("s3cret") && !installed.contains("--password"), "\(installed)")
        #expect(installed.contains(" daemon --listen none\n"), "\(installed)")
        #expect(r.stdout.contains("--password is not written into the unit"), "\(r.stdout)")
        #expect(r.stdout.contains("[daemon] table of \(dir.path)/tonearm/config.toml"), "\(r.stdout)")
    }
}
