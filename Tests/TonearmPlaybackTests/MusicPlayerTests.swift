// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmPlaylists
import TonearmTestSupport

/// `MusicPlayer`'s rules (MPMusicPlayerController's), on the silent real-time output.
@Suite  final class MusicPlayerTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("music") }
    deinit { dir.remove() }

    /// `n` tones of `seconds` each, made by ffmpeg while the test's task is suspended (a test
    /// blocked on ffmpeg would hold a thread of the pool that other tests wait on).
    func tones(_ n: Int, seconds: Double = 20) async throws -> [String] {
        var paths: [String] = []
        for i in 0..<n {
            let p = dir.file("t\(i).flac")
            try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(440 + 110 * i):duration=\(seconds)", p])
            paths.append(p)
        }
        return paths
    }

    @Test func previousRestartsAfterThreeSecondsAndOtherwiseGoesBack() async throws {
        let paths = try await tones(3)
        let music = MusicPlayer(output: { NullOutput() })
        defer { music.stop() }
        let items = music.nowPlayingItemChanges
        music.setQueue(withPaths: paths)
        let states = music.playbackStateChanges
        music.play()
        // Paused at once: on a busy machine the test may be descheduled for longer than a
        // track lasts, and the rules below do not need the audio to move.
        music.pause()
        var stateIterator = states.makeAsyncIterator()
        #expect(await stateIterator.next() == .playing)
        #expect(await stateIterator.next() == .paused)
        #expect(music.indexOfNowPlayingItem == 0)
        music.skipToNextItem()
        #expect(music.indexOfNowPlayingItem == 1)
        music.currentPlaybackTime = 10
        #expect(abs(music.currentPlaybackTime - 10) < 0.2)
        // More than 3 s in: back to the start of the same item.
        music.skipToPreviousItem()
        #expect(music.indexOfNowPlayingItem == 1)
        #expect(music.currentPlaybackTime < 0.2)
        // At the start: the previous item.
        music.skipToPreviousItem()
        #expect(music.indexOfNowPlayingItem == 0)
        #expect(music.nowPlayingItem?.path == paths[0])
        // The item sequence saw 0 → 1 → 0 (after the queue was set).
        var seen: [String] = []
        for await item in items {
            seen.append(item.map { ($0.path as NSString).lastPathComponent } ?? "-")
            if seen.suffix(3) == ["t0.flac", "t1.flac", "t0.flac"] { break }
        }
        #expect(seen.suffix(3) == ["t0.flac", "t1.flac", "t0.flac"])
    }

    @Test func seekingForwardScansAudiblyAndEndSeekingStops() async throws {
        let paths = try await tones(1, seconds: 120)
        let music = MusicPlayer(output: { NullOutput() })
        defer { music.stop() }
        music.setQueue(withPaths: paths)
        let events = music.events
        music.play()
        music.beginSeekingForward()
        #expect(music.currentPlaybackRate == 4)
        // Jumps of 1 s every 0.25 s: a seek past 2 s comes well before 2 s of real time.
        let e = try await waitForEvent(events, timeout: 60, "a scan step past 2 s") {
            if case .seeked(let t) = $0 { return t >= 2 }
            return false
        }
        guard case .seeked(let t) = e else { return }
        music.endSeeking()
        #expect(music.currentPlaybackRate == 1)
        #expect(music.currentPlaybackTime >= t)
        music.beginSeekingBackward()
        _ = try await waitForEvent(events, timeout: 60, "a backward scan step") {
            if case .seeked(let b) = $0 { return b < t }
            return false
        }
        music.endSeeking()
    }

    @Test func aPlaylistBecomesTheQueueAndMissingEntriesAreReported() async throws {
        let paths = try await tones(2, seconds: 1)
        let list = Playlist(title: "Mix", entries: (paths + [dir.file("gone.flac")]).map { PlaylistEntry(location: .file(path: $0)) })
        let music = MusicPlayer(output: { NullOutput() })
        let missing = music.setQueue(with: list)
        #expect(music.queue.items().map(\.path) == paths)
        #expect(missing.count == 1)
        #expect(missing.first?.path == dir.file("gone.flac"))
    }

    @Test func theQueueIsSavedAndRestored() async throws {
        let paths = try await tones(3, seconds: 1)
        let store = QueueStateStore(path: dir.file("state/queue.json"))
        let music = MusicPlayer(output: { NullOutput() }, store: store)
        music.setQueue(withPaths: paths)
        music.repeatMode = .all
        music.shuffleMode = .songs
        music.queue.skipToItem(at: 2)
        music.save()
        let again = MusicPlayer(output: { NullOutput() }, store: store)
        #expect(try again.restore())
        #expect(again.queue.items().map(\.path) == paths)
        #expect(again.repeatMode == .all)
        #expect(again.shuffleMode == .songs)
        #expect(again.indexOfNowPlayingItem == 2)
        #expect(again.queue.playOrder == music.queue.playOrder)
        // A damaged file is a typed error, not a crash.
        let damaged = QueueStateStore(path: dir.file("damaged/queue.json"))
        try FileManager.default.createDirectory(atPath: dir.file("damaged"), withIntermediateDirectories: true)
        try Data("{".utf8).write(to: URL(fileURLWithPath: damaged.path))
        #expect(throws: TonearmError.self) { try MusicPlayer(output: { NullOutput() }, store: damaged).restore() }
    }

    /// An idle daemon is not woken by the position's periodic save: the timer exists only while
    /// the queue plays (made on `playing`, cancelled on `paused`/`stopped` before the listeners
    /// hear the change).
    @Test func thePositionSaveTimerRunsOnlyWhilePlaying() async throws {
        // Long enough that a test starved by a loaded machine is not overtaken by the queue's
        // end (5 s tones failed a clean-clone run: the queue had stopped between two steps).
        let paths = try await tones(2, seconds: 60)
        let store = QueueStateStore(path: dir.file("idle/queue.json"))
        let music = MusicPlayer(output: { NullOutput() }, store: store, session: nil)
        defer { music.stop() }
        music.setQueue(withPaths: paths)
        // Repeating: the queue never ends by itself. Two clean-clone runs heard `playing`, then
        // `stopped` at index 0 with no error: the parallel phase's other tests had kept this
        // test's task from running for the whole two minutes of the queue (it and its
        // neighbours ended ~180 s after they started).
        music.repeatMode = .all
        #expect(!music.isSavingPeriodically)
        let states = music.playbackStateChanges
        // The states heard, in order. A clean-clone run's parallel phase once heard `playing` and
        // then found no timer, the next state not `paused`: the queue had changed by itself in
        // between (which state is not known yet: the messages now say). Each step waits for its
        // state (30 s at most: an offline run once waited for ever here), and the timer must then
        // match the state the queue is in.
        let heardBox = Mutex<[PlaybackState]>([])
        var heard: [PlaybackState] { heardBox.withLock { $0 } }
        func next(_ wanted: PlaybackState) async -> Bool {
            (try? await waitForEvent(states, timeout: 30, "the state \(wanted)") { s in
                heardBox.withLock { $0.append(s) }
                return s == wanted
            }) != nil
        }
        // When the queue stopped by itself (a clean-clone run heard playing, then stopped): its
        // last error and the output's underruns say why.
        func why() -> String {
            let q = music.queue
            return "; last error \(q.lastError.map { "\($0)" } ?? "none"), \(q.underrunCount) underruns, index \(q.currentIndex.map(String.init) ?? "none")"
        }
        music.play()
        #expect(await next(.playing), "heard \(heard), now \(music.playbackState)\(why())")
        #expect(music.isSavingPeriodically == (music.playbackState == .playing), "heard \(heard), now \(music.playbackState)\(why())")
        if heard != [.playing] { print("MusicPlayerTests.thePositionSaveTimerRunsOnlyWhilePlaying: the queue changed by itself: heard \(heard)") }
        music.pause()
        #expect(await next(.paused), "heard \(heard), now \(music.playbackState)\(why())")
        #expect(!music.isSavingPeriodically, "heard \(heard), now \(music.playbackState)\(why())")
        music.play()
        #expect(await next(.playing), "heard \(heard), now \(music.playbackState)\(why())")
        #expect(music.isSavingPeriodically == (music.playbackState == .playing), "heard \(heard), now \(music.playbackState)\(why())")
        music.stop()
        #expect(await next(.stopped), "heard \(heard), now \(music.playbackState)\(why())")
        #expect(!music.isSavingPeriodically, "heard \(heard)")
        // Without a store there is nothing to save and no timer, playing or not.
        let unsaved = MusicPlayer(output: { NullOutput() }, session: nil)
        defer { unsaved.stop() }
        unsaved.setQueue(withPaths: paths)
        let unsavedStates = unsaved.playbackStateChanges
        unsaved.play()
        #expect(try await waitForEvent(unsavedStates, timeout: 30, "playing") { _ in true } == .playing)
        #expect(!unsaved.isSavingPeriodically)
    }

    /// 2,000 songs appended one by one (2,000 queue changes) are saved in far fewer saves than
    /// changes (each save writes the whole queue), and the file ends with all of them.
    @Test func manyQueueChangesAreSavedInFewSavesAndTheLastStateIsKept() async throws {
        let store = QueueStateStore(path: dir.file("burst/queue.json"))
        let music = MusicPlayer(output: { NullOutput() }, store: store, session: nil)
        let events = music.events
        let n = 2000
        for i in 0..<n { music.queue.append(QueueItem(path: dir.file("song\(i).flac"))) }
        // A change after them: once the listeners hear it, the pump has handled every append.
        music.repeatMode = .all
        for await e in events where e == .repeatModeChanged(.all) { break }
        music.saves.flush()
        #expect(try store.load()?.items.count == n)
        // Without coalescing there would be n saves; how few depends on how fast the saves run
        // against the appends (204 of 2,000 under ThreadSanitizer in a clean-clone run, far
        // fewer without): a bound of half leaves room for a slow machine.
        #expect(music.saves.count < n / 2, "\(music.saves.count) saves for \(n) changes")
    }
}
