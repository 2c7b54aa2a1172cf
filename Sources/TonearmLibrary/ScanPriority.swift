// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc

/// The scheduling of a library scan's threads (the walk's, the readers', the read-ahead's and
/// the writer's): `SCHED_BATCH`, the nice level left as it is. A scan is a long job in the
/// background: under `SCHED_BATCH` its threads never preempt a thread that wakes (playback's
/// decoder, the terminal's), and preempt each other less (longer slices, fewer context switches
/// among six readers and a writer on two cores). Playback's own threads raise themselves the
/// other way (TonearmCore's `raiseCurrentThreadPriority`).
///
/// Any thread may put itself in `SCHED_BATCH` (no privilege). With `TONEARM_DEBUG_PRIORITY` set
/// in the environment, each thread prints what it obtained to standard error, as playback's do.
enum ScanPriority {
    /// Linux's `SCHED_BATCH` (glibc declares it only under _GNU_SOURCE).
    static let batch: Int32 = 3

    /// Puts the calling thread in `SCHED_BATCH`; returns whether the kernel took it. Called
    /// once by each scan thread as it starts. Changes only the calling thread.
    @discardableResult
    static func enter(_ name: String) -> Bool {
        var param = sched_param(sched_priority: 0)
        let ok = sched_setscheduler(0, batch, &param) == 0
        if getenv("TONEARM_DEBUG_PRIORITY") != nil {
            let text = ok ? "SCHED_BATCH" : "SCHED_BATCH refused (\(String(cString: strerror(errno)))): left as it is"
            let line = "tonearm: thread \(name): \(text)\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
        }
        return ok
    }
}
