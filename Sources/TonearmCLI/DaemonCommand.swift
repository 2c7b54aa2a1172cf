// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm
import TonearmDaemon
import TonearmMPDProtocol
import TonearmWeb

/// `tonearm daemon`: the music player as a background service, driven over the MPD protocol
/// (mpc, ncmpcpp, any MPD client) on `$XDG_RUNTIME_DIR/tonearm/mpd.sock` and TCP. Runs in the
/// foreground (for a service manager), logs to standard error, ends on SIGTERM or SIGINT.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Play in the background, driven over the MPD protocol (mpc, ncmpcpp, …).",
        discussion: """
            Listens on the Unix socket $XDG_RUNTIME_DIR/tonearm/mpd.sock (always; its clients may \
            add local files) and on TCP (127.0.0.1:6600 by default). One daemon per user: a \
            second one says where the first one is and exits with status 1.

            The [daemon] table of the config file holds the same settings (music, listen, \
            outputs, password, default_permissions, local_permissions, mix; see `tonearm config \
            --init`); each flag wins over it. Passwords belong there, not on the command line \
            (where `ps` shows them).

            --http serves the web remote: a page for any browser or phone (now playing, the \
            queue, the library with its search, playlists, outputs) at http://ADDR:PORT/, live \
            over a WebSocket. On an address other than \
            loopback it asks for one of the daemon's passwords. (Not the stream output \
            --output http:ADDR:PORT, which serves the audio.)

            Examples:
              tonearm daemon
              MPD_HOST=$XDG_RUNTIME_DIR/tonearm/mpd.sock mpc add ~/Music/song.flac
              mpc play
            """)

    @OptionGroup var config: ConfigOption

    @Option(name: .long, help: ArgumentHelp("TCP address to listen on (repeatable; 'none' for none). Default: the config file's [daemon] listen, else 127.0.0.1:6600.", valueName: "ADDR:PORT"))
    var listen: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where to play (repeatable, all at once): pulse, null, snapcast:FIFO (a snapserver pipe source) or http:ADDR:PORT (a FLAC stream with ICY titles). Default: the config file's [daemon] outputs, else PulseAudio/PipeWire if a server answers, else null.", valueName: "OUTPUT"))
    var output: [String] = []

    @Option(name: .long, help: ArgumentHelp("A music folder (repeatable): the database, scanned at start and watched, browsed with lsinfo, find, search and list. Songs are added by their path in the first; each other folder is a top-level folder of the database, under its name.", valueName: "DIR"))
    var music: [String] = []

    @Option(name: .long, help: ArgumentHelp("The folder of the socket and the lock (default $XDG_RUNTIME_DIR/tonearm).", valueName: "DIR"))
    var runtimeDir: String?

    @Option(name: .long, help: ArgumentHelp("Where the queue, position, volume and modes are kept between runs (default $XDG_STATE_HOME/tonearm/daemon).", valueName: "DIR"))
    var stateDir: String?

    @Option(name: .long, help: ArgumentHelp("A password and what it allows, as MPD's password setting (repeatable): SECRET@read,add,control,admin. With one, a client without it has the default permissions only.", valueName: "SECRET@PERMS"))
    var password: [String] = []

    @Option(name: .long, help: ArgumentHelp("What a client may do before it sends a password, as MPD's default_permissions (read, add, player, control, admin, comma-separated). Default: everything without --password, nothing with.", valueName: "PERMS"))
    var defaultPermissions: String?

    @Option(name: .long, help: ArgumentHelp("What a client on the Unix socket may do before it sends a password, as MPD's local_permissions. Default: the default permissions.", valueName: "PERMS"))
    var localPermissions: String?

    @Option(name: .long, help: ArgumentHelp("Serve the web remote (a page for a browser or phone) at ADDR:PORT; 'on' for 127.0.0.1:6680, 'off' for none. Not loopback: a password is needed. Default: the config file's [daemon] http, else off.", valueName: "ADDR:PORT"))
    var http: String?

    @Flag(name: .long, help: "Play along with other Tonearm players. Default: pause while one plays (its audio session interrupts the daemon's) and play on when it ends.")
    var mix = false

    @Flag(name: .long, help: "Log every connection and command problem.")
    var verbose = false

    @Flag(name: .long, help: "Start in the background: return once the daemon listens (its log goes to DIR/daemon.log of --state-dir).")
    var detach = false

    @Flag(name: .long, help: "Write a systemd user unit that runs this daemon (with these options) to ~/.config/systemd/user/tonearm.service, and exit.")
    var installUserService = false

    /// The `--password`, `--default-permissions` and `--local-permissions` given, checked; what
    /// a flag does not set comes from the config file's `[daemon]` table (`file`). The file's
    /// passwords are used only when no `--password` is given.
    /// - Throws: ``ValidationError`` naming the flag and the malformed value.
    func access(file: ConfigFile.Daemon? = nil) throws -> MPDAccess {
        var access = MPDAccess()
        for p in password.isEmpty ? file?.passwords ?? [] : password {
            do { try access.addPassword(parsing: p) } catch { throw ValidationError("--password: \(error)") }
        }
        if let defaultPermissions {
            do { try access.setDefaultPermissions(parsing: defaultPermissions) } catch { throw ValidationError("--default-permissions: \(error)") }
        } else if let d = file?.defaultPermissions {
            access.defaultPermissions = d
        }
        if let localPermissions {
            do { try access.setLocalPermissions(parsing: localPermissions) } catch { throw ValidationError("--local-permissions: \(error)") }
        } else if let l = file?.localPermissions {
            access.localPermissions = l
        }
        return access
    }

    /// What the daemon runs with: each flag, else the config file's `[daemon]` value, else the
    /// default (TCP 127.0.0.1:6600; the output found automatically; no music folder).
    struct Settings {
        var tcp: [MPDListenAddress]
        /// Empty: automatic.
        var outputs: [DaemonOutput]
        var music: [String]
        var access: MPDAccess
        /// Plays along with other Tonearm players (`--mix`, or `mix = true`).
        var mix: Bool
        /// The web remote (`--http`, or `http`); off by default.
        var http: WebRemoteSetting = .off
    }

    func settings(file: ConfigFile.Daemon?) throws -> Settings {
        let tcp: [MPDListenAddress]
        if !listen.isEmpty {
            tcp = try listen.filter { $0 != "none" }.map { try MPDListenAddress(parsing: $0) }
        } else {
            tcp = file?.listen ?? [.tcp(host: "127.0.0.1", port: 6600)]
        }
        let folders = music.isEmpty ? file?.music ?? [] : music
        var settings = Settings(tcp: tcp, outputs: output.isEmpty ? file?.outputs ?? [] : try output.map { try DaemonOutput(parsing: $0) },
                                music: folders.map { URL(fileURLWithPath: ($0 as NSString).expandingTildeInPath).standardizedFileURL.path },
                                access: try access(file: file), mix: mix || file?.mix == true)
        if let http {
            do { settings.http = try WebRemoteSetting(parsing: http) } catch { throw ValidationError("--http \(error)") }
        } else if let h = file?.http {
            settings.http = h
        }
        // Open to the network, the page needs a password to ask for.
        if case .on(let host, _) = settings.http, !WebAccess.isLoopback(host), settings.access.passwords.isEmpty {
            throw ValidationError("the web remote on \(host) (not loopback) needs a password: --password SECRET@PERMS or [daemon] password")
        }
        return settings
    }

    func validate() throws {
        _ = try access()
        if let http {
            do { _ = try WebRemoteSetting(parsing: http) } catch { throw ValidationError("--http \(error)") }
        }
        for l in listen where l != "none" {
            guard case .tcp? = try? MPDListenAddress(parsing: l) else {
                throw ValidationError("--listen '\(l)': expected ADDR:PORT, as in 127.0.0.1:6600")
            }
        }
        for o in output {
            do { _ = try DaemonOutput(parsing: o) } catch {
                if case TonearmError.invalidArgument(let m) = error { throw ValidationError("--output: \(m)") }
                throw ValidationError("--output: \(error)")
            }
        }
    }

    func run() async throws {
        if installUserService {
            try installService()
            return
        }
        if detach {
            try startDetached()
            return
        }
        let file = try config.loadOrExit(command: "daemon")
        let settings = try settings(file: file?.daemon)
        if let file, password.isEmpty, file.daemon.passwords?.isEmpty == false {
            var st = stat()
            if stat(file.path, &st) == 0, st.st_mode & 0o077 != 0 {
                FileHandle.standardError.write(Data("tonearm daemon: \(file.path) holds passwords and others may read it (chmod 600 \(file.path))\n".utf8))
            }
        }
        let tcp = settings.tcp
        let selection: OutputSelection
        if settings.outputs == [.pulse] {
            selection = .pulse()
        } else if settings.outputs == [.null] {
            selection = .null
        } else if !settings.outputs.isEmpty {
            selection = settings.outputs.contains(.pulse) ? .pulse() : .null
        } else {
            let auto = OutputSelection.automatic()
            if let notice = auto.notice { FileHandle.standardError.write(Data("tonearm daemon: \(notice)\n".utf8)) }
            selection = auto.selection
        }
        let folders = settings.music
        var options = DaemonOptions(runtimeDirectory: runtimeDir ?? DaemonOptions.defaultRuntimeDirectory, tcp: tcp, output: selection,
                                    musicDirectories: folders, verbose: verbose)
        options.stateDirectory = stateDir ?? DaemonOptions.defaultStateDirectory
        options.access = settings.access
        options.mixWithOthers = settings.mix
        // One pulse or null output is the single output it always was; anything more is a set.
        if settings.outputs.count > 1 || settings.outputs.contains(where: { $0 != .pulse && $0 != .null }) {
            options.outputs = settings.outputs
        }
        // The first music folder is the database's root (MPD's music_directory), the others
        // top-level folders of it under their names: scanned now, then watched.
        if let root = folders.first, let state = options.stateDirectory {
            let others = Array(folders.dropFirst())
            options.makeDatabase = { try await DaemonDatabase.open(musicRoot: root, otherFolders: others, stateDirectory: state) }
        }
        // MPRIS on the session bus when there is one: playerctl and the desktop drive the same queue.
        options.attachPlayer = { player in
            let (remote, failure) = DaemonRemote.start(player: player)
            return ({ remote?.stop() }, failure.map { "\($0); running without MPRIS" } ?? "MPRIS: on the session bus")
        }
        // The library counts the plays and skips of its songs as they are played (as `tonearm
        // play` does): the `sticker` command's playCount, skipCount and lastPlayed.
        if options.makeDatabase != nil {
            options.companions.append { daemon, warn in { await DaemonPlayCounts.run(daemon: daemon, warn: warn) } }
        }
        // The web remote: the same daemon (its one command layer), served beside the MPD server.
        if case .on(let host, let port) = settings.http {
            options.services.append { daemon, logger in
                let remote: WebRemote
                // The sound device's own volume, when the daemon plays to PulseAudio.
                let systemVolume: SystemVolume? = if case .pulse(let server) = selection { SystemVolume(server: server) } else { nil }
                do {
                    remote = try WebRemote(daemon: daemon, host: host, library: (daemon.database as? DaemonDatabase)?.responder,
                                           systemVolume: systemVolume)
                } catch { throw ValidationFailure("\(error)") }
                return remote.service(host: host, port: port, logger: logger) { address in
                    logger.info("web remote on http://\(address)/")
                }
            }
        }
        do {
            try await DaemonRunner.run(options)
        } catch let e as DaemonLockError {
            throw ValidationFailure(e.message)
        }
    }
}

