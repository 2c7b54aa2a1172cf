// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmNetwork
import TonearmOutput

/// Whether a queue is playing (`MPMusicPlaybackState`).
public enum PlaybackState: String, Sendable, Codable {
    case stopped, playing, paused, interrupted
}

/// What a ``QueuePlayer`` reports (``QueuePlayer/events``), in order, on a non-realtime thread.
public enum QueuePlayerEvent: Sendable, Equatable {
    /// Another item became current (by itself at the end of the previous one, or by a skip).
    case currentItemChanged(index: Int?, item: QueueItem?)
    /// An item was played to its last frame (AVPlayerItemDidPlayToEndTime), just before the
    /// next one becomes current or the queue finishes. Not sent for an item left by a skip.
    case itemPlayedToEnd(index: Int, item: QueueItem)
    case stateChanged(PlaybackState)
    /// The position jumped (a seek): MPRIS's `Seeked`.
    case seeked(to: Double)
    case volumeChanged(Float)
    /// Another audio session asked this one to duck to `level` (1: restored).
    case ducked(level: Float)
    case repeatModeChanged(RepeatMode)
    case shuffleModeChanged(ShuffleMode)
    /// Items were inserted, removed or moved.
    case queueChanged
    /// An item could not be played (it is skipped).
    case itemFailed(index: Int, item: QueueItem, error: TonearmError)
    /// A decoding problem that did not stop playback (a corrupt packet skipped).
    case decodeWarning(AudioWarning)
    /// The whole queue has been played (the state is now stopped).
    case finished
    /// The output was lost (the stream failed); the queue paused at its place, and `play()`
    /// goes on from there on whatever output there is then.
    case outputLost(reason: String)
    /// The device the queue played to went away and the server moved the stream elsewhere; the
    /// queue paused (the unplugged-headphones rule).
    case outputRemoved(previous: String)
}

/// Plays a queue of files one after another, sample-exact gapless (the counterpart of
/// `AVQueuePlayer`, with MPMusicPlayerController's repeat and shuffle): the next item is opened
/// and scheduled on the same player node the moment the current one has been decoded, so that
/// its first frame follows the current item's last frame in the same render cycle — no gap, no
/// overlap, also across sample rates (resampled to the queue's rate on the node's thread).
///
/// Threading: every method may be called from any thread. Events come on the node's threads,
/// never the render thread. A playing queue keeps itself alive until it stops.
public final class QueuePlayer: @unchecked Sendable {
    /// The equaliser (10 graphic bands, flat and bit-transparent until changed).
    public let eq = AudioUnitEQ(preset: .flat)

    private struct Entry {
        var item: QueueItem
        /// A number that follows the entry through inserts, removes and moves.
        var key: UInt64
    }

    /// Something scheduled on the node: which entry, what part of it, and the play order as it
    /// will be once that entry is current.
    private struct Scheduled {
        var key: UInt64
        var token: UInt64
        var startFrame: AudioFramePosition
        var frames: AudioFramePosition
        var sourceRate: Double
        var order: PlayOrder
        /// What to schedule once this segment has been read.
        var then: Continuation
    }

    /// What follows a scheduled segment.
    private enum Continuation {
        /// The next item in play order, from its start.
        case next
        /// The crossfade into `partner`: the overlap, then the partner from `frames` on.
        case crossfade(Partner)
        /// The rest of the entry `key` (item `index`) from `frame`, after its crossfade overlap.
        case rest(key: UInt64, index: Int, order: PlayOrder, frame: AudioFramePosition)
    }

    /// The item a crossfade goes into, decided when the outgoing item is scheduled.
    private struct Partner {
        var key: UInt64
        var index: Int
        var order: PlayOrder
        var outgoingPath: String
        var outGain: Float
        var frames: AudioFramePosition
    }

    private struct State {
        var entries: [Entry] = []
        var nextKey: UInt64 = 1
        var order = PlayOrder(count: 0)
        var runtime: QueueRuntime?
        var epoch: UInt64 = 0
        var nextToken: UInt64 = 1
        var scheduled: [Scheduled] = []
        var state: PlaybackState = .stopped
        /// Player-node frame at which the current segment's first frame played.
        var segmentStartPlayerFrame: Int64 = 0
        /// Where playback starts or resumes in the current item when not running (seconds).
        var pendingPosition: Double = 0
        var volume: Float = 1
        var replayGain: ReplayGainMode = .off
        var preamp: Double = 0
        var crossfade: Double = 0
        /// 1, or the level another session asked this one to duck to.
        var duck: Float = 1
        var effects: [AudioNode] = []
        var keepAlive: QueuePlayer?
        var interrupted = false
        var lastError: TonearmError?
        var corkRequestHandler: (@Sendable (Bool) -> Void)?
        /// The start under way (a network item may be connecting on another thread): its number.
        var starting: UInt64?
        var nextStart: UInt64 = 1
    }

