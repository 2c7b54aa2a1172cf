// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm
import TonearmMPDClient

/// `tonearm remote …`: the daemon's own client (issue 20), scriptable like mpc — the same
/// output for the same command (`status`, `current`, `outputs`, `--format` lines), stable exit
/// statuses, one error line.
struct RemoteClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Drive the running daemon (tonearm daemon): play, pause, the queue, search.",
        discussion: """
            Talks the MPD protocol to `tonearm daemon` on its Unix socket \
            ($XDG_RUNTIME_DIR/tonearm/mpd.sock), or to --host (a socket path or HOST:PORT; any \
            MPD server). Commands that change playback print the status afterwards, as mpc does \
            (--quiet: nothing). Songs print as a table (wide characters aligned) or, with \
            --format, one line each in mpc's format: %title% %artist% %album% %albumartist% \
            %track% %date% %genre% %name% %file% %time% %position% %id%, [...] left out when a \
            tag in it is missing, | for alternatives.

            Exit status: 0 done; 1 the daemon refused (its message is printed); 64 a usage error; \
            69 no daemon answers at the address. Without a command: status.

            Examples:
              tonearm remote add ~/Music/Album && tonearm remote play
              tonearm remote status
              tonearm remote queue --format '%position%. %artist% - %title%'
              tonearm remote seek +30
              tonearm remote idle player --loop
            """,
        subcommands: [RemoteStatus.self, RemotePlay.self, RemotePause.self, RemoteToggle.self, RemoteStop.self, RemoteNext.self,
                      RemotePrevious.self, RemoteSeek.self, RemoteVolume.self, RemoteAdd.self, RemoteInsert.self, RemoteClear.self,
                      RemoteQueue.self, RemoteCurrent.self, RemoteSearch.self, RemoteOutputs.self, RemoteIdle.self, RemoteScreen.self],
        // As mpc: no command is `status`.
        defaultSubcommand: RemoteStatus.self)
}