extension DaemonCommand {
    /// Called first thing in `main`, on the main thread, with the program's arguments (without
    /// its name): when they run `tonearm daemon` (the command, after any `--config PATH`), Swift
    /// concurrency's jobs go to the daemon's own event loops (``DaemonExecutor``) instead of
    /// libdispatch's global pool, whose 1 s monitor would otherwise wake the idle daemon forever,
    /// and glibc keeps its heap in at most two arenas.
    /// Every other command keeps the default executor. Does nothing for `--help`.
    static func prepare(arguments: [String]) {
        guard isDaemon(arguments) else { return }
        DaemonExecutor.prepareProcess()
    }

    /// Whether `arguments` name the `daemon` command (its first word that is not an option of the
    /// root command).
    static func isDaemon(_ arguments: [String]) -> Bool {
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a == "--config" {
                i += 2
                continue
            }
            if a.hasPrefix("--config=") {
                i += 1
                continue
            }
            return a == "daemon" && !arguments.contains("--help") && !arguments.contains("-h")
        }
        return false
    }

    /// The daemon's arguments as given, without `--detach` and `--install-user-service` (and
    /// without `--password` when `droppingPasswords`).
    static func passedArguments(droppingPasswords: Bool = false) -> [String] {
        let all = Array(CommandLine.arguments.dropFirst())
        guard let i = all.firstIndex(of: "daemon") else { return [] }
        let given = all[(i + 1)...].filter { $0 != "--detach" && $0 != "--install-user-service" }
        return droppingPasswords ? withoutPasswords(Array(given)) : Array(given)
    }

    /// `arguments` without `--password SECRET` and `--password=SECRET` (ArgumentParser's forms).
    static func withoutPasswords(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var skipNext = false
        for a in arguments {
            if skipNext {
                skipNext = false
                continue
            }
            if a == "--password" {
                skipNext = true
                continue
            }
            if a.hasPrefix("--password=") { continue }
            out.append(a)
        }
        return out
    }

    /// The executable running now (its absolute path).
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The systemd user unit for `executable daemon ARGS` (dist/systemd/tonearm.service with its
    /// ExecStart; `Type=notify`: the daemon says READY=1 once it listens).
    static func unitText(executable: String, arguments: [String]) -> String {
        func quoted(_ a: String) -> String {
            guard a.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "'" || $0 == "%" || $0 == "$" }) else { return a }
            let escaped = a.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "%", with: "%%").replacingOccurrences(of: "$", with: "$$")
            return "\"" + escaped + "\""
        }
        let exec = ([executable, "daemon"] + arguments).map(quoted).joined(separator: " ")
        return """
            # Tonearm's music daemon as a systemd user service: `tonearm daemon --install-user-service`
            # writes this file (with the path of the tonearm that ran it) to ~/.config/systemd/user/.
            # SPDX-License-Identifier: GPL-3.0-or-later
            [Unit]
            Description=Tonearm music daemon (MPD protocol)
            After=sound.target pipewire-pulse.service pulseaudio.service

            [Service]
            Type=notify
            NotifyAccess=main
            ExecStart=\(exec)
            Restart=on-failure
            RestartSec=2

            [Install]
            WantedBy=default.target

            """
    }

    func installService() throws {
        let env = ProcessInfo.processInfo.environment
        let configHome = env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? ((env["HOME"] ?? NSHomeDirectory()) + "/.config")
        let dir = configHome + "/systemd/user"
        let path = dir + "/tonearm.service"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // No password in the unit: a unit file is readable, and its command line shows in `ps`.
        try Self.unitText(executable: Self.executablePath, arguments: Self.passedArguments(droppingPasswords: true))
            .write(toFile: path, atomically: true, encoding: .utf8)
        let configPath = config.location().value
        var text = "Wrote \(path).\n"
        if !password.isEmpty {
            text += """
                --password is not written into the unit (the unit file is readable and its command line shows in `ps`):
                put it in the [daemon] table of \(configPath) instead:
                  [daemon]
                  password = ["SECRET@read,add,control,admin"]

                """
        } else {
            text += "Its settings (passwords too) can go in the [daemon] table of \(configPath); flags in the unit win over it.\n"
        }
        text += """
            Start it now and at every login with:
              systemctl --user daemon-reload
              systemctl --user enable --now tonearm.service

            """
        Terminal.write(text)
    }

    /// `--detach`: the daemon started again as a child in a session of its own (standard error
    /// to its log file), waited for until it says it listens (READY=1 on a notify socket of
    /// ours) or ends (a pipe only it holds closes) — no polling, no fork of this threaded process.
    func startDetached() throws {
        let runtime = runtimeDir ?? DaemonOptions.defaultRuntimeDirectory
        let stateDirectory = stateDir ?? DaemonOptions.defaultStateDirectory
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let log = stateDirectory + "/daemon.log"
        let notifyPath = runtime + "/.detach-\(getpid()).notify"
        unlink(notifyPath)
        let notify = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer {
            close(notify)
            unlink(notifyPath)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in notifyPath.utf8.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notify, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard notify >= 0, bound == 0 else { throw ValidationFailure("cannot make a notify socket at \(notifyPath): \(String(cString: strerror(errno)))") }
        var lifeline: [Int32] = [-1, -1]
        guard pipe(&lifeline) == 0 else { throw ValidationFailure("cannot make a pipe: \(String(cString: strerror(errno)))") }
        _ = fcntl(lifeline[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(lifeline[1], F_SETFD, FD_CLOEXEC)
        defer { close(lifeline[0]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        // Descriptor 3: the lifeline's write end, held by the daemon only (ours is closed below).
        posix_spawn_file_actions_adddup2(&actions, lifeline[1], 3)
        // Nothing else of ours: a pipe inherited from whoever started us (a caller reading our
        // output to its end) must not be held open by the daemon. This process ends right after.
        if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            for fd in open.compactMap(Int32.init) where fd > 2 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        // glibc's POSIX_SPAWN_SETSID (0x80, a GNU extension Swift does not import): a session of
        // its own, so closing the terminal does not hang it up.
        posix_spawnattr_setflags(&attr, 0x80)
        let args = [Self.executablePath, "daemon"] + Self.passedArguments()
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notifyPath
        let argv = args.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, args[0], &actions, &attr, argv, envp)
        close(lifeline[1])
        guard rc == 0 else { throw ValidationFailure("cannot start the daemon: \(String(cString: strerror(rc)))") }

        var fds = [pollfd(fd: notify, events: Int16(POLLIN), revents: 0), pollfd(fd: lifeline[0], events: Int16(POLLIN), revents: 0)]
        while true {
            let n = poll(&fds, 2, 60_000)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ValidationFailure("the daemon (pid \(child)) did not say it was ready within 60 s; see \(log)") }
            if fds[0].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let got = recv(notify, &buffer, buffer.count, 0)
                if got > 0, String(decoding: buffer[0..<got], as: UTF8.self).split(separator: "\n").contains("READY=1") {
                    Terminal.write("tonearm daemon: running (pid \(child)); socket \(runtime)/mpd.sock; log \(log)\n")
                    return
                }
            }
            if fds[1].revents != 0 {
                var status: Int32 = 0
                _ = waitpid(child, &status, 0)
                let tail = (try? String(contentsOfFile: log, encoding: .utf8)).map { $0.split(separator: "\n").suffix(3).joined(separator: "\n") } ?? ""
                throw ValidationFailure("the daemon ended at start (see \(log)):\n\(tail)")
            }
        }
    }
}

/// A failure reported as `tonearm: daemon: MESSAGE`, status 1.
struct ValidationFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
