// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm
import TonearmMPDClient

/// `tonearm play --daemon` and `tonearm pick --daemon`: the files go to the running daemon's
/// queue (by their absolute paths, over its Unix socket) instead of playing in the terminal.
/// The daemon plays the first of them when it was not playing; when it was, they wait after
/// what plays. Says both.
enum RemoteHandOff {
    /// Adds `files` (local paths, made absolute; URLs as they are) after the queue's end, in one
    /// command list; starts the first added one when the daemon is stopped or paused. Prints
    /// what was added and what plays.
    /// The daemon is where `options` say (`--host`, `--port`, `--password`), else at
    /// `MPD_HOST`/`MPD_PORT` when set (as mpc reads them; a bad value is a usage error naming
    /// the flag or variable), else at its own socket.
    static func hand(_ files: [String], options: DaemonAddressOptions) async throws {
        let (address, password) = try options.resolved()
        try await hand(files, address: address, password: password)
    }

    static func hand(_ files: [String], address: MPDAddress, password: String?) async throws {
        let uris = files.map { f -> String in
            f.contains("://") ? f : URL(fileURLWithPath: f).standardizedFileURL.path
        }
        guard !uris.isEmpty else { throw CommandFailure(nil, "nothing to hand to the daemon") }
        let client = try await RemoteOptions.connect(to: address, password: password)
        defer { client.close() }
        do throws(MPDClientError) {
            let before = try await client.status()
            let replies = try await client.sendList(uris.map { ("addid", [$0]) })
            let first = before.playlistLength
            let songs = uris.count == 1 ? "1 song" : "\(uris.count) songs"
            let positions = uris.count == 1 ? "#\(first + 1)" : "#\(first + 1)–#\(first + uris.count)"
            var text = "Added \(songs) to the daemon's queue at \(address) (\(positions) of \(first + uris.count)).\n"
            if before.state == .play {
                let current = try await client.currentSong()
                text += "The daemon plays on: \(current.map { RemoteFormat.songDefault.render($0) } ?? "?")"
                    + " (#\((before.song ?? 0) + 1)); the added songs follow in the queue's order.\n"
            } else {
                let id = replies.first?["Id"] ?? ""
                try await client.send("playid", id)
                let now = try await client.currentSong()
                text += "Playing: \(now.map { RemoteFormat.songDefault.render($0) } ?? uris[0]) (#\(first + 1)).\n"
            }
            Terminal.write(text)
        } catch {
            throw RemoteOptions.failure(error)
        }
    }
}

/// `--host`, `--port` and `--password` of `tonearm play --daemon` and `tonearm pick --daemon`:
/// where the daemon is, as `tonearm remote` and mpc take them (flags win over `MPD_HOST` and
/// `MPD_PORT`).
struct DaemonAddressOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("With --daemon: the daemon's address, a Unix socket's path or HOST[:PORT] (default: $MPD_HOST as mpc reads it, else localhost when only a port is given, else $XDG_RUNTIME_DIR/tonearm/mpd.sock).",
                                            valueName: "ADDR"))
    var host: String?

    @Option(name: .long, help: ArgumentHelp("With --daemon: the daemon's TCP port (default: $MPD_PORT, else 6600).", valueName: "PORT"))
    var port: Int?

    @Option(name: .long, help: "With --daemon: the daemon's password (default: the PASSWORD in MPD_HOST=PASSWORD@HOST).")
    var password: String?

    /// Whether any of them was given (they need --daemon).
    var isGiven: Bool { host != nil || port != nil || password != nil }

    /// The address and password (``RemoteOptions/daemonAddress(host:port:password:environment:)``).
    func resolved(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (MPDAddress, String?) {
        try RemoteOptions.daemonAddress(host: host, port: port, password: password, environment: environment)
    }
}
