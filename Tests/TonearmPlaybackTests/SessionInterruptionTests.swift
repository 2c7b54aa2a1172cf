// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmSession
import TonearmTestSupport

/// Two players, each with its own audio session on one private bus, playing to one private
/// PulseAudio sink: an exclusive session interrupts the other and lets it resume when it is
/// done; a ducking one lowers it; checked in the recording of the sink's monitor.
@Suite(.serialized) struct SessionInterruptionTests {
    func tone(_ dir: TempDir, _ name: String, _ freq: Int, _ seconds: Double) throws -> String {
        let p = dir.file(name)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.3*sin(2*PI*\(freq)*t)|0.3*sin(2*PI*\(freq)*t):s=48000:d=\(seconds)", p])
        return p
    }

    /// Which of `freqs` sound in each 50 ms window of `x`.
    func presence(_ x: [Float], _ freqs: [Double], rate: Double) -> [[Bool]] {
        let w = Int(rate / 20)
        return stride(from: 0, to: x.count - w, by: w).map { start in
            let slice = x[start..<(start + w)]
            // A tone alone has Goertzel power half the mean square (the power is normalised to
            // ¼ for a full-scale sine); a tone among two of equal level, a quarter.
            let meanSquare = Double(rms(slice)) * Double(rms(slice))
            return freqs.map { f in meanSquare > 1e-6 && goertzelPower(slice, frequency: f, sampleRate: rate) > 0.1 * meanSquare }
        }
    }

    @Test func anExclusiveSessionInterruptsTheOtherWhichResumesAfter() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let dir = try TempDir("sessions")
        defer { dir.remove() }
        let serverString = server.serverString
        let output: @Sendable () throws -> any AudioOutputDriver = { PulseOutput(server: serverString, streamName: "session-test") }
        let sessionA = AudioSession(identifier: "a", bus: .address(bus.address))
        let sessionB = AudioSession(identifier: "b", bus: .address(bus.address))
        try sessionA.setCategory(.playback)
        try sessionB.setCategory(.playback)
        let a = MusicPlayer(output: output, session: sessionA)
        let b = MusicPlayer(output: output, session: sessionB)
        defer { a.stop(); b.stop() }
        a.setQueue(withPaths: [try tone(dir, "a.wav", 440, 60), try tone(dir, "a2.wav", 550, 0.6)])
        b.setQueue(withPaths: [try tone(dir, "b.wav", 880, 1.0)])
        let aEvents = a.events, bEvents = b.events

        let rec = try server.startRecording(to: dir.file("heard.wav"))
        a.play()
        #expect(a.playbackState == .playing)
        // B takes the output: A is interrupted.
        b.play()
        _ = try await waitForEvent(aEvents, timeout: 10, "A interrupted") { $0 == .stateChanged(.interrupted) }
        // B plays its second to the end, then lets the others know.
        _ = try await waitForEvent(bEvents, timeout: 10, "B finished") { $0 == .finished }
        try sessionB.setActive(false, options: .notifyOthersOnDeactivation)
        _ = try await waitForEvent(aEvents, timeout: 10, "A resumed") { $0 == .stateChanged(.playing) }
        // A goes on to its short second item and ends: the recording then holds everything.
        a.skipToNextItem()
        _ = try await waitForEvent(aEvents, timeout: 10, "A finished") { $0 == .finished }
        rec.stop()

        let heard = try readWAV(dir.file("heard.wav"))
        let p = presence(heard.channels[0], [440, 880, 550], rate: heard.sampleRate)
        // B's tone sounds for about a second, with A's silent meanwhile (a window or two of
        // overlap at the hand-over).
        let bWindows = p.indices.filter { p[$0][1] }
        #expect((16...24).contains(bWindows.count), "880 Hz in \(bWindows.count) windows")
        let overlap = bWindows.filter { p[$0][0] }.count
        #expect(overlap <= 3, "440 Hz went on in \(overlap) windows while interrupted")
        // A resumed after B: its second item sounds after B's tone.
        let lastB = try #require(bWindows.last)
        #expect(p.indices.contains { $0 > lastB && p[$0][2] }, "A did not resume after B")
    }

    @Test func aDuckingSessionLowersTheOtherAndRestoresIt() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let dir = try TempDir("ducking")
        defer { dir.remove() }
        let sessionA = AudioSession(identifier: "a", bus: .address(bus.address))
        let sessionB = AudioSession(identifier: "b", bus: .address(bus.address))
        try sessionA.setCategory(.playback, options: [.mixWithOthers])
        try sessionB.setCategory(.playback, options: [.mixWithOthers, .duckOthers])
        let a = MusicPlayer(output: { NullOutput() }, session: sessionA)
        defer { a.stop() }
        a.setQueue(withPaths: [try tone(dir, "a.wav", 440, 30)])
        a.volume = 0.8
        let events = a.events
        a.play()
        try sessionB.setActive(true)
        _ = try await waitForEvent(events, timeout: 10, "A ducked") { $0 == .ducked(level: AudioSession.duckLevel) }
        #expect(abs(a.queue.duckLevel - AudioSession.duckLevel) < 1e-6)
        #expect(a.volume == 0.8)  // the player's own volume is kept
        try sessionB.setActive(false)
        _ = try await waitForEvent(events, timeout: 10, "A restored") { $0 == .ducked(level: 1) }
        #expect(a.queue.duckLevel == 1)
        #expect(a.volume == 0.8)
    }

    /// An `AudioPlayer` follows its session as AVAudioPlayer follows the app's: interrupted by
    /// another exclusive session, resumed when it is done with notifyOthersOnDeactivation.
    @Test func anAudioPlayerFollowsItsSession() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let dir = try TempDir("player-session")
        defer { dir.remove() }
        let sessionA = AudioSession(identifier: "a", bus: .address(bus.address))
        let sessionB = AudioSession(identifier: "b", bus: .address(bus.address))
        try sessionA.setCategory(.playback)
        try sessionB.setCategory(.playback)
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: try tone(dir, "p.wav", 440, 30)), output: { NullOutput() })
        defer { player.stop() }
        player.audioSession = sessionA
        try sessionA.setActive(true)
        let events = player.events
        #expect(player.play())
        try sessionB.setActive(true)
        _ = try await waitForEvent(events, timeout: 10, "interruptionBegan") { $0 == .interruptionBegan }
        #expect(!player.isPlaying)
        try sessionB.setActive(false, options: .notifyOthersOnDeactivation)
        _ = try await waitForEvent(events, timeout: 10, "interruptionEnded") { $0 == .interruptionEnded(shouldResume: true) }
        #expect(player.isPlaying)
    }
}
