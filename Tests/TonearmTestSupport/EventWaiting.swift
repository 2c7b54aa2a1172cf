// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

// Waiting for asynchronous events in tests, always with a deadline.

public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// Runs `body` and returns its result, or throws ``TimedOut`` once `timeout` seconds have passed
/// (then `onTimeout` runs first). The one deadline of these helpers: a sleeping task races
/// `body`, whichever ends first decides and the other is cancelled — a deadline, not
/// synchronisation. A body that ignores its cancellation (a continuation nobody resumes) is left
/// behind, suspended, instead of holding the test for ever: an offline run hung for an hour on
/// a task group that waited for such a body after its deadline.
public func withDeadline<T: Sendable>(_ timeout: Double, _ what: String, onTimeout: @escaping @Sendable () -> Void = {},
                               _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            race.start(c, timeout: timeout, what: what, onTimeout: onTimeout, body: body)
        }
    } onCancel: {
        race.cancel()
    }
}

/// ``withDeadline(_:_:onTimeout:_:)``'s two tasks: the first outcome resumes the caller, the
/// other task is cancelled.
private final class DeadlineRace<T: Sendable>: Sendable {
    private let decided = Mutex(false)
    private let tasks = Mutex<(work: Task<Void, Never>?, timer: Task<Void, Never>?)>((nil, nil))

    func start(_ c: CheckedContinuation<T, any Error>, timeout: Double, what: String, onTimeout: @escaping @Sendable () -> Void,
               body: @escaping @Sendable () async throws -> T) {
        let work = Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            if self.decide(c, outcome) { self.tasks.withLock { $0.timer?.cancel() } }
        }
        let timer = Task {
            // The deadline only (the body's outcome cancels this sleep): not a wait for a state.
            guard (try? await Task.sleep(for: .seconds(timeout))) != nil, self.claim() else { return }
            onTimeout()
            c.resume(throwing: TimedOut(what: what))
            self.tasks.withLock { $0.work?.cancel() }
        }
        tasks.withLock { $0 = (work, timer) }
    }

    /// True for the first caller only.
    private func claim() -> Bool { decided.withLock { d in defer { d = true }; return !d } }

    private func decide(_ c: CheckedContinuation<T, any Error>, _ outcome: Result<T, any Error>) -> Bool {
        guard claim() else { return false }
        c.resume(with: outcome)
        return true
    }

    func cancel() {
        let (work, timer) = tasks.withLock { $0 }
        work?.cancel()
        timer?.cancel()
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

