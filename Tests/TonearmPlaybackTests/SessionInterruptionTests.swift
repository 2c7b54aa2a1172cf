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
/// done; a ducking one lowers it and restores it; mixable ones play together; checked in the
/// recording of the sink's monitor.
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

    /// The amplitude of the sine at `frequency` in each 50 ms window of `x` (Goertzel; the test
    /// tones make whole cycles in a window, so a tone at one of them does not leak into another).
    func amplitudes(_ x: [Float], _ frequency: Double, rate: Double) -> [Double] {
        let w = Int(rate / 20)
        return stride(from: 0, to: x.count - w, by: w).map { start in
            2 * goertzelPower(x[start..<(start + w)], frequency: frequency, sampleRate: rate).squareRoot()
        }
    }

    func dB(_ ratio: Double) -> Double { 20 * log10(max(ratio, 1e-9)) }

    func median(_ v: [Double]) -> Double {
        let s = v.sorted()
        return s.isEmpty ? 0 : s[s.count / 2]
    }

    /// What ``playTwoSessions`` heard: per 50 ms window, the amplitude of A's 440 Hz and of B's
    /// 880 Hz in the recording; and every event of A and of B up to their end.
    struct TwoSessionRun {
        var a440: [Double], b880: [Double]
        var aEvents: [QueuePlayerEvent], bEvents: [QueuePlayerEvent]
    }

    /// Two players with their own sessions on one private bus, playing to one recorded sink: A
    /// plays 440 Hz at `volumeA` (a 1 s item, then a 5 s one, gapless); once A's first item has
    /// played, `beforeB` runs, then B plays 880 Hz for 1 s and, once B has finished, deactivates
    /// (notifying the others); `afterB` runs, and the recording stops when A has finished.
    func playTwoSessions(categoryA: AudioSession.Category, optionsA: AudioSession.CategoryOptions,
                         categoryB: AudioSession.Category, optionsB: AudioSession.CategoryOptions,
                         volumeA: Float, beforeB: @Sendable (AudioSession, AsyncStream<QueuePlayerEvent>) async throws -> Void,
                         afterB: @Sendable (AsyncStream<QueuePlayerEvent>) async throws -> Void) async throws -> TwoSessionRun {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let dir = try TempDir("sessions-mix")
        defer { dir.remove() }
        let serverString = server.serverString
        let output: @Sendable () throws -> any AudioOutputDriver = { PulseOutput(server: serverString, streamName: "session-test") }
        let sessionA = AudioSession(identifier: "a", bus: .address(bus.address))
        let sessionB = AudioSession(identifier: "b", bus: .address(bus.address))
        try sessionA.setCategory(categoryA, options: optionsA)
        try sessionB.setCategory(categoryB, options: optionsB)
        let a = MusicPlayer(output: output, session: sessionA)
        let b = MusicPlayer(output: output, session: sessionB)
        defer { a.stop(); b.stop() }
        // 440 Hz and 880 Hz make whole cycles in 1 s: A's two items join without a seam.
        a.setQueue(withPaths: [try tone(dir, "a1.wav", 440, 1), try tone(dir, "a2.wav", 440, 5)])
        b.setQueue(withPaths: [try tone(dir, "b.wav", 880, 1)])
        a.volume = volumeA
        let aEvents = a.events, bEvents = b.events
        let aAll = Task { [stream = a.events] in
            var all: [QueuePlayerEvent] = []
            for await e in stream {
                all.append(e)
                if e == .finished { break }
            }
            return all
        }
        let bAll = Task { [stream = b.events] in
            var all: [QueuePlayerEvent] = []
            for await e in stream {
                all.append(e)
                if e == .finished { break }
            }
            return all
        }

        let rec = try server.startRecording(to: dir.file("heard.wav"))
        a.play()
        // A's first item has been played to its end (A's level before B is in the recording).
        _ = try await waitForEvent(aEvents, timeout: 20, "A's second item") {
            if case .currentItemChanged(index: 1, _) = $0 { return true } else { return false }
        }
        try await beforeB(sessionB, aEvents)
        b.play()
        _ = try await waitForEvent(bEvents, timeout: 20, "B finished") { $0 == .finished }
        try sessionB.setActive(false, options: .notifyOthersOnDeactivation)
        try await afterB(aEvents)
        _ = try await waitForEvent(aEvents, timeout: 20, "A finished") { $0 == .finished }
        rec.stop()
        #expect(a.volume == volumeA)  // the player's own volume is kept

        let heard = try readWAV(dir.file("heard.wav"))
        let x = heard.channels[0]
        return TwoSessionRun(a440: amplitudes(x, 440, rate: heard.sampleRate), b880: amplitudes(x, 880, rate: heard.sampleRate),
                             aEvents: await aAll.value, bEvents: await bAll.value)
    }

    /// A ducking session (playback + duckOthers) lowers a mixable one to
    /// ``AudioSession/duckLevel`` while it is active, and the other comes back to exactly its
    /// level after: measured in the recording of the sink both play to.
    @Test func aDuckingSessionLowersTheOtherAndRestoresIt() async throws {
        let run = try await playTwoSessions(
            categoryA: .playback, optionsA: [.mixWithOthers], categoryB: .playback, optionsB: [.mixWithOthers, .duckOthers],
            volumeA: 0.8,
            beforeB: { sessionB, aEvents in
                // B activates first and A ducks; then B plays (play() finds its session active).
                try sessionB.setActive(true)
                _ = try await waitForEvent(aEvents, timeout: 20, "A ducked") { $0 == .ducked(level: AudioSession.duckLevel) }
            },
            afterB: { aEvents in
                _ = try await waitForEvent(aEvents, timeout: 20, "A restored") { $0 == .ducked(level: 1) }
            })
        #expect(run.aEvents.contains(.ducked(level: AudioSession.duckLevel)))
        #expect(run.aEvents.contains(.ducked(level: 1)))
        #expect(!run.aEvents.contains(.stateChanged(.interrupted)))
        #expect(!run.bEvents.contains { if case .ducked = $0 { true } else { false } }, "the ducking session itself ducked")

        let a = run.a440, b = run.b880
        // Windows where each tone sounds (at least a tenth of its full level).
        let aOn = a.indices.filter { a[$0] > 0.3 * 0.8 * 0.1 }
        let bOn = b.indices.filter { b[$0] > 0.3 * 0.1 }
        let firstA = try #require(aOn.first), lastA = try #require(aOn.last)
        let firstB = try #require(bOn.first), lastB = try #require(bOn.last)
        #expect((18...24).contains(bOn.count), "880 Hz in \(bOn.count) windows")
        #expect(bOn.count == lastB - firstB + 1, "B's tone has gaps")
        #expect(firstA < firstB && lastB < lastA, "B (windows \(firstB)...\(lastB)) did not sound within A (\(firstA)...\(lastA))")

        // A's level before B: its first second, without the windows at its start.
        let before = Array(a[(firstA + 2)...(firstB - 2)])
        try #require(before.count >= 10)
        let level = median(before)
        #expect(abs(dB(level / (0.3 * 0.8))) < 0.5, "A's level \(level) is not its volume 0.8 × 0.3")
        #expect(before.allSatisfy { abs(dB($0 / level)) < 0.5 }, "A's level before B varies: \(before)")

        // While B sounds, A sounds at the duck level, ±1 dB, and B at its full level. Left out:
        // B's last window (its tone ends inside it) and its first three — B's new stream is
        // heard at once, while A's lowered level is heard only after the 75 ms A has buffered.
        let during = (firstB + 3)...(lastB - 1)
        let duckedBy = dB(Double(AudioSession.duckLevel))  // -14 dB
        let notDucked = during.filter { abs(dB(a[$0] / level) - duckedBy) >= 1 }
        let notDuckedText = notDucked.map { "window \($0): \(String(format: "%.1f", dB(a[$0] / level))) dB" }.joined(separator: ", ")
        #expect(notDucked.isEmpty, "A not at \(String(format: "%.1f", duckedBy)) dB ±1 dB while B sounds: \(notDuckedText)")
        let bLow = during.filter { abs(dB(b[$0] / 0.3)) >= 0.5 }
        #expect(bLow.isEmpty, "B not at its full level: \(bLow.map { "window \($0): \(b[$0])" }.joined(separator: ", "))")

        // After B: A's last second (before its last windows), back at the level it had, ±0.5 dB.
        try #require(lastA - 22 > lastB)
        let after = (lastA - 22)...(lastA - 2)
        let notRestored = after.filter { abs(dB(a[$0] / level)) >= 0.5 }
        let notRestoredText = notRestored.map { "window \($0): \(String(format: "%.2f", dB(a[$0] / level))) dB" }.joined(separator: ", ")
        #expect(notRestored.isEmpty, "A not back at its level after B: \(notRestoredText)")
        // A was lowered once, in one stretch that holds B's time, and nowhere else.
        let ducked = a.indices.filter { $0 > firstA && $0 < lastA && a[$0] < level * 0.5 }
        let firstDucked = try #require(ducked.first), lastDucked = try #require(ducked.last)
        #expect(ducked.count == lastDucked - firstDucked + 1, "A lowered in more than one stretch: \(ducked)")
        #expect(firstDucked <= during.lowerBound && during.upperBound <= lastDucked)
    }

    /// Two mixable sessions (ambient) play together: neither interrupts nor ducks the other, and
    /// both tones sound at their full level at the same time in the recording.
    @Test func twoMixableSessionsPlayTogether() async throws {
        let run = try await playTwoSessions(
            categoryA: .ambient, optionsA: [], categoryB: .ambient, optionsB: [], volumeA: 1,
            beforeB: { _, _ in }, afterB: { _ in })
        for (name, events) in [("A", run.aEvents), ("B", run.bEvents)] {
            #expect(!events.contains(.stateChanged(.interrupted)), "\(name) was interrupted")
            #expect(!events.contains { if case .ducked = $0 { true } else { false } }, "\(name) was ducked")
            #expect(events.filter { $0 == .stateChanged(.paused) }.isEmpty, "\(name) paused")
        }

        let a = run.a440, b = run.b880
        let aOn = a.indices.filter { a[$0] > 0.03 }
        let bOn = b.indices.filter { b[$0] > 0.03 }
        let firstA = try #require(aOn.first), lastA = try #require(aOn.last)
        let firstB = try #require(bOn.first), lastB = try #require(bOn.last)
        #expect((18...24).contains(bOn.count), "880 Hz in \(bOn.count) windows")
        #expect(firstA < firstB && lastB < lastA)
        // A sounds without a gap from its start to its end (nobody paused it).
        #expect(aOn.count == lastA - firstA + 1, "A's tone has gaps")
        let level = median(Array(a[(firstA + 2)...(firstB - 2)]))
        #expect(abs(dB(level / 0.3)) < 0.5, "A's level \(level)")
        // While B sounds, both are there at full level. B's first two windows are left out: when a
        // stream joins a running null sink, the server rewinds what it had rendered ahead and
        // renders it again with the new stream, but the monitor has already delivered the first
        // rendering — so up to the sink's render-ahead (tens of ms) of A alone is recorded after
        // B's first samples (seen: B at -12 dB, then -2.9 dB, then full).
        let both = ((firstB + 2)...(lastB - 1)).filter { abs(dB(a[$0] / level)) < 0.5 && abs(dB(b[$0] / 0.3)) < 0.5 }
        #expect(both.count == lastB - firstB - 2, "both at full level in only \(both.count) of \(lastB - firstB - 2) windows")
        #expect(both.count >= 16)
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

    /// Issue 23: every player belongs to the process's session unless it opts out, as on iOS
    /// every AVAudioPlayer and the application music player belong to
    /// `AVAudioSession.sharedInstance()` — no `player.audioSession = .shared` needed. Another
    /// session of the process that becomes active exclusively interrupts a default
    /// `AudioPlayer` and a default `MusicPlayer`; one that opted out (`audioSession = nil`,
    /// `session: nil`) plays on; its end with notifyOthersOnDeactivation resumes them. The
    /// process session and the other meet in the process (their bus: the user's session bus
    /// or, without one, the process's hub).
    @Test func playersFollowTheProcessSessionUnlessTheyOptOut() async throws {
        let dir = try TempDir("player-default-session")
        defer { dir.remove() }
        let url = URL(fileURLWithPath: try tone(dir, "p.wav", 440, 30))
        let shared = AudioSession.shared
        try shared.setCategory(.playback)
        // The process session connected (or in its hub) before the other announces itself:
        // the players' own activation on play runs on a task of its own.
        try shared.setActive(true)
        let following = try AudioPlayer(contentsOf: url, output: { NullOutput() })
        defer { following.stop() }
        let optedOut = try AudioPlayer(contentsOf: url, output: { NullOutput() })
        defer { optedOut.stop() }
        optedOut.audioSession = nil
        #expect(following.audioSession === shared)
        #expect(optedOut.audioSession == nil)
        let music = MusicPlayer(output: { NullOutput() })
        defer { music.stop() }
        #expect(music.session === shared)
        music.setQueue(withPaths: [url.path])
        let playerEvents = following.events
        let musicEvents = music.events
        #expect(following.play())
        #expect(optedOut.play())
        music.play()
        _ = try await waitForEvent(musicEvents, timeout: 10, "the music plays") { $0 == .stateChanged(.playing) }
        let other = AudioSession(identifier: "other-\(UUID().uuidString)")
        try other.setCategory(.playback)
        try other.setActive(true)
        _ = try await waitForEvent(playerEvents, timeout: 10, "interruptionBegan") { $0 == .interruptionBegan }
        _ = try await waitForEvent(musicEvents, timeout: 10, "the music interrupted") { $0 == .stateChanged(.interrupted) }
        #expect(!following.isPlaying)
        #expect(optedOut.isPlaying, "a player that opted out is not interrupted")
        try other.setActive(false, options: .notifyOthersOnDeactivation)
        _ = try await waitForEvent(playerEvents, timeout: 10, "interruptionEnded") { $0 == .interruptionEnded(shouldResume: true) }
        _ = try await waitForEvent(musicEvents, timeout: 10, "the music resumed") { $0 == .stateChanged(.playing) }
        #expect(following.isPlaying)
        try? shared.setActive(false)
    }

    /// `play()` activates the session the player belongs to, as AVAudioPlayer's and the
    /// application music player's `play()` activate the app's session (at once here: a session
    /// without a bus has nothing to wait for).
    @Test func playActivatesThePlayersSession() async throws {
        let dir = try TempDir("player-session-activation")
        defer { dir.remove() }
        let url = URL(fileURLWithPath: try tone(dir, "p.wav", 440, 5))
        let forPlayer = AudioSession(identifier: "activation-player", bus: .none)
        let player = try AudioPlayer(contentsOf: url, output: { NullOutput() })
        defer { player.stop() }
        player.audioSession = forPlayer
        #expect(!forPlayer.isActive)
        #expect(player.play())
        #expect(forPlayer.isActive)
        let forMusic = AudioSession(identifier: "activation-music", bus: .none)
        let music = MusicPlayer(output: { NullOutput() }, session: forMusic)
        defer { music.stop() }
        music.setQueue(withPaths: [url.path])
        #expect(!forMusic.isActive)
        music.play()
        #expect(forMusic.isActive)
    }
}
