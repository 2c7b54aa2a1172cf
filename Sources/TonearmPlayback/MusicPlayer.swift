// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCore
import TonearmOutput
import TonearmPlaylists
import TonearmSession

/// A music player with a queue (the counterpart of `MPMusicPlayerController`), built on a
/// gapless ``QueuePlayer``: `setQueue(with:)`, `play()`, `pause()`, `stop()`, skipping (previous
/// restarts the item when more than 3 s in, as on iOS), audible fast scan, repeat and shuffle,
/// and async sequences of its state, now-playing item and volume.
///
/// With a ``QueueStateStore`` the queue, position, repeat and shuffle are saved on every change
/// and once a second while playing, so ``restore()`` picks up where it was — also after the
/// process was killed (at most a second lost).
///
/// Threading: every member may be called from any thread; the sequences deliver on a
/// non-realtime thread.
public final class MusicPlayer: Sendable {
    /// The gapless queue underneath (its equaliser, effects and ReplayGain setting).
    public let queue: QueuePlayer
    private let store: QueueStateStore?
    private let broadcaster = EventBroadcaster<QueuePlayerEvent>()
    private let seeking = Mutex<(any DispatchSourceTimer)?>(nil)
    /// The position's periodic save: running only while the queue plays (an idle player —
    /// stopped, paused, finished — has no timer and is not woken by it).
    private let saver = PositionSaver()
    /// The saves that changes ask for, coalesced (a burst of changes is one save of its end).
    let saves = Coalescer(label: "tonearm.queue.save")
    private let pump: Task<Void, Never>
    /// The audio session whose interruptions and ducking this player follows (nil: none).
    public let session: AudioSession?
    /// The tasks following ``session`` (nil until it is followed).
    private let sessionTasks = Mutex<[Task<Void, Never>]?>(nil)

    /// A player whose output is made by `output` when playback starts; `store` (optional) keeps
    /// the queue between runs.
    ///
    /// The player follows `session` as an iOS app's player follows its AVAudioSession:
    /// `play()` activates it, another session's interruption pauses it (state `interrupted`) and
    /// the interruption's end with `shouldResume` plays on; a duck request lowers it to the
    /// asked level and its end restores it exactly. By default the process's
    /// ``AudioSession/shared`` — as `MPMusicPlayerController.applicationMusicPlayer` belongs to
    /// the app's session — followed from the first `play()` on (a subscription on the play
    /// path, the bus connected on a task of its own: never a delay before the first sound);
    /// another session is followed from here on; nil follows none.
    public init(output: @escaping @Sendable () throws -> any AudioOutputDriver = QueuePlayer.automaticOutput,
                store: QueueStateStore? = nil, session: AudioSession? = .shared) {
        let q = QueuePlayer(output: output)
        queue = q
        self.store = store
        self.session = session
        if let session {
            q.corkRequestHandler = { session.reportServerInterruption(began: $0) }
        }
        let b = broadcaster
        let events = q.events
        let saves = saves
        pump = Task.detached { [store, q, saver] in
            for await e in events {
                switch e {
                case .currentItemChanged, .queueChanged, .repeatModeChanged, .shuffleModeChanged, .seeked,
                     .stateChanged, .finished, .volumeChanged:
                    // One save for a burst of changes (10,000 songs added one by one were
                    // 10,000 saves of a growing queue: quadratic); it reads the state when it runs.
                    if let store { saves.request { try? store.save(MusicPlayer.snapshot(of: q)) } }
                default: break
                }
                // Before the listeners hear it: once a client sees `paused`, nothing ticks.
                if case .stateChanged(let state) = e, let store {
                    if state == .playing { saver.start(store: store, queue: q) } else { saver.stop() }
                }
                b.yield(e)
            }
        }
        if let session, session !== AudioSession.shared {
            _ = session.isConnectedToBus
            follow(session)
        }
    }

    deinit {
        sessionTasks.withLock { $0?.forEach { $0.cancel() } }
        pump.cancel()
        seeking.withLock { $0?.cancel() }
        saver.stop()
    }

    // MARK: Queue

    /// Replaces the queue with `items` (playback stops; the first item becomes current).
    public func setQueue(with items: [QueueItem]) { queue.setQueue(items) }

    /// Replaces the queue with a playlist's entries (files, and `http(s)` streams); entries that
    /// are missing are skipped and returned with the reason, entries with other schemes skipped.
    @discardableResult
    public func setQueue(with playlist: Playlist) -> [MissingPlaylistEntry] {
        let checked = playlist.entriesCheckingFiles()
        let items = checked.playable.compactMap { e -> QueueItem? in
            if e.location.isRemote {
                let item = QueueItem(url: e.location.url)
                return item.isRemote ? item : nil
            }
            return e.location.path.map { QueueItem(path: $0) }
        }
        queue.setQueue(items)
        return checked.missing
    }

