// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm daemon` as a user runs it: in the foreground, logging to standard error, driven by
/// the real `mpc` over its Unix socket; one per user (a second one says where the first is and
/// fails); SIGTERM ends it cleanly (status 0, the socket removed).
@Suite(.serialized)
struct DaemonCLITests {
    @Test func runsIsDrivenByMPCRefusesASecondAndEndsOnSIGTERM() async throws {
        let dir = try TempDir("tonearm-daemon-cli")
        defer { dir.remove() }
        let song = dir.file("song.flac")
        try Fixtures.tone(path: song, codecArgs: ["-c:a", "flac", "-metadata", "title=Daemon tone"], seconds: 20)
        let runtime = dir.file("run")
        let daemon = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "127.0.0.1:0", "--runtime-dir", runtime,
                                       "--state-dir", dir.file("state")],
                                      captureStandardError: true)
        defer { daemon.terminate(SIGKILL) }
        #expect(daemon.waitForStandardError(containing: "listening on 127.0.0.1:", timeout: 30), "\(daemon.standardErrorText)")
        let socket = runtime + "/mpd.sock"
        #expect(daemon.standardErrorText.contains("listening on \(socket)"))
        let env = ["MPD_HOST": socket, "MPD_PORT": "6600"]

        #expect(try run("mpc", ["add", song], environment: env).status == 0)
        let play = try run("mpc", ["play"], environment: env)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stdout.contains("[playing] #1/1"), "\(play.stdout)")
        #expect(play.stdout.hasPrefix("Daemon tone\n"))

        let second = try run(try tonearmBinary(), ["daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime, "--state-dir", dir.file("state")])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running (pid \(daemon.pid), socket \(socket))"), "\(second.stderr)")
        // The first one is untouched.
        #expect(try run("mpc", ["status"], environment: env).stdout.contains("[playing]"))

        daemon.terminate(SIGTERM)
        #expect(daemon.succeeded, "status \(String(describing: daemon.status)): \(daemon.standardErrorText)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}

/// The daemon's state survives SIGKILL: the queue, the song, the position, the volume and the
/// modes are saved as they change (before the answer goes out), and a new daemon resumes.
@Suite(.serialized)
struct DaemonStateCLITests {
    static func start(_ runtime: String, _ state: String) throws -> ChildProcess {
        let d = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime,
                                  "--state-dir", state], captureStandardError: true)
        guard d.waitForStandardError(containing: "listening on \(runtime)/mpd.sock", timeout: 30) else {
            d.terminate(SIGKILL)
            throw TestSupportError("the daemon did not start: \(d.standardErrorText)")
        }
        return d
    }

    @Test func resumesAfterSIGKILL() async throws {
        let dir = try TempDir("tonearm-daemon-state")
        defer { dir.remove() }
        let a = dir.file("a.flac"), b = dir.file("b.flac")
        try Fixtures.tone(path: a, codecArgs: ["-c:a", "flac", "-metadata", "title=First"], seconds: 30)
        try Fixtures.tone(path: b, codecArgs: ["-c:a", "flac", "-metadata", "title=Second"], seconds: 30, freq: 660)
        let runtime = dir.file("run"), state = dir.file("state")
        let env = ["MPD_HOST": runtime + "/mpd.sock", "MPD_PORT": "6600"]
        func mpc(_ args: String...) throws -> RunResult { try run("mpc", args, environment: env) }

        let first = try Self.start(runtime, state)
        #expect(try mpc("add", a).status == 0)
        #expect(try mpc("add", b).status == 0)
        #expect(try mpc("play", "2").status == 0)
        #expect(try mpc("seek", "12").status == 0)
        #expect(try mpc("volume", "30").status == 0)
        #expect(try mpc("repeat", "on").status == 0)
        #expect(try mpc("consume", "on").status == 0)
        first.terminate(SIGKILL)

        let second = try Self.start(runtime, state)
        defer { second.terminate(SIGTERM) }
        #expect(second.standardErrorText.contains("resumed the saved queue (2 songs)"))
        let status = try mpc("status")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Second", "\(status.stdout)")
        #expect(lines.count == 3 && lines[1].hasPrefix("[playing] #2/2   0:1"), "\(status.stdout)")
        #expect(lines.last?.hasPrefix("volume: 30%   repeat: on    random: off   single: off   consume: on") == true, "\(status.stdout)")
        #expect(try mpc("playlist").stdout == "First\nSecond\n")
    }
}
