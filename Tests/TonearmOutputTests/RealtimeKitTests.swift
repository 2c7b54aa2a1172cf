// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmDBus
import TonearmTestSupport

/// Tonearm's RealtimeKit client (what the render thread asks when the kernel refuses it real
/// time — a desktop user who is not root) against ``FakeRealtimeKit`` on a private bus: the
/// properties read, `RLIMIT_RTTIME` set as rtkit demands, the thread really made `SCHED_RR` (the
/// fake does what rtkit would), rtkit's ceiling and nice floor honoured, and a clear failure where
/// there is no rtkit or no bus.
@Suite(.serialized) struct RealtimeKitTests {
    /// A thread that waits until released, and its kernel id.
    final class Parked: Sendable {
        let tid = Watched<pid_t>(0)
        let release = DispatchSemaphore(value: 0)
        init() {
            let t = Thread { [tid, release] in
                tid.update { $0 = currentKernelThreadID() }
                release.wait()
            }
            t.start()
            _ = tid.waitBlocking(timeout: 5) { $0 != 0 }
        }
        var scheduling: ThreadScheduling? { ThreadScheduling.thread(Int(tid.value)) }
        deinit { release.signal() }
    }

    /// Runs `body` and puts this process's RLIMIT_RTTIME back as it was (the client lowers it, as
    /// rtkit demands; the other suites in this process keep theirs).
    func keepingTheRealtimeLimit<T>(_ body: () throws -> T) rethrows -> T {
        var saved = rlimit()
        getrlimit(__rlimit_resource_t(15), &saved)
        defer { setrlimit(__rlimit_resource_t(15), &saved) }
        return try body()
    }

    @Test func theThreadIsMadeRealTimeWithTheLimitRtkitDemands() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let rtkit = try FakeRealtimeKit(bus: bus)
        defer { rtkit.stop() }
        let parked = Parked()
        let tid = parked.tid.value
        let (grant, limit) = try keepingTheRealtimeLimit { () throws -> (ThreadPriorityGrant, rlimit) in
            let g = try RealtimeKit.raise(.render, thread: tid, address: bus.address, timeout: 5)
            var l = rlimit()
            getrlimit(__rlimit_resource_t(15), &l)
            return (g, l)
        }
        #expect(grant == .realtime(priority: ThreadPriorityRequest.realtimePriority))
        let s = try #require(parked.scheduling)
        #expect(s.policy == 2 && s.rtPriority == Int(ThreadPriorityRequest.realtimePriority), "\(s)")
        #expect(limit.rlim_max <= 200_000 && limit.rlim_cur <= limit.rlim_max, "RLIMIT_RTTIME \(limit.rlim_cur)/\(limit.rlim_max)")
        #expect(rtkit.calls.value == [.init(method: "MakeThreadRealtime", thread: tid, priority: 10, refusal: nil)])
    }

    @Test func rtkitsCeilingIsHonoured() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let rtkit = try FakeRealtimeKit(bus: bus, maxRealtimePriority: 4)
        defer { rtkit.stop() }
        let parked = Parked()
        let grant = try keepingTheRealtimeLimit {
            try RealtimeKit.raise(.render, thread: parked.tid.value, address: bus.address, timeout: 5)
        }
        #expect(grant == .realtime(priority: 4))
        #expect(parked.scheduling?.rtPriority == 4)
    }

    /// rtkit that allows no real time (its maximum 0) still gives a nice level, not below its floor.
    @Test func withoutRealTimeRtkitGivesANiceLevel() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let rtkit = try FakeRealtimeKit(bus: bus, maxRealtimePriority: 0, minNiceLevel: -5)
        defer { rtkit.stop() }
        let parked = Parked()
        let grant = try keepingTheRealtimeLimit {
            try RealtimeKit.raise(.render, thread: parked.tid.value, address: bus.address, timeout: 5)
        }
        #expect(grant == .nice(-5))
        let s = try #require(parked.scheduling)
        #expect(s.policy == 0 && s.nice == -5, "\(s)")
        #expect(rtkit.calls.value.map(\.method) == ["MakeThreadHighPriority"])
    }

    @Test func withoutRtkitOrABusItSaysWhy() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let tid = currentKernelThreadID()
        #expect(throws: RealtimeKit.Failure.self) {
            try RealtimeKit.raise(.render, thread: tid, address: bus.address, timeout: 5)
        }
        do {
            _ = try RealtimeKit.raise(.render, thread: tid, address: bus.address, timeout: 5)
        } catch {
            #expect(error.description.contains("ServiceUnknown"), "\(error)")
        }
        do {
            _ = try RealtimeKit.raise(.render, thread: tid, address: "unix:path=/nonexistent/tonearm-bus", timeout: 5)
            Issue.record("a missing bus was not reported")
        } catch {
            #expect(error.description.contains("no system bus at unix:path=/nonexistent/tonearm-bus"), "\(error)")
        }
        #expect(ThreadScheduling.current()?.policy == 0)
    }

    /// The broker the render thread is given: asked only when the kernel refused the thread
    /// itself. Here (root) the kernel grants it, and rtkit is not asked.
    @Test func theBrokerIsAskedOnlyWhenTheKernelRefuses() throws {
        guard ThreadScheduling.mayRaise else { return }
        let asked = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        let grant = Mutex(ThreadPriorityGrant.unchanged)
        Thread {
            grant.withLock { $0 = raiseCurrentThreadPriority(.render, name: "test", broker: { _, _ in
                asked.withLock { $0 = true }
                return nil
            }) }
            done.signal()
        }.start()
        done.wait()
        #expect(grant.withLock { $0 } == .realtime(priority: ThreadPriorityRequest.realtimePriority))
        #expect(asked.withLock { $0 } == false)
    }
}