    /// Replaces the queue with the files at `paths` (`http(s)://` addresses play as streams).
    public func setQueue(withPaths paths: [String]) { queue.setQueue(paths.map { QueueItem(pathOrURL: $0) }) }

    /// Restores the queue saved in the store (stopped, at the saved position). False when there
    /// is no store or nothing saved.
    /// - Throws: ``TonearmError/notReadable(path:reason:)`` for a damaged state file.
    @discardableResult
    public func restore() throws(TonearmError) -> Bool {
        guard let store, let saved = try store.load() else { return false }
        queue.setQueue(saved.items, order: saved.order, startingAt: saved.position)
        queue.volume = saved.volume
        return true
    }

    static func snapshot(of q: QueuePlayer) -> SavedQueue {
        SavedQueue(items: q.items(), order: q.playOrder, position: q.currentTime, volume: q.volume)
    }

    /// Saves now (a no-op without a store).
    public func save() {
        if let store { try? store.save(Self.snapshot(of: queue)) }
    }

    /// Saves one last time and ends saving (the store is closed: later changes, say stopping,
    /// are not saved). Returns once nothing is being written, so the process may exit at once
    /// without leaving a temporary file behind. A no-op without a store.
    public func finishSaving() {
        saver.stop()
        save()
        store?.close()
    }

    /// Subscribes to `session`'s interruptions and duck requests, once (no bus needed).
    private func follow(_ session: AudioSession) {
        sessionTasks.withLock { tasks in
            guard tasks == nil else { return }
            let q = queue
            let (interruptions, ducking) = session.subscribeWithoutConnecting()
            tasks = [
                Task.detached { [q] in
                    var wasPlaying = false
                    for await i in interruptions {
                        switch i {
                        case .began:
                            wasPlaying = q.playbackState == .playing
                            q.interrupt()
                        case .ended(let shouldResume):
                            if shouldResume && wasPlaying && q.playbackState == .interrupted {
                                try? session.setActive(true)
                                q.play()
                            } else if q.playbackState == .interrupted {
                                q.pause()
                            }
                            wasPlaying = false
                        }
                    }
                },
                Task.detached { [q] in
                    for await d in ducking {
                        switch d {
                        case .duckRequested(let level): q.duckLevel = level
                        case .duckEnded: q.duckLevel = 1
                        }
                    }
                },
            ]
        }
    }

    // MARK: Transport

    /// Plays, activating the session when there is one (``AudioSession`` never makes the first
    /// sound wait for its bus).
    public func play() {
        if let session {
            follow(session)
            session.activateForPlay()
        }
        queue.play()
        startSaving()
    }

    public func pause() {
        endSeeking()
        queue.pause()
    }

    public func stop() {
        endSeeking()
        queue.stop()
    }

    /// Next item in play order.
    public func skipToNextItem() { queue.advanceToNextItem() }

    /// More than 3 s into the item: back to its start; otherwise the previous item.
    public func skipToPreviousItem() {
        if queue.currentTime > 3 { queue.seek(to: 0) } else { queue.skipToPreviousItem() }
    }

    public func skipToBeginning() { queue.seek(to: 0) }

    /// Plays ahead in 0.25 s snippets, 1 s apart (4× speed, audible) until ``endSeeking()``.
    public func beginSeekingForward() { beginSeeking(step: 1.0) }

    /// Plays backwards in 0.25 s snippets (each 1.25 s earlier) until ``endSeeking()``.
    public func beginSeekingBackward() { beginSeeking(step: -1.25) }

    public func endSeeking() {
        seeking.withLock { t in
            t?.cancel()
            t = nil
        }
    }

    private func beginSeeking(step: Double) {
        endSeeking()
        let q = queue
        seeking.withLock { t in
            let timer = DispatchSource.makeTimerSource(queue: PlayerWakeups.queue)
            timer.schedule(deadline: .now() + 0.25, repeating: 0.25)
            timer.setEventHandler {
                let d = q.currentDuration ?? .infinity
                q.seek(to: min(max(0, q.currentTime + step), max(0, d - 0.5)))
            }
            t = timer
            timer.resume()
        }
    }

    /// Seconds between two saves of the position while playing steadily.
    public static let positionSaveInterval: Double = 5

