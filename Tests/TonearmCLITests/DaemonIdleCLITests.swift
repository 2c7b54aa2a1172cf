// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// An idle `tonearm daemon` arms no timer (issue 20's "zero wake-ups when idle"): after it has
/// scanned its music folder, answered clients, queued songs and played them to their end, every
/// `timerfd` of the process is disarmed — none of ours (the position save runs only while playing,
/// the memory trim is one-shot) and not libdispatch's 1 s pool monitor, which the daemon's tasks
/// on its own event loops and the players' wake-ups on a serial queue never start. Observed
/// through `/proc/PID/fdinfo` (a timerfd's `it_value`), not through time.
@Suite(.serialized)
struct DaemonIdleCLITests {
    /// The `it_value` lines of the process's armed timerfds (empty: none armed).
    static func armedTimers(_ pid: pid_t) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        var armed: [String] = []
        for fd in fds {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                  target.contains("timerfd"),
                  let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8) else { continue }
            for line in info.split(separator: "\n") where line.hasPrefix("it_value:") {
                if !line.contains("(0, 0)") { armed.append("fd \(fd) \(line)") }
            }
        }
        return armed
    }

    /// The names of the process's threads (what the failure shows).
    static func threadNames(_ pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }.sorted()
    }

    /// Whether no timer is armed in `reads` readings in a row (a periodic timer is armed in all
    /// but the instant between its expiry and its re-arming).
    static func noTimerArmed(_ pid: pid_t, reads: Int = 20) -> Bool {
        (0..<reads).allSatisfy { _ in armedTimers(pid).isEmpty }
    }

    @Test func anIdleDaemonThatHasPlayedArmsNoTimer() throws {
        let dir = try TempDir("tonearm-daemon-idle")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music + "/A", withIntermediateDirectories: true)
        for n in 1...2 {
            try Fixtures.tone(path: music + "/A/0\(n).flac", codecArgs: ["-c:a", "flac", "-metadata", "title=T\(n)", "-metadata", "artist=A"], seconds: 1)
        }
        let daemon = try DaemonProcess(dir, music: music)
        let pid = daemon.process.pid
        _ = try daemon.mpc("add", "A")
        #expect(try daemon.mpc("playlist") == "A - T1\nA - T2\n")
        #expect(try daemon.mpc("play").contains("[playing] #1/2"))
        // Both songs play to their end; then the queue is stopped.
        let played = Date().addingTimeInterval(30)
        var status = ""
        repeat {
            _ = poll(nil, 0, 100)  // re-asking until the deadline, not synchronisation
            status = try daemon.mpc("status")
        } while status.contains("[playing]") && Date() < played
        #expect(!status.contains("[playing]"), "\(status)")

        // Idle now: the one-shot timers (the memory trim, the end of the last song) run out, and
        // then nothing is armed.
        let deadline = Date().addingTimeInterval(20)
        while !Self.noTimerArmed(pid) && Date() < deadline {
            _ = poll(nil, 0, 50)  // re-reading /proc until its deadline, not synchronisation
        }
        #expect(Self.noTimerArmed(pid), "armed: \(Self.armedTimers(pid)); threads: \(Self.threadNames(pid)); status: \((try? daemon.mpc("status")) ?? "?"); \(daemon.process.standardErrorText)")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }
}
