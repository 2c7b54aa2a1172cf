// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
import TonearmTestSupport

/// `tonearm pick` as a user runs it: in a real pseudo-terminal (util-linux `script`), keys typed
/// into it, on a generated library. Every wait is for output (a marker), for the exit or (once)
/// for the stopped state, each with a deadline; none is a fixed sleep.
@Suite(.serialized) struct PickCLITests {
    /// A command in a pseudo-terminal (the tests' shared reader).
    typealias PTY = PTYScreen

    static let down = "\u{1B}[B", right = "\u{1B}[C", enter = "\r"
    /// What the picker writes when it gives the terminal back.
    static let restored = "\u{1B}[?2004l\u{1B}[?25h\u{1B}[?1049l"

    let dir: TempDir
    let music: String
    let db: String
    let bin: String

    init() throws {
        dir = try TempDir("pick-cli")
        music = dir.file("Music")
        db = dir.file("library.sqlite")
        bin = try tonearmBinary()
        try LibraryFixtures.make(at: music)
        let scan = try run(bin, ["library", "scan", music, "--db", db, "--quiet"])
        guard scan.status == 0 else { throw TestSupportError("scan failed: \(scan.stderr)") }
    }

    func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// `tonearm pick ARGS` in a pseudo-terminal, its state kept in the test's folder.
    func pick(_ args: String, redirect: String = "") throws -> PTY {
        try PTY("XDG_STATE_HOME=\(q(dir.file("state"))) \(q(bin)) pick --db \(q(db)) \(args) \(redirect)")
    }

    @Test func printsExactlyTheSongsPickedInTheOrderPicked() throws {
        defer { dir.remove() }
        let out = dir.file("picked.txt")
        // Standard output is a file (as in `$(tonearm pick --print)`): the screen goes to the terminal.
        let pty = try pick("--print", redirect: "> \(q(out))")
        try pty.waitFor("Enter: print this song")
        pty.type("sæglópur 2")  // UTF-8 through the terminal, a byte at a time or not
        try pty.waitFor("Search: sæglópur 2▏")
        try pty.waitFor("1 of 5")  // 1-2, 2-1, 2-2, 2-3, 2-4: each word starts a word
        // ↓ leaves the search for the first row; End, select 2-4; up twice, select 2-2.
        pty.type(Self.down + "\u{1B}[F" + " " + "\u{1B}[A\u{1B}[A" + " ")
        try pty.waitFor("2 selected")
        pty.type(Self.enter)
        #expect(try pty.waitForExit() == 0, "\(pty.all.suffix(800))")
        let printed = try String(contentsOfFile: out, encoding: .utf8)
        #expect(printed == "\(music)/Sigur Rós/Ágætis byrjun/2-4.mp3\n\(music)/Sigur Rós/Ágætis byrjun/2-2.mp3\n", "in the order picked")
        #expect(pty.all.contains(Self.restored))
        #expect(!pty.all.contains("Ágætis byrjun/2-4.mp3"), "the paths went to standard output only")
    }

    @Test func browsesAnArtistsAlbumsAndPrintsTheirIDs() throws {
        defer { dir.remove() }
        let pty = try pick("--print-ids")
        try pty.waitFor("Enter: print this song")
        pty.type("\t")  // the artists
        try pty.waitFor("Enter: print this artist's")
        pty.type("band")
        try pty.waitFor("Search: band▏")
        pty.type(Self.right)
        try pty.waitFor(" Artists › The Band")
        try pty.waitFor("Enter: print this album's 8 songs")
        pty.type(Self.enter)  // nothing selected: the highlighted album, Album Two (1999)
        #expect(try pty.waitForExit() == 0)
        struct Track: Decodable { var persistentID: String }
        let album = try run(bin, ["library", "songs", "--album", "Album Two", "--json", "--db", db])
        let ids = try JSONDecoder().decode([Track].self, from: Data(album.stdout.utf8)).map(\.persistentID)
        #expect(ids.count == 8)
        let after = try #require(pty.all.range(of: Self.restored)).upperBound
        let printed = pty.all[after...].split(whereSeparator: \.isNewline).map(String.init)
        #expect(printed == ids, "\(pty.all[after...])")
    }

