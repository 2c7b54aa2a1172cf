// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// A sound server that crashes and comes back (a restarted PulseAudio, PipeWire after an
/// update), on a real private PulseAudio killed with SIGKILL and started again at the same
/// address: the queue pauses at its place, watches for the server, and plays on from there by
/// itself when it answers — with no call from its owner.
@Suite(.serialized) struct ServerRestartTests {
    /// The playback streams of the server that play now (not corked), by `media.name`.
    func uncorkedStreams(named name: String, on server: PrivatePulseServer) throws -> Int {
        let text = try server.pactl("list", "sink-inputs").stdout
        return text.components(separatedBy: "Sink Input #").dropFirst().filter {
            $0.contains("Corked: no") && $0.contains("media.name = \"\(name)\"")
        }.count
    }

    @Test func aKilledAndRestartedServerIsFoundAgainAndTheQueuePlaysOnFromItsPlace() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("server-restart")
        defer { dir.remove() }
        let serverString = server.serverString
        let q = QueuePlayer(items: [QueueItem(path: try Fixtures.minuteOfTone(in: dir))], output: {
            PulseOutput(server: serverString, streamName: "restart")
        })
        defer { q.stop() }
        let events = q.events
        q.play()
        q.seek(to: 7)
        #expect(q.playbackState == .playing)
        #expect(try uncorkedStreams(named: "restart", on: server) == 1)

        server.kill()
        let lost = try await waitForEvent(events, timeout: 10, "the loss") {
            if case .outputLost = $0 { true } else { false }
        }
        guard case .outputLost(_, let awaiting) = lost else { return }
        #expect(awaiting, "a PulseAudio output is watched for")
        #expect(q.playbackState == .paused)
        #expect(q.isWaitingForOutput)
        let position = q.currentTime
        #expect(position >= 7 && position < 20, "paused at \(position) s")

        try server.start()
        let back = try await waitForEvent(events, timeout: 15, "the server to be found again") {
            if case .outputReturned = $0 { true } else { false }
        }
        #expect(back == .outputReturned(resuming: true))
        _ = try await waitForEvent(events, timeout: 10, "playing again") { $0 == .stateChanged(.playing) }
        #expect(q.playbackState == .playing)
        #expect(!q.isWaitingForOutput)
        #expect(abs(q.currentTime - position) < 1, "played on at \(q.currentTime) s, lost at \(position) s")
        // A new stream plays on the restarted server.
        #expect(try uncorkedStreams(named: "restart", on: server) == 1)
    }

    /// Paused by its owner before the server went away, the queue stays paused when the server
    /// comes back; `play()` then goes on from its place.
    @Test func aPausedQueueStaysPausedWhenTheServerComesBack() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("server-restart-paused")
        defer { dir.remove() }
        let serverString = server.serverString
        let q = QueuePlayer(items: [QueueItem(path: try Fixtures.minuteOfTone(in: dir))], output: {
            PulseOutput(server: serverString, streamName: "restart-paused")
        })
        defer { q.stop() }
        let events = q.events
        q.play()
        q.seek(to: 4)
        q.pause()
        let position = q.currentTime
        server.kill()
        _ = try await waitForEvent(events, timeout: 10, "the loss") {
            if case .outputLost = $0 { true } else { false }
        }
        #expect(!q.isWaitingForOutput)
        try server.start()
        let back = try await waitForEvent(events, timeout: 15, "the server to be found again") {
            if case .outputReturned = $0 { true } else { false }
        }
        #expect(back == .outputReturned(resuming: false))
        #expect(q.playbackState == .paused)
        q.play()
        #expect(q.playbackState == .playing)
        #expect(abs(q.currentTime - position) < 1, "played on at \(q.currentTime) s, paused at \(position) s")
        #expect(try uncorkedStreams(named: "restart-paused", on: server) == 1)
    }

    /// A network stream (``Player``, AVPlayer's counterpart) does the same: it pauses at its place
    /// when the server is killed and plays on from there, at its rate, when it is back.
    @Test func aStreamPlaysOnFromItsPlaceWhenTheServerIsBack() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("server-restart-stream")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 30)
        let http = try PrivateHTTPServer(root: dir.path)
        defer { http.stop() }
        let serverString = server.serverString
        let player = Player(playerItem: PlayerItem(url: http.url("/a.flac")),
                            output: { PulseOutput(server: serverString, streamName: "restart-stream") })
        defer { player.pause() }
        let events = player.events
        player.play()
        _ = try await waitForEvent(events, timeout: 15, "playing") { $0 == .timeControlStatusChanged(.playing) }
        server.kill()
        let lost = try await waitForEvent(events, timeout: 10, "the loss") {
            if case .outputLost = $0 { true } else { false }
        }
        guard case .outputLost(_, let awaiting) = lost else { return }
        #expect(awaiting)
        #expect(player.rate == 0)
        let position = player.currentTime()
        try server.start()
        let back = try await waitForEvent(events, timeout: 15, "the server to be found again") {
            if case .outputReturned = $0 { true } else { false }
        }
        #expect(back == .outputReturned(resuming: true))
        _ = try await waitForEvent(events, timeout: 10, "playing again") { $0 == .timeControlStatusChanged(.playing) }
        #expect(player.rate == 1)
        #expect(abs(player.currentTime() - position) < 1, "played on at \(player.currentTime()) s, lost at \(position) s")
        #expect(try uncorkedStreams(named: "restart-stream", on: server) == 1)
    }

    /// ``AudioPlayer`` (AVAudioPlayer's counterpart) sees the server's absence as an interruption
    /// its delegate knows: it begins when the server is killed and ends, with `shouldResume`, when
    /// the server is back — and the player plays on from its place by itself.
    @Test func anAudioPlayerIsInterruptedWhileTheServerIsGoneAndPlaysOnFromItsPlace() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("server-restart-audioplayer")
        defer { dir.remove() }
        let serverString = server.serverString
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: try Fixtures.minuteOfTone(in: dir)),
                                     output: { PulseOutput(server: serverString, streamName: "restart-audioplayer") })
        defer { player.stop() }
        let events = player.events
        player.currentTime = 5
        #expect(player.play())
        server.kill()
        _ = try await waitForEvent(events, timeout: 10, "the interruption") { $0 == .interruptionBegan }
        #expect(!player.isPlaying)
        let position = player.currentTime
        #expect(position >= 5 && position < 20, "lost at \(position) s")
        try server.start()
        _ = try await waitForEvent(events, timeout: 15, "its end") { $0 == .interruptionEnded(shouldResume: true) }
        #expect(player.isPlaying)
        #expect(abs(player.currentTime - position) < 1, "played on at \(player.currentTime) s, lost at \(position) s")
        #expect(try uncorkedStreams(named: "restart-audioplayer", on: server) == 1)
    }

    /// The watch is woken by the server's socket appearing, not by a timer: with waits between
    /// probes of an hour, a restarted server is still found at once.
    @Test func theWatchIsWokenByTheServersSocketAppearing() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        server.kill()
        let serverString = server.serverString
        let found = Watched(false)
        let watch = OutputReturnWatch(probe: { PulseOutput.isServerAvailable(server: serverString, timeout: 1) },
                                      wakePath: server.directory + "/native", firstDelay: 3600, maximumDelay: 3600,
                                      onReturn: { found.update { $0 = true } })
        defer { watch.cancel() }
        try server.start()
        #expect(found.waitBlocking(timeout: 15) { $0 }, "the restarted server was not found (probes: \(watch.probeCount))")
        #expect(watch.probeCount >= 2)
    }
}
