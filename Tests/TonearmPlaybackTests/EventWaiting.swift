// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmPlayback
import TonearmTestSupport

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