    private let lock = Mutex(State())
    private let broadcaster = EventBroadcaster<QueuePlayerEvent>()
    private let makeOutput: @Sendable () throws -> any AudioOutputDriver

    /// A queue of `items`, played through the output `output` makes when playback starts (by
    /// default PulseAudio when a server answers, otherwise the silent real-time null output).
    public init(items: [QueueItem] = [],
                output: @escaping @Sendable () throws -> any AudioOutputDriver = QueuePlayer.automaticOutput) {
        makeOutput = output
        lock.withLock { s in
            s.entries = items.enumerated().map { Entry(item: $0.element, key: UInt64($0.offset) + 1) }
            s.nextKey = UInt64(items.count) + 1
            s.order = PlayOrder(count: items.count)
        }
    }

    /// PulseAudio when a server answers, otherwise the real-time null output.
    public static let automaticOutput: @Sendable () throws -> any AudioOutputDriver = {
        OutputSelection.automatic().selection.makeDriver(streamName: "Tonearm")
    }

    /// Events, from the moment of the call. A new stream per call.
    public var events: AsyncStream<QueuePlayerEvent> { broadcaster.stream(bufferingNewest: 1024) }

    // MARK: Queue

    /// The items, in queue order.
    public func items() -> [QueueItem] { lock.withLock { $0.entries.map(\.item) } }

    /// The current item and its index in the queue (nil when the queue is empty).
    public var currentItem: QueueItem? { lock.withLock { s in s.order.current.map { s.entries[$0].item } } }
    public var currentIndex: Int? { lock.withLock { $0.order.current } }

    /// The play order (repeat, shuffle, position), for saving.
    public var playOrder: PlayOrder { lock.withLock { $0.order } }

    /// Replaces the queue (stopping playback), starting at `start` with `order` when given.
    public func setQueue(_ items: [QueueItem], order: PlayOrder? = nil, startingAt seconds: Double = 0) {
        stop()
        lock.withLock { s in
            s.entries = items.map { item in
                defer { s.nextKey += 1 }
                return Entry(item: item, key: s.nextKey)
            }
            if let order, order.count == items.count {
                s.order = order
            } else {
                s.order = PlayOrder(count: items.count, repeatMode: s.order.repeatMode)
            }
            s.pendingPosition = max(0, seconds)
        }
        broadcaster.yield(.queueChanged)
        emitCurrent()
    }

    /// Inserts `item` at `index` (clamped). While shuffled, it plays right after the current item.
    public func insert(_ item: QueueItem, at index: Int) {
        let needsRestart = lock.withLock { s -> Bool in
            let i = min(max(0, index), s.entries.count)
            s.entries.insert(Entry(item: item, key: s.nextKey), at: i)
            s.nextKey += 1
            s.order.insertItem(at: i, album: "")
            return lookaheadIsStale(s)
        }
        if needsRestart { restartCurrent() }
        broadcaster.yield(.queueChanged)
        if currentIndex == 0 && items().count == 1 { emitCurrent() }
    }

    /// Appends `item` at the end of the queue.
    public func append(_ item: QueueItem) { insert(item, at: Int.max) }

    /// Removes the item at `index`. Removing the current item moves on to the next one.
    public func remove(at index: Int) {
        let (wasCurrent, valid) = lock.withLock { s -> (Bool, Bool) in
            guard s.entries.indices.contains(index) else { return (false, false) }
            return (s.order.current == index, true)
        }
        guard valid else { return }
        if wasCurrent {
            let playing = lock.withLock { $0.state == .playing }
            closeRuntime()
            lock.withLock { s in
                s.entries.remove(at: index)
                s.order.removeItem(at: index)
                s.pendingPosition = 0
                s.state = .stopped
            }
            emitCurrent()
            if playing && currentIndex != nil { play() } else { broadcaster.yield(.stateChanged(.stopped)) }
        } else {
            let stale = lock.withLock { s -> Bool in
                s.entries.remove(at: index)
                s.order.removeItem(at: index)
                return lookaheadIsStale(s)
            }
            if stale { restartCurrent() }
        }
        broadcaster.yield(.queueChanged)
    }

    /// Moves the item at `from` to `to`.
    public func move(from: Int, to: Int) {
        let stale = lock.withLock { s -> Bool in
            guard s.entries.indices.contains(from), s.entries.indices.contains(to), from != to else { return false }
            let e = s.entries.remove(at: from)
            s.entries.insert(e, at: to)
            s.order.moveItem(from: from, to: to)
            return lookaheadIsStale(s)
        }
        if stale { restartCurrent() }
        broadcaster.yield(.queueChanged)
    }

