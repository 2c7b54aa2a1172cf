// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A thread's scheduling as the kernel reports it in /proc/self/task/TID/stat: `policy` (field 41:
/// 0 SCHED_OTHER, 2 SCHED_RR, 3 SCHED_BATCH), `rtPriority` (field 40) and `nice` (field 19).
public struct ThreadScheduling: Sendable, Equatable {
    public let tid: Int
    public let policy: Int
    public let rtPriority: Int
    public let nice: Int

    /// Parses one stat line (the fields after the `comm` field's closing parenthesis).
    init?(tid: Int, stat: String) {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        // Field 3 (state) is the first after the parenthesis.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 38, let policy = Int(fields[38]), let rt = Int(fields[37]), let nice = Int(fields[16])
        else { return nil }
        self.tid = tid
        self.policy = policy
        self.rtPriority = rt
        self.nice = nice
    }

    /// The scheduling of every thread of this process named `name` (/proc/self/task/*/comm).
    public static func threads(named name: String) -> [ThreadScheduling] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { t -> ThreadScheduling? in
            guard let tid = Int(t),
                  let comm = try? String(contentsOfFile: "/proc/self/task/\(t)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .newlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(t)/stat", encoding: .utf8)
            else { return nil }
            return ThreadScheduling(tid: tid, stat: stat)
        }
    }

    /// The scheduling of the thread `tid` of the process `pid` (/proc/PID/task/TID/stat).
    public static func thread(_ tid: Int, of pid: pid_t = getpid()) -> ThreadScheduling? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8) else { return nil }
        return ThreadScheduling(tid: tid, stat: stat)
    }

    /// The calling thread's scheduling (/proc/thread-self/stat).
    public static func current() -> ThreadScheduling? {
        guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
              let tid = Int(stat.prefix { $0 != " " }) else { return nil }
        return ThreadScheduling(tid: tid, stat: stat)
    }

    /// Whether this process may raise a thread to SCHED_RR priority 10 and nice −11: root (with
    /// CAP_SYS_NICE, as here and in CI) or RLIMIT_RTPRIO and RLIMIT_NICE high enough.
    public static var mayRaise: Bool {
        if geteuid() == 0 { return true }
        var rt = rlimit(), nice = rlimit()
        // RLIMIT_RTPRIO and RLIMIT_NICE (glibc hides them without _GNU_SOURCE).
        getrlimit(__rlimit_resource_t(14), &rt)
        getrlimit(__rlimit_resource_t(13), &nice)
        return rt.rlim_cur >= 10 && nice.rlim_cur >= 31
    }
}
