// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmPlayback

struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `body` and returns its result, or throws ``TimedOut`` once `timeout` seconds have passed
/// (then `onTimeout` runs first). The one deadline of these helpers: a sleeping child task races
/// `body`, whichever ends first decides and the other is cancelled — a deadline, not
/// synchronisation.
func withDeadline<T: Sendable>(_ timeout: Double, _ what: String, onTimeout: @escaping @Sendable () -> Void = {},
                               _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            // The deadline only (the body's result ends the group first): not a wait for a state.
            try await Task.sleep(for: .seconds(timeout))
            onTimeout()
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// Waits for the first event of `stream` that `match` accepts; throws after `timeout` seconds.
func waitForEvent<E: Sendable>(_ stream: AsyncStream<E>, timeout: Double = 20, _ what: String = "event",
                               where match: @escaping @Sendable (E) -> Bool) async throws -> E {
    let first = try await withDeadline(timeout, what) { () async -> E? in
        for await e in stream where match(e) { return e }
        return nil
    }
    guard let e = first else { throw TimedOut(what: "\(what) (stream ended)") }
    return e
}

/// Collects events of `stream` until it finishes or `timeout` passes.
func collectUntilFinished<E: Sendable>(_ stream: AsyncStream<E>, timeout: Double = 20) async throws -> [E] {
    try await withDeadline(timeout, "the stream to finish") {
        var all: [E] = []
        for await e in stream { all.append(e) }
        return all
    }
}

/// Starts collecting a queue's events, up to and including `.finished` (await `value`).
func eventsUntilFinished(_ events: AsyncStream<QueuePlayerEvent>) -> Task<[QueuePlayerEvent], Never> {
    Task {
        var seen: [QueuePlayerEvent] = []
        for await e in events {
            seen.append(e)
            if e == .finished { break }
        }
        return seen
    }
}

/// The events a collector of ``eventsUntilFinished(_:)`` saw, up to `.finished`; throws after
/// `timeout` seconds (a deadline, not synchronisation). The collector subscribed before the
/// queue started: a queue that ends before `play()` has returned (a fast file output) is not
/// missed, as it would be by a stream subscribed after `play()`.
func finished(_ collector: Task<[QueuePlayerEvent], Never>, timeout: Double = 20,
              _ what: String = "the queue to finish") async throws -> [QueuePlayerEvent] {
    let seen = try await withDeadline(timeout, what, onTimeout: { collector.cancel() }) { await collector.value }
    guard seen.last == .finished else { throw TimedOut(what: "\(what) (stream ended)") }
    return seen
}