    /// Removes every item (playback stops).
    public func removeAllItems() { setQueue([]) }

    // MARK: Modes

    public var repeatMode: RepeatMode {
        get { lock.withLock { $0.order.repeatMode } }
        set {
            let stale = lock.withLock { s -> Bool in
                s.order.setRepeat(newValue)
                return lookaheadIsStale(s)
            }
            if stale { restartCurrent() }
            broadcaster.yield(.repeatModeChanged(newValue))
        }
    }

    /// Shuffling keeps the current item and plays the rest in a random order, each once;
    /// un-shuffling keeps the current item too.
    public var shuffleMode: ShuffleMode {
        get { lock.withLock { $0.order.shuffleMode } }
        set {
            let stale = lock.withLock { s -> Bool in
                if newValue == .albums {
                    // Album keys from the tags (read now; cheap next to playing).
                    let keys = s.entries.map { Self.albumKey($0.item) }
                    var o = PlayOrder(count: s.entries.count, albums: keys, start: s.order.current ?? 0,
                                      repeatMode: s.order.repeatMode, seed: UInt64.random(in: 1...UInt64.max))
                    o.setShuffle(.albums)
                    s.order = o
                } else if newValue == .songs && s.order.shuffleMode == .off {
                    var o = PlayOrder(count: s.entries.count, start: s.order.current ?? 0, repeatMode: s.order.repeatMode,
                                      seed: UInt64.random(in: 1...UInt64.max))
                    o.setShuffle(.songs)
                    s.order = o
                } else {
                    s.order.setShuffle(newValue)
                }
                return lookaheadIsStale(s)
            }
            if stale { restartCurrent() }
            broadcaster.yield(.shuffleModeChanged(newValue))
        }
    }

    /// Starts the queue afresh in `mode` (see ``PlayOrder/startShuffled(_:first:)``): shuffled,
    /// item `index` first when given, otherwise a random item — what a listener who asks for a
    /// shuffled queue expects, where setting ``shuffleMode`` keeps the current item first. The
    /// first item of the new order becomes current (playback goes on with it when running).
    /// `seed` makes the order reproducible (tests); by default it is random.
    public func startShuffled(_ mode: ShuffleMode, startingWith index: Int? = nil,
                              seed: UInt64 = UInt64.random(in: 1...UInt64.max)) {
        let moved = lock.withLock { s -> Bool in
            let before = s.order.current
            let keys = mode == .albums ? s.entries.map { Self.albumKey($0.item) } : nil
            var o = PlayOrder(count: s.entries.count, albums: keys, repeatMode: s.order.repeatMode, seed: seed)
            o.startShuffled(mode, first: index)
            s.order = o
            if o.current != before { s.pendingPosition = 0 }
            return o.current != before
        }
        broadcaster.yield(.shuffleModeChanged(mode))
        if moved {
            jumped()
        } else if lock.withLock({ lookaheadIsStale($0) }) {
            restartCurrent()
        }
    }

    private static func albumKey(_ item: QueueItem) -> String {
        guard !item.isRemote, let f = try? AudioFile(path: item.path) else { return item.url.deletingLastPathComponent().path }
        let m = f.metadata
        guard let album = m.album else { return item.url.deletingLastPathComponent().path }
        return (m.albumArtist ?? m.artist ?? "") + "\u{1F}" + album
    }

    /// ReplayGain: off, track or album, with `preamp` dB; applies from the next item scheduled
    /// (the current one is re-scheduled at its position when playing).
    public func setReplayGain(_ mode: ReplayGainMode, preamp: Double = 0) {
        let playing = lock.withLock { s -> Bool in
            s.replayGain = mode
            s.preamp = preamp
            return s.runtime != nil
        }
        if playing { restartCurrent() }
    }

    /// Seconds of crossfade between items (0, the default: gapless). Never between consecutive
    /// tracks of the same album played in order (they stay gapless). Items of different sample
    /// rates or channel counts are crossfaded too (the incoming one is converted for the
    /// overlap). Applies from the next item scheduled.
    public var crossfadeDuration: Double {
        get { lock.withLock { $0.crossfade } }
        set { lock.withLock { $0.crossfade = max(0, min(30, newValue.isFinite ? newValue : 0)) } }
    }

    /// Volume 0…1 (ramped, no click).
    public var volume: Float {
        get { lock.withLock { $0.volume } }
        set {
            let v = max(0, min(1, newValue.isFinite ? newValue : 0))
            lock.withLock { s in
                s.volume = v
                s.runtime?.engine.mainMixerNode.outputVolume = v * s.duck
            }
            broadcaster.yield(.volumeChanged(v))
        }
    }

