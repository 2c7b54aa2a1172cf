// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
import TonearmTestSupport

/// `tonearm play`'s screen in a real pseudo-terminal of a given size (issue 16): it fits the
/// terminal (rows and columns, CJK text two columns a character), follows a resize, gives the
/// terminal back on Ctrl-Z and takes it again on `fg` (a network stream's screen too), says why a file failed, edits the queue,
/// and reads keys in --plain. Every wait is for output, the exit or the stopped state, each with
/// a deadline; none is a fixed sleep.
@Suite(.serialized) struct PlayScreenPTYTests {
    /// A command in a pseudo-terminal (the tests' shared reader).
    typealias Screen = PTYScreen

    let dir: TempDir
    let bin: String

    init() throws {
        dir = try TempDir("play-screen")
        bin = try tonearmBinary()
    }

    func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// A sine of `seconds` at `path`, tagged.
    func make(_ name: String, seconds: Int, title: String? = nil, artist: String? = nil) throws -> String {
        let path = dir.file(name)
        var args = ["-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)"]
        if let title { args += ["-metadata", "title=\(title)"] }
        if let artist { args += ["-metadata", "artist=\(artist)"] }
        try Fixtures.ffmpeg(args + [path])
        return path
    }

    /// `tonearm play ARGS` in a terminal of `columns` × `rows` (util-linux `script`).
    func play(_ args: String, columns: Int, rows: Int, environment: String = "") throws -> Screen {
        try Screen("stty rows \(rows) cols \(columns); XDG_STATE_HOME=\(q(dir.file("state"))) \(environment) exec \(q(bin)) play \(args)")
    }

    /// Columns a text takes in a terminal (CJK and fullwidth forms two).
    static func columns(_ s: String) -> Int {
        s.unicodeScalars.reduce(0) { n, c in
            let v = c.value
            if v < 0x20 { return n }
            let wide = (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
                || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
                || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1FAFF).contains(v) || (0x20000...0x3FFFD).contains(v)
            return n + (wide ? 2 : 1)
        }
    }

