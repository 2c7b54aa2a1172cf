// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

// Blocking work in tests, kept off Swift's global concurrent pool.
//
// The pool has as many threads as cores (two on CI), and Swift Testing runs every test there,
// sync `@Test func`s included. A test that blocks (a child process run to its end, a semaphore,
// a long offline render) holds one of those threads for as long as it blocks: two such tests
// held both, and the other tests' timers, continuations and stream events waited behind them
// (gdb during an offline phase: both pool threads in `run(...)` reading ffmpeg's output; async
// tests that wait a few seconds ended minutes after they started). Async code hands blocking
// work to a thread of its own (`offThePool`, the async `run` and `Fixtures.ffmpeg`); suites of
// sync tests that block run on ``BlockingTestExecutor`` (the `.offThePool` trait).

/// Runs `work` on a thread of its own and suspends the calling task (blocking no thread of the
/// pool) until it returns; returns its result or rethrows its error. For blocking test-support
/// calls (child processes, blocking socket reads) made from async tests.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        let thread = Thread { c.resume(with: Result { try work() }) }
        thread.name = "tonearm-test-blocking"
        thread.start()
    }
}

/// ``run(_:_:environment:currentDirectory:stdin:)`` for async callers: the child runs, and its
/// output is read, on a thread of its own while the calling task is suspended.
@discardableResult
public func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                currentDirectory: String? = nil, stdin: Data? = nil) async throws -> RunResult {
    try await offThePool {
        try run(executable, arguments, environment: environment, currentDirectory: currentDirectory, stdin: stdin)
    }
}

extension Fixtures {
    /// ``ffmpeg(_:)`` for async callers: ffmpeg runs while the calling task is suspended.
    public static func ffmpeg(_ args: [String]) async throws {
        try await offThePool { try Fixtures.ffmpeg(args) }
    }
}

/// A task executor whose jobs never wait for a thread that a blocked job holds: a job runs on
/// an idle thread of its own, or on a new one while fewer than ``maximumThreads`` exist (then
/// it waits for the first to free, in order). Threads idle for 30 s end. The executor of the
/// `.offThePool` trait: the suites whose sync tests block run here, beside the global pool.
///
/// Thread-safety: `enqueue` may be called from any thread (the concurrency runtime calls it).
public final class BlockingTestExecutor: TaskExecutor, @unchecked Sendable {
    /// The one instance the trait uses.
    public static let shared = BlockingTestExecutor(maximumThreads: max(8, 4 * ProcessInfo.processInfo.activeProcessorCount))

    /// The most threads at once: bounds the child processes that blocking tests start together.
    public let maximumThreads: Int
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var idle = 0
    private var threads = 0

    public init(maximumThreads: Int) {
        self.maximumThreads = maximumThreads
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let waiting = jobs.count - head
        let spawn = waiting > idle && threads < maximumThreads
        if spawn { threads += 1 } else { condition.signal() }
        condition.unlock()
        if spawn {
            let thread = Thread { [self] in work() }
            thread.name = "tonearm-test-blocking"
            thread.start()
        }
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while head == jobs.count {
                idle += 1
                let woken = condition.wait(until: Date(timeIntervalSinceNow: 30))
                idle -= 1
                if !woken && head == jobs.count {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count { jobs.removeAll(keepingCapacity: true); head = 0 }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}

/// Runs a suite's (or a test's) tests on ``BlockingTestExecutor`` instead of Swift's global
/// pool: for sync tests that block (child processes run to their end, long renders), so that
/// they do not hold the pool's few threads from the tests that wait for timers and events.
public struct OffThePoolTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(BlockingTestExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// The tests run on ``BlockingTestExecutor`` (see ``OffThePoolTrait``).
    public static var offThePool: Self { Self() }
}
