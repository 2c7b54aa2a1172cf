// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// A private D-Bus session bus for tests: `dbus-daemon --session` listening on a socket in its
/// own folder. It never touches the user's bus: give ``address`` to the service under test and
/// ``environment`` to every client (`playerctl`, `dbus-send`, `gdbus`).
///
/// Thread-safety: all members may be used from any thread; ``stop()`` is idempotent.
public final class PrivateDBus: Sendable {
    /// The bus's private folder (holds `bus.sock`).
    public let directory: String
    /// The bus address, as `dbus-daemon` printed it.
    public let address: String
    /// The daemon's process id (it forks: it is not this process's child).
    public let pid: pid_t
    /// Environment for clients: `DBUS_SESSION_BUS_ADDRESS` pointing at this bus.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }
    private let stopped = Mutex(false)

    /// Starts the daemon. It forks once it listens, and prints its address and pid first, so
    /// when this returns the bus accepts connections.
    public init() throws {
        let dir = try TempDir("tonearm-dbus")
        // Started through ChildProcess, which reaps it with waitpid: Foundation's Process never
        // sees the end of a parent that forks a daemon and exits.
        let daemon: ChildProcess
        do {
            daemon = try ChildProcess(["dbus-daemon", "--session", "--fork", "--nopidfile",
                                       "--address=unix:path=\(dir.path)/bus.sock", "--print-address=1", "--print-pid=1"],
                                      captureStandardOutput: true)
        } catch {
            dir.remove()
            throw error
        }
        // The parent exits once the daemon listens; the address and pid are printed before.
        let exited = daemon.wait(timeout: 10)
        let output = daemon.waitForStandardOutputBlocking(timeout: 10) { $0.text.split(separator: "\n").count >= 2 || $0.ended }
        let lines = output.text.split(separator: "\n").map(String.init)
        guard exited, daemon.succeeded, lines.count >= 2, let pid = pid_t(lines[1].trimmingCharacters(in: .whitespaces)) else {
            daemon.terminate(SIGKILL)
            dir.remove()
            throw TestSupportError("dbus-daemon did not start (status \(daemon.status.map(String.init) ?? "running")): \(output.text)")
        }
        directory = dir.path
        address = lines[0]
        self.pid = pid
    }

    deinit { stop() }

    /// Stops the daemon (SIGTERM) and removes its folder.
    public func stop() {
        let already = stopped.withLock { s -> Bool in
            defer { s = true }
            return s
        }
        if already { return }
        kill(pid, SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `playerctl` against this bus and waits for it.
    @discardableResult
    public func playerctl(_ arguments: String...) throws -> RunResult {
        try run("playerctl", arguments, environment: environment)
    }

    /// Runs `program` (`dbus-send`, `gdbus`, …) against this bus and waits for it.
    @discardableResult
    public func client(_ program: String, _ arguments: [String]) throws -> RunResult {
        try run(program, arguments, environment: environment)
    }

    /// Starts `program` with `arguments` against this bus, its standard output captured (for
    /// followers such as `playerctl -F status`). Terminate it when done.
    public func follow(_ program: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess([program] + arguments, environment: environment, captureStandardOutput: true)
    }
}