    /// Ducking: the output level is `volume × level` until set back to 1 (another audio
    /// session asked this one to duck; ``volume`` itself is kept, and restored exactly).
    public var duckLevel: Float {
        get { lock.withLock { $0.duck } }
        set {
            let d = max(0, min(1, newValue.isFinite ? newValue : 1))
            let changed = lock.withLock { s -> Bool in
                defer { s.duck = d }
                s.runtime?.engine.mainMixerNode.outputVolume = s.volume * d
                return s.duck != d
            }
            if changed { broadcaster.yield(.ducked(level: d)) }
        }
    }

    /// Pauses for an interruption: the state becomes `interrupted` (``play()`` resumes).
    /// Where the sound server's requests to stop and go on (PulseAudio `request-cork` /
    /// `request-uncork`) go instead of interrupting this queue directly: a player that follows an
    /// ``AudioSession`` passes them to it (``AudioSession/reportServerInterruption(began:)``) and
    /// acts on the session's interruptions. Nil (the default): the queue handles them itself.
    /// Called on the output's event thread.
    package var corkRequestHandler: (@Sendable (Bool) -> Void)? {
        get { lock.withLock { $0.corkRequestHandler } }
        set { lock.withLock { $0.corkRequestHandler = newValue } }
    }

    public func interrupt() {
        let rt = lock.withLock { s -> QueueRuntime? in
            guard s.state == .playing, let rt = s.runtime else { return nil }
            s.state = .interrupted
            return rt
        }
        guard let rt else { return }
        rt.pauseRendering()
        broadcaster.yield(.stateChanged(.interrupted))
    }

    /// Effect nodes after the equaliser, re-wired live.
    public var effects: [AudioNode] {
        get { lock.withLock { $0.effects } }
        set {
            lock.withLock { s in
                s.effects = newValue
                if let rt = s.runtime { try? rt.setEffects(newValue) }
            }
        }
    }

    // MARK: Transport

    public var playbackState: PlaybackState { lock.withLock { $0.state } }

    /// Why the last `play()` could not start (nil when it did).
    public var lastError: TonearmError? { lock.withLock { $0.lastError } }

    /// Plays from the current position. Items that cannot be opened are reported
    /// (``QueuePlayerEvent/itemFailed(index:item:error:)``) and skipped.
    public func play() {
        enum Step { case resume(QueueRuntime), start(UInt64, remote: Bool), nothing }
        let step = lock.withLock { s -> Step in
            if s.state == .playing || s.starting != nil { return .nothing }
            if let rt = s.runtime { return .resume(rt) }
            guard let cur = s.order.current else { return .nothing }
            let token = s.nextStart
            s.nextStart += 1
            s.starting = token
            return .start(token, remote: s.entries[cur].item.isRemote)
        }
        switch step {
        case .nothing: return
        case .start(let token, remote: true):
            // Connecting may take a while (bounded by the network limits): not on the caller's thread.
            Thread.detachNewThread { [self] in startFromCurrent(token: token) }
        case .start(let token, remote: false):
            startFromCurrent(token: token)
        case .resume(let rt):
            lock.withLock { s in
                s.state = .playing
                s.interrupted = false
                s.keepAlive = self
            }
            do { try rt.startRendering() } catch { fail(error) ; return }
            broadcaster.yield(.stateChanged(.playing))
        }
    }

    public func pause() {
        let rt = lock.withLock { s -> QueueRuntime? in
            guard s.state == .playing, let rt = s.runtime else { return nil }
            s.state = .paused
            return rt
        }
        guard let rt else { return }
        rt.pauseRendering()
        broadcaster.yield(.stateChanged(.paused))
    }

    /// Stops and goes back to the start of the current item.
    public func stop() {
        let was = lock.withLock { $0.state }
        closeRuntime()
        lock.withLock { s in
            s.state = .stopped
            s.pendingPosition = 0
            s.keepAlive = nil
            s.starting = nil
        }
        if was != .stopped { broadcaster.yield(.stateChanged(.stopped)) }
    }

    /// Seconds into the current item.
    public var currentTime: Double {
        lock.withLock { s in
            guard let rt = s.runtime, let head = s.scheduled.first, let t = rt.node.playerTime else { return s.pendingPosition }
            let played = Double(max(0, t.sampleTime - s.segmentStartPlayerFrame)) / rt.format.sampleRate
            return Double(head.startFrame) / head.sourceRate + played
        }
    }

    /// The current item's duration in seconds (nil before it has been opened).
    public var currentDuration: Double? {
        lock.withLock { s in s.scheduled.first.map { Double($0.startFrame + $0.frames) / $0.sourceRate } }
    }

