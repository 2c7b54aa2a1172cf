// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Synchronization

/// Asks the kernel to start reading the files the scan's readers will read next, a fixed
/// number of files ahead of them: the bytes ``FileReader`` reads (the content hash's first and
/// last ``ContentHash/window``), with `posix_fadvise(WILLNEED)`, which queues the reads and
/// returns. On a cold cache the readers then find most files in memory: a few reader threads
/// keep only a few reads waiting on the disk at once, this keeps many (10,000 small files were
/// read in 0.22 s instead of 0.38 s here). Warm, it would cost an open, an fadvise and a close
/// per file for nothing: the scanner starts it only when a reader finds a file that is not in
/// memory (``ColdStart``).
///
/// Runs on a thread of its own, started by ``start()``, until it has passed the last file or
/// `cancelled` is set; it waits (never spins) while it is `distance` files ahead of `taken`.
final class ReadAhead: @unchecked Sendable {
    private let files: [FoundFile]
    private let distance: Int
    private let taken: Counter
    private let cancelled: Flag
    /// Called first on its thread (the scanner's: its scheduling, a test's hook).
    private let started: (@Sendable () -> Void)?

    init(files: [FoundFile], distance: Int, taken: Counter, cancelled: Flag, started: (@Sendable () -> Void)? = nil) {
        self.files = files
        self.started = started
        self.distance = max(1, distance)
        self.taken = taken
        self.cancelled = cancelled
    }

    func start() {
        let thread = Thread { [self] in
            started?()
            run()
        }
        thread.name = "tonearm-scan-readahead"
        thread.start()
    }

    /// The thread's work (internal for tests): returns when done or cancelled.
    func run() {
        let window = Int64(ContentHash.window)
        for (i, file) in files.enumerated() {
            if cancelled.isSet { return }
            // Not more than `distance` ahead of the readers; nothing they have taken already.
            guard taken.wait(untilTaken: i - distance) <= i else { continue }
            let fd = open(file.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { continue }
            _ = posix_fadvise(fd, 0, off_t(min(file.size, window)), POSIX_FADV_WILLNEED)
            if file.size > window {
                let tail = max(window, file.size - window)
                _ = posix_fadvise(fd, off_t(tail), off_t(file.size - tail), POSIX_FADV_WILLNEED)
            }
            close(fd)
        }
    }
}

/// Whether the scan meets files that are not in memory, and what it does then, once: start its
/// ``ReadAhead``. Until then a reader reads a file's first bytes with `preadv2(RWF_NOWAIT)`
/// (``ContentHash/read(fd:path:at:count:probe:)``): the same one system call as `pread` when
/// the bytes are in memory, `EAGAIN` or fewer bytes when some must come from the disk — a miss.
/// A warm scan misses now and then (a page the kernel marked to start its own read-ahead stops
/// a non-waiting read there), so one miss does not fire: each adds ``missWeight`` to a score
/// that each hit lowers by one, and the action runs when the score reaches ``fireAt`` — after
/// the first 8 files of a cold scan, never in a warm one that misses under one file in five.
/// Where the kernel cannot say (`preadv2` missing, `EOPNOTSUPP`), it fires at once: read-ahead
/// as before.
final class ColdStart: Sendable {
    private let fired = Atomic<Bool>(false)
    private let score = Atomic<Int>(0)
    private let action: @Sendable () -> Void
    static let missWeight = 4
    static let fireAt = 32

    init(_ action: @escaping @Sendable () -> Void) { self.action = action }

    /// Whether the action has run: readers then read without the probe.
    var isFired: Bool { fired.load(ordering: .relaxed) }

    /// A probed read found its bytes in memory (`hit`) or not.
    func record(hit: Bool) {
        var old = score.load(ordering: .relaxed)
        while true {
            let new = hit ? max(0, old - 1) : old + Self.missWeight
            if new == old { return }
            let (exchanged, now) = score.compareExchange(expected: old, desired: new, ordering: .relaxed)
            if exchanged {
                if new >= Self.fireAt { fire() }
                return
            }
            old = now
        }
    }

    /// Runs the action the first time (on the calling thread).
    func fire() {
        if fired.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged { action() }
    }
}
