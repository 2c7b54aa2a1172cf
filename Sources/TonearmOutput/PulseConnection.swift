// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Dispatch
import Synchronization
import TonearmCore
import TonearmDBus

/// One client connection to a PulseAudio server on libpulse's asynchronous API: a
/// `pa_threaded_mainloop` of its own and a context on it, connected and ready. What the playback
/// driver (``PulseOutput``) and the control connection (TonearmSession's `PulseControl`) share:
/// connecting with a deadline, the mainloop lock, waiting for a condition or an operation with a
/// deadline, reporting the loss of the server, subscription events, and the teardown.
///
/// Threading:
/// - `init` and `close()` block the calling thread; `close()` may be called from the mainloop
///   thread (a handler), and then the teardown happens on a dispatch queue.
/// - `onLost` and `onEvent` run on the mainloop thread with the lock held, and must not block.
/// - `wait(atMost:until:)` and `finish(_:atMost:)` are called with the lock held, never on the
///   mainloop thread.
///
/// `@unchecked Sendable`: every `var` is guarded by the mainloop lock (callbacks run with it held;
/// the calls that change state take it), but `mainloop` and `context`, which are set in `init` and
/// cleared by the teardown once the mainloop thread has stopped.
package final class PulseConnection: @unchecked Sendable {
    /// The server (`unix:/path`, `tcp:host`, …); nil for libpulse's default. Never autospawned.
    package let server: String?
    /// How the server is named in messages.
    package let serverText: String

    package private(set) var mainloop: OpaquePointer?
    /// The context, ready when `init` returns; nil after `close()`.
    package private(set) var context: OpaquePointer?
    /// Whether `close()` has begun (lock held): a context that ends now is not a loss.
    package private(set) var closing = false
    private var lossReported = false
    /// Set by the first `close()` (or the deinit): only that caller tears the connection down.
    private let closed = Atomic<Bool>(false)

    /// Called once when the connection fails or the server goes away (not when it is closed), with
    /// libpulse's error text. Mainloop thread, lock held.
    package var onLost: ((String) -> Void)?
    /// Subscription events (facility and type masked out of the event type, and the index), after
    /// a `pa_context_subscribe`. Mainloop thread, lock held.
    package var onEvent: ((pa_subscription_event_type_t, pa_subscription_event_type_t, UInt32) -> Void)?

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ p: UnsafeMutableRawPointer?) -> PulseConnection {
        Unmanaged<PulseConnection>.fromOpaque(p!).takeUnretainedValue()
    }

    /// Connects to `server` as `clientName` (`application.name`) and waits, at most `timeout`
    /// seconds, until the context is ready. Blocks the calling thread. Throws
    /// ``TonearmError/outputUnavailable(driver:reason:)`` (with `driver`) when the main loop or
    /// context cannot be made, the server refuses or does not answer in time; `serverText` names
    /// the server in those messages. `onLost` is set before the connection starts. With `renders`,
    /// the mainloop thread is the one that renders into the stream's buffer: it names itself
    /// `tonearm-pulse` and asks, once as it starts, for real-time scheduling (else a lower nice
    /// level; see ``raiseCurrentThreadPriority(_:name:broker:)``, with RealtimeKit as the broker).
    package init(server: String?, serverText: String, clientName: String, timeout: Double, driver: String,
                 renders: Bool = false, onLost: ((String) -> Void)? = nil) throws {
        self.server = server
        self.serverText = serverText
        self.onLost = onLost
        func unavailable(_ reason: String) -> TonearmError { .outputUnavailable(driver: driver, reason: reason) }
        guard let ml = pa_threaded_mainloop_new() else { throw unavailable("cannot create the PulseAudio main loop") }
        mainloop = ml
        let props = pa_proplist_new()
        pa_proplist_sets(props, tonearm_pa_prop_application_name(), clientName)
        context = pa_context_new_with_proplist(pa_threaded_mainloop_get_api(ml), clientName, props)
        pa_proplist_free(props)
        guard let ctx = context else {
            close()
            throw unavailable("cannot create a PulseAudio context")
        }
        pa_context_set_state_callback(ctx, { c, ud in PulseConnection.from(ud).contextStateChanged(c) }, userdata)
        pa_context_set_subscribe_callback(ctx, { _, t, index, ud in
            let me = PulseConnection.from(ud)
            let facility = pa_subscription_event_type_t(rawValue: t.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue)
            let kind = pa_subscription_event_type_t(rawValue: t.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue)
            me.onEvent?(facility, kind, index)
        }, userdata)
        if pa_context_connect(ctx, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            let reason = "cannot connect to \(serverText): \(errorText)"
            close()
            throw unavailable(reason)
        }
        if pa_threaded_mainloop_start(ml) < 0 {
            close()
            throw unavailable("cannot start the PulseAudio main loop")
        }
        var failure: String?
        pa_threaded_mainloop_lock(ml)
        if renders, let api = pa_threaded_mainloop_get_api(ml) {
            // Runs on the mainloop thread, before any stream exists (so before any render).
            pa_mainloop_api_once(api, { _, _ in
                nameCurrentThread("tonearm-pulse")
                // Where the kernel refuses real time (a desktop user), RealtimeKit is asked, as
                // PulseAudio and PipeWire ask it for their own threads.
                raiseCurrentThreadPriority(.render, name: "tonearm-pulse", broker: RealtimeKit.broker())
            }, nil)
        }
        let timedOut = wait(atMost: timeout) { pa_context_get_state(ctx) == PA_CONTEXT_READY }
        if pa_context_get_state(ctx) != PA_CONTEXT_READY {
            if tonearm_pa_context_is_good(pa_context_get_state(ctx)) == 0 {
                failure = "cannot connect to \(serverText): \(errorText)"
            } else if timedOut {
                failure = "\(serverText) did not answer within \(timeout) s"
            }
        }
        pa_threaded_mainloop_unlock(ml)
        if let failure {
            close()
            throw unavailable(failure)
        }
    }

    deinit {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { teardown() }
    }

    /// libpulse's last error as text. Lock held.
    package var errorText: String {
        guard let context else { return "no connection" }
        return String(cString: pa_strerror(pa_context_errno(context)))
    }

    /// Whether the context is ready (not failed, not closed). Lock held.
    package var isReady: Bool {
        context.map { pa_context_get_state($0) == PA_CONTEXT_READY } ?? false
    }

    /// Whether the caller is the mainloop thread.
    package var onMainloopThread: Bool {
        mainloop.map { pa_threaded_mainloop_in_thread($0) != 0 } ?? false
    }

    /// Runs `body` with the mainloop lock held (directly when on the mainloop thread).
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        guard let ml = mainloop, pa_threaded_mainloop_in_thread(ml) == 0 else { return try body() }
        pa_threaded_mainloop_lock(ml)
        defer { pa_threaded_mainloop_unlock(ml) }
        return try body()
    }

    /// Takes the mainloop lock (never on the mainloop thread); ``unlock()`` releases it.
    package func lock() {
        if let ml = mainloop { pa_threaded_mainloop_lock(ml) }
    }

    package func unlock() {
        if let ml = mainloop { pa_threaded_mainloop_unlock(ml) }
    }

    /// Wakes the threads waiting in ``wait(atMost:until:)``. Lock held (callbacks hold it).
    package func signal() {
        if let ml = mainloop { pa_threaded_mainloop_signal(ml, 0) }
    }

    // MARK: Waiting

    /// Waits until `done()` holds, the context fails, or `seconds` pass (nil: no limit); the
    /// callbacks that change what `done` reads must ``signal()``. Lock held, never on the mainloop
    /// thread. Returns whether the time ran out (the caller reads what happened from the state).
    @discardableResult
    package func wait(atMost seconds: Double?, until done: () -> Bool) -> Bool {
        guard let ml = mainloop else { return false }
        let deadline = Deadline(mainloop: ml)
        var timer: OpaquePointer?
        if let seconds, let context {
            timer = pa_context_rttime_new(context, pa_rtclock_now() + pa_usec_t(seconds * 1e6), { _, _, _, ud in
                let d = Unmanaged<Deadline>.fromOpaque(ud!).takeUnretainedValue()
                d.passed = true
                pa_threaded_mainloop_signal(d.mainloop, 0)
            }, Unmanaged.passUnretained(deadline).toOpaque())
        }
        while !done() && !deadline.passed {
            if let context, tonearm_pa_context_is_good(pa_context_get_state(context)) == 0 { break }
            pa_threaded_mainloop_wait(ml)
        }
        if let timer, let api = pa_threaded_mainloop_get_api(ml) { api.pointee.time_free(timer) }
        return withExtendedLifetime(deadline) { deadline.passed }
    }

    /// Waits for `op` to finish (or the context to fail, or `seconds` to pass), then releases it.
    /// Lock held, never on the mainloop thread; the operation's callback must ``signal()``.
    /// Returns whether the time ran out.
    @discardableResult
    package func finish(_ op: OpaquePointer, atMost seconds: Double? = nil) -> Bool {
        let timedOut = wait(atMost: seconds) { pa_operation_get_state(op) != PA_OPERATION_RUNNING }
        pa_operation_unref(op)
        return timedOut
    }

    // MARK: State and teardown

    private func contextStateChanged(_ c: OpaquePointer?) {
        guard let c else { return }
        if tonearm_pa_context_is_good(pa_context_get_state(c)) == 0, !closing, !lossReported {
            lossReported = true
            onLost?(String(cString: pa_strerror(pa_context_errno(c))))
        }
        signal()
    }

    /// Runs `lastly` with the lock held, then disconnects (no callback runs after that) and frees
    /// the main loop. Idempotent: a second call returns at once (`lastly` not run). From the
    /// mainloop thread (a handler) all of it runs on a dispatch queue, and `lastly` keeps what it
    /// holds until then.
    package func close(_ lastly: @escaping @Sendable () -> Void = {}) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing), let ml = mainloop else { return }
        if pa_threaded_mainloop_in_thread(ml) != 0 {
            closing = true
            DispatchQueue.global().async { self.teardown(lastly) }
            return
        }
        teardown(lastly)
    }

    private func teardown(_ lastly: () -> Void = {}) {
        guard let ml = mainloop else { return }
        withLock {
            closing = true
            lastly()
            onEvent = nil
            onLost = nil
            if let c = context {
                pa_context_set_state_callback(c, nil, nil)
                pa_context_set_subscribe_callback(c, nil, nil)
                pa_context_disconnect(c)
            }
        }
        pa_threaded_mainloop_stop(ml)
        if let c = context { pa_context_unref(c) }
        context = nil
        pa_threaded_mainloop_free(ml)
        mainloop = nil
    }
}

/// Whether a wait's time ran out; set by its timer on the mainloop thread, read by the waiter
/// with the lock held.
///
/// `@unchecked Sendable`: `passed` is touched with the mainloop lock held only.
private final class Deadline: @unchecked Sendable {
    let mainloop: OpaquePointer
    var passed = false
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}
