// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import SeedPorts
import Synchronization
import Testing
import TonearmCompat
import TonearmTestSupport

/// Seed 002's MyAudioPlayer, ported with Apple's names, does what the post means it to do: it
/// knows the file's duration, plays it through the engine's EQ to its end and tells its delegate
/// (successfully), and a seek by `currentTime` during play moves to that time with no finish
/// from the segment it replaced (the post's trick of unsetting the delegate around `stop()` —
/// here `stop()` calls the old segment's handler, as AVAudioPlayerNode's does).
@Suite(.serialized) final class Seed002Tests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("seed002") }
    deinit { dir.remove() }

    final class Delegate: MyAudioPlayerDelegate, @unchecked Sendable {
        let finishes = Mutex<[Bool]>([])
        let (ended, sink) = AsyncStream<Bool>.makeStream()
        func audioPlayerDidFinishPlaying(_ player: MyAudioPlayer, successfully flag: Bool) {
            finishes.withLock { $0.append(flag) }
            sink.yield(flag)
        }
    }

    @Test func myAudioPlayerPlaysToItsEndAndSeeksByCurrentTime() async throws {
        let path = dir.file("song.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le"], seconds: 1, rate: 44_100)
        let player = try MyAudioPlayer(contentsOf: URL(fileURLWithPath: path), output: { NullOutput() })
        #expect(abs(player.duration - 1) < 1e-9)
        let delegate = Delegate()
        player.delegate = delegate
        player.play()
        #expect(player.isPlaying)
        // A seek while playing: the old segment's end is not reported.
        player.currentTime = 0.5
        #expect(player.isPlaying)
        let flag = try await waitForEvent(delegate.ended, "the finish") { _ in true }
        #expect(flag == true)
        #expect(delegate.finishes.withLock { $0 } == [true], "one finish: the seek's replaced segment reported none")
        #expect(player.currentTime >= 0.5)
        player.stop()
    }
}
