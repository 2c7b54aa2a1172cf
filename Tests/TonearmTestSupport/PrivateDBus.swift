// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// A private D-Bus session bus for tests: a session-type `dbus-daemon` listening on a socket in
/// its own folder. It never touches the user's bus: give ``address`` to the service under test
/// and ``environment`` to every client (`playerctl`, `dbus-send`, `gdbus`).
///
/// Its configuration is the session bus's (`/usr/share/dbus-1/session.conf`: EXTERNAL
/// authentication, everything allowed) with one difference: it activates nothing. Its only
/// service folder is ``servicesDirectory``, empty unless a test puts a `.service` file there;
/// the system's service files are not read, so a call to a name nobody owns fails at once with
/// `ServiceUnknown` instead of starting an installed daemon (`dunst`, `playerctld`, …) with this
/// process's environment.
///
/// Thread-safety: all members may be used from any thread; ``stop()`` is idempotent.
public final class PrivateDBus: Sendable {
    /// The bus's private folder (holds `bus.sock`).
    public let directory: String
    /// The bus address, as `dbus-daemon` printed it.
    public let address: String
    /// The bus's only service (activation) folder, `services` in ``directory``; empty at start.
    public var servicesDirectory: String { directory + "/services" }
    /// The daemon's process id (it forks: it is not this process's child).
    public let pid: pid_t
    /// Environment for clients: `DBUS_SESSION_BUS_ADDRESS` pointing at this bus.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }
    private let stopped = Mutex(false)

    /// Starts the daemon. It forks once it listens, and prints its address and pid first, so
    /// when this returns the bus accepts connections.
    public init() throws {
        let dir = try TempDir("tonearm-dbus")
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <keep_umask/>
          <listen>unix:path=\(dir.path)/bus.sock</listen>
          <auth>EXTERNAL</auth>
          <servicedir>\(dir.path)/services</servicedir>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """
        // Started through ChildProcess, which reaps it with waitpid: Foundation's Process never
        // sees the end of a parent that forks a daemon and exits.
        let daemon: ChildProcess
        do {
            try FileManager.default.createDirectory(atPath: "\(dir.path)/services", withIntermediateDirectories: true)
            try config.write(toFile: "\(dir.path)/bus.conf", atomically: true, encoding: .utf8)
            daemon = try ChildProcess(["dbus-daemon", "--config-file=\(dir.path)/bus.conf", "--fork", "--nopidfile",
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
