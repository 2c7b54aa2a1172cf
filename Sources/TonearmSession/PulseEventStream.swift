// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Dispatch

/// One subscription event: facility and type masked out of the event type, and the index.
typealias PulseEvent = (facility: pa_subscription_event_type_t, kind: pa_subscription_event_type_t, index: UInt32)

extension PulseControl {
    /// Makes a change stream fed by a connection of its own to `server`. `start` sets the stream
    /// up on the new connection (the caller's thread; usually with ``follow(_:initial:handle:)``);
    /// when it throws, the connection is closed and the error thrown. The stream ends when the
    /// connection is lost; when the stream is dropped or its iteration cancelled, `onEnd` runs and
    /// the connection is closed — from another thread, never inside `onTermination` (a cancelled
    /// task runs it holding its status lock, which the mainloop thread may need for a yield in
    /// flight).
    static func changeStream<Element: Sendable>(
        server: String?, clientName: String, timeout: Double, bufferingNewest limit: Int,
        start: (PulseControl, AsyncStream<Element>.Continuation) throws -> Void,
        onEnd: @escaping @Sendable () -> Void = {}
    ) throws -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        let control = try PulseControl(server: server, clientName: clientName, timeout: timeout)
        do {
            try start(control, continuation)
        } catch {
            control.close()
            throw error
        }
        continuation.onTermination = { _ in
            DispatchQueue.global().async {
                onEnd()
                control.close()
            }
        }
        return stream
    }

    /// Follows the server's events in `mask` for a change stream finishing `continuation`:
    /// subscribes, runs `initial` (the caller's thread: it reads the starting state and returns
    /// what to do with it under the lock), then hands every event to `handle` (mainloop thread,
    /// lock held) — first those that arrived while `initial` ran, in order, so nothing is lost
    /// between the subscription and the starting state. The stream finishes when the connection
    /// is lost. The handlers are held strongly until the connection is torn down.
    func follow<Element>(_ mask: pa_subscription_mask_t, finishing continuation: AsyncStream<Element>.Continuation,
                         initial: () throws -> () -> Void, handle: @escaping (PulseEvent) -> Void) throws {
        let early = EarlyBox()
        withLock {
            onEvent = { facility, kind, index in
                if early.ready { handle((facility, kind, index)) } else { early.held.append((facility, kind, index)) }
            }
            onFailure = { _ in continuation.finish() }
        }
        try subscribe(mask)
        let apply = try initial()
        withLock {
            apply()
            early.ready = true
            let held = early.held
            early.held = []
            for e in held { handle(e) }
        }
    }
}

/// Events that came before the starting state was read. Touched with the mainloop lock held.
private final class EarlyBox {
    var ready = false
    var held: [PulseEvent] = []
}
