// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A real desktop notification server for tests: `dunst` on its own `Xvfb` display, owning
/// `org.freedesktop.Notifications` on a ``PrivateDBus``. Nothing of the user's is touched: the
/// display is a private ``VirtualDisplay`` (a free one Xvfb picks itself), dunst reads a configuration
/// from its own folder, and every client talks to the private bus.
///
/// Start-up is waited for by events, not by time: Xvfb writes its display number once it
/// accepts clients, and `gdbus wait` returns as soon as the name has an owner.
///
/// Thread-safety: one test uses one server; ``stop()`` is idempotent and also runs on deinit.
public final class NotificationServer: @unchecked Sendable {
    /// A notification as dunst recorded it.
    public struct Received: Sendable, Hashable {
        public var id: Int
        public var appName: String
        public var summary: String
        public var body: String
        public var category: String

        public init(id: Int, appName: String, summary: String, body: String, category: String) {
            self.id = id
            self.appName = appName
            self.summary = summary
            self.body = body
            self.category = category
        }
    }

    /// The bus the server is on.
    public let bus: PrivateDBus
    /// The X display, `:N`.
    public let display: String
    private let directory: TempDir
    private let xvfb: VirtualDisplay
    private let dunst: ChildProcess

    /// Starts Xvfb and dunst on `bus` and waits (up to `timeout` seconds each) until dunst owns
    /// `org.freedesktop.Notifications`.
    /// - Throws: ``TestSupportError`` when either does not start (with dunst's own words).
    public init(bus: PrivateDBus, timeout: Double = 10) throws {
        self.bus = bus
        let x = try VirtualDisplay(timeout: timeout)
        xvfb = x
        display = x.display
        let dir: TempDir
        do {
            dir = try TempDir("tonearm-dunst")
        } catch {
            x.stop()
            throw error
        }
        directory = dir

        let config = """
        [global]
            history_length = 100
            notification_limit = 0
            idle_threshold = 0

        [urgency_normal]
            timeout = 0

        """
        let environment = bus.environment.merging([
            "DISPLAY": display, "HOME": dir.path, "XDG_CONFIG_HOME": dir.path, "XDG_DATA_HOME": dir.path,
            "XDG_CACHE_HOME": dir.path, "XDG_RUNTIME_DIR": dir.path, "WAYLAND_DISPLAY": "",
        ]) { $1 }
        do {
            try config.write(toFile: dir.file("dunstrc"), atomically: true, encoding: .utf8)
            dunst = try ChildProcess(["dunst", "-conf", dir.file("dunstrc")], environment: environment, captureStandardError: true)
        } catch {
            xvfb.stop()
            dir.remove()
            throw error
        }
        let owned = try? bus.client("gdbus", ["wait", "--session", "--timeout", String(Int(timeout.rounded(.up))),
                                              "org.freedesktop.Notifications"])
        guard owned?.status == 0 else {
            dunst.terminate()
            xvfb.stop()
            dir.remove()
            throw TestSupportError("dunst did not own org.freedesktop.Notifications within \(timeout) s: "
                                   + "\(owned?.stderr ?? "gdbus did not run") \(dunst.standardErrorText.suffix(2000))")
        }
    }

    deinit { stop() }

    /// Stops dunst and Xvfb (waiting for both) and removes the folder.
    public func stop() {
        thaw()
        dunst.terminate()
        xvfb.stop()
        directory.remove()
    }

    /// Freezes dunst (SIGSTOP): it keeps its name but answers nothing — a hung server — until
    /// ``thaw()`` or ``stop()``.
    public func freeze() { if dunst.isRunning { kill(dunst.pid, SIGSTOP) } }

    /// Lets a frozen dunst run again (SIGCONT); it then answers the calls that waited.
    public func thaw() { if dunst.isRunning { kill(dunst.pid, SIGCONT) } }

    /// Whether dunst still runs.
    public var isRunning: Bool { dunst.isRunning }

    /// Runs `dunstctl` against this server.
    @discardableResult
    public func dunstctl(_ arguments: String...) throws -> RunResult {
        try bus.client("dunstctl", arguments)
    }

    /// Every notification dunst has received, oldest first: closes the ones on screen (which
    /// moves them to dunst's history) and reads the history (`dunstctl history`, JSON).
    public func notifications() throws -> [Received] {
        let closed = try dunstctl("close-all")
        guard closed.status == 0 else { throw TestSupportError("dunstctl close-all failed: \(closed.stderr)") }
        let history = try dunstctl("history")
        guard history.status == 0,
              let json = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any],
              let data = json["data"] as? [[[String: Any]]] else {
            throw TestSupportError("unexpected `dunstctl history`: \(history.stdout) \(history.stderr)")
        }
        func field(_ entry: [String: Any], _ key: String) -> Any? { (entry[key] as? [String: Any])?["data"] }
        return data.flatMap { $0 }.map { e in
            Received(id: field(e, "id") as? Int ?? -1, appName: field(e, "appname") as? String ?? "",
                     summary: field(e, "summary") as? String ?? "", body: field(e, "body") as? String ?? "",
                     category: field(e, "category") as? String ?? "")
        }.sorted { $0.id < $1.id }
    }
}
