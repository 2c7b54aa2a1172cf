// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A real `tonearm daemon` for the command-line tests: a private runtime folder (`XDG/tonearm`,
/// so that clients given `XDG_RUNTIME_DIR=XDG` find it where they look by default), a private
/// state folder, the null output (real time), no session bus, an optional music folder.
///
/// The initialiser returns once the daemon listens on its socket (it throws with the daemon's
/// standard error if it does not within `timeout` seconds); the process is killed when the last
/// reference to ``process`` goes. Blocking: call from a test's thread, not from an actor.
public struct DaemonProcess: Sendable {
    public let process: ChildProcess
    /// The folder given as `XDG_RUNTIME_DIR` to clients that should find the daemon by default.
    public let xdg: String
    /// The daemon's Unix socket.
    public var socket: String { xdg + "/tonearm/mpd.sock" }
    /// The environment that points a client (tonearm or mpc) at this daemon.
    public var env: [String: String] { ["XDG_RUNTIME_DIR": xdg, "MPD_HOST": socket] }

    /// Starts `tonearm daemon` in `dir` (runtime folder `dir/xdg/tonearm`, state `dir/state`) with
    /// `--listen listen`, `--music music` when given, and `options` after them.
    public init(_ dir: TempDir, music: String? = nil, listen: String = "none", options: [String] = [], timeout: Double = 60) throws {
        xdg = dir.file("xdg")
        process = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", listen, "--runtime-dir", xdg + "/tonearm",
                                    "--state-dir", dir.file("state")] + (music.map { ["--music", $0] } ?? []) + options,
                                   environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + dir.file("no-bus")], captureStandardError: true)
        guard process.waitForStandardError(containing: "listening on \(xdg)/tonearm/mpd.sock", timeout: timeout) else {
            process.terminate(SIGKILL)
            throw TestSupportError("the daemon did not listen within \(timeout) s: \(process.standardErrorText)")
        }
    }

    /// Runs Debian's `mpc` against the daemon's socket and returns its standard output; throws
    /// with its standard error when it fails.
    public func mpc(_ args: String...) throws -> String { try mpc(args) }

    /// ``mpc(_:)-(String...)`` with the arguments as an array.
    public func mpc(_ args: [String]) throws -> String {
        let r = try run("mpc", args, environment: ["MPD_HOST": socket])
        guard r.status == 0 else { throw TestSupportError("mpc \(args): status \(r.status): \(r.stderr)") }
        return r.stdout
    }

    /// Asks the daemon to end (SIGTERM) and returns whether it ended cleanly (status 0); its
    /// standard error is in `process.standardErrorText`.
    public func stop() -> Bool {
        process.terminate(SIGTERM)
        return process.succeeded
    }
}

/// The web remote's browser script (`webremote.py` next to this file: headless chromium driven
/// by python3-selenium), run with python3 from the source tree.
public let webRemoteBrowserScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("webremote.py").path

/// The browser script for a stream's buffered part on the web remote's seek bar
/// (`webbuffered.py` next to this file), run with python3 from the source tree.
public let webBufferedBrowserScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("webbuffered.py").path
