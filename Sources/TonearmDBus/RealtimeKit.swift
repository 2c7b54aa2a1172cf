// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation
import TonearmCore

/// RealtimeKit (`org.freedesktop.RealtimeKit1` on the system bus): the desktop's broker that
/// gives a thread real-time scheduling or a lower nice level when the process itself may not
/// (no `CAP_SYS_NICE`, `RLIMIT_RTPRIO` 0 — an ordinary desktop user). PulseAudio and PipeWire ask
/// it for their own threads; Tonearm asks it for its render thread when the kernel refused the
/// direct `sched_setscheduler` (see ``raiseCurrentThreadPriority(_:name:broker:)``).
///
/// The protocol (rtkit's `rtkit.h`): read the `RTTimeUSecMax`, `MaxRealtimePriority` and
/// `MinNiceLevel` properties; set the process's `RLIMIT_RTTIME` to at most `RTTimeUSecMax`
/// (rtkit refuses a process without that limit — a real-time thread that spins is then stopped by
/// the kernel instead of freezing the desktop); call `MakeThreadRealtime(thread: t, priority: u)`
/// or `MakeThreadHighPriority(thread: t, priority: i)` with the kernel's thread id.
package enum RealtimeKit {
    static let service = "org.freedesktop.RealtimeKit1"
    static let path = "/org/freedesktop/RealtimeKit1"

    /// Why rtkit gave nothing (a message for people; the caller falls back to leaving the thread).
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    /// The system bus's address from `environment`: `DBUS_SYSTEM_BUS_ADDRESS` when set, else the
    /// well-known socket (libdbus's own default).
    package static func systemBusAddress(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let a = environment["DBUS_SYSTEM_BUS_ADDRESS"], !a.isEmpty { return a }
        return "unix:path=/var/run/dbus/system_bus_socket"
    }

    /// The broker ``raiseCurrentThreadPriority(_:name:broker:)`` takes: asks rtkit on the system
    /// bus (at most `timeout` seconds in all) and gives nil when rtkit is absent or refuses.
    package static func broker(timeout: Double = 0.5) -> ThreadPriorityBroker {
        { request, thread in try? raise(request, thread: thread, address: systemBusAddress(), timeout: timeout) }
    }

    /// Asks rtkit at `address` to raise the thread `thread` (a kernel thread id of this process)
    /// as `request` says: `SCHED_RR` at the request's priority capped at rtkit's maximum, else the
    /// request's nice level (not below rtkit's minimum). Blocks the calling thread, at most
    /// `timeout` seconds. Sets the process's `RLIMIT_RTTIME` (soft and hard) to rtkit's maximum
    /// when it is unlimited or higher, before asking for real time.
    /// - Throws: ``Failure`` when there is no bus or rtkit, it does not answer in time, or refuses.
    package static func raise(_ request: ThreadPriorityRequest, thread: pid_t, address: String,
                              timeout: Double) throws(Failure) -> ThreadPriorityGrant {
        let call = try Call(address: address, timeout: timeout)
        defer { call.close() }
        var refusal: Failure?
        if let wanted = request.realtimePriority {
            do throws(Failure) {
                let ceiling = try call.property("MaxRealtimePriority")
                let rttime = try call.property("RTTimeUSecMax")
                guard ceiling > 0 else { throw Failure(description: "rtkit allows no real-time priority") }
                try limitRealtimeCPU(to: rttime)
                let priority = Int32(min(Int64(wanted), ceiling))
                try call.invoke("MakeThreadRealtime", thread: thread, priority: .unsigned(UInt32(priority)))
                return .realtime(priority: priority)
            } catch {
                refusal = error
            }
        }
        let floor = (try? call.property("MinNiceLevel")) ?? Int64(request.niceLevel)
        let nice = Int32(max(Int64(request.niceLevel), floor))
        guard nice < 0 else { throw refusal ?? Failure(description: "rtkit allows no nice level below 0") }
        do throws(Failure) {
            try call.invoke("MakeThreadHighPriority", thread: thread, priority: .signed(nice))
        } catch {
            throw Failure(description: (refusal.map { "\($0); " } ?? "") + error.description)
        }
        return .nice(nice)
    }

    /// Linux's `RLIMIT_RTTIME` (15; Swift's Glibc module does not bring it).
    static let rlimitRTTime = __rlimit_resource_t(15)

    /// `RLIM_INFINITY` (all bits set; the C macro's `-1` does not import as an unsigned value).
    static let rlimInfinity = rlim_t.max

    /// Sets `RLIMIT_RTTIME` to `microseconds` unless it is already at most that.
    static func limitRealtimeCPU(to microseconds: Int64) throws(Failure) {
        guard microseconds > 0 else { throw Failure(description: "rtkit reports no real-time CPU budget") }
        var limit = rlimit()
        guard getrlimit(rlimitRTTime, &limit) == 0 else {
            throw Failure(description: "getrlimit(RLIMIT_RTTIME): \(String(cString: strerror(errno)))")
        }
        let wanted = rlim_t(microseconds)
        if limit.rlim_max != rlimInfinity && limit.rlim_max <= wanted && limit.rlim_cur <= limit.rlim_max { return }
        var new = rlimit(rlim_cur: min(limit.rlim_cur, wanted), rlim_max: wanted)
        if new.rlim_cur == rlimInfinity { new.rlim_cur = wanted }
        guard setrlimit(rlimitRTTime, &new) == 0 else {
            throw Failure(description: "setrlimit(RLIMIT_RTTIME, \(microseconds) µs): \(String(cString: strerror(errno)))")
        }
    }

    /// One private connection to the bus with a deadline for everything sent on it.
    final class Call {
        let conn: OpaquePointer
        let deadline: ContinuousClock.Instant
        let address: String

        enum Priority { case unsigned(UInt32), signed(Int32) }

        init(address: String, timeout: Double) throws(Failure) {
            self.address = address
            deadline = .now + .seconds(max(0.001, timeout))
            _ = dbus_threads_init_default()
            var error = DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            guard let c = dbus_connection_open_private(address, &error) else {
                throw Failure(description: "no system bus at \(address): \(DBusSupport.text(error, "cannot connect"))")
            }
            dbus_connection_set_exit_on_disconnect(c, 0)
            conn = c
            // Hello by hand (what dbus_bus_register does), to bound it by the deadline.
            guard let hello = dbus_message_new_method_call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                           "org.freedesktop.DBus", "Hello") else {
                close()
                throw Failure(description: "out of memory")
            }
            defer { dbus_message_unref(hello) }
            do {
                dbus_message_unref(try send(hello, to: "the bus"))
            } catch {
                close()
                throw error
            }
        }

        func close() { DBusSupport.close(conn) }

        /// Milliseconds left until the deadline, at least 1 (libdbus reads 0 as "no wait").
        private func remaining() -> Int32 {
            let left = (deadline - .now) / .milliseconds(1)
            return Int32(max(1, min(Double(Int32.max), left.rounded(.up))))
        }

        private func send(_ message: OpaquePointer, to whom: String) throws(Failure) -> OpaquePointer {
            var error = DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            guard let reply = dbus_connection_send_with_reply_and_block(conn, message, remaining(), &error) else {
                let name = error.name.map { String(cString: $0) } ?? ""
                throw Failure(description: "\(whom) at \(address): \(name.isEmpty ? "" : name + ": ")\(DBusSupport.text(error, "no answer"))")
            }
            return reply
        }

        /// An integer property of rtkit's interface (`x` or `i`).
        func property(_ name: String) throws(Failure) -> Int64 {
            guard let m = dbus_message_new_method_call(RealtimeKit.service, RealtimeKit.path,
                                                      "org.freedesktop.DBus.Properties", "Get") else {
                throw Failure(description: "out of memory")
            }
            defer { dbus_message_unref(m) }
            var arguments = DBusMessageIter()
            dbus_message_iter_init_append(m, &arguments)
            guard appendString(RealtimeKit.service, to: &arguments), appendString(name, to: &arguments) else {
                throw Failure(description: "out of memory")
            }
            let reply = try send(m, to: "rtkit")
            defer { dbus_message_unref(reply) }
            var iter = DBusMessageIter(), variant = DBusMessageIter()
            guard dbus_message_iter_init(reply, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_VARIANT else {
                throw Failure(description: "rtkit answered \(name) without a value")
            }
            dbus_message_iter_recurse(&iter, &variant)
            switch dbus_message_iter_get_arg_type(&variant) {
            case CDBUS_TYPE_INT64:
                var v: Int64 = 0
                dbus_message_iter_get_basic(&variant, &v)
                return v
            case CDBUS_TYPE_INT32:
                var v: Int32 = 0
                dbus_message_iter_get_basic(&variant, &v)
                return Int64(v)
            default:
                throw Failure(description: "rtkit answered \(name) with a value of another type")
            }
        }

        private func appendString(_ text: String, to iter: inout DBusMessageIter) -> Bool {
            text.withCString { c in
                var p: UnsafePointer<CChar>? = c
                return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_STRING, &p) != 0
            }
        }

        /// Calls `method(thread: t, priority:)` and waits for its empty reply.
        func invoke(_ method: String, thread: pid_t, priority: Priority) throws(Failure) {
            guard let m = dbus_message_new_method_call(RealtimeKit.service, RealtimeKit.path, RealtimeKit.service, method) else {
                throw Failure(description: "out of memory")
            }
            defer { dbus_message_unref(m) }
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(m, &iter)
            var t = UInt64(thread)
            var ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT64, &t) != 0
            switch priority {
            case .unsigned(var p): ok = ok && dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &p) != 0
            case .signed(var p): ok = ok && dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT32, &p) != 0
            }
            guard ok else { throw Failure(description: "out of memory") }
            dbus_message_unref(try send(m, to: "rtkit's \(method)"))
        }
    }
}
