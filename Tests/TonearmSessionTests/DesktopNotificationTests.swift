// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation
import Testing
@testable import TonearmSession
import TonearmTestSupport

/// `DesktopNotification` against a real notification server — dunst on an Xvfb display, on a
/// private bus — and against a bus with no server, one whose server never answers, and no bus.
/// Every wait is bounded and signalled (a reply, a child's output); the timings checked are
/// upper bounds of what a caller may be kept waiting.
@Suite(.serialized) struct DesktopNotificationTests {
    @Test func aNotificationReachesARealServerWithItsHints() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let server = try NotificationServer(bus: bus)
        defer { server.stop() }
        // dbus-monitor prints NameLost once it has become a monitor: from then on it sees every call.
        let monitor = try bus.follow("dbus-monitor", ["--session", "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"])
        defer { monitor.terminate() }
        #expect(await monitor.waitForStandardOutput(timeout: 5) { $0.text.contains("member=NameLost") })

        let note = DesktopNotification(summary: "Backup finished", body: "3 files, 12 MB", category: "transfer.complete",
                                       soundFile: "/usr/share/sounds/complete.oga", suppressSound: true)
        let id = try note.send(on: .address(bus.address))
        #expect(id > 0)
        let received = try server.notifications()
        #expect(received == [.init(id: Int(id), appName: "Tonearm", summary: "Backup finished", body: "3 files, 12 MB",
                                   category: "transfer.complete")], "\(received)")

        // The call on the wire: every argument and hint (the last argument is expire_timeout).
        #expect(await monitor.waitForStandardOutput(timeout: 5) { $0.text.contains("member=Notify") && $0.text.contains("int32 -1") })
        let call = monitor.standardOutputText.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for part in ["string \"Tonearm\" uint32 0 string \"\" string \"Backup finished\" string \"3 files, 12 MB\" array [ ]",
                     "string \"category\" variant string \"transfer.complete\"",
                     "string \"sound-file\" variant string \"/usr/share/sounds/complete.oga\"",
                     "string \"suppress-sound\" variant boolean true",
                     "] int32 -1"] {
            #expect(call.contains(part), "\(part) missing from \(call)")
        }

        // A second one gets its own id; the hints left out are not sent.
        let second = try DesktopNotification(summary: "Plain").send(on: .address(bus.address))
        #expect(second != id)
        #expect(try server.notifications().map(\.summary) == ["Backup finished", "Plain"])
        #expect(await monitor.waitForStandardOutput(timeout: 5) { $0.text.contains("\"Plain\"") && $0.text.hasSuffix("int32 -1\n") })
        let plain = String(monitor.standardOutputText.split(separator: "member=Notify").last ?? "")
        #expect(!plain.contains("sound-file") && !plain.contains("category") && !plain.contains("suppress-sound"), "\(plain)")
    }

    @Test func withNobodyOwningTheNameItIsNoServerAtOnce() throws {
        let bus = try PrivateDBus() // activates nothing: no .service file answers for the name
        defer { bus.stop() }
        let start = ContinuousClock.now
        #expect {
            try DesktopNotification(summary: "Nobody listens").send(on: .address(bus.address), timeout: 5)
        } throws: { error in
            guard case .noServer(let m) = error as? DesktopNotification.Failure else { return false }
            return m.contains("org.freedesktop.Notifications")
        }
        // ServiceUnknown is the bus's own answer: no waiting for the 5 s timeout.
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func aServerThatNeverAnswersTimesOutWithinTheTimeout() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let owner = try SilentOwner(address: bus.address)
        defer { owner.close() }
        let start = ContinuousClock.now
        #expect(throws: DesktopNotification.Failure.timedOut(0.3)) {
            try DesktopNotification(summary: "Unheard").send(on: .address(bus.address), timeout: 0.3)
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(290) && elapsed < .seconds(2), "\(elapsed)")
    }

    @Test func withoutABusItFailsAtOnce() throws {
        #expect(throws: DesktopNotification.Failure.noBus) { try DesktopNotification(summary: "x").send(on: .none) }
        #expect {
            try DesktopNotification(summary: "x").send(on: .address("unix:path=/nonexistent/tonearm-bus"))
        } throws: { error in
            guard case .busUnreachable(let address, _) = error as? DesktopNotification.Failure else { return false }
            return address == "unix:path=/nonexistent/tonearm-bus"
        }
    }

    /// `.session` is `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` if it exists, else
    /// nothing (never X11 autolaunch).
    @Test func theSessionBusAddressComesFromTheEnvironmentOnly() throws {
        let dir = try TempDir("session-bus address")
        defer { dir.remove() }
        #expect(DesktopNotification.sessionBusAddress(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/a",
                                                                     "XDG_RUNTIME_DIR": dir.path]) == "unix:path=/a")
        #expect(DesktopNotification.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": dir.path]) == nil)
        #expect(DesktopNotification.sessionBusAddress(environment: ["DBUS_SESSION_BUS_ADDRESS": "", "DISPLAY": ":0"]) == nil)
        #expect(FileManager.default.createFile(atPath: dir.file("bus"), contents: nil))
        // The space in the folder's name is escaped as D-Bus addresses require.
        let escaped = dir.path.replacingOccurrences(of: " ", with: "%20")
        #expect(DesktopNotification.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": dir.path,
                                                                     "DBUS_SESSION_BUS_ADDRESS": ""]) == "unix:path=\(escaped)/bus")
    }
}

/// A connection that owns `org.freedesktop.Notifications` and never reads its messages: a
/// server that has hung. Used on the test's thread only.
private final class SilentOwner {
    private let connection: OpaquePointer

    init(address: String) throws {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let conn = dbus_connection_open_private(address, &error) else { throw TestSupportError("cannot connect to \(address)") }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        connection = conn
        guard dbus_bus_register(conn, &error) != 0,
              dbus_bus_request_name(conn, "org.freedesktop.Notifications", CDBUS_NAME_FLAG_DO_NOT_QUEUE, &error)
                == CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER else {
            close()
            throw TestSupportError("cannot own org.freedesktop.Notifications")
        }
    }

    func close() {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }
}