    /// Moves within the current item (sample-accurate); playing or paused, it goes on from there.
    public func seek(to seconds: Double) {
        let target = max(0, seconds.isFinite ? seconds : 0)
        let running = lock.withLock { s -> Bool in
            s.pendingPosition = target
            return s.runtime != nil
        }
        if running { restartCurrent(at: target) }
        broadcaster.yield(.seeked(to: target))
    }

    /// Skips to the next item in play order (repeat-one does not hold). At the end of the queue
    /// without repeat-all, playback stops.
    public func advanceToNextItem() {
        let moved = lock.withLock { s -> Bool in
            s.pendingPosition = 0
            return s.order.skipToNext()
        }
        if moved { jumped() } else { finishQueue() }
    }

    /// Skips to the previous item in play order (the first stays; repeat-all wraps).
    public func skipToPreviousItem() {
        let moved = lock.withLock { s -> Bool in
            s.pendingPosition = 0
            return s.order.skipToPrevious()
        }
        if moved { jumped() } else { seek(to: 0) }
    }

    /// Makes the item at queue index `index` current.
    public func skipToItem(at index: Int) {
        let moved = lock.withLock { s -> Bool in
            s.pendingPosition = 0
            return s.order.jump(toItem: index)
        }
        if moved { jumped() }
    }

    /// Goes to the first item of the play order.
    public func skipToBeginning() {
        lock.withLock { s in
            s.pendingPosition = 0
            s.order.skipToBeginning()
        }
        jumped()
    }

    // MARK: Internals

    /// Opens an item: a file, or a network stream — fetched by a ``NetworkByteSource`` (an
    /// ``HLSByteSource`` for an `.m3u8` playlist) that the file keeps, decoded in streaming mode
    /// so that playback starts before the whole body has come. Blocks the calling thread while
    /// it connects (bounded by the network limits).
    private static func open(_ item: QueueItem) -> Result<AudioFile, TonearmError> {
        do {
            if item.isRemote {
                return .success(try ItemFetch.make(url: item.url).openFile(name: item.url.absoluteString))
            }
            return .success(try AudioFile(path: item.path))
        } catch {
            return .failure(error)
        }
    }

    private func jumped() {
        emitCurrent()
        let running = lock.withLock { $0.runtime != nil }
        if running { restartCurrent(at: 0) }
    }

    private func emitCurrent() {
        let (i, item) = lock.withLock { s in (s.order.current, s.order.current.map { s.entries[$0].item }) }
        broadcaster.yield(.currentItemChanged(index: i, item: item))
    }

    /// Whether what is scheduled after the current item no longer matches the play order.
    private func lookaheadIsStale(_ s: State) -> Bool {
        guard s.scheduled.count > 1, let cur = s.order.current else { return false }
        guard s.entries.indices.contains(cur), s.entries[cur].key == s.scheduled[0].key else { return true }
        let next = s.order.nextOnEnd.map { s.entries[$0].key }
        return next != s.scheduled[1].key
    }

    /// Opens the current item (skipping those that fail), builds the runtime for its format,
    /// schedules it from the pending position and starts the output — unless `stop()` (or
    /// another start) came first: start `token` is then no longer the one under way.
    private func startFromCurrent(token: UInt64) {
        var failures: [(Int, QueueItem, TonearmError)] = []
        var opened: (AudioFile, Int)?
        opening: while opened == nil {
            // A stop() while connecting ends the start.
            guard let (index, item) = lock.withLock({ s in
                s.starting == token ? s.order.current.map { ($0, s.entries[$0].item) } : nil
            }) else { break }
            switch Self.open(item) {
            case .success(let f):
                opened = (f, index)
            case .failure(let error):
                failures.append((index, item, error))
                let moved = lock.withLock { s -> Bool in
                    s.pendingPosition = 0
                    return failures.count < s.entries.count && s.order.skipToNext()
                }
                if !moved { break opening }
            }
        }
        for (i, item, e) in failures { broadcaster.yield(.itemFailed(index: i, item: item, error: e)) }
        guard let (file, _) = opened else {
            let stillStarting = lock.withLock { s -> Bool in
                guard s.starting == token else { return false }
                s.starting = nil
                s.lastError = failures.last?.2
                return true
            }
            if stillStarting { finishQueue() }
            return
        }
        guard lock.withLock({ $0.starting == token }) else { return }  // stopped while connecting
        let rt: QueueRuntime
        do {
            let driver = try makeOutput()
            rt = try QueueRuntime(format: file.processingFormat, driver: driver, eq: eq)
        } catch {
            let current = lock.withLock { s -> Bool in
                guard s.starting == token else { return false }
                s.starting = nil
                return true
            }
            if current { fail(error) }
            return
        }
        let effects = lock.withLock { $0.effects }
        try? rt.setEffects(effects)
        rt.watchOutput { [weak self] e in self?.outputEvent(e) }
        let started = lock.withLock { s -> Bool in
            guard s.starting == token else { return false }
            s.starting = nil
            s.runtime = rt
            s.state = .playing
            s.lastError = nil
            s.keepAlive = self
            rt.engine.mainMixerNode.outputVolume = s.volume * s.duck
            schedule(file: file, at: s.pendingPosition, in: &s, runtime: rt)
            return true
        }
        guard started else {
            // Stopped while connecting.
            rt.close()
            return
        }
        do { try rt.startRendering() } catch { fail(error); return }
        emitCurrent()  // the item that now plays
        broadcaster.yield(.stateChanged(.playing))
    }

