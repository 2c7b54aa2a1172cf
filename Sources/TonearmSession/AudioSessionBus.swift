// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation
import TonearmDBus

/// The names of the audio-session protocol on the bus.
enum SessionBusNames {
    static let path = "/org/tonearm/AudioSession"
    static let interface = "org.tonearm.AudioSession"
    static let namePrefix = "org.tonearm.AudioSession."
}

/// The bus thread's side of an ``AudioSession``: the connection, the signals sent and received.
/// Created, used and dropped on the bus thread (deliberately not Sendable).
final class SessionBusLoop {
    private let core: SessionCore
    private var connection: OpaquePointer?

    init(core: SessionCore) {
        self.core = core
    }

    /// Connects, listens to the session signals and to connections leaving, and owns
    /// `org.tonearm.AudioSession.<element>` (not owning it — another session with the same
    /// identifier has it — is not an error: the signals carry the identifier). False when the
    /// bus cannot be reached.
    func connect(address: String?, nameElement: String) -> Bool {
        guard let conn = try? DBusSupport.connect(address: address) else { return false }
        connection = conn
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let filter: DBusHandleMessageFunction = { _, message, data in
            guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            Unmanaged<SessionBusLoop>.fromOpaque(data).takeUnretainedValue().handle(message)
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        guard dbus_connection_add_filter(conn, filter, Unmanaged.passUnretained(self).toOpaque(), nil) != 0 else { return false }
        let rules = ["type='signal',interface='\(SessionBusNames.interface)',path='\(SessionBusNames.path)'",
                     "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''"]
        for rule in rules {
            dbus_bus_add_match(conn, rule, &error)
            if dbus_error_is_set(&error) != 0 { return false }
        }
        let name = SessionBusNames.namePrefix + nameElement
        if dbus_validate_bus_name(name, nil) != 0 {
            _ = dbus_bus_request_name(conn, name, CDBUS_NAME_FLAG_DO_NOT_QUEUE, &error)
            dbus_error_free(&error)
            dbus_error_init(&error)
        }
        return true
    }

    /// Closes the connection (which gives up the name; the other sessions see it leave).
    func disconnect() {
        guard let conn = connection else { return }
        connection = nil
        DBusSupport.close(conn)
    }

    /// Serves the connection until the session stops or the bus goes away (see
    /// `DBusSupport.serve`), sending the announcements as they are queued.
    func run(wakeFD: Int32) {
        guard let conn = connection else { return }
        DBusSupport.serve(conn, wakeFD: wakeFD) {
            let (stop, announcements) = core.takeOutgoing()
            for a in announcements { send(a) }
            if !announcements.isEmpty {
                dbus_connection_flush(conn)
                core.delivered(announcements.count)
            }
            return stop
        }
    }

    // MARK: Sending

    private func send(_ a: SessionCore.Announcement) {
        guard let conn = connection else { return }
        let member: String
        let args: [Arg]
        switch a {
        case .activated(let category, let mode, let options, let at):
            member = "Activated"
            args = [.string(core.identifier), .string(category.rawValue), .string(mode.rawValue),
                    .uint32(options.rawValue), .double(Double(AudioSession.duckLevel)), .uint64(at)]
        case .deactivated(let notify):
            member = "Deactivated"
            args = [.string(core.identifier), .bool(notify)]
        }
        guard let signal = dbus_message_new_signal(SessionBusNames.path, SessionBusNames.interface, member) else { return }
        defer { dbus_message_unref(signal) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(signal, &iter)
        guard args.allSatisfy({ $0.append(to: &iter) }) else { return }
        _ = dbus_connection_send(conn, signal, nil)
    }

    // MARK: Receiving

    /// Reads a signal of interest and hands it to the core (during dispatch, on the bus thread).
    private func handle(_ message: OpaquePointer) {
        guard dbus_message_get_type(message) == CDBUS_MESSAGE_TYPE_SIGNAL,
              let interface = dbus_message_get_interface(message).map({ String(cString: $0) }),
              let member = dbus_message_get_member(message).map({ String(cString: $0) }) else { return }
        let args = Arg.arguments(of: message)
        if interface == "org.freedesktop.DBus", member == "NameOwnerChanged" {
            // A connection left: its unique name, with no new owner.
            guard args.count == 3, case .string(let name) = args[0], case .string(let new) = args[2],
                  new.isEmpty, name.hasPrefix(":") else { return }
            core.receive(.vanished(sender: name))
            return
        }
        guard interface == SessionBusNames.interface else { return }
        switch member {
        case "Activated":
            guard args.count == 6, case .string(let id) = args[0], case .string(let c) = args[1],
                  case .string(let m) = args[2], case .uint32(let o) = args[3], case .double(let level) = args[4],
                  case .uint64(let at) = args[5],
                  let category = AudioSession.Category(rawValue: c), let mode = AudioSession.Mode(rawValue: m) else { return }
            let sender = dbus_message_get_sender(message).map { String(cString: $0) } ?? ""
            core.receive(.activated(id: id, sender: sender, category, mode, AudioSession.CategoryOptions(rawValue: o),
                                    duckLevel: Float(min(1, max(0, level.isFinite ? level : 1))), at: at))
        case "Deactivated":
            guard args.count == 2, case .string(let id) = args[0], case .bool(let notify) = args[1] else { return }
            core.receive(.deactivated(id: id, notifyOthers: notify))
        default:
            return
        }
    }

    /// The few argument types of the protocol.
    private enum Arg {
        case string(String)
        case uint32(UInt32)
        case uint64(UInt64)
        case double(Double)
        case bool(Bool)
        case other

        func append(to iter: inout DBusMessageIter) -> Bool {
            switch self {
            case .string(let s):
                return s.withCString { c in
                    guard dbus_validate_utf8(c, nil) != 0 else { return false }
                    var p: UnsafePointer<CChar>? = c
                    return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_STRING, &p) != 0
                }
            case .uint32(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &v) != 0
            case .uint64(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT64, &v) != 0
            case .double(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_DOUBLE, &v) != 0
            case .bool(let b):
                var v: dbus_bool_t = b ? 1 : 0
                return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BOOLEAN, &v) != 0
            case .other: return false
            }
        }

        static func arguments(of message: OpaquePointer) -> [Arg] {
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
            var args: [Arg] = []
            repeat {
                switch dbus_message_iter_get_arg_type(&iter) {
                case CDBUS_TYPE_STRING:
                    var p: UnsafePointer<CChar>?
                    dbus_message_iter_get_basic(&iter, &p)
                    args.append(p.map { .string(String(cString: $0)) } ?? .other)
                case CDBUS_TYPE_UINT32:
                    var v: UInt32 = 0
                    dbus_message_iter_get_basic(&iter, &v)
                    args.append(.uint32(v))
                case CDBUS_TYPE_UINT64:
                    var v: UInt64 = 0
                    dbus_message_iter_get_basic(&iter, &v)
                    args.append(.uint64(v))
                case CDBUS_TYPE_DOUBLE:
                    var v: Double = 0
                    dbus_message_iter_get_basic(&iter, &v)
                    args.append(.double(v))
                case CDBUS_TYPE_BOOLEAN:
                    var v: dbus_bool_t = 0
                    dbus_message_iter_get_basic(&iter, &v)
                    args.append(.bool(v != 0))
                default:
                    args.append(.other)
                }
            } while dbus_message_iter_next(&iter) != 0
            return args
        }
    }
}
