// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmDSP
import TonearmDaemon
import TonearmMPDProtocol
import TonearmOutput
import TonearmPlayback
import TonearmTestSupport

/// The daemon driven by the real `mpc` (Debian's), as a user would: songs added over the Unix
/// socket, played, paused, skipped, the volume and modes set — each checked by what the
/// daemon's player then does and by what `mpc` and the raw protocol report.
@Suite(.serialized)
struct DaemonMPCTests {
    /// `mpc status`'s second line: `[playing] #1/2   0:00/0:02 (0%)`.
    static func stateLine(_ r: RunResult) -> String {
        r.stdout.split(separator: "\n").first(where: { $0.hasPrefix("[") }).map(String.init) ?? ""
    }

    @Test func addPlayPauseVolumeRepeatNextPlaylist() async throws {
        let d = try await TestDaemon()
        let a = try d.tone("a.flac", seconds: 1.5, title: "First tone")
        let b = try d.tone("b.flac", seconds: 30, freq: 660, title: "Second tone")
        try d.mpc("add", a).expectSuccess()
        try d.mpc("add", b).expectSuccess()

        let playlist = try d.mpc("playlist")
        #expect(playlist.stdout == "Tonearm Tests - First tone\nTonearm Tests - Second tone\n")

        let events = d.daemon.player.events
        let play = try d.mpc("play")
        #expect(play.status == 0, "\(play.stderr)")
        #expect(Self.stateLine(play).hasPrefix("[playing] #1/2"))
        #expect(d.daemon.player.playbackState == .playing)

        // Time advances: the first song (1.5 s) plays to its end in real time (the null output
        // is real time) and the second follows by itself; status says so before and after.
        let c = try MPDTestClient(unixPath: d.socketPath)
        let s1 = MPDTestClient.pairs(try c.exchange(["status"]))
        #expect(s1["state"] == "play")
        #expect(s1["song"] == "0")
        let e1 = try #require(Double(s1["elapsed"] ?? ""))
        #expect(e1 < 1.5)
        _ = try await waitForEvent(events, timeout: 20, "the second song by itself") {
            if case .currentItemChanged(index: 1, _) = $0 { true } else { false }
        }
        let s2 = MPDTestClient.pairs(try c.exchange(["status"]))
        #expect(s2["state"] == "play")
        #expect(s2["song"] == "1")
        let e2 = try #require(Double(s2["elapsed"] ?? ""))
        #expect(1.5 + e2 > e1)
        #expect(s2["duration"].flatMap(Double.init).map { abs($0 - 30) < 0.05 } == true)
        #expect(Self.stateLine(try d.mpc("status")).hasPrefix("[playing] #2/2"))

        let pause = try d.mpc("pause")
        #expect(Self.stateLine(pause).hasPrefix("[paused]"))
        #expect(d.daemon.player.playbackState == .paused)

        let vol = try d.mpc("volume", "50")
        #expect(vol.stdout.contains("volume: 50%"))
        #expect(d.daemon.player.volume == 0.5)

        let rep = try d.mpc("repeat", "on")
        #expect(rep.stdout.contains("repeat: on"))
        #expect(d.daemon.player.repeatMode == .all)

        try d.mpc("play").expectSuccess()
        let prev = try d.mpc("prev")
        #expect(Self.stateLine(prev).hasPrefix("[playing] #1/2"), "\(prev.stdout)")
        #expect(d.daemon.player.indexOfNowPlayingItem == 0)
        let next = try d.mpc("next")
        #expect(Self.stateLine(next).hasPrefix("[playing] #2/2"), "\(next.stdout)")
        #expect(d.daemon.player.indexOfNowPlayingItem == 1)
        let current = try d.mpc("current")
        #expect(current.stdout == "Tonearm Tests - Second tone\n")

        try d.mpc("stop").expectSuccess()
        #expect(d.daemon.player.playbackState == .stopped)
        await d.stop()
    }

    @Test func idleIsWokenByAnotherClientsChange() async throws {
        let d = try await TestDaemon()
        let a = try d.tone("a.flac", seconds: 2)
        let idlers = d.daemon.hub.idleCountChanges
        let idle = try ChildProcess(["mpc", "idle", "playlist"], environment: ["MPD_HOST": d.socketPath, "MPD_PORT": "6600"],
                                    captureStandardOutput: true)
        // mpc waits in `idle` once the daemon counts an idling connection.
        _ = try await waitForEvent(idlers, timeout: 10, "mpc to idle") { $0 == 1 }
        try d.mpc("add", a).expectSuccess()
        let out = idle.waitForStandardOutputBlocking(timeout: 10) { $0.ended }
        #expect(out.text == "playlist\n")
        #expect(idle.succeeded)
        await d.stop()
    }

    @Test func tcpClientMayNotAddALocalFile() async throws {
        let d = try await TestDaemon()
        let a = try d.tone("a.flac", seconds: 1)
        let r = try d.mpc("add", a, tcp: true)
        #expect(r.status != 0)
        #expect(r.stderr.contains("Access denied"), "\(r.stderr)")
        let raw = try MPDTestClient(port: d.port)
        #expect(try raw.exchange(["add \(MPDRequest.quoted(a))"]) == ["ACK [4@0] {add} Access denied"])
        #expect(try raw.exchange(["add file://\(a)"]) == ["ACK [4@0] {add} Access denied"])
        // A song of the music folder by its relative path is allowed on TCP.
        #expect(try raw.exchange(["add a.flac"]) == ["OK"])
        #expect(try d.mpc("playlist").stdout == "a.flac\n")
        await d.stop()
    }

