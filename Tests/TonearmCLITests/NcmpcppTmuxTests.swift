// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// A detached tmux session of 80×24 on a private server socket, running one program; its screen
/// read with `capture-pane -p`. A control-mode client (`tmux -C attach`) is attached beside it:
/// tmux sends it a `%output` notification whenever the program writes to its pane, and every
/// wait re-reads the screen only after such a change, until the screen shows what is awaited or
/// a deadline passes.
private struct TmuxScreen {
    let socket: String
    let environment: [String: String]
    let directory: TempDir
    /// The control-mode client (its standard input held open: it detaches at end-of-file).
    let control: ChildProcess
    /// How many chunks of notifications the control client has written: each is a change.
    let changes: Watched<Int>

    init(directory: TempDir, command: String, environment: [String: String]) throws {
        self.directory = directory
        socket = directory.file("tmux/sock")
        try FileManager.default.createDirectory(atPath: directory.file("tmux"), withIntermediateDirectories: true)
        let env = environment.merging(["TMUX_TMPDIR": directory.file("tmux"), "TMUX": ""]) { $1 }
        self.environment = env
        let changes = Watched(0)
        self.changes = changes
        // The session's window is made before the control client attaches; a control client
        // that sets no size (`refresh-client -C`) leaves the window at 80×24.
        var spawned: ChildProcess?
        let socket = socket
        defer { if spawned == nil { _ = try? Self.spawn(socket: socket, environment: env, directory: directory, ["kill-server"]) } }
        try Self.spawn(socket: socket, environment: env, directory: directory,
                       ["-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", command])
        spawned = try ChildProcess(["tmux", "-S", socket, "-C", "attach"], environment: env, captureStandardOutput: true,
                                   onStandardOutput: { _ in changes.update { $0 += 1 } }, lifeline: true)
        control = spawned!
    }

    @discardableResult
    func tmux(_ args: [String]) throws -> String {
        try Self.spawn(socket: socket, environment: environment, directory: directory, args)
    }

    /// Runs one tmux client with posix_spawn and waitpid (Foundation's Process does not see a
    /// tmux client end: it forks the server, which keeps running) and returns its standard
    /// output, written to a file (the server inherits the client's streams).
    @discardableResult
    static func spawn(socket: String, environment: [String: String], directory: TempDir, _ args: [String]) throws -> String {
        let out = directory.file("tmux/out"), err = directory.file("tmux/err")
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ["tmux", "-S", socket] + args
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, "tmux", &actions, nil, cArgs, cEnv)
        if rc != 0 { throw TestSupportError("tmux: posix_spawnp: \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        if status != 0 {
            throw TestSupportError("tmux \(args): status \(status): " + ((try? String(contentsOfFile: err, encoding: .utf8)) ?? ""))
        }
        return text
    }

    func capture() throws -> [String] {
        try tmux(["capture-pane", "-p"]).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    func keys(_ keys: String...) throws { try tmux(["send-keys"] + keys) }

    /// Reads the screen, and again after each change tmux reports, until `condition` holds for
    /// it; throws with the last screen at the deadline.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 10, _ condition: ([String]) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var screen: [String] = []
        while true {
            // Counted before the screen is read: a change while it is read is waited past.
            let seen = changes.value
            screen = try capture()
            if condition(screen) { return screen }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 || !control.isRunning { break }
            _ = changes.waitBlocking(timeout: left) { $0 != seen }
        }
        throw TestSupportError("timed out waiting for \(what); the screen:\n" + screen.joined(separator: "\n"))
    }

    @discardableResult
    func waitFor(showing text: String, timeout: Double = 10) throws -> [String] {
        try waitFor("“\(text)”", timeout: timeout) { $0.contains { $0.contains(text) } }
    }

    func kill() { _ = try? tmux(["kill-server"]) }
}

/// ncmpcpp (Debian's, 0.9) driven in tmux against a real `tonearm daemon` (issue 20): it
/// connects, browses the library (the file browser into a CJK folder, the media library's
/// artist and album columns), adds the songs and plays one (the daemon plays it: mpc), shows the
/// elapsed time moving on in its status bar, and edits the queue (a delete and a move in its
/// playlist screen, carried out by the daemon: mpc playlist); a change made by another client
/// appears in its playlist (`plchanges`). ncmpcpp's error log stays empty.
@Suite(.serialized) struct NcmpcppTmuxTests {
    @Test func connectsBrowsesPlaysShowsProgressAndEditsTheQueue() throws {
        let dir = try TempDir("tonearm-ncmpcpp")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music + "/青花", withIntermediateDirectories: true)
        for n in 1...3 {
            try Fixtures.tone(path: music + "/青花/0\(n).flac",
                              codecArgs: ["-c:a", "flac", "-metadata", "title=Song \(n) 青花瓷", "-metadata", "artist=周杰伦",
                                          "-metadata", "album=我很忙", "-metadata", "track=\(n)"], seconds: 30)
        }
        let daemon = try DaemonProcess(dir, music: music)
        defer { daemon.process.terminate(SIGKILL) }
        let socket = daemon.socket
        func mpc(_ args: String...) throws -> String { try daemon.mpc(args) }

