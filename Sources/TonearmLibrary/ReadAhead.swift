// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc

/// Asks the kernel to start reading the files the scan's readers will read next, a fixed
/// number of files ahead of them: the bytes ``FileReader`` reads (the content hash's first and
/// last ``ContentHash/window``), with `posix_fadvise(WILLNEED)`, which queues the reads and
/// returns. On a cold cache the readers then find most files in memory: a few reader threads
/// keep only a few reads waiting on the disk at once, this keeps many (10,000 small files were
/// read in 0.22 s instead of 0.38 s here). Warm, it costs an open and a close per file.
///
/// Runs on a thread of its own, started by ``start()``, until it has passed the last file or
/// `cancelled` is set; it waits (never spins) while it is `distance` files ahead of `taken`.
final class ReadAhead: @unchecked Sendable {
    private let files: [FoundFile]
    private let distance: Int
    private let taken: Counter
    private let cancelled: Flag

    init(files: [FoundFile], distance: Int, taken: Counter, cancelled: Flag) {
        self.files = files
        self.distance = max(1, distance)
        self.taken = taken
        self.cancelled = cancelled
    }

    func start() {
        let thread = Thread { [self] in run() }
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