    /// `mpc outputs`, `disable`, `enable`, `toggleoutput`: disabling the only output while it
    /// plays pauses the player with MPD's error and wakes `mpc idle output`; `mpc play` plays
    /// nothing until the output is enabled again.
    @Test func mpcDisablesAndEnablesTheOutput() async throws {
        let d = try await TestDaemon()
        let a = try d.tone("a.flac", seconds: 30, title: "Outputs")
        try d.mpc("add", a).expectSuccess()
        try d.mpc("play").expectSuccess()
        #expect(try d.mpc("outputs").stdout == "Output 1 (default) is enabled\n\tequalizer=\"flat\"\n")
        let idlers = d.daemon.hub.idleCountChanges
        let idle = try ChildProcess(["mpc", "idle", "output"], environment: ["MPD_HOST": d.socketPath, "MPD_PORT": "6600"],
                                    captureStandardError: true, captureStandardOutput: true)
        _ = try await waitForEvent(idlers, timeout: 10, "mpc to idle") { $0 == 1 }
        try d.mpc("disable", "1").expectSuccess()
        // Once (of many runs) mpc ended having printed nothing: its standard error says why.
        #expect(idle.waitForStandardOutputBlocking(timeout: 10) { $0.ended }.text == "output\n",
                "mpc idle output: \(idle.standardErrorText)")
        #expect(d.daemon.player.playbackState == .paused)
        let status = try d.mpc("status").stdout
        #expect(status.contains("[paused]") && status.contains("ERROR: All audio outputs are disabled"), "\(status)")
        #expect(try d.mpc("outputs").stdout == "Output 1 (default) is disabled\n\tequalizer=\"flat\"\n")
        try d.mpc("play").expectSuccess()
        #expect(d.daemon.player.playbackState == .paused)
        try d.mpc("enable", "1").expectSuccess()
        try d.mpc("clearerror").expectSuccess()
        #expect(try d.mpc("play").stdout.contains("[playing]"))
        #expect(d.daemon.player.playbackState == .playing)
        try d.mpc("toggleoutput", "1").expectSuccess()
        #expect(try d.mpc("outputs").stdout == "Output 1 (default) is disabled\n\tequalizer=\"flat\"\n")
        #expect(d.daemon.player.playbackState == .paused)
        await d.stop()
    }

    /// The daemon's equalizer is an attribute of its outputs: `mpc outputset 1 equalizer=rock`
    /// sets the player's preset (its bands take rock's gains), `mpc outputs` shows it, an
    /// idling client hears `output`; an unknown preset is refused naming the known ones.
    @Test func mpcSetsTheEqualizerPreset() async throws {
        let d = try await TestDaemon()
        let idlers = d.daemon.hub.idleCountChanges
        let idle = try ChildProcess(["mpc", "idle", "output"], environment: ["MPD_HOST": d.socketPath, "MPD_PORT": "6600"],
                                    captureStandardError: true, captureStandardOutput: true)
        _ = try await waitForEvent(idlers, timeout: 10, "mpc to idle") { $0 == 1 }
        try d.mpc("outputset", "1", "equalizer=rock").expectSuccess()
        #expect(idle.waitForStandardOutputBlocking(timeout: 10) { $0.ended }.text == "output\n", "\(idle.standardErrorText)")
        #expect(try d.mpc("outputs").stdout == "Output 1 (default) is enabled\n\tequalizer=\"rock\"\n")
        #expect(d.daemon.player.queue.eq.bands.map(\.gain) == EQPreset.rock.gains)
        #expect(d.daemon.player.queue.eq.globalGain == EQPreset.rock.globalGain)
        let bad = try d.mpc("outputset", "1", "equalizer=loud")
        #expect(bad.status != 0 && bad.stderr.contains("Unknown equalizer preset \"loud\" (known: flat, bass-boost"), "\(bad.stderr)")
        #expect(try d.mpc("outputs").stdout.contains("equalizer=\"rock\""))
        await d.stop()
    }

    /// PulseAudio killed while the daemon plays and started again: the daemon's queue pauses at
    /// its place, and plays on from there by itself once the server answers (mpc sees both).
    @Test func playsOnFromItsPlaceWhenPulseAudioComesBack() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let serverString = server.serverString
        let d = try await TestDaemon(output: {
            PulseOutput(server: serverString, streamName: "Tonearm daemon")
        })
        let a = try d.tone("long.flac", seconds: 60, title: "Restart")
        let events = d.daemon.player.events
        try d.mpc("add", a).expectSuccess()
        let play = try d.mpc("play")
        #expect(play.stdout.contains("[playing]"), "\(play.stdout) \(play.stderr)")
        try d.mpc("seek", "7").expectSuccess()
        let playing = try d.mpc("status").stdout
        #expect(playing.contains("[playing] #1/1   0:0"), "\(playing)")

        server.kill()
        _ = try await waitForEvent(events, timeout: 10, "the loss") { if case .outputLost = $0 { true } else { false } }
        let lost = try d.mpc("status").stdout
        #expect(lost.contains("[paused]  #1/1   0:0"), "\(lost)")
        let position = d.daemon.player.currentPlaybackTime
        try server.start()
        _ = try await waitForEvent(events, timeout: 15, "playing again") { $0 == .stateChanged(.playing) }
        let back = try d.mpc("status").stdout
        #expect(back.contains("[playing] #1/1"), "\(back)")
        #expect(abs(d.daemon.player.currentPlaybackTime - position) < 1.5, "\(d.daemon.player.currentPlaybackTime) after \(position)")
        let streams = try server.pactl("list", "sink-inputs").stdout
        #expect(streams.contains("Corked: no") && streams.contains("Tonearm daemon"), "\(streams)")
        await d.stop()
    }
}

extension RunResult {
    func expectSuccess(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status == 0, "exit \(status): \(stderr)", sourceLocation: sourceLocation)
    }
}
