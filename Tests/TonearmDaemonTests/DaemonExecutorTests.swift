// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import TonearmDaemon

/// The daemon's own pool for Swift concurrency's jobs (``DaemonExecutor``, the global executor of
/// the `tonearm daemon` process; here a private pool given blocks): work that blocks does not
/// starve the work that would release it — what comes while every thread is busy gets a new
/// thread, up to the pool's limit — and delayed work runs, in the order it is due. (That the
/// installed pool leaves an idle daemon with no armed timer is DaemonIdleCLITests'.)
@Suite(.serialized)
struct DaemonExecutorTests {
    @Test func blockedWorkGetsAThreadForTheWorkThatReleasesIt() {
        let pool = DaemonExecutor(maxThreads: 4)
        let gate = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        // Three blocks hold their threads until the fourth signals them.
        for _ in 0..<3 {
            pool.add(.block {
                gate.wait()
                released.signal()
            }, after: 0)
        }
        pool.add(.block { for _ in 0..<3 { gate.signal() } }, after: 0)
        var all = true
        for _ in 0..<3 where released.wait(timeout: .now() + 30) == .timedOut { all = false }
        #expect(all, "the releasing block did not run while three threads were blocked")
        #expect(pool.threadCounts.threads == 4)
    }

    @Test func theThreadsAreReusedAndNeverMoreThanTheLimit() {
        let pool = DaemonExecutor(maxThreads: 2)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<50 { pool.add(.block { done.signal() }, after: 0) }
        var all = true
        for _ in 0..<50 where done.wait(timeout: .now() + 30) == .timedOut { all = false }
        #expect(all)
        #expect(pool.threadCounts.threads <= 2)
    }

    @Test func delayedWorkRunsInTheOrderItIsDue() {
        let pool = DaemonExecutor(maxThreads: 1)
        let order = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        pool.add(.block { order.withLock { $0.append(3) }; done.signal() }, after: 150_000_000)
        pool.add(.block { order.withLock { $0.append(2) }; done.signal() }, after: 50_000_000)
        pool.add(.block { order.withLock { $0.append(1) }; done.signal() }, after: 0)
        var all = true
        for _ in 0..<3 where done.wait(timeout: .now() + 30) == .timedOut { all = false }
        #expect(all)
        #expect(order.withLock { $0 } == [1, 2, 3])
    }
}
