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

    /// `extraConfig`: more lines of `mpd.conf` (`password "secret@read"`, `default_permissions "read"`).
    /// `stickers`: with a sticker database (`sticker_file` in its folder: the `sticker` command).
    public init(timeout: Double = 10, extraConfig: String = "", stickers: Bool = false) throws {
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
        \(stickers ? "sticker_file \"\(dir.file("sticker.sql"))\"" : "")
        \(extraConfig)
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
        let connection = try MPDLineSocket(unixPath: socketPath, timeout: timeout)
        guard connection.greeting.hasPrefix("OK MPD ") else {
            throw TestSupportError("no greeting from mpd (\(connection.greeting); running: \(process.isRunning)): \(process.standardErrorText.suffix(2000))")
        }
        for line in lines { connection.send(line + [10]) }
        return try connection.readAnswer(timeout: timeout)
    }
}
