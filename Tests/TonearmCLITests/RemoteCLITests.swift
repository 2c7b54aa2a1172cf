// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
import TonearmMPDClient
import TonearmTestSupport

/// `tonearm remote` and `tonearm play --daemon` against a real daemon (issue 20): the files
/// handed over by absolute path and started, the answers the same as mpc's against the same
/// daemon (status, current, the queue in a format, outputs, volume), the song table aligned
/// with CJK titles, the exit statuses (69 no daemon, 64 a bad argument, 1 the daemon's refusal).
@Suite(.serialized)
struct RemoteCLITests {
    @Test func handsFilesToTheDaemonAndAnswersAsMPCDoes() throws {
        let dir = try TempDir("tonearm-remote-cli")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music + "/青花", withIntermediateDirectories: true)
        try Fixtures.tone(path: music + "/青花/01.flac", codecArgs: ["-c:a", "flac", "-metadata", "title=青花瓷", "-metadata", "artist=周杰伦",
                                                                   "-metadata", "album=我很忙"], seconds: 8)
        try Fixtures.tone(path: music + "/青花/02.flac", codecArgs: ["-c:a", "flac", "-metadata", "title=Second", "-metadata", "artist=Somebody Else"], seconds: 3)
        try Fixtures.tone(path: dir.file("extra.flac"), codecArgs: ["-c:a", "flac", "-metadata", "title=Extra"], seconds: 3)
        let xdg = dir.file("xdg")
        let tonearm = try tonearmBinary()
        func remote(_ args: String..., env: [String: String] = ["XDG_RUNTIME_DIR": xdg]) throws -> RunResult {
            try run(tonearm, ["remote"] + args, environment: env, currentDirectory: dir.path)
        }