    /// The last complete frame drawn (each begins at the home position and ends by clearing
    /// the rest of the screen), as the lines the terminal shows.
    static func lastFrame(_ output: String) throws -> [String] {
        let frames = output.components(separatedBy: "\u{1B}[H").filter { $0.contains("\u{1B}[K\u{1B}[J") }
        guard let frame = frames.last else { throw TestSupportError("no complete frame in \(output.suffix(500))") }
        let text = String(frame[..<(frame.range(of: "\u{1B}[J", options: .backwards)?.lowerBound ?? frame.endIndex)])
        // The terminal turns each newline into CR LF (one Character in Swift).
        return text.replacing(/\x{1B}\[[0-9;?]*[A-Za-z]/, with: "").replacingOccurrences(of: "\r\n", with: "\n")
            .components(separatedBy: "\n")
    }

    @Test func fitsA80x24AndA120x40TerminalWithCJKTitles() throws {
        defer { dir.remove() }
        var files = [try make("0.flac", seconds: 30, title: "晴天 — 一首很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长的歌", artist: "周杰伦")]
        for i in 1...24 {
            files.append(try make("\(i).flac", seconds: 1, title: "晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天 \(i)", artist: "周杰伦"))
        }
        var queueRows: [Int: Int] = [:]
        for (columns, rows) in [(80, 24), (120, 40)] {
            let screen = try play("--output null " + files.map(q).joined(separator: " "), columns: columns, rows: rows)
            try screen.waitForFrame(showing: " Title   晴天 — 一首")
            let lines = try Self.lastFrame(screen.all)
            screen.type("q")
            screen.process.waitUntilExit()
            #expect(screen.process.terminationStatus == 0)
            #expect(lines.count == rows, "\(columns)×\(rows): \(lines.count) lines")
            for line in lines { #expect(Self.columns(line) < columns, "\(columns)×\(rows): \(line)") }
            #expect(lines.contains { $0.hasPrefix(" Title   晴天 — 一首") && $0.hasSuffix("…") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix(" Artist  周杰伦") })
            #expect(lines.contains { $0.contains("/ 0:30") }, "the progress bar")
            #expect(lines.contains { $0.hasPrefix(" Volume  [") && $0.contains("100%") })
            #expect(lines.contains { $0.contains("Repeat: off") })
            #expect(lines.contains { $0.contains("▶ 1. 晴天 — 一首") })
            #expect(lines.contains { $0.contains(". 晴天晴天") && $0.contains("— 周杰伦") || $0.contains(". 晴天晴天") && $0.hasSuffix("…") })
            queueRows[rows] = lines.filter { $0.contains(". 晴天") }.count
            // At 80×24 the queue is cut ("… 15 more"); at 120×40 it is all there.
            #expect(lines.contains { $0.contains("… ") && $0.hasSuffix(" more") } == (rows == 24), "\(lines)")
        }
        #expect(queueRows[24, default: 0] >= 5 && queueRows[40] == 25, "the queue grows with the terminal: \(queueRows)")
    }

    /// Runs a python3 `pty` driver (`script` stops itself when its child stops, and does not
    /// pass a resize on from a pipe): `tonearm play ARGS` in a terminal of 80×24.
    func drive(_ driver: String, _ args: [String]) throws -> RunResult {
        let prelude = #"""
            import os, pty, sys, time, select, signal, fcntl, termios, struct
            pid, fd = pty.fork()
            if pid == 0:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
                os.execv(sys.argv[1], sys.argv[1:])
            out = b''
            def wait_for(marker, count=1, timeout=20):
                global out
                deadline = time.time() + timeout
                while out.count(marker) < count:
                    left = deadline - time.time()
                    if left <= 0: sys.exit("timed out waiting for %r: %r" % (marker, out[-600:]))
                    if select.select([fd], [], [], left)[0]:
                        try: data = os.read(fd, 65536)
                        except OSError: data = b''
                        if not data: sys.exit("ended before %r: %r" % (marker, out[-600:]))
                        out += data
            def ctrl_z(restored=None):
                # Ctrl-Z; waits for the terminal to be given back (`restored`) and the process
                # to stop, then tells how the terminal was left.
                os.write(fd, b'\x1a')
                if restored: wait_for(restored)
                def no_stop(signum, frame): sys.exit("not stopped")
                signal.signal(signal.SIGALRM, no_stop)
                signal.alarm(10)
                status = os.waitpid(pid, os.WUNTRACED)[1]
                signal.alarm(0)
                if not os.WIFSTOPPED(status): sys.exit("ended instead of stopping: %r" % status)
                lflag = termios.tcgetattr(fd)[3]
                print("stopped; canonical and echo:", bool(lflag & termios.ICANON), bool(lflag & termios.ECHO))
            def fg(retaken=None):
                # SIGCONT, as `fg` sends; waits for the terminal to be taken again (`retaken`,
                # seen twice: at the start and now), then tells how it was set.
                os.kill(pid, signal.SIGCONT)
                if retaken:
                    wait_for(retaken, count=2)
                    lflag = termios.tcgetattr(fd)[3]
                    print("continued; canonical and echo:", bool(lflag & termios.ICANON), bool(lflag & termios.ECHO))
            def resize(rows, cols):
                fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
            def header(cols):
                # The first line, its two ends apart by as many spaces as the width leaves.
                left, right = ' Tonearm  \u25b6 Playing', 'output: null '
                return (left + ' ' * (cols - 1 - len(left) - len(right)) + right).encode()

            """#
        return try run("python3", ["-c", prelude + driver, bin, "play", "--output", "null"] + args,
                       environment: ["TERM": "xterm-256color", "XDG_STATE_HOME": dir.file("state"), "PULSE_SERVER": "unix:/nonexistent",
                                     "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
    }

    /// A resize is drawn at once at the new size (SIGWINCH; the size is not polled).
    @Test func aResizedTerminalIsDrawnAtItsNewSize() throws {
        defer { dir.remove() }
        let a = try make("long.wav", seconds: 30, title: "Long Song")
        let r = try drive(#"""
            wait_for(header(80))
            resize(40, 120)
            wait_for(header(120))
            start = out.index(header(120))
            while out.find(b'\x1b[J', start) < 0:
                wait_for(b'\x1b[J', count=out.count(b'\x1b[J') + 1)
            frame = out[start:out.find(b'\x1b[J', start)]
            print("lines", frame.count(b'\n') + 1)
            os.write(fd, b'q')
            print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """#, [a])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "lines 40\nstatus 0\n", "\(r.stdout) \(r.stderr)")
    }

    /// Ctrl-Z: the terminal is given back (screen left, cursor shown, line editing and echo
    /// on), then the player stops; SIGCONT (what `fg` sends) takes the terminal again, and a key
    /// works at once (not line-buffered).
    @Test func ctrlZGivesTheTerminalBackAndFgTakesItAgain() throws {
        defer { dir.remove() }
        let a = try make("long.wav", seconds: 30, title: "Long Song")
        let r = try drive(#"""
            wait_for(b'Title   Long Song')
            ctrl_z(restored=b'\x1b[?25h\x1b[?1049l')
            fg(retaken=b'\x1b[?1049h')
            os.write(fd, b'r')
            wait_for(b'Repeat: one')
            print("a key works")
            os.write(fd, b'q')
            print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """#, [a])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            stopped; canonical and echo: True True
            continued; canonical and echo: False False
            a key works
            status 0

            """, "\(r.stdout) \(r.stderr)")
    }

    /// --plain reads keys in cbreak mode: Ctrl-Z gives the terminal its line editing back, and
    /// `fg` takes it again (a key works without Enter).
    @Test func ctrlZInPlainModeRestoresTheTerminalToo() throws {
        defer { dir.remove() }
        let a = try make("long.wav", seconds: 30, title: "Long Song")
        let r = try drive(#"""
            wait_for(b'Playing 1/1: Long Song')
            lflag = termios.tcgetattr(fd)[3]
            print("playing; canonical and echo:", bool(lflag & termios.ICANON), bool(lflag & termios.ECHO))
            ctrl_z()
            fg()
            os.write(fd, b'q')
            wait_for(b'Done: 1 played, 0 failed')
            print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """#, ["--plain", a])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            playing; canonical and echo: False False
            stopped; canonical and echo: True True
            status 0

            """, "\(r.stdout) \(r.stderr)")
    }

    /// A network stream's screen reads its keys as the play screen does (the shared reader and
    /// bindings: `9` turns the volume down, which the stream's own decoder did not know), and
    /// Ctrl-Z gives the terminal back and stops; `fg` takes it again and a key works at once.
    @Test func aStreamSessionSuspendsOnCtrlZAndReadsBoundKeys() throws {
        defer { dir.remove() }
        _ = try make("stream.mp3", seconds: 30, title: "Stream Song")
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let r = try drive(#"""
            wait_for(b'Stream Song')
            wait_for('\u25b6 Playing'.encode())
            os.write(fd, b'9')
            wait_for(b' 95%')
            print("a bound key works")
            ctrl_z(restored=b'\x1b[?25h\x1b[?1049l')
            fg(retaken=b'\x1b[?1049h')
            os.write(fd, b' ')
            wait_for('\u23f8 Paused'.encode())
            print("a key works")
            os.write(fd, b'q')
            print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """#, [server.url("/stream.mp3").absoluteString])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            a bound key works
            stopped; canonical and echo: True True
            continued; canonical and echo: False False
            a key works
            status 0

            """, "\(r.stdout) \(r.stderr)")
    }

    @Test func aFailedFileSaysWhyOnTheScreenAndAfterIt() throws {
        defer { dir.remove() }
        let bad = dir.file("broken.mp3")
        try Data("this is not audio at all".utf8).write(to: URL(fileURLWithPath: bad))
        let good = try make("short.wav", seconds: 1, title: "Short One")
        let screen = try play("--output null \(q(bad)) \(q(good))", columns: 80, rows: 24)
        try screen.waitFor("✗ 1. broken.mp3  (not a media file")  // why, without the path again
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 1)
        let out = screen.all
        let restore = try #require(out.range(of: "\u{1B}[?25h\u{1B}[?1049l", options: .backwards))
        let after = String(out[restore.upperBound...])
        #expect(after.contains("1 file could not be played:"), "\(after)")
        #expect(after.contains("\(bad): "), "\(after)")
        #expect(!after.contains("Tonearm  "), "no frame after the screen is gone")
    }

