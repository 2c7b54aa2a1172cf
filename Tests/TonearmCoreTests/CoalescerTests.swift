// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization
import Testing
@testable import TonearmCore

@Suite struct CoalescerTests {
    /// A burst of requests while a run is pending is one run, and the run acts on the state as
    /// it is when it runs (the last request's).
    @Test func aBurstIsOneRunOfTheLastState() {
        let runs = Coalescer(label: "test.coalescer")
        let state = Mutex(0)
        let seen = Mutex<[Int]>([])
        runs.queue.suspend()
        for i in 1...1000 {
            state.withLock { $0 = i }
            runs.request { seen.withLock { $0.append(state.withLock { $0 }) } }
        }
        #expect(runs.isPending)
        runs.queue.resume()
        runs.flush()
        #expect(seen.withLock { $0 } == [1000])
        #expect(runs.count == 1)
        #expect(!runs.isPending)
        // A request after that run began is a run of its own.
        state.withLock { $0 = 1001 }
        runs.request { seen.withLock { $0.append(state.withLock { $0 }) } }
        runs.flush()
        #expect(seen.withLock { $0 } == [1000, 1001])
        #expect(runs.count == 2)
    }

    /// A request made while the action runs asks for another run after it: nothing that changed
    /// during a run is lost.
    @Test func aRequestDuringARunIsAnotherRun() {
        let runs = Coalescer(label: "test.coalescer.during")
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        runs.request { inside.signal(); release.wait() }
        inside.wait()
        #expect(!runs.isPending)
        runs.request {}
        #expect(runs.isPending)
        release.signal()
        runs.flush()
        #expect(runs.count == 2)
    }

    /// With a delay, the requests that come in meanwhile join the first; the observer hears each
    /// run, and `flush` waits for the delayed one.
    @Test func aDelayedRunGathersTheRequestsMeanwhile() {
        let runs = Coalescer(label: "test.coalescer.delay", delay: 0.05)
        let heard = Mutex(0)
        runs.onRun { heard.withLock { $0 += 1 } }
        for _ in 0..<100 { runs.request {} }
        #expect(runs.isPending)
        runs.flush()
        #expect(runs.count == 1)
        #expect(heard.withLock { $0 } == 1)
        #expect(!runs.isPending)
    }
}
