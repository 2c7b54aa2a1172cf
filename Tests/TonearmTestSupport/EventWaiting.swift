// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

// Waiting for asynchronous events in tests, always with a deadline.

public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// Runs `body` and returns its result, or throws ``TimedOut`` once `timeout` seconds have passed
/// (then `onTimeout` runs first). The one deadline of these helpers: a sleeping child task races
/// `body`, whichever ends first decides and the other is cancelled — a deadline, not
/// synchronisation.
public func withDeadline<T: Sendable>(_ timeout: Double, _ what: String, onTimeout: @escaping @Sendable () -> Void = {},
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
public func waitForEvent<E: Sendable>(_ stream: AsyncStream<E>, timeout: Double = 20, _ what: String = "event",
                               where match: @escaping @Sendable (E) -> Bool) async throws -> E {
    let first = try await withDeadline(timeout, what) { () async -> E? in
        for await e in stream where match(e) { return e }
        return nil
    }
    guard let e = first else { throw TimedOut(what: "\(what) (stream ended)") }
    return e
}

/// Collects events of `stream` until it finishes or `timeout` passes.
public func collectUntilFinished<E: Sendable>(_ stream: AsyncStream<E>, timeout: Double = 20) async throws -> [E] {
    try await withDeadline(timeout, "the stream to finish") {
        var all: [E] = []
        for await e in stream { all.append(e) }
        return all
    }
}