    /// Re-schedules the current item from `seconds` (the current position when nil), and what
    /// follows it, on the running node. The item is opened outside the lock (a network item
    /// connects); if another item became current meanwhile, this restart gives way to it.
    private func restartCurrent(at seconds: Double? = nil) {
        let position = seconds ?? currentTime
        guard let (cur, key, item) = lock.withLock({ s -> (Int, UInt64, QueueItem)? in
            guard s.runtime != nil, let cur = s.order.current, s.entries.indices.contains(cur) else { return nil }
            return (cur, s.entries[cur].key, s.entries[cur].item)
        }) else { return }
        let file: AudioFile
        switch Self.open(item) {
        case .success(let f): file = f
        case .failure(let error):
            broadcaster.yield(.itemFailed(index: cur, item: item, error: error))
            advanceToNextItem()
            return
        }
        lock.withLock { s in
            guard let rt = s.runtime, s.order.current == cur, s.entries.indices.contains(cur), s.entries[cur].key == key else { return }
            let playing = s.state == .playing
            rt.node.stop()
            s.scheduled.removeAll()
            s.pendingPosition = position
            schedule(file: file, at: position, in: &s, runtime: rt)
            if playing { rt.node.play() }
        }
    }

    /// Schedules the current item from `seconds` as the head. Lock held.
    private func schedule(file: AudioFile, at seconds: Double, in s: inout State, runtime rt: QueueRuntime) {
        guard let cur = s.order.current else { return }
        s.epoch += 1
        let start = min(file.length, max(0, AudioFramePosition((seconds * file.processingFormat.sampleRate).rounded())))
        s.segmentStartPlayerFrame = rt.node.playerTime?.sampleTime ?? 0
        scheduleItem(file: file, index: cur, start: start, order: s.order, in: &s, runtime: rt)
    }

    /// Schedules item `index` (opened as `file`) from `start`: to its end, or — when a crossfade
    /// into the next item applies — to where the overlap begins. Lock held.
    private func scheduleItem(file: AudioFile, index: Int, start: AudioFramePosition, order: PlayOrder,
                              in s: inout State, runtime rt: QueueRuntime) {
        let key = s.entries[index].key
        if let p = crossfadePartner(after: file, index: index, order: order, in: s), start < file.length - p.frames {
            enqueue(file: file, key: key, start: start, end: file.length - p.frames, order: order, then: .crossfade(p),
                    in: &s, runtime: rt)
        } else {
            enqueue(file: file, key: key, start: start, end: file.length, order: order, then: .next, in: &s, runtime: rt)
        }
    }

    /// Whether the item after `index` is crossfaded into, and how: only with a crossfade set,
    /// when the next item is another one (not repeat-one) and is not the next track of the same
    /// album played in order (those stay gapless). Items of different sample rates or channel
    /// counts are crossfaded too: the overlap converts the incoming item. Lock held.
    private func crossfadePartner(after file: AudioFile, index: Int, order: PlayOrder, in s: State) -> Partner? {
        guard s.crossfade > 0, !s.entries[index].item.isRemote else { return nil }
        var nextOrder = order
        // Network items are never crossfaded: opening one here would wait for the network under the lock.
        guard nextOrder.advanceOnEnd(), let next = nextOrder.current, next != index,
              s.entries.indices.contains(next), !s.entries[next].item.isRemote,
              case .success(let other) = Self.open(s.entries[next].item) else { return nil }
        let f = file.processingFormat, g = other.processingFormat
        if next == index + 1, let album = file.metadata.album, album == other.metadata.album,
           (file.metadata.albumArtist ?? file.metadata.artist) == (other.metadata.albumArtist ?? other.metadata.artist) {
            return nil
        }
        // In the outgoing file's frames; the overlap converts the incoming file to its rate and channels.
        let otherHalf = AudioFramePosition(Double(other.length / 2) * f.sampleRate / g.sampleRate)
        let frames = min(AudioFramePosition(s.crossfade * f.sampleRate), file.length / 2, otherHalf)
        guard frames > 0 else { return nil }
        return Partner(key: s.entries[next].key, index: next, order: nextOrder, outgoingPath: s.entries[index].item.path,
                       outGain: s.replayGain.linearGain(for: file.metadata.replayGain, preamp: s.preamp), frames: frames)
    }

