// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization

/// Runs an action once for a burst of requests, on a serial queue of its own.
///
/// A request while a run is pending (asked for, not yet begun) joins it; a request once the run
/// has begun asks for a new one. The action should read the state it acts on when it runs, not
/// when it was requested, so that the last request's state is always what is acted on — the
/// action of the first request of a burst is the one that runs.
///
/// Used for the queue's saves (each writes the whole queue: 10,000 songs added one by one must not
/// be 10,000 saves of a growing queue) and the daemon's `malloc_trim` after large answers.
///
/// Thread-safe: ``request(_:)`` may be called from any thread and never blocks beyond a short
/// lock; the actions run one at a time on ``queue``. Not for the render thread (it takes a lock
/// and may allocate).
public final class Coalescer: Sendable {
    /// The serial queue the actions run on (tests may suspend it to build up a burst).
    public let queue: DispatchQueue
    /// How long after the first request of a burst its run starts: `0` runs as soon as the queue
    /// is free; a delay gathers the requests that come in meanwhile.
    public let delay: Double
    private let pending = Mutex(false)
    private let runs = Mutex(0)
    private let observer = Mutex<(@Sendable () -> Void)?>(nil)

    public init(label: String, delay: Double = 0) {
        queue = DispatchQueue(label: label)
        self.delay = delay
    }

    /// Asks for `action` to run; joins the pending run if there is one (then `action` is dropped).
    public func request(_ action: @escaping @Sendable () -> Void) {
        let schedule = pending.withLock { p in
            if p { return false }
            p = true
            return true
        }
        guard schedule else { return }
        let run: @Sendable () -> Void = {
            // Cleared before the action reads its state: a change after this point asks for a new run.
            self.pending.withLock { $0 = false }
            action()
            self.runs.withLock { $0 += 1 }
            self.observer.withLock { $0 }?()
        }
        if delay > 0 {
            queue.asyncAfter(deadline: .now() + delay, execute: run)
        } else {
            queue.async(execute: run)
        }
    }

    /// Returns once every run requested so far has ended. Must not be called on ``queue``.
    /// With a delay, this waits for it.
    public func flush() {
        if delay > 0 {
            let done = DispatchSemaphore(value: 0)
            queue.asyncAfter(deadline: .now() + delay) { done.signal() }
            done.wait()
        }
        queue.sync {}
    }

    /// Whether a run has been asked for and has not begun.
    public var isPending: Bool { pending.withLock { $0 } }

    /// Runs ended so far.
    public var count: Int { runs.withLock { $0 } }

    /// Called on ``queue`` after each run (for tests and counters); `nil` for none.
    public func onRun(_ body: (@Sendable () -> Void)?) { observer.withLock { $0 = body } }
}