        // A private home with ncmpcpp's config: the daemon's socket, messages kept for 1 s.
        let home = dir.file("home")
        try FileManager.default.createDirectory(atPath: home + "/.config/ncmpcpp", withIntermediateDirectories: true)
        try """
        mpd_host = "\(socket)"
        mpd_music_dir = "\(music)"
        message_delay_time = 1
        enable_window_title = no

        """.write(toFile: home + "/.config/ncmpcpp/config", atomically: true, encoding: .utf8)
        let screen = try TmuxScreen(directory: dir, command: "exec ncmpcpp",
                                    environment: ["HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color",
                                                  "MPD_HOST": socket, "XDG_CONFIG_HOME": home + "/.config"])
        defer { screen.kill() }

        // Connects: the empty playlist and ncmpcpp's own "Connected to" line, no error.
        let first = try screen.waitFor(showing: "Connected to \(socket)")
        #expect(first.count >= 24 && first[0].hasPrefix("Playlist (0 items)"), "\(first)")
        #expect(!first.joined().contains("MPD:"), "\(first)")

        // Browses: the file browser shows the CJK folder; inside it, the three songs.
        try screen.keys("2")
        try screen.waitFor(showing: "青花")
        try screen.keys("Enter")
        let inside = try screen.waitFor(showing: "Song 3 青花瓷")
        #expect(inside[0].hasPrefix("Browse: 青花"), "\(inside)")
        for n in 1...3 { #expect(inside.contains { $0.contains("周杰伦 - Song \(n) 青花瓷") && $0.hasSuffix("0:30") }, "\(inside)") }
        // The media library: artist, album and songs columns from `list` with groups and `find`.
        try screen.keys("4")
        let library = try screen.waitFor("the media library's columns") { s in
            s.contains { $0.hasPrefix("周杰伦") && $0.contains("我很忙") && $0.contains("Song 1 青花瓷") }
        }
        #expect(library.contains { $0.contains("Song 3 青花瓷") }, "\(library)")

        // Adds the three songs from the browser (space adds the song under the cursor and steps
        // down; the cursor starts on ".."), then plays the first from the playlist screen.
        try screen.keys("2")
        try screen.waitFor(showing: "Browse: 青花")
        try screen.keys("Down")
        for n in 1...3 {
            try screen.keys("Space")
            try screen.waitFor(showing: "Added to playlist: 周杰伦 \"我很忙\" - Song \(n) 青花瓷")
        }
        #expect(try mpc("-f", "%title%", "playlist") == "Song 1 青花瓷\nSong 2 青花瓷\nSong 3 青花瓷\n")
        try screen.keys("1")
        try screen.waitFor(showing: "Playlist (3 items")
        try screen.keys("Enter")
        // Plays: the status bar says so, and the daemon plays that song.
        let playing = try screen.waitFor(showing: "Playing: 周杰伦 \"我很忙\" - Song 1 青花瓷")
        #expect(try mpc("-f", "%title%", "current") == "Song 1 青花瓷\n")
        #expect(try mpc("status").contains("[playing] #1/3"))

        // Progress: the elapsed time in the status bar ([m:ss/0:30]) moves on.
        func elapsed(_ s: [String]) -> Int? {
            guard let line = s.last(where: { $0.hasPrefix("Playing: ") }), let open = line.lastIndex(of: "["),
                  line.hasSuffix("/0:30]") else { return nil }
            let parts = line[line.index(after: open)...].split(separator: "/")[0].split(separator: ":")
            guard parts.count == 2, let m = Int(parts[0]), let sec = Int(parts[1]) else { return nil }
            return m * 60 + sec
        }
        let start = try #require(elapsed(playing) ?? elapsed(try screen.waitFor("an elapsed time") { elapsed($0) != nil }))
        let later = try #require(elapsed(try screen.waitFor("the elapsed time past \(start) s") { (elapsed($0) ?? 0) > start }))
        #expect(later > start && later < 30)

        // Edits the queue: the second song deleted, then the (now second) third moved up.
        try screen.keys("Down", "DC")
        try screen.waitFor(showing: "Playlist (2 items")
        #expect(try mpc("-f", "%title%", "playlist") == "Song 1 青花瓷\nSong 3 青花瓷\n")
        try screen.keys("m")
        try screen.waitFor("Song 3 above Song 1") { s in
            guard let three = s.firstIndex(where: { $0.contains("Song 3 青花瓷") && $0.hasPrefix("周杰伦") }),
                  let one = s.firstIndex(where: { $0.contains("Song 1 青花瓷") && $0.hasPrefix("周杰伦") }) else { return false }
            return three < one
        }
        #expect(try mpc("-f", "%title%", "playlist") == "Song 3 青花瓷\nSong 1 青花瓷\n")
        let status = try mpc("status")
        #expect(status.contains("Song 1 青花瓷") && status.contains("[playing] #2/2"), "the playing song followed its move: \(status)")

        // Another client's change shows up (ncmpcpp follows the queue through idle + plchanges).
        _ = try mpc("add", "青花/02.flac")
        _ = try mpc("move", "3", "1")
        let followed = try screen.waitFor(showing: "Playlist (3 items")
        let rows = followed.filter { $0.hasPrefix("周杰伦") }.map { $0.contains("Song 2") ? 2 : $0.contains("Song 3") ? 3 : 1 }
        #expect(rows == [2, 3, 1], "\(followed)")

        // q leaves ncmpcpp; the daemon plays on.
        try screen.keys("q")
        let log = (try? String(contentsOfFile: home + "/.config/ncmpcpp/error.log", encoding: .utf8)) ?? ""
        #expect(log.isEmpty, "ncmpcpp's error log: \(log)")
        #expect(try mpc("status").contains("[playing] #3/3"))
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }
}