    /// Puts one segment on the node with its handlers. Lock held.
    private func enqueue(file: any PlaybackSource, key: UInt64, start: AudioFramePosition, end: AudioFramePosition,
                         order: PlayOrder, then: Continuation, gain fixedGain: Float? = nil,
                         in s: inout State, runtime rt: QueueRuntime) {
        let token = s.nextToken
        s.nextToken += 1
        let epoch = s.epoch
        let gain = fixedGain ?? (file as? AudioFile).map { s.replayGain.linearGain(for: $0.metadata.replayGain, preamp: s.preamp) } ?? 1
        let frames = max(0, end - start)
        s.scheduled.append(Scheduled(key: key, token: token, startFrame: start, frames: frames,
                                     sourceRate: file.sourceFormat.sampleRate, order: order, then: then))
        do {
            try rt.node.scheduleSegment(file, startingFrame: start, frameCount: AudioFrameCount(frames), gain: gain,
                                        consumed: { [weak self] _ in self?.consumed(token: token, epoch: epoch) },
                                        rendered: { [weak self] _ in self?.rendered(token: token, epoch: epoch) })
        } catch {
            s.scheduled.removeLast()
        }
    }

    /// Node decoder thread: segment `token` has been read; schedule what follows it now, so the
    /// node goes straight on with it (gapless).
    private func consumed(token: UInt64, epoch: UInt64) {
        // Crossfades (local items only) are scheduled under the lock; the next item in play order
        // is opened outside it (a network item connects), then scheduled if nothing changed.
        let nextFrom: PlayOrder? = lock.withLock { s in
            guard s.epoch == epoch, let rt = s.runtime, let last = s.scheduled.last, last.token == token else { return nil }
            switch last.then {
            case .crossfade(let p):
                // The overlap: both files opened afresh for the mixing source.
                let incomingItem = s.entries.indices.contains(p.index) ? s.entries[p.index].item : nil
                guard let incomingItem, case .success(let outFile) = Self.open(QueueItem(path: p.outgoingPath)),
                      case .success(let inFile) = Self.open(incomingItem) else { return nil }
                let inGain = s.replayGain.linearGain(for: inFile.metadata.replayGain, preamp: s.preamp)
                guard let mix = try? CrossfadeSource(outgoing: outFile, outGain: p.outGain, incoming: inFile, inGain: inGain,
                                                     frames: p.frames) else { return nil }
                enqueue(file: mix, key: p.key, start: 0, end: mix.frameLength, order: p.order,
                        then: .rest(key: p.key, index: p.index, order: p.order, frame: mix.incomingFrameLength), gain: 1,
                        in: &s, runtime: rt)
                return nil
            case .rest(let key, let index, let order, let frame):
                guard s.entries.indices.contains(index), s.entries[index].key == key,
                      case .success(let file) = Self.open(s.entries[index].item) else { return nil }
                scheduleItem(file: file, index: index, start: frame, order: order, in: &s, runtime: rt)
                return nil
            case .next:
                return last.order
            }
        }
        guard var order = nextFrom else { return }
        var failures: [(Int, QueueItem, TonearmError)] = []
        defer { for (i, item, e) in failures { broadcaster.yield(.itemFailed(index: i, item: item, error: e)) } }
        // The item after this one in play order, skipping those that cannot be opened.
        for _ in 0...lock.withLock({ $0.entries.count }) {
            guard let (next, key, item) = lock.withLock({ s -> (Int, UInt64, QueueItem)? in
                guard order.advanceOnEnd(), let next = order.current, s.entries.indices.contains(next) else { return nil }
                return (next, s.entries[next].key, s.entries[next].item)
            }) else { return }
            switch Self.open(item) {
            case .success(let file):
                for warning in file.takeWarnings() { broadcaster.yield(.decodeWarning(warning)) }
                lock.withLock { s in
                    // Still the same schedule and the same item there: go on with it.
                    guard s.epoch == epoch, let rt = s.runtime, s.scheduled.last?.token == token,
                          s.entries.indices.contains(next), s.entries[next].key == key else { return }
                    scheduleItem(file: file, index: next, start: 0, order: order, in: &s, runtime: rt)
                }
                return
            case .failure(let error):
                failures.append((next, item, error))
                if order.repeatMode == .one { return }
            }
        }
    }