/// Where the daemon is and how to print: every `remote` subcommand takes these.
struct RemoteOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's address: a Unix socket's path or HOST[:PORT] (default: $MPD_HOST as mpc reads it, with $MPD_PORT, else localhost when only $MPD_PORT is set, else $XDG_RUNTIME_DIR/tonearm/mpd.sock).",
                                            valueName: "ADDR"))
    var host: String?

    @Option(name: .long, help: ArgumentHelp("The daemon's TCP port (as mpc's --port; default: $MPD_PORT, else 6600): on localhost without --host or $MPD_HOST.",
                                            valueName: "PORT"))
    var port: Int?

    @Option(name: .long, help: "The daemon's password (see tonearm daemon --password; default: the PASSWORD in MPD_HOST=PASSWORD@HOST).")
    var password: String?

    @Flag(name: [.short, .long], help: "Print nothing after a command that changes playback.")
    var quiet = false

    @Option(name: [.short, .long], help: ArgumentHelp("Print songs one a line in this format (mpc's: %artist% - %title%, [...] optional, | alternatives).",
                                                      valueName: "FORMAT"))
    var format: String?

    @Flag(name: .long, help: "Say on standard error where it connected (a script's log; `idle` then waits for changes made after that line).")
    var verbose = false

    func validate() throws {
        _ = try Self.daemonAddress(host: host, port: port, password: password, environment: ProcessInfo.processInfo.environment)
        if let format { _ = try Self.parseFormat(format) }
    }

    /// Where the daemon is and its password, as mpc finds its server: `--host` (a socket's
    /// path or HOST[:PORT]) wins over `MPD_HOST`, `--port` over `MPD_PORT`, `--password` over
    /// the PASSWORD of `MPD_HOST=PASSWORD@HOST` (which counts only when `--host` is not given).
    /// A port without a host (`--port` or `MPD_PORT` alone) is `localhost:PORT`; neither is
    /// the daemon's own socket. A usage error naming the flag or variable for a bad value.
    static func daemonAddress(host: String?, port: Int?, password: String?,
                              environment env: [String: String]) throws -> (address: MPDAddress, password: String?) {
        if let port, !(1...65535).contains(port) { throw ValidationError("--port takes a port 1–65535, not \(port)") }
        if let host {
            guard let address = MPDAddress(host, defaultPort: port ?? 6600) else {
                throw ValidationError("--host takes a socket's path or HOST[:PORT], not '\(host)'")
            }
            return (address, password)
        }
        if let fromEnvironment = try environmentAddress(env, port: port) {
            return (fromEnvironment.address, password ?? fromEnvironment.password)
        }
        if let port { return (.tcp(host: "localhost", port: port), password) }
        return (.daemonSocket, password)
    }

    /// The address and password in `MPD_HOST` and `MPD_PORT`, read as mpc reads them:
    /// `[PASSWORD@]HOST`, a socket's path or `@abstract`; `MPD_PORT` the TCP port (default
    /// 6600; `port` wins over it). `MPD_PORT` alone is `localhost:PORT` (mpc's default host).
    /// Nil when neither is set; a usage error naming the variable for a bad value.
    static func environmentAddress(_ env: [String: String], port flag: Int? = nil) throws -> (address: MPDAddress, password: String?)? {
        var port = 6600
        var portSet = false
        if let text = env["MPD_PORT"], !text.isEmpty {
            guard let p = Int(text), (1...65535).contains(p) else { throw ValidationError("MPD_PORT takes a port 1–65535, not '\(text)'") }
            port = p
            portSet = true
        }
        if let flag { port = flag }
        guard let text = env["MPD_HOST"], !text.isEmpty else {
            return portSet ? (.tcp(host: "localhost", port: port), nil) : nil
        }
        var host = Substring(text), password: String?
        // A password before an '@' (not "@abstract", which is a socket's name).
        if !text.hasPrefix("@"), !text.hasPrefix("/"), let at = text.lastIndex(of: "@") {
            password = String(text[..<at])
            host = text[text.index(after: at)...]
        }
        guard let address = MPDAddress(String(host), defaultPort: port), password?.isEmpty != true else {
            throw ValidationError("MPD_HOST takes [PASSWORD@]HOST[:PORT], a socket's path or @NAME, not '\(text)'")
        }
        return (address, password)
    }

    private var resolved: (address: MPDAddress, password: String?) {
        (try? Self.daemonAddress(host: host, port: port, password: password, environment: ProcessInfo.processInfo.environment))
            ?? (.daemonSocket, password)
    }

    /// The password: --password, else the one in MPD_HOST (when --host is not given).
    var effectivePassword: String? { resolved.password }

    static func parseFormat(_ format: String) throws -> RemoteFormat {
        do { return try RemoteFormat(format) } catch { throw ValidationError("--format: \(error)") }
    }

    /// --host, else MPD_HOST (and MPD_PORT or --port), else localhost with --port or MPD_PORT,
    /// else the daemon's own socket.
    var address: MPDAddress { resolved.address }

    /// The song format asked for, or mpc's default.
    var songFormat: RemoteFormat { (try? format.map { try RemoteFormat($0) }) ?? .songDefault }

    /// Connects, or fails with the one-line error and status 69 when no daemon answers.
    func connect() async throws -> MPDClient {
        let client = try await Self.connect(to: address, password: effectivePassword)
        if verbose { Terminal.writeError("tonearm remote: connected to \(address) (MPD protocol \(client.protocolVersion))\n") }
        return client
    }

    static func connect(to address: MPDAddress, password: String?) async throws -> MPDClient {
        do {
            return try await MPDClient.connect(to: address, password: password)
        } catch {
            throw failure(error)
        }
    }

    /// A client error as the command reports it.
    static func failure(_ error: MPDClientError) -> CommandFailure {
        switch error {
        case .noServer(let address, let reason):
            return CommandFailure(nil, "no daemon at \(address) (\(reason)); start it with `tonearm daemon`", status: 69)
        case .server(let e):
            return CommandFailure(nil, e.message.isEmpty ? e.description : e.message)
        default:
            return CommandFailure(nil, "\(error)")
        }
    }

    /// Runs `body` with a connection; the daemon's errors become the command's.
    func with<T>(_ body: (MPDClient) async throws(MPDClientError) -> T) async throws -> T {
        let client = try await connect()
        defer { client.close() }
        do { return try await body(client) } catch { throw Self.failure(error) }
    }

    /// After a command that changes playback: mpc's status (unless --quiet).
    func printStatus(_ client: MPDClient) async throws(MPDClientError) {
        guard !quiet else { return }
        let replies = try await client.sendList([("status", []), ("currentsong", [])])
        Terminal.write(RemoteText.status(MPDStatus(replies[0]), current: MPDSong.list(replies[1]).first, format: songFormat))
    }

    /// Songs as the table, or as --format lines.
    func printSongs(_ songs: [MPDSong], currentID: Int?) {
        if let format {
            let f = (try? RemoteFormat(format)) ?? .songDefault
            Terminal.write(songs.map { f.render($0) + "\n" }.joined())
        } else {
            Terminal.write(RemoteText.table(songs, currentID: currentID))
        }
    }
}

