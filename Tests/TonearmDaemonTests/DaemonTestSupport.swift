// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmDaemon
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

    init(limits: MPDServerLimits = MPDServerLimits()) async throws {
        dir = try TempDir("tonearm-daemon")
        socketPath = dir.file("mpd.sock")
        let player = MusicPlayer(output: { NullOutput() })
        daemon = MPDDaemon(player: player, musicDirectories: [dir.file("music")])
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
    let fd: Int32
    private var pending: [UInt8] = []

    init(unixPath: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in unixPath.utf8.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw TestSupportError("connect \(unixPath): \(String(cString: strerror(errno)))") }
        greeting = try readLine(timeout: 10) ?? "<closed>"
    }

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw TestSupportError("connect 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        greeting = try readLine(timeout: 10) ?? "<closed>"
    }

    /// The first line the server sent.
    private(set) var greeting = ""

    deinit { close(fd) }

    func send(_ lines: [String]) {
        var bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        _ = Glibc.send(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL))
    }

    func send(bytes: [UInt8]) {
        var b = bytes
        _ = Glibc.send(fd, &b, b.count, Int32(MSG_NOSIGNAL))
    }

    /// The next line (nil: the connection closed).
    func readLine(timeout: Double = 10) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let nl = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TestSupportError("no answer within \(timeout) s (have: \(String(decoding: pending, as: UTF8.self)))") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let n = poll(&pfd, 1, Int32(left * 1000) + 1)
            if n < 0, errno == EINTR { continue }
            if n == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let got = read(fd, &buffer, buffer.count)
            if got <= 0 { return nil }
            pending += buffer[0..<got]
        }
    }

    /// Every line up to and including `OK` or `ACK …`, or ending with `<closed>`.
    func readAnswer(timeout: Double = 10) throws -> [String] {
        var out: [String] = []
        while true {
            guard let l = try readLine(timeout: timeout) else {
                out.append("<closed>")
                return out
            }
            out.append(l)
            if l == "OK" || l.hasPrefix("ACK ") { return out }
        }
    }

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
