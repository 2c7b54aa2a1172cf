// SPDX-License-Identifier: GPL-3.0-or-later
import CExecutorHook
import NIOCore
import NIOPosix

/// Swift concurrency's global executor for the `tonearm daemon` process: its tasks run on event
/// loops of its own (NIO's, `epoll` with a `timerfd` for `Task.sleep`) instead of libdispatch's
/// global queues.
///
/// Why: on Linux, libdispatch watches its non-overcommit worker pool — the one Swift concurrency's
/// default global executor and `DispatchQueue.global()` use — with a 1 s timer on its manager
/// thread (`_dispatch_workq_monitor_pools`), armed when the first such worker starts and never
/// stopped. An idle daemon that ever ran a task on that pool woke once a second forever. Serial
/// `DispatchQueue`s run on the overcommit pool, which is not watched; so with the tasks here and
/// the player's timers on serial queues, an idle daemon arms no timer at all.
///
/// The loops: as many as the machine has cores (the width of Swift's own cooperative pool), made
/// when the first job comes. A job goes to the loop it was enqueued from when that is one of them
/// (no thread hop), else to the next.
public enum DaemonExecutor {
    /// The loops the global executor's jobs run on.
    static let loops = MultiThreadedEventLoopGroup(numberOfThreads: max(1, System.coreCount))

    /// Sets the hooks. Call once, first thing in `main`, on the main thread, before any task has
    /// left the main actor (a job already on libdispatch's pool stays there). Returns false when
    /// another hook was already set (then nothing changed). Never throws.
    @discardableResult
    public static func install() -> Bool {
        tonearm_executor_hook_install({ job in
            DaemonExecutor.run(UnownedJob.from(job), after: 0)
        }, { job, nanoseconds in
            DaemonExecutor.run(UnownedJob.from(job), after: nanoseconds)
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

    /// Whether ``install()`` set the hooks in this process.
    public static var isInstalled: Bool { tonearm_executor_hook_installed() }

    private static func run(_ job: UnownedJob, after nanoseconds: UInt64) {
        let loop = loops.any()
        if nanoseconds == 0 {
            loop.executor.enqueue(ExecutorJob(job))
        } else {
            loop.scheduleTask(in: .nanoseconds(Int64(clamping: nanoseconds))) { loop.executor.enqueue(ExecutorJob(job)) }
        }
    }
}

extension UnownedJob {
    /// The runtime's job pointer as the Swift value (an `UnownedJob` is that one reference).
    fileprivate static func from(_ pointer: UnsafeMutableRawPointer) -> UnownedJob {
        unsafeBitCast(pointer, to: UnownedJob.self)
    }
}
