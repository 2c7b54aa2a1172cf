// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation

/// What every D-Bus client in Tonearm (MPRIS, the audio session, desktop notifications) does the
/// same way: find the session bus without ever starting one, open a private connection, and
/// serve it from a thread of its own.
package enum DBusSupport {
    /// The session bus's address from `environment`: `DBUS_SESSION_BUS_ADDRESS` when set and not
    /// empty, else `unix:path=$XDG_RUNTIME_DIR/bus` when that socket exists, else nil — never
    /// libdbus's X11 autolaunch, which would start a bus of its own.
    package static func sessionBusAddress(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let a = environment["DBUS_SESSION_BUS_ADDRESS"], !a.isEmpty { return a }
        guard let dir = environment["XDG_RUNTIME_DIR"], !dir.isEmpty else { return nil }
        let socket = dir + "/bus"
        guard FileManager.default.fileExists(atPath: socket), let escaped = dbus_address_escape_value(socket) else { return nil }
        defer { dbus_free(escaped) }
        return "unix:path=" + String(cString: escaped)
    }

    /// Opens a private connection to the bus at `address` (nil: the session bus, see
    /// ``sessionBusAddress(environment:)``) and registers on it (`Hello`), with exit-on-disconnect
    /// off. Throws a message saying what failed. The caller closes and unrefs the connection.
    package static func connect(address: String?) throws(DBusConnectFailure) -> OpaquePointer {
        _ = dbus_threads_init_default()
        guard let address = address ?? sessionBusAddress() else {
            throw DBusConnectFailure(message: "no session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus)")
        }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let conn = dbus_connection_open_private(address, &error) else {
            throw DBusConnectFailure(message: text(error, "cannot connect to \(address)"))
        }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        guard dbus_bus_register(conn, &error) != 0 else {
            let message = text(error, "the bus at \(address) did not answer")
            close(conn)
            throw DBusConnectFailure(message: message)
        }
        return conn
    }

    /// Closes and releases a private connection.
    package static func close(_ conn: OpaquePointer) {
        dbus_connection_close(conn)
        dbus_connection_unref(conn)
    }

    /// libdbus's message for `error`, or `fallback`.
    package static func text(_ error: DBusError, _ fallback: String) -> String {
        error.message.map { String(cString: $0) } ?? fallback
    }

    /// Serves `conn` on the calling thread until `tick` says stop or the bus goes away: dispatches
    /// what arrived, calls `tick` (which sends what is queued; true to stop — the connection is
    /// then flushed), and waits on the connection's socket and `wakeFD` (an eventfd other threads
    /// write to) without a timeout. Nothing polls.
    package static func serve(_ conn: OpaquePointer, wakeFD: Int32, tick: () -> Bool) {
        var socket: Int32 = -1
        guard dbus_connection_get_socket(conn, &socket) != 0 else { return }
        while true {
            while dbus_connection_dispatch(conn) == DBUS_DISPATCH_DATA_REMAINS {}
            if tick() {
                dbus_connection_flush(conn)
                return
            }
            guard dbus_connection_get_is_connected(conn) != 0 else { return }
            let wantWrite = dbus_connection_has_messages_to_send(conn) != 0
            var fds = [pollfd(fd: socket, events: Int16(POLLIN) | (wantWrite ? Int16(POLLOUT) : 0), revents: 0),
                       pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, -1)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 {
                var counter: UInt64 = 0
                _ = read(wakeFD, &counter, 8)
            }
            if fds[0].revents != 0, dbus_connection_read_write(conn, 0) == 0 {
                return // disconnected
            }
        }
    }
}

/// Why a connection to a bus could not be made (a message for people).
package struct DBusConnectFailure: Error, Sendable {
    package let message: String
}
