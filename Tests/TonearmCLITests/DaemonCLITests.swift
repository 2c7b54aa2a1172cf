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
        let daemon = try ChildProcess([try tonearmBinary(), "daemon", "--output", "null", "--listen", "127.0.0.1:0", "--runtime-dir", runtime],
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

        let second = try run(try tonearmBinary(), ["daemon", "--output", "null", "--listen", "none", "--runtime-dir", runtime])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running (pid \(daemon.pid), socket \(socket))"), "\(second.stderr)")
        // The first one is untouched.
        #expect(try run("mpc", ["status"], environment: env).stdout.contains("[playing]"))

        daemon.terminate(SIGTERM)
        #expect(daemon.succeeded, "status \(String(describing: daemon.status)): \(daemon.standardErrorText)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}
