// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmOutput
@testable import TonearmPlayback
import TonearmSession
import TonearmTestSupport

/// `AudioPlayer` through a private PulseAudio server: the whole sound is heard (the tail is not
/// cut), and a phone call interrupts and resumes it.
@Suite(.serialized) struct AudioPlayerPulseTests {
    @Test func theWholeFileIsHeardAndFinishFiresAfterIt() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("player-pulse")
        defer { dir.remove() }
        let src = dir.file("tone.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*440*t):s=48000:d=1",
                                   "-c:a", "pcm_f32le", src])
        let rec = try server.startRecording(to: dir.file("heard.wav"))
        let serverString = server.serverString
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: src),
                                     output: { PulseOutput(server: serverString, streamName: "test") })
        let events = player.events
        #expect(player.play())
        #expect(player.isPlaying)
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        rec.stop()
        let heard = try readWAV(dir.file("heard.wav"))
        let span = try #require(nonSilentSpan(heard.channels[0], sampleRate: heard.sampleRate))
        let seconds = Double(span.count) / heard.sampleRate
        #expect(abs(seconds - 1.0) < 0.025, "heard \(seconds) s of a 1 s tone")
    }

    @Test func aPhoneCallInterruptsAndPlaybackResumesAfterIt() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("player-cork")
        defer { dir.remove() }
        let call = dir.file("call.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=880:duration=0.5:sample_rate=48000", call])
        let serverString = server.serverString
        // A long generated source so the player is still playing when the call ends.
        let player = AudioPlayer(source: RampSource(frames: 48000 * 60),
                                 output: { PulseOutput(server: serverString, streamName: "music", role: "music") })
        let events = player.events
        #expect(player.play())
        let paplay = try server.startPaplay(call, role: "phone")
        _ = try await waitForEvent(events, "interruptionBegan") { $0 == .interruptionBegan }
        #expect(!player.isPlaying)
        let ended = try await waitForEvent(events, "interruptionEnded") {
            if case .interruptionEnded = $0 { true } else { false }
        }
        #expect(ended == .interruptionEnded(shouldResume: true))
        #expect(player.isPlaying)
        _ = paplay.wait(timeout: 10)
        player.stop()
    }

    /// With an audio session, the server's request becomes the session's interruption: the
    /// session reports it (and is inactive meanwhile), the player follows the session, and both
    /// go on when the call ends.
    @Test func aPhoneCallIsAnInterruptionOfThePlayersSession() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("session-cork")
        defer { dir.remove() }
        let call = dir.file("call.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=880:duration=0.5:sample_rate=48000", call])
        let serverString = server.serverString
        let session = AudioSession(identifier: "cork", bus: .none, pulseServer: serverString)
        try session.setCategory(.playback)
        try session.setActive(true)
        let interruptions = session.interruptions
        let player = AudioPlayer(source: RampSource(frames: 48000 * 60),
                                 output: { PulseOutput(server: serverString, streamName: "music", role: "music") })
        defer { player.stop() }
        player.audioSession = session
        let events = player.events
        #expect(player.play())
        let paplay = try server.startPaplay(call, role: "phone")
        _ = try await waitForEvent(interruptions, "session interruption began") { $0 == .began }
        _ = try await waitForEvent(events, "interruptionBegan") { $0 == .interruptionBegan }
        #expect(!player.isPlaying)
        #expect(!session.isActive)
        _ = try await waitForEvent(interruptions, "session interruption ended") { $0 == .ended(shouldResume: true) }
        _ = try await waitForEvent(events, "interruptionEnded") { $0 == .interruptionEnded(shouldResume: true) }
        #expect(player.isPlaying)
        #expect(session.isActive)
        _ = paplay.wait(timeout: 10)
    }

    /// The same for the queue player `tonearm play` uses, heard in the sink's monitor: the music
    /// stops for the call and comes back after it.
    @Test func aPhoneCallInterruptsAMusicPlayerThroughItsSession() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("music-cork")
        defer { dir.remove() }
        let call = dir.file("call.wav"), intro = dir.file("intro.wav"), music = dir.file("music.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=880:duration=1:sample_rate=48000", call])
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=48000", intro])
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=48000", music])
        let serverString = server.serverString
        let session = AudioSession(identifier: "music-cork", bus: .none, pulseServer: serverString)
        try session.setCategory(.playback)
        let player = MusicPlayer(output: { PulseOutput(server: serverString, streamName: "music", role: "music") },
                                 session: session)
        defer { player.stop() }
        player.setQueue(withPaths: [intro, music])
        let events = player.events
        let rec = try server.startRecording(to: dir.file("heard.wav"))
        player.play()
        #expect(session.isActive)
        // The call comes once the short first item has played.
        _ = try await waitForEvent(events, timeout: 10, "second item") {
            if case .currentItemChanged(index: 1, _) = $0 { true } else { false }
        }
        let paplay = try server.startPaplay(call, role: "phone")
        _ = try await waitForEvent(events, timeout: 10, "interrupted") { $0 == .stateChanged(.interrupted) }
        #expect(!session.isActive)
        _ = try await waitForEvent(events, timeout: 10, "playing again") { $0 == .stateChanged(.playing) }
        #expect(session.isActive)
        _ = paplay.wait(timeout: 10)
        // The rest of the music after the call; at its end the recording holds the whole story.
        _ = try await waitForEvent(events, timeout: 15, "finished") { $0 == .finished }
        rec.stop()

        let heard = try readWAV(dir.file("heard.wav"))
        let x = heard.channels[0], w = Int(heard.sampleRate / 20)
        let windows = stride(from: 0, to: x.count - w, by: w).map { start -> (music: Bool, call: Bool) in
            let slice = x[start..<(start + w)]
            let ms = Double(rms(slice)) * Double(rms(slice))
            func has(_ f: Double) -> Bool { ms > 1e-6 && goertzelPower(slice, frequency: f, sampleRate: heard.sampleRate) > 0.1 * ms }
            return (has(440), has(880))
        }
        let callWindows = windows.indices.filter { windows[$0].call }
        #expect((16...24).contains(callWindows.count), "the call sounded in \(callWindows.count) windows")
        let both = callWindows.filter { windows[$0].music }.count
        #expect(both <= 3, "the music went on in \(both) windows of the call")
        let lastCall = try #require(callWindows.last), firstCall = try #require(callWindows.first)
        #expect(windows.indices.contains { $0 < firstCall && windows[$0].music }, "no music before the call")
        #expect(windows.indices.filter { $0 > lastCall && windows[$0].music }.count >= 8, "the music did not come back")
    }
}