    /// While playing, the position is saved every ``positionSaveInterval`` seconds (what a
    /// SIGKILL during steady play can lose); every change — an item, a seek, a pause, the queue,
    /// the modes, the volume — is saved as it happens (see `init`). Each save writes a file
    /// (five system calls, a fraction of a millisecond of CPU), so steady play saves rarely.
    /// The timer runs only while the queue plays: it stops when the queue leaves `playing`
    /// (the state change itself was saved) and starts again when it plays.
    private func startSaving() {
        guard let store else { return }
        saver.start(store: store, queue: queue)
    }

    /// Whether the periodic position save is running now (only while playing, with a store).
    public var isSavingPeriodically: Bool { saver.isRunning }

    // MARK: State

    public var playbackState: PlaybackState { queue.playbackState }
    /// The parts of the current item in memory when it is a network stream
    /// (``QueuePlayer/loadedTimeRanges``); empty for a file.
    public var loadedTimeRanges: [TimeRange] { queue.loadedTimeRanges }
    /// ``loadedTimeRanges`` each time it has grown enough to draw again
    /// (``QueuePlayer/loadedTimeRangeChanges``).
    public var loadedTimeRangeChanges: AsyncStream<[TimeRange]> { queue.loadedTimeRangeChanges }
    /// Whether the player plays on by itself when its lost output answers again
    /// (``QueuePlayer/isWaitingForOutput``).
    public var isWaitingForOutput: Bool { queue.isWaitingForOutput }
    /// Times audio was not there when it was due (``QueuePlayer/underrunCount``).
    public var underrunCount: Int { queue.underrunCount }
    public var nowPlayingItem: QueueItem? { queue.currentItem }
    public var indexOfNowPlayingItem: Int? { queue.currentIndex }

    /// Seconds into the now-playing item; setting it seeks.
    public var currentPlaybackTime: Double {
        get { queue.currentTime }
        set { queue.seek(to: newValue) }
    }

    /// 1 while playing normally, 4 / −5 while seeking forward / backward, 0 when not playing.
    public var currentPlaybackRate: Float {
        guard queue.playbackState == .playing else { return 0 }
        return seeking.withLock { $0 } == nil ? 1 : 4
    }

    public var repeatMode: RepeatMode {
        get { queue.repeatMode }
        set { queue.repeatMode = newValue }
    }

    public var shuffleMode: ShuffleMode {
        get { queue.shuffleMode }
        set { queue.shuffleMode = newValue }
    }

    public var volume: Float {
        get { queue.volume }
        set { queue.volume = newValue }
    }

    /// Every event of the queue (lossless, as ``QueuePlayer/events``).
    public var events: AsyncStream<QueuePlayerEvent> { broadcaster.stream(bufferingNewest: nil) }

    /// Playback state changes.
    public var playbackStateChanges: AsyncStream<PlaybackState> {
        let source = events
        return AsyncStream { c in
            let t = Task { for await e in source { if case .stateChanged(let s) = e { c.yield(s) } }; c.finish() }
            c.onTermination = { _ in t.cancel() }
        }
    }

    /// Now-playing item changes (nil when the queue is empty).
    public var nowPlayingItemChanges: AsyncStream<QueueItem?> {
        let source = events
        return AsyncStream { c in
            let t = Task { for await e in source { if case .currentItemChanged(_, let item) = e { c.yield(item) } }; c.finish() }
            c.onTermination = { _ in t.cancel() }
        }
    }

    /// Volume changes.
    public var volumeChanges: AsyncStream<Float> {
        let source = events
        return AsyncStream { c in
            let t = Task { for await e in source { if case .volumeChanged(let v) = e { c.yield(v) } }; c.finish() }
            c.onTermination = { _ in t.cancel() }
        }
    }
}

/// The periodic position save of a ``MusicPlayer``: one repeating timer, made when the queue
/// starts playing and cancelled when it stops, so that an idle player has no timer at all.
final class PositionSaver: Sendable {
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)

    /// Starts the timer unless it runs (saves `queue`'s state to `store` while it plays).
    func start(store: QueueStateStore, queue q: QueuePlayer) {
        timer.withLock { t in
            if t != nil { return }
            let timer = DispatchSource.makeTimerSource(queue: PlayerWakeups.queue)
            let every = MusicPlayer.positionSaveInterval
            timer.schedule(deadline: .now() + every, repeating: every, leeway: .milliseconds(500))
            timer.setEventHandler { [store, q] in
                guard q.playbackState == .playing else { return }
                try? store.save(MusicPlayer.snapshot(of: q))
            }
            t = timer
            timer.resume()
        }
    }

    func stop() {
        timer.withLock { t in
            t?.cancel()
            t = nil
        }
    }

    var isRunning: Bool { timer.withLock { $0 != nil } }
}

