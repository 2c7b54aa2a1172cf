// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmOutput
@testable import TonearmPlayback
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
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*440*t):s=48000:d=1",
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
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=880:duration=0.5:sample_rate=48000", call])
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
}
