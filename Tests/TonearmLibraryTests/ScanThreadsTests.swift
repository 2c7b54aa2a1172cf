// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Synchronization
import Testing
@testable import TonearmLibrary
import TonearmTestSupport

/// A scan's threads: each runs at `SCHED_BATCH` (issue 18), and the read-ahead thread starts
/// only when a file is not in memory (a warm scan opens each file once).
@Suite struct ScanThreadsTests {
    /// What each scan thread found about itself as it started: its name, the policy
    /// `sched_getscheduler` gives, and the policy field of `/proc/thread-self/stat`.
    final class Seen: Sendable {
        let threads = Mutex<[(name: String, policy: Int32, procPolicy: Int32?)]>([])

        var hook: @Sendable (String) -> Void {
            { [self] name in
                let policy = sched_getscheduler(0) & ~0x4000_0000  // without SCHED_RESET_ON_FORK
                let proc = Self.procPolicy()
                threads.withLock { $0.append((name, policy, proc)) }
            }
        }

        var names: Set<String> { Set(threads.withLock { $0.map(\.name) }) }

        /// Field 41 of /proc/thread-self/stat (after the parenthesised name: field 3 is the
        /// first one after it).
        static func procPolicy() -> Int32? {
            guard let text = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
                  let close = text.lastIndex(of: ")") else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            return fields.count > 38 ? Int32(fields[38]) : nil
        }
    }

    /// Scans `root` into a new library with `seen`'s hook; returns the summary.
    private func scan(_ root: String, in dir: TempDir, _ seen: Seen) async throws -> ScanSummary {
        let library = try MediaLibrary(path: dir.file("db/library.sqlite"))
        let stream = try library.scan(folders: [root], threadStarted: seen.hook)
        for try await event in stream {
            if case .finished(let summary) = event { return summary }
        }
        throw CancellationError()
    }

    /// `count` small text files under `root` (the readers read each file's first bytes, then
    /// pass it over as text: enough for the read-ahead's threshold without encoding audio).
    private func textFiles(_ count: Int, under root: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: root + "/a", withIntermediateDirectories: true)
        return try (0..<count).map { i in
            let path = "\(root)/a/note \(i).txt"
            try Data(String(repeating: "line \(i) of some notes\n", count: 20 + i).utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    /// Writes the files' pages to the disk and drops them from the page cache (an unprivileged
    /// `posix_fadvise(DONTNEED)` of clean pages), so that reading them waits for the disk.
    private func evict(_ paths: [String]) {
        for path in paths {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            fsync(fd)
            _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
            close(fd)
        }
    }

    @Test func everyScanThreadRunsAtSchedBatch() async throws {
        let dir = try TempDir("scan-threads")
        defer { dir.remove() }
        let root = dir.file("Music")
        try LibraryFixtures.make(at: root)
        let seen = Seen()
        let summary = try await scan(root, in: dir, seen)
        #expect(summary.added == LibraryFixtures.mediaCount)
        let threads = seen.threads.withLock { $0 }
        #expect(Set(threads.map(\.name)).isSuperset(of: ["tonearm-scan", "tonearm-scan-walk", "tonearm-scan-reader"]),
                "\(threads.map(\.name))")
        for t in threads {
            #expect(t.policy == ScanPriority.batch, "\(t.name): policy \(t.policy)")
            #expect(t.procPolicy == ScanPriority.batch, "\(t.name): /proc says policy \(t.procPolicy.map(String.init) ?? "?")")
        }
        // Only the scan's threads: the caller's is as it was.
        #expect(sched_getscheduler(0) & ~0x4000_0000 != ScanPriority.batch)
    }

    @Test func aWarmScanStartsNoReadAhead() async throws {
        let dir = try TempDir("scan-warm")
        defer { dir.remove() }
        let root = dir.file("Notes")
        let paths = try textFiles(Scanner.readAheadThreshold + 8, under: root)
        for path in paths { _ = try Data(contentsOf: URL(fileURLWithPath: path)) }  // in memory
        let seen = Seen()
        let summary = try await scan(root, in: dir, seen)
        #expect(summary.skipped.count == paths.count)
        #expect(seen.names.contains("tonearm-scan-reader"))
        #expect(!seen.names.contains("tonearm-scan-readahead"), "\(seen.names)")
    }

    @Test func aColdScanStartsTheReadAhead() async throws {
        let dir = try TempDir("scan-cold")
        defer { dir.remove() }
        let root = dir.file("Notes")
        let paths = try textFiles(Scanner.readAheadThreshold + 8, under: root)
        evict(paths)
        let seen = Seen()
        let summary = try await scan(root, in: dir, seen)
        #expect(summary.skipped.count == paths.count)
        #expect(seen.names.contains("tonearm-scan-readahead"), "\(seen.names)")
    }

    /// The probe: files in memory read without firing it; files dropped from the page cache are
    /// misses, and enough of them in a row fire it, once; the bytes are the file's either way.
    @Test func theProbeFiresWhenFilesAreNotInMemory() throws {
        let dir = try TempDir("scan-probe")
        defer { dir.remove() }
        let count = ColdStart.fireAt / ColdStart.missWeight
        let contents = (0..<count).map { i in (0..<(20_000 + i)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) } }
        let paths = try contents.enumerated().map { i, bytes in
            let path = dir.file("bytes\(i).bin")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
        func read(_ i: Int, _ probe: ColdStart) throws -> [UInt8] {
            let fd = open(paths[i], O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            defer { close(fd) }
            return try ContentHash.read(fd: fd, path: paths[i], at: 0, count: contents[i].count, probe: probe)
        }
        let fired = Atomic<Int>(0)
        let warm = ColdStart { fired.add(1, ordering: .relaxed) }
        for _ in 0..<10 {
            for i in 0..<count { #expect(try read(i, warm) == contents[i]) }
        }
        #expect(!warm.isFired && fired.load(ordering: .relaxed) == 0)
        evict(paths)
        let cold = ColdStart { fired.add(1, ordering: .relaxed) }
        for i in 0..<count {
            #expect(!cold.isFired, "fired after \(i) misses")
            #expect(try read(i, cold) == contents[i])
        }
        #expect(cold.isFired && fired.load(ordering: .relaxed) == 1)
        cold.fire()
        #expect(fired.load(ordering: .relaxed) == 1, "the action runs once")
    }

    /// A warm scan's occasional miss (a read-ahead mark stops a non-waiting read) does not fire
    /// the probe: one miss in five files never does; one in two soon does.
    @Test func occasionalMissesDoNotFireTheProbe() {
        let fired = Atomic<Int>(0)
        let rare = ColdStart { fired.add(1, ordering: .relaxed) }
        for i in 0..<10_000 { rare.record(hit: i % 5 != 0) }
        #expect(!rare.isFired)
        let often = ColdStart { fired.add(1, ordering: .relaxed) }
        for i in 0..<64 { often.record(hit: i % 2 != 0) }
        #expect(often.isFired && fired.load(ordering: .relaxed) == 1)
    }
}