struct RemoteStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "The current song, where it is, and the modes (as mpc status).", discussion: "Examples:\n  tonearm remote status\n  tonearm remote status --format '%title%'")
    @OptionGroup var remote: RemoteOptions
    func run() async throws {
        let r = remote
        try await r.with { c throws(MPDClientError) in
            let replies = try await c.sendList([("status", []), ("currentsong", [])])
            Terminal.write(RemoteText.status(MPDStatus(replies[0]), current: MPDSong.list(replies[1]).first, format: r.songFormat))
        }
    }
}

struct RemotePlay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Play (the Nth song of the queue, from 1).", discussion: "Examples:\n  tonearm remote play\n  tonearm remote play 3")
    @Argument(help: "The song's position in the queue (from 1).") var position: Int?
    @OptionGroup var remote: RemoteOptions
    func validate() throws {
        if let position, position < 1 { throw ValidationError("the position counts from 1, not \(position)") }
    }
    func run() async throws {
        let r = remote, p = position
        try await r.with { c throws(MPDClientError) in
            try await c.send("play", arguments: p.map { [String($0 - 1)] } ?? [])
            try await r.printStatus(c)
        }
    }
}

/// A command without arguments that changes playback, then prints the status.
protocol RemoteSimpleCommand: AsyncParsableCommand {
    var remote: RemoteOptions { get }
    static var request: (command: String, arguments: [String]) { get }
}

extension RemoteSimpleCommand {
    func run() async throws {
        let r = remote, request = Self.request
        try await r.with { c throws(MPDClientError) in
            try await c.send(request.command, arguments: request.arguments)
            try await r.printStatus(c)
        }
    }
}

struct RemotePause: RemoteSimpleCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause.", discussion: "Examples:\n  tonearm remote pause")
    static let request = (command: "pause", arguments: ["1"])
    @OptionGroup var remote: RemoteOptions
}

struct RemoteStop: RemoteSimpleCommand {
    static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop.", discussion: "Examples:\n  tonearm remote stop")
    static let request = (command: "stop", arguments: [String]())
    @OptionGroup var remote: RemoteOptions
}

struct RemoteNext: RemoteSimpleCommand {
    static let configuration = CommandConfiguration(commandName: "next", abstract: "The next song.", discussion: "Examples:\n  tonearm remote next --quiet")
    static let request = (command: "next", arguments: [String]())
    @OptionGroup var remote: RemoteOptions
}

