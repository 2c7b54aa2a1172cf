// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmDaemon
import TonearmMPDProtocol
import TonearmPlayback
import TonearmRender
import TonearmTestSupport

/// A daemon in this process on a private Unix socket and a TCP port of its own (port 0: the
/// kernel picks), playing to the real-time null output.
final class TestDaemon: @unchecked Sendable {
    let dir: TempDir
    let socketPath: String
    let daemon: MPDDaemon
    let server: MPDServer
    private(set) var port = 0

    init(limits: MPDServerLimits = MPDServerLimits(), access: MPDAccess = .open,
         output: @escaping @Sendable () throws -> any AudioOutputDriver = { NullOutput() }, outputs: DaemonOutputs? = nil) async throws {
        dir = try TempDir("tonearm-daemon")
        socketPath = dir.file("mpd.sock")
        let hub = outputs?.hub
        let player = MusicPlayer(output: { let d = try output(); return hub?.wrap(d) ?? d }, session: nil)  // as the daemon's (DaemonRunner)
        daemon = MPDDaemon(player: player, musicDirectories: [dir.file("music")], access: access, outputs: outputs)
        server = MPDServer(daemon: daemon, limits: limits)
        try FileManager.default.createDirectory(atPath: dir.file("music"), withIntermediateDirectories: true)
        try await server.listen(.unix(path: socketPath))
        if case .tcp(_, let p) = try await server.listen(.tcp(host: "127.0.0.1", port: 0)) { port = p }
    }

    func stop() async {
        await server.shutdown()
        daemon.shutdown()
        dir.remove()
    }

    /// Runs the real `mpc` against the Unix socket (or TCP).
    @discardableResult
    func mpc(_ args: String..., tcp: Bool = false) throws -> RunResult {
        let env = tcp ? ["MPD_HOST": "127.0.0.1", "MPD_PORT": String(port)] : ["MPD_HOST": socketPath, "MPD_PORT": "6600"]
        return try run("mpc", Array(args), environment: env)
    }

    /// A tone of `seconds` as FLAC in the music folder; returns its absolute path.
    func tone(_ name: String, seconds: Double, freq: Double = 440, title: String? = nil) throws -> String {
        let path = dir.file("music/\(name)")
        var args = ["-c:a", "flac"]
        if let title { args += ["-metadata", "title=\(title)", "-metadata", "artist=Tonearm Tests"] }
        try Fixtures.tone(path: path, codecArgs: args, seconds: seconds, rate: 44_100, freq: freq)
        return path
    }
}

/// A raw MPD protocol connection (Unix socket or TCP) for protocol tests: reads the greeting,
/// sends lines, reads answers up to `OK`/`ACK` (or the connection's end). Blocking reads with a
/// deadline (poll), no sleeps.
final class MPDTestClient: @unchecked Sendable {
    private let socket: MPDLineSocket

    init(unixPath: String) throws { socket = try MPDLineSocket(unixPath: unixPath) }

    init(port: Int) throws { socket = try MPDLineSocket(tcpPort: port) }

    /// The first line the server sent.
    var greeting: String { socket.greeting }

    func send(_ lines: [String]) { socket.send(lines: lines) }

    func send(bytes: [UInt8]) { socket.send(bytes) }

    /// See ``MPDLineSocket/closeAbortively()``.
    func closeAbortively() { socket.closeAbortively() }

    /// The next line (nil: the connection closed).
    func readLine(timeout: Double = 10) throws -> String? { try socket.readLine(timeout: timeout) }

    /// Every line up to and including `OK` or `ACK …`, or ending with `<closed>`.
    func readAnswer(timeout: Double = 10) throws -> [String] { try socket.readAnswer(timeout: timeout) }

    func exchange(_ lines: [String], timeout: Double = 10) throws -> [String] {
        send(lines)
        return try readAnswer(timeout: timeout)
    }

    /// `key: value` pairs of an answer.
    static func pairs(_ answer: [String]) -> [String: String] {
        var d: [String: String] = [:]
        for l in answer {
            guard let r = l.range(of: ": ") else { continue }
            d[String(l[..<r.lowerBound])] = String(l[r.upperBound...])
        }
        return d
    }
}