    @Test func addsThePicksToAPlaylistMadeIfMissing() throws {
        defer { dir.remove() }
        let pty = try pick("--add-to 'Road Trip'")
        try pty.waitFor("Enter: add this song")
        pty.type("hit 4" + Self.enter)  // typing, then Enter: the top hit
        #expect(try pty.waitForExit() == 0)
        #expect(pty.all.contains("Added 1 track to 'Road Trip' (1 in all)"), "\(pty.all.suffix(300))")
        struct Playlist: Decodable { var tracks: [Track] }
        struct Track: Decodable { var title: String }
        let shown = try run(bin, ["library", "playlist", "show", "Road Trip", "--json", "--db", db])
        #expect(try JSONDecoder().decode(Playlist.self, from: Data(shown.stdout.utf8)).tracks.map(\.title) == ["Hit 4"])
    }

    @Test func escapeAndCtrlCCancelAndGiveTheTerminalBack() throws {
        defer { dir.remove() }
        let out = dir.file("picked.txt")
        let esc = try pick("--print", redirect: "> \(q(out))")
        try esc.waitFor("Enter: print this song")
        esc.type(Self.down + " \u{1B}")  // a selection, then Escape (alone: known by the pause after it)
        #expect(try esc.waitForExit() == 130)
        #expect(try String(contentsOfFile: out, encoding: .utf8).isEmpty, "nothing picked")
        let restore = try #require(esc.all.range(of: Self.restored, options: .backwards))
        #expect(!esc.all[restore.upperBound...].contains("Search:"), "no frame after the terminal is given back")

        let ctrlC = try pick("--print")
        try ctrlC.waitFor("Enter: print this song")
        ctrlC.type("\u{03}")  // through the terminal: SIGINT
        #expect(try ctrlC.waitForExit() == 130)
        #expect(ctrlC.all.contains(Self.restored))
    }

    @Test func playsThePickedSongThenQueuesAnother() throws {
        defer { dir.remove() }
        let wav = dir.file("heard.wav")
        let pty = try pick("--output \(q("file:" + wav)) --plain")
        try pty.waitFor("Enter: play this song")
        pty.type("晴天 3")
        try pty.waitFor("Search: 晴天 3▏")
        pty.type(Self.enter)
        try pty.waitFor("Done: 1 played, 0 failed")
        #expect(try pty.waitForExit() == 0, "\(pty.all.suffix(800))")
        #expect(pty.all.contains("Playing 1/1: 晴天 3 — 周杰伦"), "\(pty.all.suffix(800))")
        let heard = try readWAV(wav)
        let seconds = Double(heard.channels[0].count) / heard.sampleRate
        // On failure: the WAV's length in frames (a whole 4,096-frame block of the file output
        // more or less says which part was written twice or left out) and what the screen showed.
        #expect(abs(seconds - 0.2) < 0.06,
                "\(seconds) s written (\(heard.channels[0].count) frames at \(heard.sampleRate) Hz); the screen: \(pty.all.suffix(1500))")