struct RemotePrevious: RemoteSimpleCommand {
    static let configuration = CommandConfiguration(commandName: "prev", abstract: "The previous song.", discussion: "Examples:\n  tonearm remote prev", aliases: ["previous"])
    static let request = (command: "previous", arguments: [String]())
    @OptionGroup var remote: RemoteOptions
}

struct RemoteClear: RemoteSimpleCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Empty the queue (playback stops).", discussion: "Examples:\n  tonearm remote clear")
    static let request = (command: "clear", arguments: [String]())
    @OptionGroup var remote: RemoteOptions
}

struct RemoteToggle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "toggle", abstract: "Pause when playing, else play.", discussion: "Examples:\n  tonearm remote toggle")
    @OptionGroup var remote: RemoteOptions
    func run() async throws {
        let r = remote
        try await r.with { c throws(MPDClientError) in
            if try await c.status().state == .play { try await c.send("pause", "1") } else { try await c.send("play") }
            try await r.printStatus(c)
        }
    }
}

struct RemoteSeek: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "seek", abstract: "Go to a time in the song: SECONDS, [H:]M:SS, +/- for relative, or N%.", discussion: "Examples:\n  tonearm remote seek 90\n  tonearm remote seek 1:30\n  tonearm remote seek +10\n  tonearm remote seek 50%")
    // Every word not an option: `seek -5` is a time, not an option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Where: 90, 1:30, +10, -5, 50%.", valueName: "TIME")) var words: [String] = []
    @OptionGroup var remote: RemoteOptions
    var time: String { words.first ?? "" }

    enum Target: Equatable { case absolute(Double), relative(Double), percent(Double) }

    /// Reads `90`, `1:30`, `1:02:03`, `+10`, `-0:05`, `50%`.
    static func target(_ text: String) -> Target? {
        if text.hasSuffix("%") {
            guard let p = Double(text.dropLast()), p >= 0, p <= 100 else { return nil }
            return .percent(p)
        }
        var body = Substring(text)
        var sign: Double = 0
        if body.hasPrefix("+") { sign = 1; body = body.dropFirst() } else if body.hasPrefix("-") { sign = -1; body = body.dropFirst() }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds: Double = 0
        for (k, p) in parts.enumerated() {
            guard let v = Double(p), v >= 0, v.isFinite, p.allSatisfy({ $0.isNumber || $0 == "." }) else { return nil }
            if k > 0 && v >= 60 { return nil }
            seconds = seconds * 60 + v
        }
        return sign == 0 ? .absolute(seconds) : .relative(sign * seconds)
    }

    func validate() throws {
        if words.isEmpty { throw ValidationError("give the time to seek to: SECONDS, [H:]M:SS, +/- before either, or N%") }
        if words.count > 1 { throw ValidationError("seek takes one time, not \(words.count) (\(words.joined(separator: " ")))") }
        if Self.target(time) == nil { throw ValidationError("seek takes SECONDS, [H:]M:SS, +/- before either, or N% (0–100), not '\(time)'") }
    }

    func run() async throws {
        let r = remote, target = Self.target(time)!
        try await r.with { c throws(MPDClientError) in
            let argument: String
            switch target {
            case .absolute(let s): argument = String(s)
            case .relative(let s): argument = (s >= 0 ? "+" : "") + String(s)
            case .percent(let p):
                let status = try await c.status()
                argument = String((status.duration ?? 0) * p / 100)
            }
            try await c.send("seekcur", argument)
            try await r.printStatus(c)
        }
    }
}