    /// Node event thread: segment `token` has been rendered to its last frame. The next one (if
    /// any) is already playing: make it current.
    private func rendered(token: UInt64, epoch: UInt64) {
        enum Outcome { case advanced, finished, ignore }
        let (outcome, ended) = lock.withLock { s -> (Outcome, (Int, QueueItem)?) in
            guard s.epoch == epoch, let head = s.scheduled.first, head.token == token, let rt = s.runtime else { return (.ignore, nil) }
            s.scheduled.removeFirst()
            let engineFrames = Int64((Double(head.frames) * rt.format.sampleRate / head.sourceRate).rounded())
            s.segmentStartPlayerFrame += engineFrames
            s.pendingPosition = 0
            let ended = s.entries.firstIndex { $0.key == head.key }.map { ($0, s.entries[$0].item) }
            guard let next = s.scheduled.first else {
                // Until finishQueue stops the queue, the time is the end of the last item, not 0.
                s.pendingPosition = Double(head.startFrame + head.frames) / head.sourceRate
                return (.finished, ended)
            }
            s.order = next.order
            // A crossfade's overlap and the rest of the item are one item.
            return next.key == head.key ? (.ignore, nil) : (.advanced, ended)
        }
        if let (index, item) = ended { broadcaster.yield(.itemPlayedToEnd(index: index, item: item)) }
        switch outcome {
        case .advanced: emitCurrent()
        case .finished: finishQueue(drain: true)
        case .ignore: break
        }
    }

    /// The end of the queue: drains the output (so the end is heard), stops, and goes back to the
    /// start of the play order.
    private func finishQueue(drain: Bool = false) {
        let rt = lock.withLock { s -> QueueRuntime? in
            let r = s.runtime
            s.runtime = nil
            s.scheduled.removeAll()
            s.epoch += 1
            s.state = .stopped
            s.pendingPosition = 0
            s.order.skipToBeginning()
            return r
        }
        let finish: @Sendable () -> Void = { [self] in
            if let rt {
                if drain { rt.driver.drain(timeout: rt.driver.latency + rt.engine.tailTime + 1) }
                rt.close()
            }
            let keep = lock.withLock { s -> QueuePlayer? in
                let k = s.keepAlive
                s.keepAlive = nil
                return k
            }
            broadcaster.yield(.stateChanged(.stopped))
            broadcaster.yield(.finished)
            emitCurrent()  // back at the start of the play order
            _ = keep
        }
        if drain {
            // Not on the node's event thread: closing the runtime joins it.
            Thread.detachNewThread(finish)
        } else {
            finish()
        }
    }

    private func closeRuntime() {
        let rt = lock.withLock { s -> QueueRuntime? in
            let r = s.runtime
            s.runtime = nil
            s.scheduled.removeAll()
            s.epoch += 1
            return r
        }
        rt?.close()
    }

    private func fail(_ error: any Error) {
        let e = (error as? TonearmError) ?? .invalidState("\(error)")
        closeRuntime()
        lock.withLock { s in
            s.state = .stopped
            s.lastError = e
            s.keepAlive = nil
        }
        broadcaster.yield(.outputLost(reason: e.description))
        broadcaster.yield(.stateChanged(.stopped))
    }

    private func outputEvent(_ e: AudioOutputEvent) {
        if case .corkRequested = e, let forward = corkRequestHandler { forward(true); return }
        if case .uncorkRequested = e, let forward = corkRequestHandler { forward(false); return }
        switch e {
        case .corkRequested:
            let rt = lock.withLock { s -> QueueRuntime? in
                guard s.state == .playing, let rt = s.runtime else { return nil }
                s.state = .interrupted
                s.interrupted = true
                return rt
            }
            guard let rt else { return }
            rt.pauseRendering()
            broadcaster.yield(.stateChanged(.interrupted))
        case .uncorkRequested:
            let resume = lock.withLock { s -> Bool in s.state == .interrupted && s.interrupted }
            if resume {
                lock.withLock { $0.state = .paused }
                play()
            }
        case .deviceRemoved(let previous, _):
            // The unplugged-headphones rule: pause rather than go on out of the speakers.
            pause()
            broadcaster.yield(.outputRemoved(previous: previous))
        case .deviceLost(let reason):
            // The stream is gone: keep the place, so that play() resumes on the output there is.
            let position = currentTime
            let was = lock.withLock { $0.state }
            closeRuntime()
            lock.withLock { s in
                s.pendingPosition = position
                s.state = was == .stopped ? .stopped : .paused
                s.keepAlive = nil
            }
            broadcaster.yield(.outputLost(reason: reason))
            if was != .stopped { broadcaster.yield(.stateChanged(.paused)) }
        case .drained, .moved:
            break
        }
    }
}
