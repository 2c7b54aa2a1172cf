// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization

/// A value that some thread changes, and that tests wait on: every ``update(_:)`` wakes exactly
/// the waiters whose condition now holds. Waiting is signalled, never polled; the timeout of a
/// wait is only a deadline after which it fails.
///
/// Thread-safety: all members may be used from any thread. ``update(_:)`` takes a lock and may
/// resume continuations or signal semaphores, so it is for test code (never for a realtime path).
public final class Watched<Value: Sendable>: Sendable {
    private enum Wake {
        case task(CheckedContinuation<Bool, Never>)
        case thread(DispatchSemaphore)
    }

    private struct Waiter {
        let id: Int
        let condition: @Sendable (Value) -> Bool
        let wake: Wake
    }

    private struct State {
        var value: Value
        var waiters: [Waiter] = []
        var nextID = 0
        /// Ids of async waits cancelled before their continuation was registered.
        var cancelled: Set<Int> = []
    }

    private let state: Mutex<State>

    public init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    /// The current value.
    public var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes the waiters whose condition now holds.
    public func update(_ change: (inout Value) -> Void) {
        let ready = state.withLock { s -> [Waiter] in
            change(&s.value)
            let value = s.value
            var ready: [Waiter] = []
            s.waiters.removeAll { w in
                guard w.condition(value) else { return false }
                ready.append(w)
                return true
            }
            return ready
        }
        for w in ready { Self.wake(w.wake, true) }
    }

    /// Waits until `condition` holds (now or after some ``update(_:)``); false once `timeout`
    /// seconds have passed without it. Suspends the task; blocks no thread.
    public func wait(timeout: Double, until condition: @escaping @Sendable (Value) -> Bool) async -> Bool {
        // The deadline is a sleeping child task racing the signalled wait: whichever finishes
        // first decides, and the other is cancelled (a cancelled wait gives up its slot).
        let met = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitIndefinitely(until: condition) }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return met || condition(value)
    }

    /// Blocks the calling thread until `condition` holds, or `timeout` seconds (nil: no limit).
    /// For synchronous test helpers; async tests use ``wait(timeout:until:)``.
    public func waitBlocking(timeout: Double?, until condition: @escaping @Sendable (Value) -> Bool) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let id = state.withLock { s -> Int? in
            if condition(s.value) { return nil }
            s.nextID += 1
            s.waiters.append(Waiter(id: s.nextID, condition: condition, wake: .thread(semaphore)))
            return s.nextID
        }
        guard let id else { return true }
        let deadline: DispatchTime = timeout.map { .now() + $0 } ?? .distantFuture
        if semaphore.wait(timeout: deadline) == .success { return true }
        // Timed out, unless an update took the waiter in the meantime (then its signal is due).
        let stillWaiting = state.withLock { s -> Bool in
            guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return false }
            s.waiters.remove(at: i)
            return true
        }
        if !stillWaiting { semaphore.wait() }
        return !stillWaiting
    }

    /// Returns true when `condition` holds, false when the task is cancelled first.
    private func waitIndefinitely(until condition: @escaping @Sendable (Value) -> Bool) async -> Bool {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let immediate = state.withLock { s -> Bool? in
                    if condition(s.value) { return true }
                    if s.cancelled.remove(id) != nil { return false }
                    s.waiters.append(Waiter(id: id, condition: condition, wake: .task(c)))
                    return nil
                }
                if let immediate { c.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let i = s.waiters.firstIndex(where: { $0.id == id }) else {
                    s.cancelled.insert(id)
                    return nil
                }
                return s.waiters.remove(at: i)
            }
            if let waiter { Self.wake(waiter.wake, false) }
        }
    }

    private static func wake(_ wake: Wake, _ result: Bool) {
        switch wake {
        case .task(let c): c.resume(returning: result)
        case .thread(let s): s.signal()
        }
    }
}
