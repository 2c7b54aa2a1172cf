// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch

/// The thread that carries out a player's actions: one batch at a time, in the order the batches
/// were enqueued (a serial dispatch queue of its own), so that the actions of two callers never
/// interleave. It tells whether the caller is on it: a caller on it must never wait for it.
final class ActionExecutor: @unchecked Sendable {
    // @unchecked: both are set once in init and never changed; a DispatchQueue is thread-safe,
    // and the key is only passed to DispatchQueue.getSpecific, which is too.
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<UInt8>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: 1)
    }

    /// Whether the calling code runs on this executor.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) != nil }

    /// Runs `job` after everything enqueued before it. Never waits (callable under a lock).
    func enqueue(_ job: @escaping @Sendable () -> Void) { queue.async(execute: job) }
}
