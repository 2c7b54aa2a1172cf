// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Logging
import ServiceLifecycle
import TonearmCore
import TonearmMPDProtocol
import TonearmPlayback
import TonearmRender
import TonearmSession

/// What `tonearm daemon` was asked for.
public struct DaemonOptions: Sendable {
    /// The folder of the socket and the lock (`$XDG_RUNTIME_DIR/tonearm`).
    public var runtimeDirectory: String
    /// TCP addresses (default 127.0.0.1:6600); the Unix socket is always there.
    public var tcp: [MPDListenAddress]
    public var output: OutputSelection
    /// Several outputs (`--output`, repeatable): when not empty, wins over ``output`` (the clock
    /// is the first `pulse` or `null` among them, else an unlisted null output).
    public var outputs: [DaemonOutput] = []
    /// Music folders (`--music`): relative URIs are found there until the library serves them.
    public var musicDirectories: [String]
    public var verbose: Bool
    public var limits = MPDServerLimits()
    /// Where the state is saved (queue, position, volume, modes); nil: not saved.
    public var stateDirectory: String?
    /// The library's answers to the database commands (nil: `ACK [5@0]` unknown command).
    public var database: (any MPDDatabaseResponder)?
    /// Makes ``database`` once this daemon holds the one-per-user lock (a library scanned at
    /// start must not be written by a second daemon that is about to be refused). Wins over
    /// `database`.
    public var makeDatabase: (@Sendable () async throws -> any MPDDatabaseResponder)?
    /// Started with the daemon's player before it listens (the command's MPRIS export): returns
    /// what stops it at shutdown and a line for the log (why it did not start), or nil.
    public var attachPlayer: (@Sendable (MusicPlayer) -> (stop: @Sendable () -> Void, message: String?))?
    /// Passwords and default permissions (MPD's `password` and `default_permissions`).
    /// Play along with other Tonearm audio sessions (`AVAudioSession`'s `mixWithOthers`)
    /// instead of the default: the daemon's session is `playback`, exclusive, so a `tonearm play`
    /// (or any app's exclusive session) interrupts it — it pauses — and, when that session ends
    /// saying so, it plays on.
    public var mixWithOthers = false
    public var access = MPDAccess.open
    /// More services run beside the MPD server (the web remote of issue 21), made once the
    /// daemon is up, from the daemon and the log; they stop at the same graceful shutdown. A
    /// factory that throws ends the start with its error.
    public var services: [@Sendable (MPDDaemon, Logger) throws -> any Service] = []
    /// Work that runs beside the server until the daemon's graceful shutdown (the library's play
    /// counting): each is made from the daemon once it is up and a function that logs a
    /// warning, and its body is cancelled at the shutdown (it may finish its work then).
    public var companions: [@Sendable (MPDDaemon, @escaping @Sendable (String) -> Void) -> @Sendable () async -> Void] = []

    public init(runtimeDirectory: String, tcp: [MPDListenAddress], output: OutputSelection, musicDirectories: [String], verbose: Bool) {
        self.runtimeDirectory = runtimeDirectory
        self.tcp = tcp
        self.output = output
        self.musicDirectories = musicDirectories
        self.verbose = verbose
    }

    /// `$XDG_RUNTIME_DIR/tonearm` (or `/tmp/tonearm-UID` without it).
    public static var defaultRuntimeDirectory: String {
        if let d = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !d.isEmpty { return d + "/tonearm" }
        return "/tmp/tonearm-\(getuid())"
    }

    /// `$XDG_STATE_HOME/tonearm/daemon` (`~/.local/state/tonearm/daemon`).
    public static var defaultStateDirectory: String {
        let env = ProcessInfo.processInfo.environment
        if let s = env["XDG_STATE_HOME"], s.hasPrefix("/") { return s + "/tonearm/daemon" }
        return (env["HOME"] ?? NSHomeDirectory()) + "/.local/state/tonearm/daemon"
    }

    public var socketPath: String { runtimeDirectory + "/mpd.sock" }
    public var lockPath: String { runtimeDirectory + "/daemon.lock" }
}

/// One daemon per user: an exclusive `flock` on a file in the runtime folder, held for the
/// process's life (the kernel lets go of it when the process ends, also by SIGKILL). The file
/// says who holds it: the pid and the socket.
public struct DaemonLock: ~Copyable {
    public let fd: Int32

    /// Takes the lock or throws, saying where the running daemon is.
    public init(path: String, socketPath: String) throws(DaemonLockError) {
        let dir = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DaemonLockError(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = pread(fd, &buffer, buffer.count, 0)
            close(fd)
            let holder = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "unknown"
            throw DaemonLockError(message: "a tonearm daemon is already running (\(holder.replacingOccurrences(of: "\n", with: ", "))); lock: \(path)")
        }
        let text = "pid \(getpid())\nsocket \(socketPath)\n"
        _ = ftruncate(fd, 0)
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        self.fd = fd
    }

    deinit { close(fd) }
}

