// SPDX-License-Identifier: GPL-3.0-or-later
import CExecutorHook
import Foundation
import TonearmCore

/// Swift concurrency's global executor for the `tonearm daemon` process: its tasks run on a pool
/// of threads of its own instead of libdispatch's global queues.
///
/// Why: on Linux, libdispatch watches its non-overcommit worker pool — the one Swift concurrency's
/// default global executor and `DispatchQueue.global()` use — with a 1 s timer on its manager
/// thread (`_dispatch_workq_monitor_pools`), armed when the first such worker starts and never
/// stopped. An idle daemon that had ever run a task there woke once a second forever. Serial
/// `DispatchQueue`s run on the overcommit pool, which is not watched; so with the tasks here and
/// the players' timers on a serial queue, an idle daemon arms no timer at all.
///
/// The pool (event-driven, nothing periodic): jobs wait in one list, taken by whichever thread is
/// free; a thread with nothing to do sleeps on a condition variable with no timeout, unless a
/// delayed job (`Task.sleep`) is due, then until it is due. A job that comes while every thread is
/// busy starts one more thread (up to ``maxThreads``), so tasks that block (a semaphore, a
/// synchronous read) cannot starve the others — what libdispatch's monitor did once a second.
public final class DaemonExecutor: TaskExecutor, @unchecked Sendable {
    /// The process's pool (threads are made when jobs come).
    static let shared = DaemonExecutor()

    /// Most threads the pool starts.
    let maxThreads: Int

    /// A pool of at most `maxThreads` threads (the process's: eight, or four a core).
    init(maxThreads: Int = max(8, 4 * ProcessInfo.processInfo.activeProcessorCount)) {
        self.maxThreads = max(1, maxThreads)
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var ready: [Work] = []
    private var readyHead = 0
    private var delayed: [(due: UInt64, work: Work)] = []
    private var threads = 0
    private var idle = 0
    /// Idle threads signalled and not yet awake (each takes a job when it wakes).
    private var signalled = 0

    /// Sets the hooks. Call once, first thing in `main`, on the main thread, before any task has
    /// left the main actor (a job already on libdispatch's pool stays there). Returns false when
    /// another hook was already set (then nothing changed). Never throws.
    @discardableResult
    public static func install() -> Bool {
        tonearm_executor_hook_install({ job in
            DaemonExecutor.shared.add(.job(unsafeBitCast(job, to: UnownedJob.self)), after: 0)
        }, { job, nanoseconds in
            DaemonExecutor.shared.add(.job(unsafeBitCast(job, to: UnownedJob.self)), after: nanoseconds)
        })
    }

    /// What `tonearm daemon` sets up first, on the main thread, before any task leaves the main
    /// actor and before its threads start: this executor (``install()``) and at most two malloc
    /// arenas (``MemoryTrimmer/limitArenas(to:)``). Returns whether the executor was installed.
    @discardableResult
    public static func prepareProcess() -> Bool {
        MemoryTrimmer.limitArenas(to: 2)
        return install()
    }

    /// Runs `job` on the pool (as a `TaskExecutor`: what `install()`'s hooks hand it is the same);
    /// from any thread, never blocks.
    public func enqueue(_ job: consuming ExecutorJob) {
        add(.job(UnownedJob(job)), after: 0)
    }

    /// What a thread of the pool runs: a job of Swift concurrency, or a block (the pool's tests).
    enum Work: Sendable {
        case job(UnownedJob)
        case block(@Sendable () -> Void)
    }

    /// The threads the pool has started, and how many of them wait for work.
    var threadCounts: (threads: Int, idle: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (threads, idle)
    }

    /// Queues `work` to run at once (0) or after `nanoseconds`; from any thread.
    func add(_ work: Work, after nanoseconds: UInt64) {
        condition.lock()
        if nanoseconds == 0 {
            ready.append(work)
        } else {
            let due = Self.now() &+ nanoseconds
            let at = delayed.firstIndex { $0.due > due } ?? delayed.endIndex
            delayed.insert((due, work), at: at)
        }
        // A waiting thread that no earlier job has claimed takes it; else one more thread.
        var start = false
        if idle > signalled {
            signalled += 1
            condition.signal()
        } else if threads < maxThreads {
            threads += 1
            start = true
        } else {
            condition.signal()  // a delayed job may now be due before the one a thread waits for
        }
        condition.unlock()
        if start {
                Thread { [self] in
                nameCurrentThread("tonearm-tasks")
                serve()
            }.start()
        }
    }

    private func serve() {
        let me = asUnownedTaskExecutor()
        condition.lock()
        while true {
            let now = Self.now()
            while let first = delayed.first, first.due <= now {
                delayed.removeFirst()
                ready.append(first.work)
            }
            if readyHead < ready.count {
                let work = ready[readyHead]
                readyHead += 1
                if readyHead == ready.count {
                    ready.removeAll(keepingCapacity: ready.count <= 64)
                    readyHead = 0
                }
                condition.unlock()
                switch work {
                case .job(let job): job.runSynchronously(on: me)
                case .block(let block): block()
                }
                condition.lock()
                continue
            }
            idle += 1
            if let first = delayed.first {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(first.due - now) / 1e9))
            } else {
                condition.wait()
            }
            idle -= 1
            if signalled > 0 { signalled -= 1 }
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    private static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
