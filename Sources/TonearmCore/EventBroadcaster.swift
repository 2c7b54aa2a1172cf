// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// Fans events out to any number of `AsyncStream` subscribers. Each call to `stream()` makes a
/// new subscriber that sees every event yielded after it subscribed; a subscriber that stops
/// iterating is removed. Thread-safe.
public final class EventBroadcaster<Event: Sendable>: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<Event>.Continuation]>([:])
    private let finished = Mutex(false)

    public init() {}

    /// A new stream of the events yielded from now on. With a `limit`, a subscriber that falls
    /// more than `limit` events behind loses the oldest (for streams of states, where only the
    /// latest matters); with `nil`, it keeps every event however far behind it is (for streams
    /// whose consumers count or record events: what played, what changed).
    public func stream(bufferingNewest limit: Int? = 256) -> AsyncStream<Event> {
        let policy: AsyncStream<Event>.Continuation.BufferingPolicy = limit.map { .bufferingNewest($0) } ?? .unbounded
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: policy)
        if finished.withLock({ $0 }) {
            continuation.finish()
            return stream
        }
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// Delivers `event` to every current subscriber.
    public func yield(_ event: Event) {
        let conts = subscribers.withLock { Array($0.values) }
        for c in conts { c.yield(event) }
    }

    /// Ends every stream; later subscribers get a finished stream.
    public func finish() {
        finished.withLock { $0 = true }
        let conts = subscribers.withLock { s -> [AsyncStream<Event>.Continuation] in
            let v = Array(s.values)
            s.removeAll()
            return v
        }
        for c in conts { c.finish() }
    }
}