        // --queue: appended to the saved queue, which plays on (here from its start, as it ended).
        let queued = try pick("--queue --output \(q("file:" + dir.file("queued.wav"))) --plain")
        try queued.waitFor("Enter: queue this song")
        queued.type("晴天 4")
        try queued.waitFor("Search: 晴天 4▏")
        queued.type(Self.enter)
        try queued.waitFor("Done: 2 played, 0 failed")
        #expect(try queued.waitForExit() == 0)
        #expect(queued.all.contains("Playing 1/2: 晴天 3") && queued.all.contains("Playing 2/2: 晴天 4 — 周杰伦"), "\(queued.all.suffix(800))")
    }

    /// Ctrl-Z: the terminal is given back, then the picker stops; SIGCONT (what `fg` sends) takes
    /// the terminal again and draws. Driven by python3's `pty` (`script` stops itself when its
    /// child stops, and shows nothing more); every wait there is for output or for the stop,
    /// with a deadline.
    @Test func ctrlZGivesTheTerminalBackUntilContinued() throws {
        defer { dir.remove() }
        let driver = #"""
            import os, pty, sys, time, select, signal
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            out = b''
            def wait_for(marker, count=1, timeout=20):
                global out
                deadline = time.time() + timeout
                while out.count(marker) < count:
                    left = deadline - time.time()
                    if left <= 0: sys.exit("timed out waiting for %r: %r" % (marker, out[-400:]))
                    if select.select([fd], [], [], left)[0]:
                        try: data = os.read(fd, 65536)
                        except OSError: data = b''
                        if not data: sys.exit("ended before %r: %r" % (marker, out[-400:]))
                        out += data
            restored = b'\x1b[?2004l\x1b[?25h\x1b[?1049l'
            wait_for(b'Enter: play this song')
            os.write(fd, b'\x1a')
            wait_for(restored)
            # The stop is an event of the child's: waitpid reports it; the alarm is the deadline.
            def no_stop(signum, frame): sys.exit("not stopped")
            signal.signal(signal.SIGALRM, no_stop)
            signal.alarm(10)
            status = os.waitpid(pid, os.WUNTRACED)[1]
            signal.alarm(0)
            if not os.WIFSTOPPED(status): sys.exit("ended instead of stopping: %r" % status)
            print("stopped after giving the terminal back")
            os.kill(pid, signal.SIGCONT)
            wait_for(b'\x1b[?1049h', count=2)
            wait_for(b'Enter: play this song', count=2)
            print("drawn again")
            os.write(fd, b'\x1b')
            wait_for(restored, count=2)
            print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """#
        let r = try run("python3", ["-c", driver, bin, "pick", "--db", db],
                        environment: ["TERM": "xterm-256color", "XDG_STATE_HOME": dir.file("state")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "stopped after giving the terminal back\ndrawn again\nstatus 130\n", "\(r.stdout) \(r.stderr)")
    }

    /// SIGTERM and SIGHUP (`kill`, a closed terminal window) end it as Ctrl-C does: the terminal
    /// given back, the shell's status for the signal.
    @Test func sigtermAndSighupGiveTheTerminalBack() throws {
        defer { dir.remove() }
        for sig in [SIGTERM, SIGHUP] {
            let pty = try PTY("echo PID:$$; exec \(q(bin)) pick --db \(q(db)) --print")
            try pty.waitFor("Enter: print this song")
            let pid = try #require(pty.all.firstMatch(of: /PID:(\d+)/).flatMap { pid_t($0.1) })
            kill(pid, sig)
            #expect(try pty.waitForExit() == 128 + sig)
            let out = pty.all
            let restore = try #require(out.range(of: Self.restored, options: .backwards), "\(out.suffix(300))")
            let after = out[restore.upperBound...]
            #expect(after.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "nothing after the terminal is given back")
        }
    }

    @Test func refusesWithoutATerminalOrALibrary() throws {
        defer { dir.remove() }
        // Standard input a pipe: a clear error at once, status 2, rather than waiting for keys.
        let r = try run(bin, ["pick", "--db", db])
        #expect(r.status == 2)
        #expect(r.stderr.contains("tonearm: pick: standard input is not a terminal"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)

        let missing = dir.file("nowhere/library.sqlite")
        let pty = try PTY("\(q(bin)) pick --db \(q(missing))")
        #expect(try pty.waitForExit() == 1)
        #expect(pty.all.contains("there is no library at \(missing)"), "\(pty.all)")
        #expect(!FileManager.default.fileExists(atPath: missing), "not created by asking")
        let bad = try run(bin, ["pick", "--print", "--queue", "--db", db])
        #expect(bad.status != 0 && bad.stderr.contains("--queue, --print: choose one"), "\(bad.stderr)")
    }
}
