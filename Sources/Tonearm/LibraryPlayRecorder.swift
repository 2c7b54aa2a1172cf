// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmLibrary
import TonearmPlayback

/// Counts plays and skips of media-library items as a ``MusicPlayer`` plays them (MPMediaItem's
/// `playCount`, `skipCount` and `lastPlayedDate`): an item played to its end, or heard for at
/// least half its length (or 4 minutes), is a play; one left for another item sooner is a skip; one left by stopping
/// sooner counts as nothing. Time paused does not count, nor a seek's jump. Items that are not
/// in the library (files played by path) are passed over.
///
/// Threading: make it before `play()` so that it sees the first item start. It follows the
/// player's ``MusicPlayer/events`` on a task of its own and writes to the library there (never
/// on the render thread). ``finish()`` may be called from any task, once, when playback ends or
/// the program is quitting: it counts the current item then.
public final class LibraryPlayRecorder: Sendable {
    /// One item counted.
    public struct Record: Sendable, Hashable {
        public var persistentID: UInt64
        public var playedSeconds: Double
        /// What the library made of it, or why it could not be written.
        public var outcome: Result<MediaLibrary.PlayRecord, TonearmError>
    }

    private let library: MediaLibrary
    private let player: MusicPlayer
    private let state = Mutex(State())

    private struct State {
        var tally = PlayTally()
        /// The task has handled the player's stop (and no play since).
        var stopSeen = false
        /// ``finish()`` waiting for the task to see the stop.
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let start = ContinuousClock.now
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let output: AsyncStream<Record>.Continuation
    /// What was counted, in order; ends after ``finish()``.
    public let records: AsyncStream<Record>

    /// Starts following `player`, counting into `library`.
    public init(player: MusicPlayer, library: MediaLibrary) {
        self.library = library
        self.player = player
        // A player that has not played yet has no stop to be seen: `finish()` before any play
        // (a daemon shut down with nothing played) does not wait for one.
        let stopped = player.playbackState == .stopped
        state.withLock { $0.stopSeen = stopped }
        (records, output) = AsyncStream.makeStream(of: Record.self, bufferingPolicy: .bufferingNewest(1024))
        let events = player.events
        // Already playing: start from the current item. (Otherwise the first play says which.)
        if player.playbackState == .playing, let item = player.nowPlayingItem {
            handle(.itemChanged(item.persistentID))
            handle(.playing)
        }
        let t = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .currentItemChanged(_, let item): self.handle(.itemChanged(item?.persistentID))
                case .itemPlayedToEnd(_, let item):
                    if self.state.withLock({ $0.tally.current == nil }) { self.handle(.itemChanged(item.persistentID)) }
                    self.handle(.playedToEnd)
                case .stateChanged(.playing):
                    // Playing after a stop, or the first play without an item change: the
                    // player's item is current.
                    if self.state.withLock({ $0.tally.current == nil }), let item = self.player.nowPlayingItem {
                        self.handle(.itemChanged(item.persistentID))
                    }
                    self.handle(.playing)
                case .stateChanged(.paused), .stateChanged(.interrupted): self.handle(.paused)
                case .stateChanged(.stopped), .finished:
                    self.handle(.stopped)
                    let waiter = self.state.withLock { s -> CheckedContinuation<Void, Never>? in
                        s.stopSeen = true
                        defer { s.waiter = nil }
                        return s.waiter
                    }
                    waiter?.resume()
                default: break
                }
            }
        }
        task.withLock { $0 = t }
    }

    /// Stops following the player and counts the item playing now as left by stopping. When
    /// the player has stopped, first waits for the recorder to have seen it stop (so the items
    /// up to the end are counted as they were played). Ends ``records``.
    public func finish() async {
        if player.playbackState == .stopped {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let seen = state.withLock { s -> Bool in
                    if !s.stopSeen { s.waiter = c }
                    return s.stopSeen
                }
                if seen { c.resume() }
            }
        }
        task.withLock { $0?.cancel(); $0 = nil }
        handle(.stopped)
        output.finish()
    }

    private var now: Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    private func handle(_ event: PlayTally.Event) {
        guard let left = state.withLock({ s -> PlayTally.Leaving? in
            if event == .playing { s.stopSeen = false }
            return s.tally.handle(event, at: now)
        }) else { return }
        let outcome: Result<MediaLibrary.PlayRecord, TonearmError>
        do {
            guard let item = try library.item(persistentID: left.persistentID) else { return }
            // Played to the end counts as its whole length, however fast the output went.
            let seconds = left.completed ? max(left.playedSeconds, item.duration) : left.playedSeconds
            outcome = .success(try library.recordPlay(of: left.persistentID, playedSeconds: seconds,
                                                      skipped: left.forAnotherItem))
        } catch {
            outcome = .failure(error)
        }
        output.yield(Record(persistentID: left.persistentID, playedSeconds: left.playedSeconds, outcome: outcome))
    }
}
