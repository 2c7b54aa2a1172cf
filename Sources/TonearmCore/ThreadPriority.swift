// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc

/// What ``raiseCurrentThreadPriority(_:)`` obtained for the calling thread.
package enum ThreadPriorityGrant: Sendable, Equatable {
    /// `SCHED_RR` at this static priority (with `SCHED_RESET_ON_FORK`).
    case realtime(priority: Int32)
    /// `SCHED_OTHER` at this nice level (lower than the process's).
    case nice(Int32)
    /// Nothing changed: the kernel refused both (no `CAP_SYS_NICE`, `RLIMIT_RTPRIO` and
    /// `RLIMIT_NICE` too low), or `TONEARM_REALTIME=0` is set.
    case unchanged
}

/// How far a thread of the playback path asks to be raised.
package enum ThreadPriorityRequest: Sendable, Equatable {
    /// The thread that renders into the sound server's buffer: `SCHED_RR` priority
    /// `realtimePriority`, else nice −11 (what PulseAudio and PipeWire ask rtkit for).
    case render
    /// A thread that decodes ahead into the render ring: nice −10. Not real-time: decoding a
    /// second ahead at full speed must not take the CPU from everything else.
    case decoder

    /// The `SCHED_RR` priority asked for by ``render`` (rtkit's default ceiling is 20).
    package static let realtimePriority: Int32 = 10
    /// The `SCHED_RR` priority asked for, or nil when the thread asks only for a nice level.
    package var realtimePriority: Int32? { self == .render ? Self.realtimePriority : nil }
    /// The nice level asked for when real time is not asked for or not given.
    package var niceLevel: Int32 { self == .render ? -11 : -10 }
}

/// Raises a thread of this process on its behalf when the kernel refused the thread itself (an
/// unprivileged desktop user): given the request and the kernel's id of the calling thread, it
/// returns what it obtained, or nil for nothing. RealtimeKit over D-Bus is the one there is
/// (`RealtimeKit.broker` in TonearmDBus). Called on the thread being raised, as it starts; may
/// block it briefly (a bounded round trip to a system service).
package typealias ThreadPriorityBroker = @Sendable (_ request: ThreadPriorityRequest, _ thread: pid_t) -> ThreadPriorityGrant?

// Linux's values (glibc declares SCHED_RESET_ON_FORK only under _GNU_SOURCE).
private let schedRR: Int32 = 2
private let schedResetOnFork: Int32 = 0x4000_0000

/// Raises the calling thread's scheduling priority, once, when a playback thread starts (never
/// from a render callback: it makes system calls). Tries `SCHED_RR` (for ``ThreadPriorityRequest/render``),
/// and when the kernel refuses it, asks `broker` (RealtimeKit, for a desktop user who is not root);
/// then a lower nice level, and falls back silently to leaving the thread as it is; with
/// `TONEARM_DEBUG_PRIORITY` set in the environment it prints what it obtained to standard error.
/// `TONEARM_REALTIME=0` turns it off (the thread keeps the process's policy and nice level).
///
/// Linux applies `sched_setscheduler(0, …)` and `setpriority(PRIO_PROCESS, 0, …)` to the calling
/// thread only. `SCHED_RESET_ON_FORK` keeps a child process from inheriting the policy.
///
/// Thread-safety: changes only the calling thread.
@discardableResult
package func raiseCurrentThreadPriority(_ request: ThreadPriorityRequest, name: String,
                                        broker: ThreadPriorityBroker? = nil) -> ThreadPriorityGrant {
    if let v = getenv("TONEARM_REALTIME"), String(cString: v) == "0" {
        debugPriority(name, "left as it is (TONEARM_REALTIME=0)")
        return .unchanged
    }
    var refusal = ""
    if let rt = request.realtimePriority {
        var param = sched_param(sched_priority: rt)
        if sched_setscheduler(0, schedRR | schedResetOnFork, &param) == 0 {
            debugPriority(name, "SCHED_RR priority \(rt)")
            return .realtime(priority: rt)
        }
        refusal = "SCHED_RR refused (\(String(cString: strerror(errno)))); "
        if let broker, let granted = broker(request, currentKernelThreadID()), granted != .unchanged {
            debugPriority(name, refusal + "\(describe(granted)) through the broker")
            return granted
        }
    }
    let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    let nice = request.niceLevel
    if nice < current, setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0 {
        debugPriority(name, refusal + "nice \(nice)")
        return .nice(nice)
    }
    debugPriority(name, refusal + "nice \(nice) refused (\(String(cString: strerror(errno)))): left as it is")
    return .unchanged
}

/// The calling thread's scheduling policy and nice level, as the kernel reports them
/// (`sched_getscheduler` without the reset-on-fork flag; `getpriority`).
package func currentThreadScheduling() -> (policy: Int32, realtime: Bool, nice: Int32) {
    let policy = sched_getscheduler(0) & ~schedResetOnFork
    return (policy, policy == schedRR, getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
}

/// The kernel's id of the calling thread (what `gettid()` returns; glibc declares it only under
/// `_GNU_SOURCE`, so it is read from `/proc/thread-self`, a link to `/proc/PID/task/TID`).
/// 0 when /proc is not mounted.
package func currentKernelThreadID() -> pid_t {
    var buffer = [CChar](repeating: 0, count: 64)
    let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard n > 0 else { return 0 }
    let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return target.split(separator: "/").last.flatMap { pid_t($0) } ?? 0
}

private func describe(_ grant: ThreadPriorityGrant) -> String {
    switch grant {
    case .realtime(let p): "SCHED_RR priority \(p)"
    case .nice(let n): "nice \(n)"
    case .unchanged: "nothing"
    }
}

private func debugPriority(_ name: String, _ text: String) {
    guard getenv("TONEARM_DEBUG_PRIORITY") != nil else { return }
    let line = "tonearm: thread \(name): \(text)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}
