// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation
import TonearmDBus

/// A desktop notification, sent to the notification server of the desktop (GNOME Shell, KDE
/// Plasma, dunst, mako, …) through `org.freedesktop.Notifications` on the D-Bus session bus —
/// the freedesktop.org Desktop Notifications protocol that `notify-send` speaks.
///
/// ```swift
/// let id = try DesktopNotification(summary: "Done", body: "42 files converted").send()
/// ```
///
/// Each ``send(on:timeout:)`` opens its own private connection and closes it again: nothing is
/// kept between sends, and nothing is shared with other connections of the process.
public struct DesktopNotification: Sendable, Hashable {
    /// The application's name, shown by some servers (default "Tonearm").
    public var appName: String
    /// The one-line summary (plain text).
    public var summary: String
    /// The body, may be empty. Sent as it is: a server that advertises `body-markup` reads a
    /// small subset of HTML in it, so escape `&`, `<` and `>` in text that is not meant as markup.
    public var body: String
    /// The `category` hint (`"device.added"`, `"transfer.complete"`, …), nil for none.
    public var category: String?
    /// The `sound-file` hint: the path of a sound that goes with the notification, nil for none.
    public var soundFile: String?
    /// The `suppress-sound` hint: true when the caller plays the sound itself, so the server
    /// plays none.
    public var suppressSound: Bool
    /// How long the server shows it, in milliseconds: -1 (the default) for the server's own
    /// choice, 0 for until the user closes it.
    public var expireTimeout: Int32

    public init(summary: String, body: String = "", category: String? = nil, soundFile: String? = nil,
                suppressSound: Bool = false, appName: String = "Tonearm", expireTimeout: Int32 = -1) {
        self.summary = summary
        self.body = body
        self.category = category
        self.soundFile = soundFile
        self.suppressSound = suppressSound
        self.appName = appName
        self.expireTimeout = expireTimeout
    }

    /// Why a notification could not be sent.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// No bus to send on: ``AudioSession/Bus/none``, or ``AudioSession/Bus/session`` with
        /// neither `DBUS_SESSION_BUS_ADDRESS` nor `$XDG_RUNTIME_DIR/bus`.
        case noBus
        /// The bus at the address could not be connected to; the text says why.
        case busUnreachable(address: String, reason: String)
        /// Nothing owns `org.freedesktop.Notifications` on the bus (and none could be started).
        case noServer(String)
        /// The server did not answer within the timeout (seconds).
        case timedOut(Double)
        /// The server or the bus answered with another error, or with a malformed reply.
        case failed(String)

