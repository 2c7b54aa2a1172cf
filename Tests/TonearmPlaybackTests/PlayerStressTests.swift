// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmEngine
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// `AudioPlayer` and `Player` driven from many threads at once while the null output's render
/// thread plays in real time: seek storms, and play / pause / stop / seek / volume / effects
/// from every side. Run under ThreadSanitizer too (scripts/test): any data race between the
/// control threads, the decoder and the render thread is reported there. Here they prove that
/// the players come out of it consistent — every seek completes exactly once, the last seek is
/// where playback stands, and the player still plays to its end.
@Suite(.serialized) struct PlayerStressTests {
    /// Threads hammering at once (the machine has 2 cores: more than that contend for real).
    static let threads = 6

    /// A FLAC tone of `seconds` in `dir`.
    func flac(_ dir: TempDir, _ name: String, seconds: Double) throws -> URL {
        let path = dir.file(name)
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: seconds, rate: 48000)
        return URL(fileURLWithPath: path)
    }

    /// Found (fixed): 360 seeks in a burst pushed 360 generation-switch commands into the
    /// renderer's 128-slot command queue faster than the render thread drains it (every 10 ms);
    /// the pushes that found it full were dropped silently, the last switch among them, and the
    /// renderer then waited forever for it: silence, and `didFinishPlaying` never came (90 seeks
    /// passed). The generation is now one word that the newest request replaces
    /// (`StreamRenderer.requestGeneration`).
    @Test
    func anAudioPlayerSeekStormLandsOnTheLastSeekAndPlaysToTheEnd() async throws {
        let dir = try TempDir("stress-seek")
        defer { dir.remove() }
        let player = try AudioPlayer(contentsOf: try flac(dir, "seek.flac", seconds: 4),
                                     output: { NullOutput(periodDuration: 0.01) })
        let events = player.events
        #expect(player.play())
        DispatchQueue.concurrentPerform(iterations: Self.threads) { t in
            for i in 0..<60 {
                player.currentTime = Double((t * 61 + i * 17) % 38) / 10  // 0 … 3.7 s
                _ = player.currentTime
            }
        }
        #expect(player.isPlaying)
        // The storm is over: one more seek lands exactly where it asks, and the player plays on
        // from there to the end.
        player.currentTime = 3.5
        let landed = player.currentTime
        #expect(landed >= 3.5 && landed < 3.75, "currentTime \(landed) after seeking to 3.5")
        let finished = try await waitForEvent(events, "didFinishPlaying") {
            if case .didFinishPlaying = $0 { true } else { false }
        }
        #expect(finished == .didFinishPlaying(successfully: true))
        #expect(!player.isPlaying)
    }

    /// Under ThreadSanitizer this found (issue 17, fixed) the player's one equaliser used by two
    /// engines at once: `stop()` closed the old output after releasing the lock while a racing
    /// `play()` started a new one, and two racing opens configured the equaliser from two
    /// engines. Opening and closing an output now go through one gate (`AudioPlayer.outputGate`).
    @Test func anAudioPlayerPlayedStoppedAndSeekedFromManyThreadsStaysConsistent() async throws {
        let dir = try TempDir("stress-transport")
        defer { dir.remove() }
        let player = try AudioPlayer(contentsOf: try flac(dir, "t.flac", seconds: 3),
                                     output: { NullOutput(periodDuration: 0.01) })
        DispatchQueue.concurrentPerform(iterations: Self.threads) { t in
            for i in 0..<40 {
                switch (t + i) % 7 {
                case 0: _ = player.play()
                case 1: player.pause()
                case 2: player.stop()
                case 3: player.currentTime = Double(i % 25) / 10
                case 4: player.volume = Float(i % 10) / 10
                case 5: player.eq.bands[i % 10].gain = Double(i % 13) - 6
                default: _ = player.prepareToPlay()
                }
                _ = player.isPlaying
                _ = player.currentTime
            }
        }
        // Whatever the last call was, the player answers as a player in that state does.
        player.stop()
        #expect(!player.isPlaying)
        player.volume = 1
        player.currentTime = 2.5
        #expect(player.currentTime == 2.5)
        let events = player.events
        #expect(player.play())
        #expect(player.isPlaying)
        let finished = try await waitForEvent(events, "didFinishPlaying") {
            if case .didFinishPlaying = $0 { true } else { false }
        }
        #expect(finished == .didFinishPlaying(successfully: true))
    }

    @Test func aPlayerTransportedFromManyThreadsCompletesEverySeekOnceAndPlaysOn() async throws {
        let dir = try TempDir("stress-player")
        defer { dir.remove() }
        let url = try flac(dir, "p.flac", seconds: 3)
        let player = Player(url: url, output: { NullOutput(periodDuration: 0.01) })
        // Every seek's handler runs exactly once, with true or false (superseded, replaced).
        let completions = Mutex<[Int: Int]>([:])
        let issued = Atomic<Int>(0)
        let allCompleted = DispatchSemaphore(value: 0)
        let total = Self.threads * 40 / 5  // the seeks issued below (one call in five)
        player.play()
        DispatchQueue.concurrentPerform(iterations: Self.threads) { t in
            for i in 0..<40 {
                switch (t + i) % 5 {
                case 0: player.play()
                case 1: player.pause()
                case 2:
                    let id = issued.add(1, ordering: .relaxed).newValue
                    player.seek(to: Double(i % 25) / 10) { _ in
                        let done = completions.withLock { c -> Bool in
                            c[id, default: 0] += 1
                            return c.count == total
                        }
                        if done { allCompleted.signal() }
                    }
                case 3: player.volume = Float(i % 10) / 10
                default: player.rate = i.isMultiple(of: 2) ? 1 : 1.5
                }
                _ = player.currentTime()
                _ = player.timeControlStatus
            }
        }
        #expect(issued.load(ordering: .relaxed) == total)
        #expect(allCompleted.wait(timeout: .now() + 20) == .success, "not every seek completed")
        #expect(completions.withLock { $0.values.allSatisfy { $0 == 1 } }, "a seek completed twice")

        // Still a working player: a fresh item plays to its end.
        player.rate = 1
        player.volume = 1
        let ended = collectPlayerEvents(player) { $0 == .didPlayToEndTime }
        player.replaceCurrentItem(with: PlayerItem(url: try flac(dir, "q.flac", seconds: 0.5)))
        player.play()
        let seen = try await ended.value
        #expect(seen.last == .didPlayToEndTime)
    }
}