struct RemoteVolume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "volume", abstract: "Print the volume, or set it (0–100, or +N / -N).", discussion: "Examples:\n  tonearm remote volume\n  tonearm remote volume 40\n  tonearm remote volume +5")
    // Every word not an option: `volume -5` is a change, not an option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("0–100, +N or -N.", valueName: "VOLUME")) var words: [String] = []
    @OptionGroup var remote: RemoteOptions
    var volume: String? { words.first }

    func validate() throws {
        if words.count > 1 { throw ValidationError("volume takes one value, not \(words.count) (\(words.joined(separator: " ")))") }
        guard let volume else { return }
        let digits = volume.hasPrefix("+") || volume.hasPrefix("-") ? volume.dropFirst() : Substring(volume)
        guard let v = Int(digits), !digits.isEmpty, digits.allSatisfy(\.isNumber), volume.first == "+" || volume.first == "-" || v <= 100 else {
            throw ValidationError("volume takes 0–100, +N or -N, not '\(volume)'")
        }
    }

    func run() async throws {
        let r = remote, volume = volume
        try await r.with { c throws(MPDClientError) in
            let status = try await c.status()
            guard let volume else {
                Terminal.write(status.volume.map { "volume:" + String(repeating: " ", count: max(0, 3 - String($0).count)) + "\($0)%\n" } ?? "volume: n/a\n")
                return
            }
            guard let now = status.volume else { throw .server(MPDServerError(code: MPDAckCode.system.rawValue, listIndex: 0, command: "setvol", message: "the daemon has no volume control")) }
            let relative = volume.hasPrefix("+") || volume.hasPrefix("-")
            let value = relative ? min(100, max(0, now + Int(volume.replacingOccurrences(of: "+", with: ""))!)) : Int(volume)!
            try await c.send("setvol", String(value))
            try await r.printStatus(c)
        }
    }
}

/// What `add` and `insert` send: local files and folders as absolute paths (a folder as its
/// media files, sorted), anything else (a library URI, an http URL) as it is.
enum RemoteURIs {
    static func resolve(_ arguments: [String]) -> [String] {
        var out: [String] = []
        for a in arguments {
            var isDir: ObjCBool = false
            let path = a.hasPrefix("file://") ? (URL(string: a)?.path ?? a) : a
            if !a.contains("://") || a.hasPrefix("file://"), FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
                let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
                out += isDir.boolValue ? MediaPaths.expand([absolute]) : [absolute]
            } else {
                out.append(a)
            }
        }
        return out
    }
}

struct RemoteAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add files, folders, library URIs or URLs to the end of the queue.", discussion: "Local files go by their absolute paths, which the daemon takes over its Unix socket only (over TCP: library URIs and URLs).\n\nExamples:\n  tonearm remote add ~/Music/Album\n  tonearm remote add Artist/Album/01.flac\n  tonearm remote add https://radio.example/stream")
    @Argument(help: ArgumentHelp("Files, folders, library URIs (Artist/Album/01.flac) or http(s) URLs.", valueName: "WHAT")) var what: [String]
    @OptionGroup var remote: RemoteOptions
    func validate() throws { if what.isEmpty { throw ValidationError("give the files, folders, URIs or URLs to add") } }
    func run() async throws {
        let uris = RemoteURIs.resolve(what)
        guard !uris.isEmpty else { throw CommandFailure(nil, "no playable files in \(what.joined(separator: ", "))") }
        try await remote.with { c throws(MPDClientError) in
            _ = try await c.sendList(uris.map { ("add", [$0]) })
        }
    }
}

struct RemoteInsert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "insert", abstract: "Add files, folders, URIs or URLs right after the current song.", discussion: "Examples:\n  tonearm remote insert ~/Music/song.flac")
    @Argument(help: ArgumentHelp("Files, folders, library URIs or http(s) URLs.", valueName: "WHAT")) var what: [String]
    @OptionGroup var remote: RemoteOptions
    func validate() throws { if what.isEmpty { throw ValidationError("give the files, folders, URIs or URLs to insert") } }
    func run() async throws {
        let uris = RemoteURIs.resolve(what)
        guard !uris.isEmpty else { throw CommandFailure(nil, "no playable files in \(what.joined(separator: ", "))") }
        try await remote.with { c throws(MPDClientError) in
            let status = try await c.status()
            // After the current song, in the order given; with none, at the end.
            _ = try await c.sendList(uris.enumerated().map { k, u in ("add", status.song.map { [u, String($0 + 1 + k)] } ?? [u]) })
        }
    }
}

