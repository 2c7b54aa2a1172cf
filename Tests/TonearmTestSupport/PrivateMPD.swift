// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A real MPD (Debian's `mpd`, the peer Tonearm's MPD protocol is compared with) for tests: its
/// own folder with an empty music directory and a null output, listening only on a Unix socket
/// in that folder, started in the foreground and waited for by its systemd readiness message
/// (`READY=1` on `$NOTIFY_SOCKET`), not by time.
///
/// Thread-safety: ``exchange(_:timeout:)`` opens a connection of its own each time; ``stop()`` is
/// idempotent and also runs on deinit.
public final class PrivateMPD: @unchecked Sendable {
    public let directory: TempDir
    /// The Unix socket MPD listens on.
    public let socketPath: String
    private let process: ChildProcess

    public init(timeout: Double = 10) throws {
        let dir = try TempDir("tonearm-mpd")
        directory = dir
        socketPath = dir.file("socket")
        for sub in ["music", "playlists"] {
            try FileManager.default.createDirectory(atPath: dir.file(sub), withIntermediateDirectories: true)
        }
        let config = """
        music_directory "\(dir.file("music"))"
        playlist_directory "\(dir.file("playlists"))"
        db_file "\(dir.file("database"))"
        state_file "\(dir.file("state"))"
        bind_to_address "\(socketPath)"
        audio_output {
            type "null"
            name "null"
        }

        """
        try config.write(toFile: dir.file("mpd.conf"), atomically: true, encoding: .utf8)
        let notify = try NotifySocket(path: dir.file("notify"))
        defer { notify.close() }
        let ready = Watched(false)
        process = try ChildProcess(["mpd", "--no-daemon", "--stderr", dir.file("mpd.conf")],
                                   environment: ["NOTIFY_SOCKET": notify.path, "HOME": dir.path], captureStandardError: true)
        notify.receive(until: "READY=1", timeout: timeout) { ready.update { $0 = true } }
        guard ready.waitBlocking(timeout: timeout, until: { $0 }) else {
            process.terminate(SIGKILL)
            throw TestSupportError("mpd did not report ready within \(timeout) s: \(process.standardErrorText.suffix(2000))")
        }
    }

    deinit { stop() }

    public func stop() {
        process.terminate(SIGTERM)
        _ = process.wait(timeout: 10)
    }

    /// Sends `lines` (one request, or a command list) on a new connection, after MPD's greeting,
    /// and returns every line of the answer up to its `OK` or `ACK …`, or ending with `<closed>`
    /// when MPD closed the connection. At most `timeout` seconds.
    public func exchange(_ lines: [[UInt8]], timeout: Double = 5) throws -> [String] {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in socketPath.utf8.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw TestSupportError("connect \(socketPath): \(String(cString: strerror(errno)))") }
        let deadline = Date().addingTimeInterval(timeout)
        var pending: [UInt8] = []
        /// The next line MPD sends (nil: closed).
        func readLine() throws -> String? {
            while true {
                if let nl = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[..<nl], as: UTF8.self)
                    pending.removeSubrange(...nl)
                    return line
                }
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw TestSupportError("mpd did not answer within \(timeout) s") }
                let n = poll(&pfd, 1, Int32(left * 1000) + 1)
                if n < 0, errno == EINTR { continue }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                let got = read(fd, &buffer, buffer.count)
                if got <= 0 { return nil }
                pending += buffer[0..<got]
            }
        }
        let greeting = try readLine()
        guard let greeting, greeting.hasPrefix("OK MPD ") else {
            throw TestSupportError("no greeting from mpd (\(greeting ?? "closed"); running: \(process.isRunning)): \(process.standardErrorText.suffix(2000))")
        }
        var out: [String] = []
        for line in lines {
            var bytes = line + [10]
            _ = send(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL))
        }
        while true {
            guard let l = try readLine() else {
                out.append("<closed>")
                break
            }
            out.append(l)
            if l == "OK" || l.hasPrefix("ACK ") { break }
        }
        return out
    }
}