        // No daemon: one line saying where it looked and what to do; status 69.
        let none = try remote("status")
        #expect(none.status == 69, "\(none)")
        #expect(none.stderr == "tonearm: remote status: no daemon at \(xdg)/tonearm/mpd.sock (No such file or directory); start it with `tonearm daemon`\n",
                "\(none.stderr)")
        // Over TCP, a port nobody listens on.
        let refused = try remote("status", "--host", "127.0.0.1:1")
        #expect(refused.status == 69 && refused.stderr == "tonearm: remote status: no daemon at 127.0.0.1:1 (Connection refused); start it with `tonearm daemon`\n",
                "\(refused)")
        let handNone = try run(tonearm, ["play", "--daemon", music], environment: ["XDG_RUNTIME_DIR": xdg])
        #expect(handNone.status == 69 && handNone.stderr.contains("no daemon at \(xdg)/tonearm/mpd.sock"), "\(handNone)")
        // Bad arguments: usage errors before any connection.
        for (args, says) in [(["seek", "abc"], "seek takes SECONDS"), (["volume", "101"], "volume takes 0–100"), (["play", "0"], "counts from 1"),
                             (["status", "--host", "h:0"], "--host takes"), (["queue", "--format", "[%title%"], "a [ without its ]")] {
            let r = try run(tonearm, ["remote"] + args, environment: ["XDG_RUNTIME_DIR": xdg])
            #expect(r.status == 64 && r.stderr.contains(says), "\(args): \(r)")
        }

        // MPD_HOST / MPD_PORT as mpc reads them; --host wins; a bad value names the variable.
        for (env, status, says) in [(["MPD_HOST": "127.0.0.1", "MPD_PORT": "1"], Int32(69), "no daemon at 127.0.0.1:1 (Connection refused)"),
                                    (["MPD_HOST": "secret@127.0.0.1:1"], 69, "no daemon at 127.0.0.1:1 (Connection refused)"),
                                    (["MPD_HOST": dir.file("nowhere.sock")], 69, "no daemon at \(dir.file("nowhere.sock"))"),
                                    (["MPD_HOST": "h:0"], 64, "MPD_HOST takes [PASSWORD@]HOST[:PORT]"),
                                    (["MPD_HOST": "@h"], 69, "no daemon at @h"),
                                    (["MPD_HOST": "127.0.0.1", "MPD_PORT": "abc"], 64, "MPD_PORT takes a port 1–65535, not 'abc'")] {
            let r = try run(tonearm, ["remote", "status"], environment: env.merging(["XDG_RUNTIME_DIR": xdg]) { $1 })
            #expect(r.status == status && r.stderr.contains(says), "\(env): \(r)")
        }
        let handEnv = try run(tonearm, ["play", "--daemon", music], environment: ["XDG_RUNTIME_DIR": xdg, "MPD_HOST": "127.0.0.1", "MPD_PORT": "1"])
        #expect(handEnv.status == 69 && handEnv.stderr.contains("no daemon at 127.0.0.1:1"), "\(handEnv)")
        let handBad = try run(tonearm, ["play", "--daemon", music], environment: ["XDG_RUNTIME_DIR": xdg, "MPD_PORT": "0"])
        #expect(handBad.status == 64 && handBad.stderr.contains("MPD_PORT takes a port 1–65535, not '0'"), "\(handBad)")
        let flagWins = try run(tonearm, ["remote", "status", "--host", "127.0.0.1:1"], environment: ["XDG_RUNTIME_DIR": xdg, "MPD_HOST": "h:0"])
        #expect(flagWins.status == 69 && flagWins.stderr.contains("no daemon at 127.0.0.1:1"), "\(flagWins)")

        let daemon = try DaemonProcess(dir, music: music)
        defer { daemon.process.terminate(SIGKILL) }
        func mpc(_ args: String...) throws -> String { try daemon.mpc(args) }

        // MPD_PORT without MPD_HOST is localhost:PORT for mpc and for us — not the daemon's own
        // socket, which answers here; --host wins over MPD_HOST for play --daemon too.
        let portOnly = ["XDG_RUNTIME_DIR": xdg, "MPD_PORT": "1"]
        let mpcPortOnly = try run("mpc", ["status"], environment: portOnly)
        let remotePortOnly = try run(tonearm, ["remote", "status"], environment: portOnly)
        #expect(mpcPortOnly.status != 0 && remotePortOnly.status == 69 && remotePortOnly.stderr.contains("no daemon at localhost:1"),
                "mpc: \(mpcPortOnly) ours: \(remotePortOnly)")
        let handPort = try run(tonearm, ["play", "--daemon", "--port", "1", music], environment: ["XDG_RUNTIME_DIR": xdg])
        #expect(handPort.status == 69 && handPort.stderr.contains("no daemon at localhost:1"), "\(handPort)")

        // play --daemon DIR (a relative path): the folder's songs sent by absolute path, started;
        // inside the music folder the daemon queues them under their database URIs, as MPD does.
        let hand = try run(tonearm, ["play", "--daemon", "--host", daemon.socket, "music/青花"],
                           environment: ["XDG_RUNTIME_DIR": xdg, "MPD_HOST": "127.0.0.1", "MPD_PORT": "1"], currentDirectory: dir.path)
        #expect(hand.status == 0, "\(hand)")
        #expect(hand.stdout == "Added 2 songs to the daemon's queue at \(daemon.socket) (#1–#2 of 2).\nPlaying: 周杰伦 - 青花瓷 (#1).\n", "\(hand.stdout)")
        #expect(try mpc("-f", "%file%", "playlist") == "青花/01.flac\n青花/02.flac\n")
        #expect(try mpc("status").contains("[playing] #1/2"))

        // Paused, the answers are mpc's, line for line.
        #expect(try remote("pause", "--quiet").stdout.isEmpty)
        let status = try remote("status")
        #expect(status.status == 0)
        #expect(try remote().stdout == status.stdout, "no command: status, as mpc")
        #expect(status.stdout == (try mpc("status")), "\(status.stdout)")
        #expect(status.stdout.contains("[paused]  #1/2"))
        #expect(try remote("current").stdout == (try mpc("current")))
        #expect(try remote("current", "--format", "%album%").stdout == "我很忙\n")
        let format = "%position% [%artist% - ]%title% %time% %file%"
        #expect(try remote("queue", "--format", format).stdout == (try mpc("-f", format, "playlist")))
        // mpc's format language, rule by rule, on the current song with an album and then on one
        // without: missing values, | and & in and out of [], unknown names, stray %, escapes, case.
        // (`mpc current`, not `mpc playlist`: for the list mpc asks the server only for the tags
        // it finds in the format, and it misses some after a &.)
        let formats = ["%artist% - %title% (%album%)", "[%artist% - %album%]", "%album%", "x[%album%]y", "%title%&%album%",
                       "x|y", "%album%|x|y", "[%album%&%title%]|z", "%album%&%title%|z", "%title%|%album%&zz", "a[%album%|%title%]b",
                       "[%title%|%album%]&q", "%title%|[x%album%]&%artist%", "%TITLE% %Artist%", "a%%b", "50% off", "%title", "% title%",
                       "%audioformat% %mood%", "%prio% %disc% %composer%", "\\[x\\]\\t%title%\\n%file%", "[[%album%]%title%]", "[x]", "plain", "%mtime%", "%mdate%|none"]
        for song in ["1", "2"] {
            _ = try mpc("-q", "play", song)
            _ = try mpc("-q", "pause")
            for f in formats {
                #expect(try remote("current", "--format", f).stdout == (try mpc("-f", f, "current")), "song \(song), --format '\(f)'")
            }
        }
        _ = try mpc("-q", "play", "1")
        _ = try mpc("-q", "pause")
        #expect(try remote("outputs").stdout == (try mpc("outputs")))
        let volume = try remote("volume", "40")
        #expect(volume.status == 0 && volume.stdout.contains("volume: 40%"), "\(volume)")
        #expect(try remote("volume").stdout == (try mpc("volume")))
        #expect(try remote("volume", "-15", "-q").stdout.isEmpty)
        #expect(try mpc("volume") == "volume: 25%\n")

        // The table: the current song marked, the wide title's columns counted as two each.
        let table = try remote("queue").stdout.split(separator: "\n").map(String.init)
        #expect(table.count == 2, "\(table)")
        #expect(table[0].hasPrefix("> 1  青花瓷") && table[1].hasPrefix("  2  Second"), "\(table)")
        #expect(table.map { lineWidth($0) }.allSatisfy { $0 == lineWidth(table[0]) }, "\(table)")

        // A refusal of the daemon: its message, status 1.
        let badIndex = try remote("play", "9")
        #expect(badIndex.status == 1 && badIndex.stderr == "tonearm: remote play: Bad song index\n", "\(badIndex)")

        // Playing: another file is handed over without interrupting what plays.
        let play = try remote("play")
        #expect(play.status == 0 && play.stdout.contains("[playing] #1/2"), "\(play)")
        let more = try run(tonearm, ["play", "--daemon", "extra.flac"], environment: ["XDG_RUNTIME_DIR": xdg], currentDirectory: dir.path)
        #expect(more.stdout == "Added 1 song to the daemon's queue at \(daemon.socket) (#3 of 3).\n"
                + "The daemon plays on: 周杰伦 - 青花瓷 (#1); the added songs follow in the queue's order.\n", "\(more)")
        #expect(try mpc("current") == "周杰伦 - 青花瓷\n")

        // insert: right after the current song; add: at the end (a library URI as it is).
        #expect(try remote("insert", "extra.flac").status == 0)
        #expect(try remote("add", "青花/02.flac").status == 0)
        #expect(try mpc("-f", "%title%", "playlist") == "青花瓷\nExtra\nSecond\nExtra\nSecond\n")
        // seek, next, prev, toggle, stop, search, clear: each as mpc sees it afterwards.
        #expect(try remote("seek", "0:04").stdout.contains("0:04/0:08"))
        #expect(try remote("next", "-q").status == 0)
        #expect(try mpc("-f", "%position% %title%", "current") == "2 Extra\n")
        #expect(try remote("prev", "-q").status == 0)
        #expect(try mpc("-f", "%position%", "current") == "1\n")
        #expect(try remote("toggle").stdout.contains("[paused]"))
        #expect(try remote("toggle").stdout.contains("[playing]"))
        let stop = try remote("stop")
        #expect(stop.stdout == (try mpc("status")), "\(stop.stdout)")
        #expect(try remote("current").stdout.isEmpty)
        #expect(try remote("search", "青花", "--format", "%file%").stdout == "青花/01.flac\n")
        #expect(try remote("search", "artist", "somebody", "--format", "%title%").stdout == (try mpc("-f", "%title%", "search", "artist", "somebody")))
        // idle: the change made after it connected (its --verbose line), printed as the subsystem.
        let idle = try ChildProcess([tonearm, "remote", "idle", "player", "--verbose"], environment: ["XDG_RUNTIME_DIR": xdg],
                                    captureStandardError: true, captureStandardOutput: true)
        defer { idle.terminate(SIGKILL) }
        #expect(idle.waitForStandardError(containing: "tonearm remote: connected to \(daemon.socket) (MPD protocol 0.23", timeout: 30), "\(idle.standardErrorText)")
        _ = try mpc("volume", "26")  // mixer: not what it waits for
        _ = try mpc("play")
        #expect(idle.wait(timeout: 30) && idle.succeeded, "\(idle.standardErrorText)")
        let printed = idle.waitForStandardOutputBlocking(timeout: 30) { $0.ended }
        #expect(printed.text == "player\n", "\(printed.text)")
        _ = try mpc("stop")
        #expect(try remote("clear", "-q").status == 0)
        #expect(try mpc("playlist").isEmpty)
        // --host: the same daemon by its socket's path, without XDG_RUNTIME_DIR.
        #expect(try run(tonearm, ["remote", "volume", "--host", daemon.socket]).stdout == "volume: 26%\n")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }

    /// `tonearm pick --daemon` in a real pseudo-terminal: the picked song goes to the daemon's
    /// queue by its absolute path and plays there; the picker says so and ends.
    @Test func pickHandsThePickedSongsToTheDaemon() throws {
        let dir = try TempDir("tonearm-remote-pick")
        defer { dir.remove() }
        let music = dir.file("music"), db = dir.file("library.sqlite")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try Fixtures.tone(path: music + "/alpha.flac", codecArgs: ["-c:a", "flac", "-metadata", "title=Alpha Song"], seconds: 3)
        try Fixtures.tone(path: music + "/beta.flac", codecArgs: ["-c:a", "flac", "-metadata", "title=Beta Song"], seconds: 3)
        let tonearm = try tonearmBinary()
        let scan = try run(tonearm, ["library", "scan", music, "--db", db, "--quiet"])
        #expect(scan.status == 0, "\(scan.stderr)")
        let daemon = try DaemonProcess(dir, listen: "127.0.0.1:0")
        defer { daemon.process.terminate(SIGKILL) }
        func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let pty = try PTYScreen("XDG_RUNTIME_DIR=\(q(daemon.xdg)) XDG_STATE_HOME=\(q(dir.file("state-pick"))) \(q(tonearm)) pick --db \(q(db)) --daemon")
        try pty.waitFor("Enter: add this song")
        pty.type("beta\r")
        try pty.waitFor("Playing: Beta Song (#1).")
        #expect(try pty.waitForExit() == 0, "\(pty.all.suffix(600))")
        #expect(pty.all.contains("Added 1 song to the daemon's queue at \(daemon.socket) (#1 of 1)."), "\(pty.all.suffix(600))")
        #expect(pty.all.contains("Playing: Beta Song (#1)."), "\(pty.all.suffix(600))")
        let queue = try run("mpc", ["-f", "%file%", "playlist"], environment: ["MPD_HOST": daemon.socket])
        #expect(queue.stdout == music + "/beta.flac\n", "\(queue)")
        // The same daemon over TCP (its port from its log).
        let log = daemon.process.standardErrorText
        let port = try #require(log.components(separatedBy: "listening on 127.0.0.1:").dropFirst().first?.prefix { $0.isNumber })
        let overTCP = try run(tonearm, ["remote", "status", "--host", "127.0.0.1:\(port)"])
        #expect(overTCP.status == 0 && overTCP.stdout.hasPrefix("Beta Song\n[playing] #1/1"), "\(overTCP)")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }

    /// Terminal columns of a line (CJK two each): what a user sees as alignment.
    private func lineWidth(_ line: String) -> Int {
        line.unicodeScalars.reduce(0) { w, s in
            w + ((0x3000...0x9FFF).contains(s.value) || (0xFF00...0xFF60).contains(s.value) ? 2 : 1)
        }
    }
}