public struct DaemonLockError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// The server as a service of a `ServiceGroup`: listens until a graceful shutdown (SIGTERM,
/// SIGINT), then closes the sockets and stops playing.
struct MPDServerService: Service, CustomStringConvertible {
    let server: MPDServer
    let addresses: [MPDListenAddress]
    let logger: Logger

    var description: String { "MPD server on \(addresses.map(\.description).joined(separator: ", "))" }

    func run() async throws {
        for a in addresses { try await server.listen(a) }
        Self.notifyReady()
        try? await gracefulShutdown()
        logger.info("shutting down")
        await server.shutdown()
        logger.debug("connections closed")
        server.daemon.shutdown()
        logger.debug("player stopped")
    }

    /// `READY=1` to `$NOTIFY_SOCKET` (systemd's `Type=notify`; the tests wait for it).
    static func notifyReady() {
        guard let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() where i < raw.count - 1 { raw[i] = b }
            if bytes.first == UInt8(ascii: "@") { raw[0] = 0 }  // abstract namespace
        }
        let message = Array("READY=1".utf8)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

/// A companion's body as a service: run until the daemon's graceful shutdown cancels it.
struct CompanionService: Service {
    let body: @Sendable () async -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown { await body() }
    }
}

/// `tonearm daemon` in the foreground: one per user, an MPD server on the Unix socket and TCP,
/// until SIGTERM or SIGINT.
public enum DaemonRunner {
    public static func run(_ options: DaemonOptions) async throws {
        var logger = Logger(label: "tonearm.daemon") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = options.verbose ? .debug : .info
        let lock = try DaemonLock(path: options.lockPath, socketPath: options.socketPath)
        var database = options.database
        if let make = options.makeDatabase {
            logger.info("scanning the music folder")
            database = try await make()
        }
        let outputLogger = logger
        let several = options.outputs.isEmpty ? nil
            : DaemonOutputs(options.outputs, pulseServer: { if case .pulse(let s) = options.output { s } else { nil } }(),
                            log: { outputLogger.info("\($0)") })
        let selection = several?.clock ?? options.output
        let hub = several?.hub
        let store = options.stateDirectory.map { QueueStateStore(path: $0 + "/queue.json") }
        // The daemon's audio session, as the system music player's on iOS: playback, exclusive
        // unless --mix. Another exclusive session (a `tonearm play`) interrupts it: the queue
        // pauses (MPD's `pause`), and plays on when that session ends with
        // notifyOthersOnDeactivation. Its stream role goes on the PulseAudio stream.
        let session = AudioSession.shared
        try? session.setCategory(.playback, options: options.mixWithOthers ? [.mixWithOthers] : [])
        let role = session.streamProperties["media.role"] ?? "music"
        let player = MusicPlayer(output: {
            let driver = selection.makeDriver(applicationName: "Tonearm", streamName: "Tonearm daemon", role: role, buffering: .steady)
            return hub?.wrap(driver) ?? driver
        }, store: store, session: session)
        defer { try? session.setActive(false, options: .notifyOthersOnDeactivation) }
        try several?.start()
        defer { several?.stop() }
        let output: MPDOutput = switch selection {
        case .pulse: MPDOutput(name: "PulseAudio", plugin: "pulse")
        case .null, .nullUntimed: MPDOutput(name: "null", plugin: "null")
        default: MPDOutput(name: selection.description, plugin: "tonearm")
        }
        let daemon = MPDDaemon(player: player, database: database, musicDirectories: options.musicDirectories,
                               stateFile: options.stateDirectory.map { $0 + "/daemon.json" }, output: output, access: options.access, outputs: several)
        do {
            if try daemon.restore() { logger.info("resumed the saved queue (\(daemon.player.queue.items().count) songs)") }
        } catch {
            logger.warning("the saved state could not be read: \(error)")
        }
        // What the start-up scan and the restore freed goes back to the system.
        daemon.trimmer.request()
        let watchLogger = logger
        daemon.startWatching { error in watchLogger.warning("the music folder is not watched (changes need `update`): \(error)") }
        let attached = options.attachPlayer?(player)
        if let message = attached?.message { logger.info("\(message)") }
        let server = MPDServer(daemon: daemon, limits: options.limits, logger: logger)
        logger.info("output: \(several.map { $0.outputs.map(\.description).joined(separator: ", ") } ?? selection.description)")
        let service = MPDServerService(server: server, addresses: [.unix(path: options.socketPath)] + options.tcp, logger: logger)
        let warn: @Sendable (String) -> Void = { [logger] in logger.warning("\($0)") }
        let extra = try options.services.map { try $0(daemon, logger) }
            + options.companions.map { CompanionService(body: $0(daemon, warn)) as any Service }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service] + extra, gracefulShutdownSignals: [.sigterm, .sigint],
                                                                          logger: logger))
        defer { attached?.stop() }
        // `kill` from a client: the same graceful shutdown as SIGTERM.
        daemon.onKill.withLock { $0 = { Task { await group.triggerGracefulShutdown() } } }
        try await group.run()
        try? FileManager.default.removeItem(atPath: options.socketPath)
        _ = consume lock
    }
}
