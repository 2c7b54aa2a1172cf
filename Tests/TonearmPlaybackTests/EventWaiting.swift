// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmPlayback

struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits for the first event of `stream` that `match` accepts; throws after `timeout` seconds.
func waitForEvent<E: Sendable>(_ stream: AsyncStream<E>, timeout: Double = 20, _ what: String = "event",
                               where match: @escaping @Sendable (E) -> Bool) async throws -> E {
    try await withThrowingTaskGroup(of: E?.self) { group in
        group.addTask {
            for await e in stream where match(e) { return e }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(timeout))  // a deadline, not synchronisation
            throw TimedOut(what: what)
        }
        guard let first = try await group.next(), let e = first else {
            group.cancelAll()
            throw TimedOut(what: "\(what) (stream ended)")
        }
        group.cancelAll()
        return e
    }
}

/// Collects events of `stream` until it finishes or `timeout` passes.
func collectUntilFinished<E: Sendable>(_ stream: AsyncStream<E>, timeout: Double = 20) async throws -> [E] {
    try await withThrowingTaskGroup(of: [E].self) { group in
        group.addTask {
            var all: [E] = []
            for await e in stream { all.append(e) }
            return all
        }
        group.addTask {
            try await Task.sleep(for: .seconds(timeout))
            throw TimedOut(what: "the stream to finish")
        }
        let r = try await group.next()!
        group.cancelAll()
        return r
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
    try await withThrowingTaskGroup(of: [QueuePlayerEvent].self) { group in
        group.addTask { await collector.value }
        group.addTask {
            try await Task.sleep(for: .seconds(timeout))
            collector.cancel()
            throw TimedOut(what: what)
        }
        let seen = try await group.next()!
        group.cancelAll()
        guard seen.last == .finished else { throw TimedOut(what: "\(what) (stream ended)") }
        return seen
    }
}
