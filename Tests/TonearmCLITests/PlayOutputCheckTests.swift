// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `play --device` on a real private PulseAudio: an output the server does not have is an
/// error before anything plays; an output lost while playing with standard output piped ends
/// the run instead of waiting for keys that cannot come — unless the sound server itself went
/// away, which is waited for, and playback goes on by itself when it is back.
@Suite(.serialized) struct PlayOutputCheckTests {
    let dir: TempDir
    let env: [String: String]

    init() throws {
        dir = try TempDir("output-check")
        // No config file, a private state folder, and no session bus (nothing could go on over MPRIS).
        env = ["XDG_CONFIG_HOME": dir.file("config"), "XDG_STATE_HOME": dir.file("state"), "TONEARM_CONFIG": "",
               "DBUS_SESSION_BUS_ADDRESS": ""]
    }

    func environment(_ server: PrivatePulseServer) -> [String: String] {
        // The server's XDG_RUNTIME_DIR holds no bus socket.
        server.environment.merging(env) { $1 }
    }

    @Test func anOutputTheServerDoesNotHaveIsAnErrorBeforePlaying() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.pactl("load-module", "module-null-sink", "sink_name=second", "sink_properties=device.description=Second")
        let tone = dir.file("tone.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1", tone])
        let bin = try tonearmBinary()
        let r = try run(bin, ["play", "--device", "nope", tone], environment: environment(server))
        #expect(r.status == 1)
        #expect(r.stderr.contains("tonearm: play: --device nope: the sound server has no such output; its outputs are:"), "\(r.stderr)")
        #expect(r.stderr.contains("* test_null  TestNull") && r.stderr.contains("second  Second"), "\(r.stderr)")
        #expect(!r.stderr.contains("output was lost"), "\(r.stderr)")
        #expect(!r.stdout.contains("Playing"), "\(r.stdout)")
        // The same from the config file, which the message names with its line.
        let config = dir.file("config/tonearm/config.toml")
        try FileManager.default.createDirectory(atPath: dir.file("config/tonearm"), withIntermediateDirectories: true)
        try "# my output\n[playback]\ndevice = \"gone\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let f = try run(bin, ["play", tone], environment: environment(server))
        #expect(f.status == 1)
        #expect(f.stderr.contains("the device 'gone' (config file \(config):3): the sound server has no such output"), "\(f.stderr)")
        // An output it has plays.
        let ok = try run(bin, ["play", "--device", "second", tone], environment: environment(server))
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("Playing 1/1"))
    }

    /// Starts `play` on a long tone with standard output a pipe, and returns it once it plays.
    func startPlaying(_ server: PrivatePulseServer, _ arguments: [String]) async throws -> ChildProcess {
        let long = dir.file("long.flac")
        if !FileManager.default.fileExists(atPath: long) {
            try Fixtures.minuteOfTone(path: long)
        }
        let child = try ChildProcess([try tonearmBinary(), "play"] + arguments + [long], environment: environment(server),
                                     captureStandardError: true, captureStandardOutput: true)
        let playing = await child.waitForStandardOutput(timeout: 10) { $0.text.contains("Playing 1/1") || $0.ended }
        #expect(playing, "\(child.standardOutputText) \(child.standardErrorText)")
        // The stream is on the server once the first progress line is out.
        _ = await child.waitForStandardOutput(timeout: 10) { $0.text.contains("0:00 /") || $0.ended }
        return child
    }

    @Test func theOutputRemovedWhilePipedEndsTheRun() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let module = try server.pactl("load-module", "module-null-sink", "sink_name=phones")
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let child = try await startPlaying(server, ["--output", "pulse", "--device", "phones"])
        defer { child.terminate(SIGKILL) }
        try server.pactl("unload-module", module)
        let ended = await child.waitForExit(timeout: 10)
        #expect(ended, "still running: \(child.standardErrorText)")
        #expect(child.status.map { ($0 >> 8) & 0xff } == 1)
        #expect(child.standardErrorText.contains("the output phones went away; stopping"), "\(child.standardErrorText)")
    }

    /// The sound server killed (a crash) and started again at the same address while `play`
    /// runs with standard output piped: it says so, waits, plays on from where it was by itself,
    /// and the file counts once, as played.
    @Test func aRestartedSoundServerIsFoundAgainAndTheFilePlaysToItsEnd() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let short = dir.file("short.flac")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=4", short])
        let child = try ChildProcess([try tonearmBinary(), "play", "--output", "pulse", short], environment: environment(server),
                                     captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate(SIGKILL) }
        let started = await child.waitForStandardOutput(timeout: 10) { $0.text.contains("0:00 /") || $0.ended }
        #expect(started, "\(child.standardOutputText) \(child.standardErrorText)")
        server.kill()
        let noticed = child.waitForStandardError(containing: "the sound server went away", timeout: 10)
        #expect(noticed, "\(child.standardErrorText)")
        #expect(child.isRunning, "it did not wait: \(child.standardErrorText)")
        try server.start()
        let ended = await child.waitForExit(timeout: 20)
        #expect(ended, "still running: \(child.standardErrorText)")
        #expect(child.status.map { ($0 >> 8) & 0xff } == 0, "\(child.standardErrorText)")
        #expect(child.standardErrorText.contains("waiting for it, to play on from 0:0"), "\(child.standardErrorText)")
        #expect(child.standardErrorText.contains("the sound server is back; playing on from 0:0"), "\(child.standardErrorText)")
        #expect(child.standardOutputText.contains("Done: 1 played, 0 failed"), "\(child.standardOutputText)")
        #expect(child.standardOutputText.components(separatedBy: "Playing 1/1").count == 2, "announced once: \(child.standardOutputText)")
        #expect(!child.standardErrorText.contains("stopping"), "\(child.standardErrorText)")
    }

    /// The same for a network stream (`play URL`): it waits for the server and plays on.
    @Test func aRestartedSoundServerIsFoundAgainByAStream() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try Fixtures.tone(path: dir.file("stream.flac"), codecArgs: ["-c:a", "flac"], seconds: 4)
        let http = try PrivateHTTPServer(root: dir.path)
        defer { http.stop() }
        let child = try ChildProcess([try tonearmBinary(), "play", "--output", "pulse", http.url("/stream.flac").absoluteString],
                                     environment: environment(server), captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate(SIGKILL) }
        let started = await child.waitForStandardOutput(timeout: 15) { $0.text.contains("0:00") || $0.ended }
        #expect(started, "\(child.standardOutputText) \(child.standardErrorText)")
        server.kill()
        let noticed = await child.waitForStandardOutput(timeout: 10) { $0.text.contains("the sound server went away") || $0.ended }
        #expect(noticed, "\(child.standardOutputText)")
        #expect(child.isRunning, "it did not wait: \(child.standardOutputText) \(child.standardErrorText)")
        try server.start()
        let ended = await child.waitForExit(timeout: 20)
        #expect(ended, "still running: \(child.standardOutputText)")
        #expect(child.status.map { ($0 >> 8) & 0xff } == 0, "\(child.standardOutputText) \(child.standardErrorText)")
        #expect(child.standardOutputText.contains("the sound server is back; playing on"), "\(child.standardOutputText)")
        #expect(child.standardOutputText.contains("Done: 1 played, 0 failed"), "\(child.standardOutputText)")
    }

    /// Audio that came late is counted and said in the summary, not hidden: the player is
    /// stopped (SIGSTOP) for half a second while it plays, so the server's buffer runs dry.
    @Test func audioThatCameLateIsCountedInTheSummary() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let short = dir.file("late.flac")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=3", short])
        // A listener on the sink's monitor keeps the null sink rendering in small blocks, as a
        // sound card would (alone, it renders up to 2 s ahead and a short stall goes unseen).
        let listener = try server.startRecording(to: dir.file("late-heard.wav"))
        defer { listener.stop() }
        let child = try ChildProcess([try tonearmBinary(), "play", "--output", "pulse", short], environment: environment(server),
                                     captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate(SIGKILL) }
        let started = await child.waitForStandardOutput(timeout: 10) { $0.text.contains("0:00 /") || $0.ended }
        #expect(started, "\(child.standardOutputText) \(child.standardErrorText)")
        // Its stream plays on the server (not corked: past its first buffer)...
        var playing = false
        for _ in 0..<200 where !playing {
            playing = try server.pactl("list", "sink-inputs").stdout.contains("Corked: no")
        }
        #expect(playing, "no stream plays")
        // ...when the fault comes; it lasts half a second (it is what is measured, not a wait).
        kill(child.pid, SIGSTOP)
        usleep(500_000)  // the measurement window: the fault's own length, longer than the 75 ms buffer
        kill(child.pid, SIGCONT)
        let ended = await child.waitForExit(timeout: 20)
        #expect(ended, "still running: \(child.standardOutputText)")
        #expect(child.status.map { ($0 >> 8) & 0xff } == 0, "\(child.standardErrorText)")
        #expect(child.standardOutputText.contains(#/Done: 1 played, 0 failed, [1-9][0-9]* underruns? \(audio came late\)/#),
                "\(child.standardOutputText)")
    }

    @Test func theOutputLostWhilePipedEndsTheRun() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let child = try await startPlaying(server, ["--output", "pulse"])
        defer { child.terminate(SIGKILL) }
        let input = try #require(try server.pactl("list", "short", "sink-inputs").stdout.split(separator: "\t").first)
        try server.cli("kill-sink-input \(input)")
        let ended = await child.waitForExit(timeout: 10)
        #expect(ended, "still running: \(child.standardErrorText)")
        #expect(child.status.map { ($0 >> 8) & 0xff } == 1)
        #expect(child.standardErrorText.contains("the output was lost"), "\(child.standardErrorText)")
        #expect(child.standardErrorText.contains("; stopping"), "\(child.standardErrorText)")
        #expect(!child.standardErrorText.contains("press space"), "\(child.standardErrorText)")
    }
}
