// SPDX-License-Identifier: GPL-3.0-or-later
// Small pieces the drivers share: a monotonic clock, a condition variable on that clock,
// a joinable thread, and the event channel. The clock and the event channel are `package`: the
// drivers in other modules of the package (PulseAudio, in TonearmOutput) use them too.
import Glibc
import Synchronization
import TonearmCore

/// Nanoseconds on `CLOCK_MONOTONIC`.
@inline(__always)
package func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// `errno` as text.
func errnoDescription(_ code: Int32) -> String {
    guard let s = strerror(code) else { return "errno \(code)" }
    return String(cString: s)
}

/// A pthread mutex with a condition variable whose timed waits use `CLOCK_MONOTONIC`, so that
/// absolute deadlines do not move when the wall clock is set.
///
/// Thread-safety: usable from any thread; `wait` must be called with the lock held.
///
/// `@unchecked Sendable`: a pthread mutex and condition, made for use from any thread; the
/// pointers never change after `init`.
final class DriverCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func broadcast() { pthread_cond_broadcast(cond) }
    /// Waits for a broadcast (or a spurious wake-up). Lock held.
    func wait() { pthread_cond_wait(cond, mutex) }
    /// Waits for a broadcast or until `deadline` (monotonic nanoseconds). Lock held.
    func wait(untilNanoseconds deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(cond, mutex, &ts)
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A joinable POSIX thread running one closure.
///
/// Thread-safety: `join` is called once, by the thread that started it (the control plane).
///
/// `@unchecked Sendable`: `tid` is written once in `init`; `joined` only by `join`, which the one
/// control thread calls.
final class DriverThread: @unchecked Sendable {
    private var tid = pthread_t()
    private var joined = false

    private final class Body {
        let run: () -> Void
        init(run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept; the name is also
    /// used in error messages).
    init(name: String, body: @escaping @Sendable () -> Void) throws {
        let box = Unmanaged.passRetained(Body(run: {
            nameCurrentThread(name)
            body()
        })).toOpaque()
        let rc = pthread_create(&tid, nil, { arg in
            let b = Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue()
            b.run()
            return nil
        }, box)
        if rc != 0 {
            Unmanaged<Body>.fromOpaque(box).release()
            throw TonearmError.outputUnavailable(driver: name, reason: "cannot start a thread (\(errnoDescription(rc)))")
        }
    }

    /// Whether the caller is this thread.
    var isCurrent: Bool { pthread_equal(tid, pthread_self()) != 0 }

    /// Waits for the thread to end. Does nothing when called on the thread itself (it cannot
    /// wait for itself) or a second time.
    func join() {
        if joined || isCurrent { return }
        joined = true
        pthread_join(tid, nil)
    }
}

/// The `events` stream of a driver. `finish()` ends the current stream (when the driver is
/// closed) and prepares a fresh one for the next `open`.
///
/// Thread-safety: all members may be used from any thread (never from a realtime render path:
/// `yield` allocates).
package final class OutputEventChannel: Sendable {
    private struct Pair: Sendable {
        var stream: AsyncStream<AudioOutputEvent>
        var continuation: AsyncStream<AudioOutputEvent>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream(of: AudioOutputEvent.self) }
    }
    private let pair = Mutex(Pair())

    package init() {}

    deinit { pair.withLock { $0.continuation }.finish() }

    package var stream: AsyncStream<AudioOutputEvent> { pair.withLock { $0.stream } }

    package func yield(_ event: AudioOutputEvent) {
        let c = pair.withLock { $0.continuation }
        c.yield(event)
    }

    package func finish() {
        let old = pair.withLock { p -> AsyncStream<AudioOutputEvent>.Continuation in
            let c = p.continuation
            p = Pair()
            return c
        }
        old.finish()
    }
}

/// Where a driver that pulls on a thread of its own (null, file) is: running, paused (the thread
/// waits on the condition), stopping, or idle.
enum PullRunState { case idle, running, paused, stopping }

/// The run state and thread of a driver that pulls on a thread of its own, with the pause /
/// resume / stop transitions they share. `state` is guarded by `cond`, which the driver also uses
/// for its own fields; `thread` belongs to the control plane.
///
/// `@unchecked Sendable`: `state` is guarded by `cond`; `thread` belongs to the control plane
/// (one thread at a time, as the driver contract says).
final class PullThreadControl: @unchecked Sendable {
    let cond = DriverCondition()
    /// Guarded by `cond`.
    var state = PullRunState.idle
    /// Control plane only.
    var thread: DriverThread?

    /// Holds the thread (it waits on `cond`) until `resume()`.
    func pause() {
        cond.withLock {
            if state == .running { state = .paused }
            cond.broadcast()
        }
    }

    /// Lets a paused thread go on.
    func resume() {
        cond.withLock {
            if state == .paused { state = .running }
            cond.broadcast()
        }
    }

    /// Ends the thread and waits for it (returns at once when called on the thread itself).
    func stop() {
        guard let t = thread else { return }
        cond.withLock {
            if state != .idle { state = .stopping }
            cond.broadcast()
        }
        t.join()
        if t.isCurrent { return }
        thread = nil
        cond.withLock { state = .idle }
    }
}