        public var description: String {
            switch self {
            case .noBus: "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus)"
            case .busUnreachable(let a, let r): "the D-Bus bus at \(a) cannot be reached (\(r))"
            case .noServer(let m): "no desktop notification server on the bus (\(m))"
            case .timedOut(let s): "the desktop notification server did not answer within \(s) s"
            case .failed(let m): "the desktop notification failed (\(m))"
            }
        }
    }

    /// Sends the notification to the server on `bus` and returns the id the server gave it.
    ///
    /// A server that is not running but can be started by D-Bus activation is started. Never
    /// starts a bus: ``AudioSession/Bus/session`` is `DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`, else no bus (never X11 autolaunch).
    ///
    /// Threading: may be called from any thread; blocks the calling thread until the server
    /// answers, at most about `timeout` seconds in all (connecting to the bus, saying hello and
    /// the call) — call it off any thread that must stay responsive.
    /// - Throws: ``Failure``: `noBus`, `busUnreachable`, `noServer` (nobody owns the name),
    ///   `timedOut`, or `failed` for any other error.
    public func send(on bus: AudioSession.Bus = .session, timeout: Double = 1) throws(Failure) -> UInt32 {
        let address: String
        switch bus {
        case .none: throw .noBus
        case .address(let a): address = a
        case .session:
            guard let a = Self.sessionBusAddress(environment: ProcessInfo.processInfo.environment) else { throw .noBus }
            address = a
        }
        let deadline = ContinuousClock.now + .seconds(max(0.001, timeout))
        /// Milliseconds left until the deadline, at least 1 (libdbus reads 0 as "no wait").
        func remaining() -> Int32 {
            let left = (deadline - ContinuousClock.now) / .milliseconds(1)
            return Int32(max(1, min(Double(Int32.max), left.rounded(.up))))
        }

        _ = dbus_threads_init_default()
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let conn = dbus_connection_open_private(address, &error) else {
            throw .busUnreachable(address: address, reason: Self.text(error, "cannot connect"))
        }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        defer {
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
        }

        // Hello by hand (what dbus_bus_register does), to bound it by the deadline.
        guard let hello = dbus_message_new_method_call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                       "org.freedesktop.DBus", "Hello") else { throw .failed("out of memory") }
        let welcome = dbus_connection_send_with_reply_and_block(conn, hello, remaining(), &error)
        dbus_message_unref(hello)
        guard let welcome else {
            throw Self.failure(error, address: address, timeout: timeout, calling: "the bus")
        }
        dbus_message_unref(welcome)

        guard let call = dbus_message_new_method_call(Self.service, Self.path, Self.service, "Notify") else {
            throw .failed("out of memory")
        }
        defer { dbus_message_unref(call) }
        guard appendArguments(to: call) else { throw .failed("the notification's text is not valid UTF-8") }
        guard let reply = dbus_connection_send_with_reply_and_block(conn, call, remaining(), &error) else {
            throw Self.failure(error, address: address, timeout: timeout, calling: "the server")
        }
        defer { dbus_message_unref(reply) }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(reply, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_UINT32 else {
            throw .failed("Notify answered without an id")
        }
        var id: UInt32 = 0
        dbus_message_iter_get_basic(&iter, &id)
        return id
    }

    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    /// The session bus's address from `environment` (see `DBusSupport.sessionBusAddress`).
    static func sessionBusAddress(environment: [String: String]) -> String? {
        DBusSupport.sessionBusAddress(environment: environment)
    }

    /// Appends `Notify`'s arguments: (app_name s, replaces_id u, app_icon s, summary s, body s,
    /// actions as, hints a{sv}, expire_timeout i). False when a string is not valid UTF-8.
    private func appendArguments(to message: OpaquePointer) -> Bool {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        var replaces: UInt32 = 0
        guard Self.append(appName, to: &iter),
              dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &replaces) != 0,
              Self.append("", to: &iter),
              Self.append(summary, to: &iter),
              Self.append(body, to: &iter) else { return false }

        var actions = DBusMessageIter()
        guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, "s", &actions) != 0,
              dbus_message_iter_close_container(&iter, &actions) != 0 else { return false }

        var hints = DBusMessageIter()
        guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, "{sv}", &hints) != 0 else { return false }
        var entries: [(String, Hint)] = []
        if let category { entries.append(("category", .string(category))) }
        if let soundFile { entries.append(("sound-file", .string(soundFile))) }
        if suppressSound { entries.append(("suppress-sound", .bool(true))) }
        for (key, value) in entries {
            guard Self.appendHint(key, value, to: &hints) else {
                dbus_message_iter_abandon_container(&iter, &hints)
                return false
            }
        }
        guard dbus_message_iter_close_container(&iter, &hints) != 0 else { return false }
        var expire = expireTimeout
        return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT32, &expire) != 0
    }

    private enum Hint {
        case string(String)
        case bool(Bool)
    }

    private static func appendHint(_ key: String, _ value: Hint, to dict: inout DBusMessageIter) -> Bool {
        var entry = DBusMessageIter()
        guard dbus_message_iter_open_container(&dict, CDBUS_TYPE_DICT_ENTRY, nil, &entry) != 0 else { return false }
        var variant = DBusMessageIter()
        let signature = switch value { case .string: "s"; case .bool: "b" }
        guard append(key, to: &entry),
              dbus_message_iter_open_container(&entry, CDBUS_TYPE_VARIANT, signature, &variant) != 0 else {
            dbus_message_iter_abandon_container(&dict, &entry)
            return false
        }
        let ok: Bool
        switch value {
        case .string(let s): ok = append(s, to: &variant)
        case .bool(let b):
            var v: dbus_bool_t = b ? 1 : 0
            ok = dbus_message_iter_append_basic(&variant, CDBUS_TYPE_BOOLEAN, &v) != 0
        }
        guard ok else {
            dbus_message_iter_abandon_container(&entry, &variant)
            dbus_message_iter_abandon_container(&dict, &entry)
            return false
        }
        return dbus_message_iter_close_container(&entry, &variant) != 0
            && dbus_message_iter_close_container(&dict, &entry) != 0
    }

    private static func append(_ s: String, to iter: inout DBusMessageIter) -> Bool {
        s.withCString { c in
            guard dbus_validate_utf8(c, nil) != 0 else { return false }
            var p: UnsafePointer<CChar>? = c
            return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_STRING, &p) != 0
        }
    }

    /// The failure a D-Bus error stands for.
    private static func failure(_ error: DBusError, address: String, timeout: Double, calling whom: String) -> Failure {
        let name = error.name.map { String(cString: $0) } ?? ""
        let message = text(error, "no answer from \(whom)")
        switch name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .noServer(message)
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut":
            return .timedOut(timeout)
        case "org.freedesktop.DBus.Error.Disconnected", "org.freedesktop.DBus.Error.NoServer",
             "org.freedesktop.DBus.Error.AuthFailed":
            return .busUnreachable(address: address, reason: message)
        default:
            if name.hasPrefix("org.freedesktop.DBus.Error.Spawn.") { return .noServer(message) }
            return .failed(name.isEmpty ? message : "\(name): \(message)")
        }
    }

    private static func text(_ error: DBusError, _ fallback: String) -> String {
        error.message.map { String(cString: $0) } ?? fallback
    }
}

/// `error.localizedDescription` is the same text as ``description`` (ported iOS code reports
/// errors that way; see TonearmCore's LocalizedErrors.swift).
extension DesktopNotification.Failure: LocalizedError {
    public var errorDescription: String? { description }
}
