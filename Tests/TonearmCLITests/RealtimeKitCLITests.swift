// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play` as a desktop user who may not raise its own threads: run under `setpriv`
/// without `CAP_SYS_NICE` and with `RLIMIT_RTPRIO` and `RLIMIT_NICE` at 0, its render thread
/// (`tonearm-pulse`) is refused real time by the kernel and asks RealtimeKit on the system bus —
/// here ``FakeRealtimeKit`` on a private bus given as `DBUS_SYSTEM_BUS_ADDRESS` — and then runs
/// `SCHED_RR` (read from /proc while it plays). Without rtkit it plays all the same, at normal
/// priority.
@Suite(.serialized) struct RealtimeKitCLITests {
    let dir: TempDir
    init() throws { dir = try TempDir("rtkit-cli") }

    /// `tonearm play --output pulse` of a long tone without the right to raise threads, started
    /// and waited for until it plays.
    func unprivilegedPlay(_ server: PrivatePulseServer, systemBus: String) async throws -> ChildProcess {
        let long = dir.file("long.flac")
        if !FileManager.default.fileExists(atPath: long) { try Fixtures.minuteOfTone(path: long) }
        let env = server.environment.merging([
            "TONEARM_DEBUG_PRIORITY": "1", "DBUS_SYSTEM_BUS_ADDRESS": systemBus, "DBUS_SESSION_BUS_ADDRESS": "",
            "XDG_CONFIG_HOME": dir.file("config"), "XDG_STATE_HOME": dir.file("state"), "TONEARM_CONFIG": "",
        ]) { $1 }
        let child = try ChildProcess(["prlimit", "--rtprio=0:0", "--nice=0:0", "--",
                                      "setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice", "--",
                                      try tonearmBinary(), "play", "--output", "pulse", "--plain", long],
                                     environment: env, captureStandardError: true, captureStandardOutput: true)
        let playing = await child.waitForStandardOutput(timeout: 10) { $0.text.contains("Playing 1/1") || $0.ended }
        try #require(playing && child.isRunning, "\(child.standardOutputText) \(child.standardErrorText)")
        return child
    }

    @Test func theRenderThreadIsMadeRealTimeThroughRtkit() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let rtkit = try FakeRealtimeKit(bus: bus)
        defer { rtkit.stop() }
        let child = try await unprivilegedPlay(server, systemBus: bus.address)
        defer { child.terminate(SIGINT) }
        // The render thread asks as it starts, before the stream exists: asked by now.
        #expect(rtkit.calls.waitBlocking(timeout: 10) { !$0.isEmpty })
        let call = try #require(rtkit.calls.value.first)
        #expect(call.method == "MakeThreadRealtime" && call.priority == 10 && call.refusal == nil, "\(rtkit.calls.value)")
        let scheduling = try #require(ThreadScheduling.thread(Int(call.thread), of: child.pid), "thread \(call.thread) is not tonearm's")
        #expect(scheduling.policy == 2 && scheduling.rtPriority == 10, "\(scheduling)")
        let comm = try String(contentsOfFile: "/proc/\(child.pid)/task/\(call.thread)/comm", encoding: .utf8)
        #expect(comm.trimmingCharacters(in: .newlines) == "tonearm-pulse")
        #expect(child.standardErrorText.contains("tonearm: thread tonearm-pulse: SCHED_RR refused (Operation not permitted); SCHED_RR priority 10 through the broker"),
                "\(child.standardErrorText)")
        child.terminate(SIGINT)
        #expect(child.wait(timeout: 10))
    }

    @Test func withoutRtkitItPlaysAtNormalPriority() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let child = try await unprivilegedPlay(server, systemBus: bus.address)
        defer { child.terminate(SIGINT) }
        let threads = (try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/task")).compactMap { t -> ThreadScheduling? in
            guard let comm = try? String(contentsOfFile: "/proc/\(child.pid)/task/\(t)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .newlines) == "tonearm-pulse", let tid = Int(t) else { return nil }
            return ThreadScheduling.thread(tid, of: child.pid)
        }
        #expect(threads.count == 1 && threads.allSatisfy { $0.policy == 0 && $0.nice == 0 }, "\(threads)")
        #expect(child.standardErrorText.contains("tonearm: thread tonearm-pulse: SCHED_RR refused (Operation not permitted); nice -11 refused"),
                "\(child.standardErrorText)")
        child.terminate(SIGINT)
        #expect(child.wait(timeout: 10))
    }
}
