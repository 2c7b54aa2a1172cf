// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation
import Synchronization
import TonearmDBus

/// A stand-in for RealtimeKit (`rtkit-daemon`) on a ``PrivateDBus``, for the tests of Tonearm's
/// rtkit client. It is a fake because the real daemon cannot run here: it needs the system bus,
/// polkit and its own user, and it would act on the machine's real scheduler policy. What it
/// does is what rtkit does for an allowed caller, with the same names and argument types
/// (`rtkit.h`): it answers `RTTimeUSecMax` (x), `MaxRealtimePriority` (i) and `MinNiceLevel` (i)
/// through `org.freedesktop.DBus.Properties.Get`, and on `MakeThreadRealtime(t, u)` checks, as
/// rtkit does, that the thread's process has an `RLIMIT_RTTIME` hard limit of at most
/// `RTTimeUSecMax` and that the priority is at most the maximum, then really sets the thread to
/// `SCHED_RR | SCHED_RESET_ON_FORK` (this test process is root); `MakeThreadHighPriority(t, i)`
/// sets the thread's nice level if it is not below the minimum. Refusals are D-Bus errors.
///
/// Thread-safety: serves on a thread of its own; ``calls`` may be read from any thread;
/// ``stop()`` is idempotent and also runs on deinit.
public final class FakeRealtimeKit: @unchecked Sendable {
    /// A call that reached the fake, with what it answered (nil: done; else the error's name).
    public struct Call: Sendable, Equatable {
        public var method: String
        public var thread: pid_t
        public var priority: Int64
        public var refusal: String?

        public init(method: String, thread: pid_t, priority: Int64, refusal: String?) {
            self.method = method
            self.thread = thread
            self.priority = priority
            self.refusal = refusal
        }
    }

    /// The calls so far, in order.
    public let calls = Watched<[Call]>([])
    public let maxRealtimePriority: Int32
    public let minNiceLevel: Int32
    public let rttimeUSecMax: Int64
    private let connection: OpaquePointer
    private let wake: Int32
    private let stopped = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Owns `org.freedesktop.RealtimeKit1` on `bus` and starts serving.
    public init(bus: PrivateDBus, maxRealtimePriority: Int32 = 20, minNiceLevel: Int32 = -15,
                rttimeUSecMax: Int64 = 200_000) throws {
        self.maxRealtimePriority = maxRealtimePriority
        self.minNiceLevel = minNiceLevel
        self.rttimeUSecMax = rttimeUSecMax
        do {
            connection = try DBusSupport.connect(address: bus.address)
        } catch {
            throw TestSupportError("the fake rtkit cannot connect: \(error.message)")
        }
        wake = cdbus_eventfd()
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let filter: DBusHandleMessageFunction = { _, message, data in
            guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return Unmanaged<FakeRealtimeKit>.fromOpaque(data).takeUnretainedValue().handle(message)
        }
        let owned = dbus_bus_request_name(connection, "org.freedesktop.RealtimeKit1", CDBUS_NAME_FLAG_DO_NOT_QUEUE, &error)
        guard wake >= 0, owned == CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER,
              dbus_connection_add_filter(connection, filter, Unmanaged.passUnretained(self).toOpaque(), nil) != 0 else {
            DBusSupport.close(connection)
            if wake >= 0 { close(wake) }
            throw TestSupportError("the fake rtkit could not own its name on the private bus")
        }
        let thread = Thread { [self] in
            DBusSupport.serve(connection, wakeFD: wake) { stopped.withLock { $0 } }
            finished.signal()
        }
        thread.name = "fake-rtkit"
        thread.start()
    }

    deinit { stop() }