struct RemoteQueue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "queue", abstract: "The queue: a table (> marks the current song), or --format lines.", discussion: "Examples:\n  tonearm remote queue\n  tonearm remote queue --format '%position%. %artist% - %title% (%time%)'", aliases: ["playlist"])
    @OptionGroup var remote: RemoteOptions
    func run() async throws {
        let r = remote
        try await r.with { c throws(MPDClientError) in
            let replies = try await c.sendList([("playlistinfo", []), ("status", [])])
            r.printSongs(MPDSong.list(replies[0]), currentID: MPDStatus(replies[1]).songID)
        }
    }
}

struct RemoteCurrent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "current", abstract: "The current song's line (nothing when stopped), as mpc current.", discussion: "Examples:\n  tonearm remote current\n  tonearm remote current --format '%artist%: %title%'")
    @OptionGroup var remote: RemoteOptions
    func run() async throws {
        let r = remote
        try await r.with { c throws(MPDClientError) in
            let replies = try await c.sendList([("status", []), ("currentsong", [])])
            guard MPDStatus(replies[0]).state != .stop, let song = MPDSong.list(replies[1]).first else { return }
            Terminal.write(r.songFormat.render(song) + "\n")
        }
    }
}

struct RemoteSearch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "search", abstract: "Search the daemon's library: TAG TEXT pairs (title, artist, album, any…), or TEXT alone for any tag.", discussion: "Examples:\n  tonearm remote search 青花\n  tonearm remote search artist nina title blues --format %file%")
    @Argument(help: ArgumentHelp("TEXT, or TAG TEXT [TAG TEXT…].", valueName: "QUERY")) var query: [String]
    @OptionGroup var remote: RemoteOptions
    func validate() throws {
        if query.isEmpty { throw ValidationError("give what to search for: TEXT, or TAG TEXT pairs") }
        if query.count > 1 && query.count % 2 == 1 { throw ValidationError("give TAG TEXT pairs (a tag without its text: '\(query.last!)')") }
    }
    func run() async throws {
        let r = remote, args = query.count == 1 ? ["any", query[0]] : query
        try await r.with { c throws(MPDClientError) in
            r.printSongs(MPDSong.list(try await c.send("search", arguments: args)), currentID: nil)
        }
    }
}

struct RemoteOutputs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "outputs", abstract: "The daemon's outputs (as mpc outputs).", discussion: "Examples:\n  tonearm remote outputs")
    @OptionGroup var remote: RemoteOptions
    func run() async throws {
        try await remote.with { c throws(MPDClientError) in
            for o in try await c.outputs() {
                Terminal.write("Output \(o.id + 1) (\(o.name)) is \(o.isEnabled ? "enabled" : "disabled")\n")
                // Each attribute as mpc prints it: a tab, NAME="VALUE".
                for a in o.attributes {
                    let parts = a.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    Terminal.write("\t\(parts[0])=\"\(parts.count > 1 ? String(parts[1]) : "")\"\n")
                }
            }
        }
    }
}

struct RemoteIdle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "idle", abstract: "Wait for a change and print what changed (player, playlist, mixer, options, database…).", discussion: "Examples:\n  tonearm remote idle\n  tonearm remote idle player mixer --loop")
    @Argument(help: ArgumentHelp("Only these subsystems (player, playlist, mixer, options, output, database, update, stored_playlist).", valueName: "SUBSYSTEM"))
    var subsystems: [String] = []
    @Flag(name: .long, help: "Go on waiting: a line per change until interrupted.")
    var loop = false
    @OptionGroup var remote: RemoteOptions
    func run() async throws {
        let r = remote, subsystems = subsystems, loop = loop
        try await r.with { c throws(MPDClientError) in
            repeat {
                let changed = try await c.idle(subsystems)
                Terminal.write(changed.map { $0 + "\n" }.joined())
            } while loop
        }
    }
}