    /// A FLAC cut short says on the screen, when it reaches its early end, that it ended early
    /// and where (while the next file plays), and again after the screen is gone.
    @Test func aTruncatedFileSaysItEndedEarlyOnTheScreenAndAfterIt() throws {
        defer { dir.remove() }
        let whole = dir.file("whole.flac"), cut = dir.file("cut.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=4:sample_rate=8000", "-metadata", "title=Cut Short", whole])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        let next = try make("next.flac", seconds: 3, title: "Next One")
        let screen = try play("--output null \(q(cut)) \(q(next))", columns: 100, rows: 24)
        try screen.waitFor("▶ 2. Next One")
        try screen.waitFor("cut.flac: ended early, at 0:0")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
        let out = screen.all
        // Where: before the 4 s the header states (the part that is there, about 60 %).
        #expect(out.contains(#/ .*cut\.flac: ended early, at 0:0[0-3] of 0:04 \(the file is cut short\)/#), "\(out.suffix(1500))")
        let restore = try #require(out.range(of: "\u{1B}[?25h\u{1B}[?1049l", options: .backwards))
        let after = String(out[restore.upperBound...])
        #expect(after.contains("1 file ended early (cut short):"), "\(after)")
        #expect(after.contains(#/  .*cut\.flac: ended early, at 0:0[0-3] of 0:04/#), "\(after)")
    }

    /// The sound server killed and started again while the live screen plays: the screen says
    /// so and plays on by itself when the server is back (no key), at 80×24 with a CJK title.
    @Test func aRestartedSoundServerIsFoundAgainOnTheLiveScreenWithoutAKey() throws {
        defer { dir.remove() }
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let song = try make("晴天.flac", seconds: 20, title: "晴天", artist: "周杰伦")
        let screen = try play("--output pulse \(q(song))", columns: 80, rows: 24,
                              environment: "PULSE_SERVER=\(q(server.serverString))")
        try screen.waitForFrame(showing: "▶ Playing")
        server.kill()
        try screen.waitFor("the sound server went away")
        try screen.waitForFrame(showing: "⏸ Paused")
        try server.start()
        try screen.waitFor("the sound server is back; playing on from 0:0")
        try screen.waitForFrame(showing: "▶ Playing")
        let lines = try Self.lastFrame(screen.all)
        for line in lines { #expect(Self.columns(line) < 80, "\(line)") }
        #expect(try server.sinkInputCount() == 1, "a stream on the restarted server")
        screen.type("q")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
        let out = screen.all
        let restore = try #require(out.range(of: "\u{1B}[?25h\u{1B}[?1049l", options: .backwards))
        #expect(!String(out[restore.upperBound...]).contains("could not be played"))
    }

    @Test func theQueueIsBrowsedAndEditedWhilePlaying() throws {
        defer { dir.remove() }
        let files = try [("a.wav", "Alpha"), ("b.wav", "Bravo"), ("c.wav", "Charlie")].map { try make($0.0, seconds: 30, title: $0.1) }
        let screen = try play("--output null " + files.map(q).joined(separator: " "), columns: 100, rows: 30)
        try screen.waitFor("▶ 1. Alpha")
        screen.type("\t")  // the cursor into the queue, on the current item
        try screen.waitFor("Queue (3) — browsing")
        screen.type("j")  // down to Bravo
        screen.type("d")  // removed
        try screen.waitFor("2. Charlie")
        try screen.waitFor("Queue (2) — browsing")
        screen.type("K")  // Charlie (under the cursor) up, before Alpha
        try screen.waitFor("1. Charlie")
        try screen.waitFor("▶ 2. Alpha")
        screen.type("\r")  // play the item under the cursor
        try screen.waitForFrame(showing: "Title   Charlie")
        try screen.waitForFrame(showing: "▶ 1. Charlie")
        screen.type("\t?")  // out of the queue; the key help
        try screen.waitFor("Keys — any key closes this")
        screen.type("x")  // closes it
        try screen.waitForFrame(showing: "Queue (2):")
        screen.type("9")
        try screen.waitFor("95%")
        screen.type("m")
        try screen.waitFor("(muted)")
        screen.type(">")  // next: Alpha
        try screen.waitForFrame(showing: "▶ 2. Alpha")
        screen.type("<")
        try screen.waitForFrame(showing: "▶ 1. Charlie")
        screen.type("\u{1B}[C\u{1B}[C")  // 10 s on
        try screen.waitForFrame(showing: "] 0:1")
        screen.type("\u{1B}[H")  // Home: the track from its start
        try screen.waitForFrame(showing: "] 0:00 /")
        screen.type("q")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
    }

    /// Shuffled, the queue is listed in the order it plays: the second row is what `n` plays.
    @Test func aShuffledQueueIsListedInTheOrderItPlays() throws {
        defer { dir.remove() }
        let names = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliett"]
        let files = try names.map { try make("\($0).wav", seconds: 30, title: $0, artist: "Band") }
        // --start names the first; the rest are shuffled.
        let screen = try play("--shuffle --start \(q(files[0])) --output null " + files.map(q).joined(separator: " "), columns: 100, rows: 30)
        try screen.waitForFrame(showing: "Shuffle: on")
        try screen.waitForFrame(showing: " Title   Alpha")  // the one named with --start first
        let lines = try Self.lastFrame(screen.all)
        let rows = lines.compactMap { line in names.firstIndex { line.contains(". \($0) — Band") }.map { (line, names[$0]) } }
        #expect(rows.count == 10, "\(lines)")
        #expect(rows.first?.0.contains("▶ 1. Alpha — Band") == true)
        let second = try #require(rows.dropFirst().first).1
        let third = try #require(rows.dropFirst(2).first).1
        screen.type("n")
        try screen.waitForFrame(showing: " Title   \(second)")
        try screen.waitForFrame(showing: "▶ 2. \(second) — Band")
        screen.type("n")
        try screen.waitForFrame(showing: " Title   \(third)")
        screen.type("q")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
    }

    /// `a` opens the library's picker over the play screen; what is picked joins the queue and
    /// playback goes on throughout.
    @Test func songsAreAddedFromTheLibraryWhilePlaying() throws {
        defer { dir.remove() }
        let data = dir.file("data")
        let music = dir.file("Music")
        try LibraryFixtures.make(at: music)
        let scan = try run(bin, ["library", "scan", music, "--db", data + "/tonearm/library.sqlite", "--quiet"])
        try #require(scan.status == 0, "\(scan.stderr)")
        let a = try make("long.wav", seconds: 30, title: "Long Song", artist: "Band")
        let screen = try play("--output null \(q(a))", columns: 100, rows: 30, environment: "XDG_DATA_HOME=\(q(data))")
        try screen.waitForFrame(showing: "▶ 1. Long Song — Band")
        screen.type("a")
        try screen.waitFor("Enter: add this song")
        screen.type("晴天 3")
        try screen.waitFor("Search: 晴天 3▏")
        screen.type("\r")
        try screen.waitForFrame(showing: "2. 晴天 3 — 周杰伦")
        try screen.waitForFrame(showing: "added 1 song to the queue")
        let lines = try Self.lastFrame(screen.all)
        #expect(lines.contains { $0.contains("▶ Playing") } && lines.contains { $0.contains("▶ 1. Long Song") }, "\(lines)")
        screen.type("q")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
    }

    /// --plain in a terminal: the keys work there too (q quits at once), and the terminal is
    /// left as it was.
    @Test func plainModeReadsKeysInATerminal() throws {
        defer { dir.remove() }
        let a = try make("long.wav", seconds: 30, title: "Long Song")
        let screen = try play("--plain --output null \(q(a))", columns: 80, rows: 24)
        try screen.waitFor("Playing 1/1: Long Song")
        screen.type("q")
        try screen.waitFor("Done: 1 played, 0 failed", timeout: 10)
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
        #expect(!screen.all.contains("\u{1B}[?1049h"), "no screen in plain mode")
    }
}

extension PTYScreen {
    /// Waits until the last frame drawn shows `marker` (frames are drawn again and again).
    func waitForFrame(showing marker: String, timeout: Double = 20) throws {
        try wait(for: "frame with '\(marker)'", timeout: timeout) { text in
            (try? PlayScreenPTYTests.lastFrame(text))?.contains { $0.contains(marker) } == true
        }
    }
}