/// `MusicPlayer.system` (issue 20): the daemon's queue driven with MusicPlayer's names from this
/// process, its changes heard from `idle` as async sequences, what it does seen by mpc; a typed
/// error when no daemon runs. And the MPD client underneath: idle events that came while the
/// client was busy, cancelling an idle, typed ACKs.
@Suite(.serialized)
struct SystemMusicPlayerCLITests {
    /// No daemon runs: `MusicPlayer.system` starts one (`tonearm daemon --detach`, reading the
    /// user's config file — here one with no TCP and the null output) and drives it.
    @Test func startsTheDaemonWhenNoneRuns() async throws {
        let dir = try TempDir("tonearm-system-start")
        defer { dir.remove() }
        let a = dir.file("a.flac")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "flac", "-metadata", "title=Alpha"], seconds: 20)
        let xdg = dir.file("xdg"), config = dir.file("config")
        try FileManager.default.createDirectory(atPath: config + "/tonearm", withIntermediateDirectories: true)
        try "[daemon]\nlisten = []\noutputs = [\"null\"]\n".write(toFile: config + "/tonearm/config.toml", atomically: true, encoding: .utf8)
        let env = ["XDG_RUNTIME_DIR": xdg, "XDG_CONFIG_HOME": config, "XDG_STATE_HOME": dir.file("state"),
                   "TONEARM_EXECUTABLE": try tonearmBinary(), "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + dir.file("no-bus")]
        let socket = xdg + "/tonearm/mpd.sock"
        #expect(!FileManager.default.fileExists(atPath: socket))
        let player = try await ProcessEnvironment.with(env) { try await MusicPlayer.system }
        defer {
            // The daemon started in a session of its own: ended here by the pid its lock holds.
            if let lock = try? String(contentsOfFile: xdg + "/tonearm/daemon.lock", encoding: .utf8),
               let pid = lock.split(separator: "\n").first.flatMap({ Int32($0.dropFirst(4)) }) { kill(pid, SIGTERM) }
        }
        #expect(player.address == .unix(path: socket))
        let states = player.playbackStateChanges
        player.setQueue(withPaths: [a])
        player.play()
        _ = try await waitForEvent(states, "playing") { $0 == .playing }
        let status = try await run("mpc", ["status"], environment: ["MPD_HOST": socket])
        #expect(status.stdout.contains("[playing] #1/1"), "\(status)")
    }

    @Test func drivesTheDaemonsQueueAndHearsItsChanges() async throws {
        let dir = try TempDir("tonearm-system-player")
        defer { dir.remove() }
        let a = dir.file("a.flac"), b = dir.file("b.flac")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "flac", "-metadata", "title=Alpha"], seconds: 20)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "flac", "-metadata", "title=Beta"], seconds: 20)
        let xdg = dir.file("xdg")

        // No daemon, and none to start (no `tonearm` on PATH): a typed error naming the socket
        // looked at and why none was started.
        await ProcessEnvironment.with(["XDG_RUNTIME_DIR": xdg, "PATH": "/usr/bin:/bin"]) {
            do {
                _ = try await MusicPlayer.system
                Issue.record("MusicPlayer.system without a daemon")
            } catch {
                guard let error = error as? MPDClientError, case .noServer(let address, _) = error else { Issue.record("\(error)"); return }
                #expect(address == .unix(path: xdg + "/tonearm/mpd.sock"))
                #expect(error.description.hasPrefix("no daemon at \(xdg)/tonearm/mpd.sock"))
                #expect(error.description.contains("`tonearm` is not on PATH to start one"), "\(error)")
            }
        }

        let daemon = try DaemonProcess(dir)
        defer { daemon.process.terminate(SIGKILL) }
        func mpc(_ args: String...) throws -> String { try daemon.mpc(args) }
        let player = try await ProcessEnvironment.with(["XDG_RUNTIME_DIR": xdg]) { try await MusicPlayer.system }
        #expect(try await ProcessEnvironment.with(["XDG_RUNTIME_DIR": xdg]) { try await MusicPlayer.system } === player, "one per process")
        #expect(player.playbackState == .stopped && player.nowPlayingItem == nil)

        let states = player.playbackStateChanges, items = player.nowPlayingItemChanges, volumes = player.volumeChanges
        player.setQueue(withPaths: [a, b])
        player.play()
        _ = try await waitForEvent(states, "playing") { $0 == .playing }
        #expect(player.nowPlayingItem?.path == a)
        #expect(try mpc("status").contains("[playing] #1/2"))

        player.volume = 0.3
        _ = try await waitForEvent(volumes, "volume 0.3") { $0 == 0.3 }
        #expect(try mpc("volume") == "volume: 30%\n")

        player.skipToNextItem()
        _ = try await waitForEvent(items, "the second item") { $0?.path == b }
        #expect(player.indexOfNowPlayingItem == 1)
        #expect(try mpc("-f", "%title%", "current") == "Beta\n")

        player.pause()
        _ = try await waitForEvent(states, "paused") { $0 == .paused }
        player.repeatMode = .one
        player.shuffleMode = .songs
        try await player.synchronize()
        #expect(player.repeatMode == .one && player.shuffleMode == .songs)
        #expect(try mpc("status").contains("repeat: on    random: on    single: on "))

        // An error of a command made without waiting comes out of synchronize(), typed.
        player.stop()
        player.currentPlaybackTime = 5
        do {
            try await player.synchronize()
            Issue.record("a seek while stopped was accepted")
        } catch {
            guard case .server(let e) = error else { Issue.record("\(error)"); return }
            #expect(e.ack == .playerSync && e.command == "seekcur" && e.message == "Not playing", "\(e)")
        }
        #expect(player.playbackState == .stopped)
        try await player.synchronize()  // reported once

        // The client underneath: changes made while it was not idling are told at its next idle.
        let client = try await MPDClient.connect(to: .unix(path: daemon.socket))
        #expect(client.protocolVersion.hasPrefix("0.23"))
        _ = try mpc("volume", "55")
        #expect(try await client.idle() == ["mixer"])
        // A cancelled idle ends with noidle; the connection goes on.
        let waiting = Task { try await client.idle(["database"]) }
        waiting.cancel()
        #expect(try await waiting.value == [])
        #expect(try await client.status().volume == 55)
        do {
            try await client.send("play", "99")
            Issue.record("play 99 was accepted")
        } catch {
            guard case .server(let e) = error else { Issue.record("\(error)"); return }
            #expect(e.ack == .argument && e.command == "play", "\(e)")
        }
        // Idle as an async sequence: the change made before the first idle is its first element;
        // leaving the loop ends the idle (noidle) and the connection goes on.
        _ = try mpc("volume", "60")
        for try await changed in client.changes(["mixer"]) {
            #expect(changed == ["mixer"])
            break
        }
        #expect(try await client.status().volume == 60)
        // A command list: one reply per command.
        let replies = try await client.sendList([("status", []), ("playlistinfo", [])])
        #expect(MPDSong.list(replies[1]).map(\.file) == [a, b])
        client.close()

        // The daemon ends: the sequences finish, and MusicPlayer.system connects again to the next one.
        let ending = player.events
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
        _ = try await collectUntilFinished(ending)
        #expect(!player.isConnected)
        // This one has a password; without it a client may read only.
        let second = try DaemonProcess(dir, options: ["--password", "secret@read,add,control,admin", "--default-permissions", "read"])
        defer { second.process.terminate(SIGKILL) }
        let again = try await ProcessEnvironment.with(["XDG_RUNTIME_DIR": xdg]) { try await MusicPlayer.system }
        #expect(again !== player && again.isConnected)
        #expect(again.currentSnapshot.status.playlistLength == 2, "the restarted daemon's saved queue")
        again.play()
        do {
            try await again.synchronize()
            Issue.record("play without the password was accepted")
        } catch {
            guard case .server(let e) = error else { Issue.record("\(error)"); return }
            #expect(e.ack == .permission && e.command == "play", "\(e)")
        }
        do {
            _ = try await MPDClient.connect(to: .unix(path: second.socket), password: "wrong")
            Issue.record("a wrong password was accepted")
        } catch {
            guard case .server(let e) = error else { Issue.record("\(error)"); return }
            #expect(e.ack == .password, "\(e)")
        }
        let tonearm = try tonearmBinary()
        let denied = try await run(tonearm, ["remote", "play", "--host", second.socket])
        #expect(denied.status == 1 && denied.stderr.hasPrefix("tonearm: remote play: you don't have permission"), "\(denied)")
        // The saved queue was at its second song.
        let allowed = try await run(tonearm, ["remote", "play", "--host", second.socket, "--password", "secret"])
        #expect(allowed.status == 0 && allowed.stdout.contains("[playing] #2/2"), "\(allowed)")
        let withPassword = try await SystemMusicPlayer.connect(to: .unix(path: second.socket), password: "secret")
        #expect(withPassword.playbackState == .playing)
        withPassword.stop()
        try await withPassword.synchronize()
        #expect(withPassword.playbackState == .stopped)
        #expect(second.stop(), "\(second.process.standardErrorText)")
    }
}
