// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmLibrary
import TonearmTestSupport

/// The scan's read-ahead thread keeps its distance from the readers and always ends: when the
/// readers have taken every file, and when they stop early (a cancelled scan).
@Suite(.offThePool) struct ReadAheadTests {
    private func files(_ count: Int, in dir: TempDir) throws -> [FoundFile] {
        try (0..<count).map { i in
            let path = dir.file("f\(i).bin")
            try Data(repeating: UInt8(i & 0xFF), count: 100 + i).write(to: URL(fileURLWithPath: path))
            return FoundFile(path: path, size: Int64(100 + i), mtime: 0)
        }
    }

    /// Runs `readAhead` on a thread; the returned semaphore is signalled when it returns.
    private func started(_ readAhead: ReadAhead) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread { readAhead.run(); done.signal() }.start()
        return done
    }

    @Test func waitsForTheReadersAndEndsWhenTheyHaveTakenEverything() throws {
        let dir = try TempDir("readahead")
        defer { dir.remove() }
        let list = try files(40, in: dir)
        let counter = Counter(), cancelled = Flag()
        let done = started(ReadAhead(files: list, distance: 8, taken: counter, cancelled: cancelled))
        // Nothing taken: it stops 8 files ahead and waits.
        #expect(done.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        while counter.take(below: list.count) != nil {}
        counter.close()
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success, "the read-ahead thread did not end")
    }

    @Test func endsWhenTheReadersStopEarly() throws {
        let dir = try TempDir("readahead-cancel")
        defer { dir.remove() }
        let list = try files(40, in: dir)
        let counter = Counter(), cancelled = Flag()
        let done = started(ReadAhead(files: list, distance: 4, taken: counter, cancelled: cancelled))
        _ = counter.take(below: list.count)
        cancelled.set()
        counter.close()
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success, "the read-ahead thread did not end")
    }

    @Test func theCounterWakesWaitersAsNumbersAreTaken() {
        let counter = Counter()
        let reached = DispatchSemaphore(value: 0)
        Thread { _ = counter.wait(untilTaken: 3); reached.signal() }.start()
        for _ in 0..<2 { _ = counter.take(below: 10) }
        #expect(reached.wait(timeout: .now() + .milliseconds(100)) == .timedOut, "woke before 3 were taken")
        _ = counter.take(below: 10)
        #expect(reached.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(counter.wait(untilTaken: 2) == 3)
    }
}