    /// Stops serving and closes the connection (the name goes away).
    public func stop() {
        let first = stopped.withLock { s in
            defer { s = true }
            return !s
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
        finished.wait()
        DBusSupport.close(connection)
        close(wake)
    }

    // MARK: Serving (on the fake's thread)

    private static let interface = "org.freedesktop.RealtimeKit1"

    private func handle(_ message: OpaquePointer) -> DBusHandlerResult {
        if dbus_message_is_method_call(message, "org.freedesktop.DBus.Properties", "Get") != 0 {
            answerProperty(message)
        } else if dbus_message_is_method_call(message, Self.interface, "MakeThreadRealtime") != 0 {
            act(message, "MakeThreadRealtime")
        } else if dbus_message_is_method_call(message, Self.interface, "MakeThreadHighPriority") != 0 {
            act(message, "MakeThreadHighPriority")
        } else {
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        return DBUS_HANDLER_RESULT_HANDLED
    }

    private func answerProperty(_ message: OpaquePointer) {
        var iter = DBusMessageIter()
        var strings: [String] = []
        if dbus_message_iter_init(message, &iter) != 0 {
            repeat {
                guard dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_STRING else { break }
                var p: UnsafePointer<CChar>?
                dbus_message_iter_get_basic(&iter, &p)
                strings.append(p.map { String(cString: $0) } ?? "")
            } while dbus_message_iter_next(&iter) != 0
        }
        guard strings.count == 2, strings[0] == Self.interface else {
            return refuse(message, "org.freedesktop.DBus.Error.InvalidArgs", "Get(s interface, s name) of \(Self.interface)")
        }
        guard let reply = dbus_message_new_method_return(message) else { return }
        defer { dbus_message_unref(reply) }
        var out = DBusMessageIter(), variant = DBusMessageIter()
        dbus_message_iter_init_append(reply, &out)
        switch strings[1] {
        case "RTTimeUSecMax":
            var v = rttimeUSecMax
            dbus_message_iter_open_container(&out, CDBUS_TYPE_VARIANT, "x", &variant)
            dbus_message_iter_append_basic(&variant, CDBUS_TYPE_INT64, &v)
        case "MaxRealtimePriority", "MinNiceLevel":
            var v = strings[1] == "MinNiceLevel" ? minNiceLevel : maxRealtimePriority
            dbus_message_iter_open_container(&out, CDBUS_TYPE_VARIANT, "i", &variant)
            dbus_message_iter_append_basic(&variant, CDBUS_TYPE_INT32, &v)
        default:
            return refuse(message, "org.freedesktop.DBus.Error.UnknownProperty", "no property \(strings[1])")
        }
        dbus_message_iter_close_container(&out, &variant)
        dbus_connection_send(connection, reply, nil)
    }

    private func act(_ message: OpaquePointer, _ method: String) {
        var iter = DBusMessageIter()
        var thread: UInt64 = 0
        var priority: Int64 = 0
        guard dbus_message_iter_init(message, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_UINT64 else {
            return refuse(message, "org.freedesktop.DBus.Error.InvalidArgs", "\(method)(t thread, …)")
        }
        dbus_message_iter_get_basic(&iter, &thread)
        let realtime = method == "MakeThreadRealtime"
        guard dbus_message_iter_next(&iter) != 0,
              dbus_message_iter_get_arg_type(&iter) == (realtime ? CDBUS_TYPE_UINT32 : CDBUS_TYPE_INT32) else {
            return refuse(message, "org.freedesktop.DBus.Error.InvalidArgs", realtime ? "MakeThreadRealtime(t, u)" : "MakeThreadHighPriority(t, i)")
        }
        if realtime {
            var p: UInt32 = 0
            dbus_message_iter_get_basic(&iter, &p)
            priority = Int64(p)
        } else {
            var p: Int32 = 0
            dbus_message_iter_get_basic(&iter, &p)
            priority = Int64(p)
        }
        let tid = pid_t(truncatingIfNeeded: thread)
        var refusal: (name: String, text: String)?
        if realtime {
            if priority > Int64(maxRealtimePriority) || priority < 1 {
                refusal = ("org.freedesktop.DBus.Error.AccessDenied", "priority \(priority) above \(maxRealtimePriority)")
            } else if let hard = Self.rttimeHardLimit(of: tid), hard <= rttimeUSecMax {
                var param = sched_param(sched_priority: Int32(priority))
                if sched_setscheduler(tid, 2 | 0x4000_0000, &param) != 0 {
                    refusal = ("org.freedesktop.DBus.Error.Failed", String(cString: strerror(errno)))
                }
            } else {
                refusal = ("org.freedesktop.DBus.Error.AccessDenied", "RLIMIT_RTTIME not set to at most \(rttimeUSecMax) µs")
            }
        } else if priority < Int64(minNiceLevel) {
            refusal = ("org.freedesktop.DBus.Error.AccessDenied", "nice \(priority) below \(minNiceLevel)")
        } else if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(tid), Int32(priority)) != 0 {
            refusal = ("org.freedesktop.DBus.Error.Failed", String(cString: strerror(errno)))
        }
        calls.update { $0.append(Call(method: method, thread: tid, priority: priority, refusal: refusal?.name)) }
        if let refusal { return refuse(message, refusal.name, refusal.text) }
        guard let reply = dbus_message_new_method_return(message) else { return }
        dbus_connection_send(connection, reply, nil)
        dbus_message_unref(reply)
    }

    private func refuse(_ message: OpaquePointer, _ name: String, _ text: String) {
        guard let reply = dbus_message_new_error(message, name, text) else { return }
        dbus_connection_send(connection, reply, nil)
        dbus_message_unref(reply)
    }

    /// The hard `RLIMIT_RTTIME` of the process the thread `tid` belongs to, in µs (nil: unlimited
    /// or unreadable), from `/proc/TID/limits` ("Max realtime timeout").
    static func rttimeHardLimit(of tid: pid_t) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(tid)/limits", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max realtime timeout") }) else { return nil }
        let fields = line.dropFirst("Max realtime timeout".count).split(separator: " ", omittingEmptySubsequences: true)
        return fields.count >= 2 ? Int64(fields[1]) : nil
    }
}
