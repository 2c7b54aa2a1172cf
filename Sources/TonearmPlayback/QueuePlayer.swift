// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmNetwork
import TonearmOutput
import TonearmRender

/// Whether a queue is playing (`MPMusicPlaybackState`).
public enum PlaybackState: String, Sendable, Codable {
    case stopped, playing, paused, interrupted
}

/// What a ``QueuePlayer`` reports (``QueuePlayer/events``), in order, on a non-realtime thread.
public enum QueuePlayerEvent: Sendable, Equatable {
    /// Another item became current (by itself at the end of the previous one, or by a skip). By
    /// itself: when the join is heard — the output's latency after the node rendered it, also when
    /// a setting or an edit of the queue re-schedules meanwhile — so that a title shown on it is
    /// the one heard, and ``QueuePlayer/currentTime`` counts from the new item's first heard frame.
    case currentItemChanged(index: Int?, item: QueueItem?)
    /// An item was played to its last frame (AVPlayerItemDidPlayToEndTime), just before the
    /// next one becomes current (when the join is heard) or the queue finishes (when its last
    /// frame is heard: until then the queue is `playing`, the output playing out what it holds).
    /// Not sent for an item left by a skip.
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
    /// goes on from there on whatever output there is then. `awaitingReturn`: the output can
    /// come back by itself (a sound server that restarts) and the queue watches for it; if it
    /// was playing it plays on from its place when the output answers (``outputReturned``).
    case outputLost(reason: String, awaitingReturn: Bool)
    /// The output lost earlier answers again (a restarted sound server). `resuming`: the queue
    /// plays on from where it was (it was playing when the output was lost, or `play()` was asked
    /// meanwhile).
    case outputReturned(resuming: Bool)
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
///
/// Structure: the rules live in a ``QueueStateMachine`` (inputs in, actions out) and where each
/// item's frames go on the node in its ``QueueSchedule``; this class feeds the machine under its
/// lock and enqueues the machine's actions, in the order it produced them, on one executor (a
/// serial queue of its own) that carries them out, so that two callers' actions never
/// interleave. Files, network items and outputs are opened on worker threads (the result comes
/// back as an input, checked against what changed meanwhile); nothing is opened or waited for
/// under the lock. Only what follows an item on the node is opened and scheduled on the node's
/// decoder thread, in the handler that the node calls before the item's last block (its
/// gapless contract), checked against the schedule's epoch under the lock. A call returns once what it caused has been carried out (`play()` of a local
/// item: playing; a seek: the item re-scheduled there), except a start's network connection; a
/// getter answers at once from the machine.
public final class QueuePlayer: @unchecked Sendable {
    /// The equaliser (10 graphic bands, flat and bit-transparent until changed).
    public let eq = AudioUnitEQ(preset: .flat)

    /// Everything under the lock: the machine, and what carries its actions out.
    private struct Locked {
        var machine: QueueStateMachine
        /// The runtime the machine has installed, until it closes it.
        var runtime: QueueRuntime?
        var effects: [AudioNode] = []
        var keepAlive: QueuePlayer?
        var corkRequestHandler: (@Sendable (Bool) -> Void)?
        /// Watches for the lost output to answer again (from a `deviceLost` until it does).
        var outputWatch: OutputReturnWatch?
        /// Underruns of the runtimes closed so far (``QueuePlayer/underrunCount``).
        var closedUnderruns = 0
        /// The first item of the start under way, opened off the lock, until its runtime is built.
        var startFile: (token: UInt64, file: AudioFile)?
        /// Bumped by every restart: a restart whose open comes back after a newer one began gives way.
        var restarts: UInt64 = 0
        /// The restart under way until its item is on the node: its number, where it goes (nil: on
        /// from where the node has rendered to, keeping what the output holds — the schedule of
        /// before is heard on meanwhile), and whether it replaces what the output holds. A later
        /// restart while one that goes somewhere is under way goes there, replacing as it does.
        var pendingRestart: (serial: UInt64, position: Double?, flush: Bool)?
        /// The last time ``QueuePlayer/currentTime`` reported, and the head segment it was in
        /// (within one head the time never goes back: the output's latency moves a little).
        var lastHeard: (token: UInt64, epoch: UInt64, seconds: Double)?
        /// Bumped by every ``QueueStateMachine/Action/awaitJoin(frames:)``: only the latest wait
        /// for a join feeds the machine when it ends.
        var joinWaits: UInt64 = 0
        /// The runtime whose output stopped pulling by itself at the end of what was scheduled
        /// (``AudioOutputEvent/drained``: the file output): started again when the queue has more
        /// to play (a seek or skip that came as the end was rendered).
        var outputEnded: ObjectIdentifier?
        /// Called on the executor with every event just before the listeners get it (tests: what
        /// the output has played when an event is said).
        var eventProbe: (@Sendable (QueuePlayerEvent) -> Void)?
    }

    /// What the executor carries out, in the order the machine decided it. The jobs that open
    /// (files, network streams, the output) hand the opening to a worker thread, whose result
    /// comes back to the machine as an input (or, for a schedule, as a job checked against what
    /// changed meanwhile), so that the executor never waits for a disk or the network.
    private enum Job: Sendable {
        case emit(QueuePlayerEvent)
        /// Open the item of entry `key` for start `token` and report it.
        case open(token: UInt64, key: UInt64, item: QueueItem, remote: Bool)
        /// Open the output and build the runtime for start `token` and report it.
        case build(token: UInt64)
        /// Give the runtime just built the equaliser and the effects wanted now, start its engine,
        /// and put the start's item (entry `key`) on it from `position`.
        case install(Built, key: UInt64, position: Double, effects: [AudioNode])
        /// Re-open entry `key` (the current item, or the one the node renders) for restart
        /// `serial` and re-schedule it from `position` (nil: on from where the node has rendered
        /// to, keeping what the output holds; `flush`: replacing what the output holds).
        case restart(QueueRuntime, key: UInt64, position: Double?, serial: UInt64, flush: Bool)
        /// Re-schedule entry `key`, re-opened for restart `serial`, from `position` (`flush`: in
        /// the output's flush, which drops what it holds of the old audio).
        case reschedule(QueueRuntime, key: UInt64, file: AudioFile, candidate: Candidate?, position: Double?, serial: UInt64,
                        flush: Bool)
        case startRendering(QueueRuntime)
        case pauseRendering(QueueRuntime)
        case volume(QueueRuntime, Float)
        case effects(QueueRuntime, [AudioNode])
        /// Feed the machine what is heard once `seconds` have passed (wait `serial`).
        case awaitJoin(QueueRuntime, seconds: Double, serial: UInt64)
        /// Let the output play out what it holds after the queue's end, then feed the machine
        /// `endHeard` for schedule `epoch`.
        case drainEnd(QueueRuntime, epoch: UInt64)
        case close(QueueRuntime, drain: Bool)
    }

    /// What follows a segment that the node has read, opened off the lock.
    private enum Following: Sendable {
        /// The entry at `place` (opened as `file`) from `start`, with the item a crossfade out of
        /// it may go into.
        case item(QueueSchedule.Place, file: AudioFile, start: AudioFramePosition, candidate: Candidate?)
        /// A crossfade's overlap.
        case overlap(CrossfadeSource, QueueSchedule.Partner)
    }

    /// A runtime just built for a start, with its first item and the item it may crossfade into.
    private struct Built: Sendable {
        var runtime: QueueRuntime
        var file: AudioFile
        var partner: Candidate?
    }

    /// An item opened off the lock as the one a crossfade may go into.
    private struct Candidate: Sendable {
        var key: UInt64
        var file: AudioFile
    }

    // The state of QueuePlayer is the lock's: only `eq` (itself thread-safe) is outside it.
    private let lock: Mutex<Locked>
    /// The thread that carries out the machine's actions (see ``Job``).
    private let executor = ActionExecutor(label: "tonearm.queue-player")
    private let broadcaster = EventBroadcaster<QueuePlayerEvent>()
    private let makeOutput: @Sendable () throws -> any AudioOutputDriver
    /// The network items opened lately, for what has arrived of the current one.
    private let fetches = QueueFetches()
    private let loadedBroadcaster = EventBroadcaster<[TimeRange]>()

    /// A queue of `items`, played through the output `output` makes when playback starts (by
    /// default PulseAudio when a server answers, otherwise the silent real-time null output).
    public init(items: [QueueItem] = [],
                output: @escaping @Sendable () throws -> any AudioOutputDriver = QueuePlayer.automaticOutput) {
        makeOutput = output
        lock = Mutex(Locked(machine: QueueStateMachine(items: items)))
        fetches.whenGrown { [weak self] key in self?.loadedGrew(key: key) }
    }

    /// PulseAudio when a server answers, otherwise the real-time null output — with the steady
    /// buffering of media playback (``OutputBuffering/steady``: short at the start, long after a
    /// second of play). A queue (and ``Player``, which uses this too) can afford the long buffer:
    /// nothing it plays must be heard within a few milliseconds, and what replaces what is heard —
    /// a seek, a skip, another item — flushes the output first, so the long buffer never delays it.
    public static let automaticOutput: @Sendable () throws -> any AudioOutputDriver = {
        OutputSelection.automatic().selection.makeDriver(streamName: "Tonearm", buffering: .steady)
    }

    /// Events, from the moment of the call. A new stream per call. Lossless: a consumer that
    /// falls behind (a busy screen while an untimed output plays hundreds of items a second)
    /// still gets every event, so what counts or records them (the play command's "N played",
    /// the library's play counts, the daemon's idle) loses none.
    public var events: AsyncStream<QueuePlayerEvent> { broadcaster.stream(bufferingNewest: nil) }

    // MARK: What has arrived of a stream

    /// The parts of the current item in memory, in seconds of the item (AVPlayerItem's
    /// `loadedTimeRanges`) — what a seek bar shows as buffered — when the current item is a
    /// network stream: a download of known length by its bytes (the parts a seek fetched too),
    /// an HLS stream from the playhead to the last segment that arrived. Empty for a file (all
    /// of it is there), when nothing is scheduled, and for a stream opened longer ago than the
    /// queue remembers (``QueueFetches``). Any thread.
    public var loadedTimeRanges: [TimeRange] {
        let (key, now) = lock.withLock { l in (l.machine.schedule.segments.first?.key, Self.currentTime(&l)) }
        guard let key else { return [] }
        return fetches.loadedTimeRanges(key: key, now: now)
    }

    /// ``loadedTimeRanges`` each time it has grown enough to draw again (half a percent of a
    /// download, an HLS segment, the end), from the moment of the call — for the current item
    /// only. Newest kept: a slow consumer gets the latest, not a backlog. Sent on the fetch's
    /// thread.
    public var loadedTimeRangeChanges: AsyncStream<[TimeRange]> { loadedBroadcaster.stream(bufferingNewest: 1) }

    /// The tags of the network stream at `index` in the queue, as read from the stream itself
    /// when it was opened (MPD shows them for a stream once it plays); nil for a file, an index
    /// out of range, or a stream not opened lately (``QueueFetches``). Any thread.
    public func streamMetadata(ofItemAt index: Int) -> AudioMetadata? {
        guard let key = lock.withLock({ l in l.machine.entries.indices.contains(index) ? l.machine.entries[index].key : nil })
        else { return nil }
        return fetches.metadata(key: key)
    }

    /// What has arrived of entry `key`'s stream grew (on its fetch's thread).
    private func loadedGrew(key: UInt64) {
        guard lock.withLock({ $0.machine.schedule.segments.first?.key }) == key else { return }
        loadedBroadcaster.yield(loadedTimeRanges)
    }

    // MARK: Queue

    /// The items, in queue order.
    public func items() -> [QueueItem] { lock.withLock { $0.machine.entries.map(\.item) } }

    /// The current item and its index in the queue (nil when the queue is empty).
    public var currentItem: QueueItem? { lock.withLock { $0.machine.currentItem } }
    public var currentIndex: Int? { lock.withLock { $0.machine.order.current } }

    /// The item that plays after the current one when it ends by itself (MPD's `nextsong`):
    /// the next in play order, the current one again with repeat-one, the first of the order
    /// after the last with repeat-all; nil at the end or for an empty queue.
    public var upcomingIndex: Int? {
        lock.withLock { l -> Int? in
            let o = l.machine.order
            guard let current = o.current else { return nil }
            if o.repeatMode == .one { return current }
            if o.position + 1 < o.count { return o.order[o.position + 1] }
            return o.repeatMode == .all ? o.order[0] : nil
        }
    }

    /// The current item's place in the play order (``PlayOrder/position``).
    public var playOrderPosition: Int { lock.withLock { $0.machine.order.position } }

    /// The first item of the play order (nil for an empty queue).
    public var firstInPlayOrder: Int? { lock.withLock { $0.machine.order.order.first } }

    /// The play order (repeat, shuffle, position), for saving.
    public var playOrder: PlayOrder { lock.withLock { $0.machine.order } }

    /// Replaces the queue (stopping playback), starting at `start` with `order` when given.
    public func setQueue(_ items: [QueueItem], order: PlayOrder? = nil, startingAt seconds: Double = 0) {
        send(.setQueue(items, order: order, position: seconds))
    }

    /// Inserts `item` at `index` (clamped). While shuffled, it plays right after the current item.
    public func insert(_ item: QueueItem, at index: Int) { send(.insert(item, at: index)) }

    /// Appends `item` at the end of the queue.
    public func append(_ item: QueueItem) { insert(item, at: Int.max) }

    /// Removes the item at `index`. Removing the current item moves on to the next one.
    public func remove(at index: Int) { send(.remove(at: index)) }

    /// Moves the item at `from` to `to`.
    public func move(from: Int, to: Int) { send(.move(from: from, to: to)) }

    /// Replaces the item at `index` (its ``QueueItem/range`` changed, say), keeping its place in
    /// the queue and the play order. A join already prepared to it is prepared again; the
    /// current item plays on as it was opened (MPD refuses `rangeid` on it).
    public func replaceItem(at index: Int, with item: QueueItem) { send(.replace(at: index, item)) }

    /// Gives the items at `indices` the priority `priority` (MPD's `prio`): shuffled by songs,
    /// higher priorities play first (``PlayOrder/setPriority(_:ofItem:afterCurrent:)``).
    /// `afterCurrent` false: no item has been played yet, and the highest priority's item
    /// becomes current.
    public func setPriority(_ priority: UInt8, ofItemsAt indices: [Int], afterCurrent: Bool = true) {
        send(.setPriority(priority, indices: indices, afterCurrent: afterCurrent))
    }

    /// Removes every item (playback stops).
    public func removeAllItems() { setQueue([]) }

    // MARK: Modes

    public var repeatMode: RepeatMode {
        get { lock.withLock { $0.machine.order.repeatMode } }
        set { send(.setRepeat(newValue)) }
    }

    /// Shuffling keeps the current item and plays the rest in a random order, each once;
    /// un-shuffling keeps the current item too.
    public var shuffleMode: ShuffleMode {
        get { lock.withLock { $0.machine.order.shuffleMode } }
        set {
            send(.setShuffle(newValue, albums: newValue == .albums ? albumKeys() : [:],
                             seed: UInt64.random(in: 1...UInt64.max)))
        }
    }

    /// Starts the queue afresh in `mode` (see ``PlayOrder/startShuffled(_:first:)``): shuffled,
    /// item `index` first when given, otherwise a random item — what a listener who asks for a
    /// shuffled queue expects, where setting ``shuffleMode`` keeps the current item first. The
    /// first item of the new order becomes current (playback goes on with it when running).
    /// `seed` makes the order reproducible (tests); by default it is random.
    public func startShuffled(_ mode: ShuffleMode, startingWith index: Int? = nil,
                              seed: UInt64 = UInt64.random(in: 1...UInt64.max)) {
        send(.startShuffled(mode, first: index, albums: mode == .albums ? albumKeys() : [:], seed: seed))
    }

    /// The album key of every entry (by entry key), from the tags: read off the lock (cheap next
    /// to playing). An entry added meanwhile gets its folder as its key.
    private func albumKeys() -> [UInt64: String] {
        let entries = lock.withLock { $0.machine.entries }
        var keys: [UInt64: String] = [:]
        for e in entries { keys[e.key] = Self.albumKey(e.item) }
        return keys
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
        send(.setReplayGain(mode, preamp: preamp))
    }

    /// Seconds of crossfade between items (0, the default: gapless). Never between consecutive
    /// tracks of the same album played in order (they stay gapless). Items of different sample
    /// rates or channel counts are crossfaded too (the incoming one is converted for the
    /// overlap). Applies from the next item scheduled.
    public var crossfadeDuration: Double {
        get { lock.withLock { $0.machine.crossfade } }
        set { send(.setCrossfade(newValue)) }
    }

    /// Volume 0…1 (ramped, no click).
    public var volume: Float {
        get { lock.withLock { $0.machine.volume } }
        set { send(.setVolume(newValue)) }
    }

    /// Ducking: the output level is `volume × level` until set back to 1 (another audio
    /// session asked this one to duck; ``volume`` itself is kept, and restored exactly).
    public var duckLevel: Float {
        get { lock.withLock { $0.machine.duck } }
        set { send(.setDuck(newValue)) }
    }

    /// Where the sound server's requests to stop and go on (PulseAudio `request-cork` /
    /// `request-uncork`) go instead of interrupting this queue directly: a player that follows an
    /// ``AudioSession`` passes them to it (``AudioSession/reportServerInterruption(began:)``) and
    /// acts on the session's interruptions. Nil (the default): the queue handles them itself.
    /// Called on the output's event thread.
    package var corkRequestHandler: (@Sendable (Bool) -> Void)? {
        get { lock.withLock { $0.corkRequestHandler } }
        set { lock.withLock { $0.corkRequestHandler = newValue } }
    }

    /// Pauses for an interruption: the state becomes `interrupted` (``play()`` resumes).
    public func interrupt() { send(.interrupt) }

    /// Effect nodes after the equaliser, re-wired live.
    public var effects: [AudioNode] {
        get { lock.withLock { $0.effects } }
        set {
            // Re-wiring may wait for the engine to take the new graph: on the executor.
            let flow = executor.isCurrent ? nil : DispatchGroup()
            lock.withLock { l in
                l.effects = newValue
                if let rt = l.runtime { enqueue([.effects(rt, newValue)], flow: flow) }
            }
            flow?.wait()
        }
    }

    // MARK: Transport

    public var playbackState: PlaybackState { lock.withLock { $0.machine.state } }

    /// Whether a start is under way: `play()` was called and the first item is being opened (a
    /// network item connecting) or its output built — ``playbackState`` says `playing` once it
    /// plays. Any thread.
    public var isStarting: Bool {
        lock.withLock { l in
            if case .starting = l.machine.runtime { return true }
            return false
        }
    }

    /// Times audio was not there when it was due, since the player was made: the output's own
    /// underruns (PulseAudio's underflows: the server's buffer ran dry) and the node's late data
    /// (silence rendered because nothing was decoded yet). Any thread.
    public var underrunCount: Int {
        lock.withLock { l in l.closedUnderruns + (l.runtime?.underrunCount ?? 0) }
    }

    /// Whether the queue, paused because its output was lost, plays on by itself when the output
    /// answers again (``QueuePlayerEvent/outputReturned(resuming:)``); `pause()` or `stop()`
    /// cancel that.
    public var isWaitingForOutput: Bool { lock.withLock { $0.machine.resumesWhenOutputReturns } }

    /// Why the last `play()` could not start (nil when it did).
    public var lastError: TonearmError? { lock.withLock { $0.machine.lastError } }

    /// Plays from the current position. Items that cannot be opened are reported
    /// (``QueuePlayerEvent/itemFailed(index:item:error:)``) and skipped.
    public func play() { send(.play) }

    public func pause() { send(.pause) }

    /// Stops and goes back to the start of the current item.
    public func stop() { send(.stop) }

    /// Seconds into the current item of the audio being heard now: what the node has rendered,
    /// less what the output still holds (its latency: up to a quarter of a second once the
    /// steady buffer has grown). While a seek is being carried out: where it goes, as soon as it
    /// has been asked for. Within an item it never goes back except by a seek.
    public var currentTime: Double { lock.withLock { Self.currentTime(&$0) } }

    /// The time heard (lock held): the node's position less the output's latency, never before
    /// the head's start, and never back within one head.
    private static func currentTime(_ l: inout Locked) -> Double {
        if let restart = l.pendingRestart, let position = restart.position { return position }
        guard let rt = l.runtime, let head = l.machine.schedule.segments.first else {
            return l.machine.currentTime(playerSampleTime: l.runtime?.node.playerTime?.sampleTime)
        }
        // The position first, then the latency: the output raises its latency before it lets the
        // node render frames, so a reader never sees frames rendered without their latency.
        let rendered = rt.node.playerTime?.sampleTime
        let held = Int64((rt.driver.latency * rt.format.sampleRate).rounded())
        var t = l.machine.currentTime(playerSampleTime: rendered, heldFrames: held)
        let epoch = l.machine.schedule.epoch
        if let last = l.lastHeard, last.token == head.token, last.epoch == epoch { t = max(t, last.seconds) }
        l.lastHeard = (head.token, epoch, t)
        return t
    }

    /// The sound heard with the instant it describes, for a clock that moves on between readings
    /// (the picture of a video item): ``currentTime`` moves once per output period (a quarter of
    /// a second on a grown buffer), and only the output knows at which instant its latency held
    /// (``OutputClockReading``; a PulseAudio timing update between two periods has its own).
    /// Lock-free but for the queue's own lock.
    public var clockReading: PlaybackClockReading { lock.withLock { Self.clockReading($0) } }

    /// The clock reading (lock held): the node's position less the output's latency at the
    /// instant of the output's reading (else at the end of the node's last render call).
    private static func clockReading(_ l: Locked) -> PlaybackClockReading {
        if let restart = l.pendingRestart, let position = restart.position {
            return PlaybackClockReading(time: position, hostNanos: 0, rendered: position)
        }
        let rendered = l.runtime?.node.playerTime?.sampleTime
        let renderedTime = l.machine.currentTime(playerSampleTime: rendered)
        guard let rt = l.runtime, l.machine.schedule.segments.first != nil else {
            return PlaybackClockReading(time: renderedTime, hostNanos: 0, rendered: renderedTime)
        }
        // The position first, then the output's reading (its latency is raised before the node
        // renders), then the render's instant.
        let output = rt.driver.clockReading
        let renderHost = rt.node.playerTimeHostNanos
        let held = Int64((output.latency * rt.format.sampleRate).rounded())
        let heard = l.machine.unclampedTime(playerSampleTime: rendered, heldFrames: held) ?? renderedTime
        return PlaybackClockReading(time: heard, hostNanos: output.hostNanos != 0 ? output.hostNanos : renderHost,
                                    rendered: renderedTime)
    }

    /// Where the node has rendered to in the current item (ahead of ``currentTime`` by what the
    /// output holds). For tests.
    var renderedTime: Double { lock.withLock { Self.renderedTime($0) } }

    /// Where the node has rendered to in the current item (lock held; a restart that goes
    /// somewhere: there).
    private static func renderedTime(_ l: Locked) -> Double {
        if let restart = l.pendingRestart, let position = restart.position { return position }
        return l.machine.currentTime(playerSampleTime: l.runtime?.node.playerTime?.sampleTime)
    }

    /// The current item's duration in seconds (nil before it has been opened).
    public var currentDuration: Double? { lock.withLock { $0.machine.schedule.currentDuration } }

    /// Moves within the current item (sample-accurate); playing or paused, it goes on from there.
    public func seek(to seconds: Double) { send(.seek(seconds)) }

    /// Skips to the next item in play order (repeat-one does not hold). At the end of the queue
    /// without repeat-all, playback stops.
    public func advanceToNextItem() { send(.skipToNext) }

    /// Skips to the previous item in play order (the first stays; repeat-all wraps).
    public func skipToPreviousItem() { send(.skipToPrevious) }

    /// Makes the item at queue index `index` current.
    public func skipToItem(at index: Int) { send(.skipToItem(index)) }

    /// Goes to the first item of the play order.
    public func skipToBeginning() { send(.skipToBeginning) }

    // MARK: Feeding the machine

    /// A public call: feeds `input` to the machine and waits (unless called on the executor) until
    /// what it caused has been carried out — the actions, and the opens they began (a local item
    /// and the output for `play()`, the item for a seek), but not a network connection for a
    /// start: `play()` does not wait for the network.
    private func send(_ input: QueueStateMachine.Input) {
        let flow = executor.isCurrent ? nil : DispatchGroup()
        feed(input, flow: flow)
        flow?.wait()
    }

    /// Feeds `input` to the machine under the lock and enqueues its actions, in order, on the
    /// executor. `flow`: what a waiting caller waits on (nil: nobody waits). `built`: the runtime
    /// just built, for `installRuntime`.
    private func feed(_ input: QueueStateMachine.Input, flow: DispatchGroup?, built: Built? = nil) {
        lock.withLock { l in enqueue(apply(l.machine.handle(input), in: &l, built: built), flow: flow) }
    }

    /// Turns `actions` into jobs for the executor, doing under the lock only what is the lock's
    /// own state (which runtime is installed, the keep-alive, where a restart starts). Lock held.
    private func apply(_ actions: [QueueStateMachine.Action], in l: inout Locked, built: Built? = nil) -> [Job] {
        var jobs: [Job] = []
        for action in actions {
            switch action {
            case .emit(let event):
                jobs.append(.emit(event))
            case .open(let token, let key, let item, let remote):
                jobs.append(.open(token: token, key: key, item: item, remote: remote))
            case .buildRuntime(let token):
                jobs.append(.build(token: token))
            case .installRuntime(let key, let position):
                guard let built else { continue }
                l.runtime = built.runtime
                l.pendingRestart = nil
                jobs.append(.install(built, key: key, position: position, effects: l.effects))
            case .discardRuntime:
                if let built { jobs.append(.close(built.runtime, drain: false)) }
            case .restartCurrent(var key, var position):
                guard let rt = l.runtime else { continue }
                var flush = false
                if let pending = l.pendingRestart, let going = pending.position {
                    // A restart under way that goes somewhere (a seek, a skip): this one goes
                    // there too, with the current item, and replaces what is heard as it does.
                    key = l.machine.currentEntry?.key ?? key
                    position = position ?? going
                    flush = pending.flush
                }
                // Without a position: on from where the node has rendered to when the item is on
                // the node again (what the output holds plays on, and the node goes on after it).
                l.restarts += 1
                l.pendingRestart = (l.restarts, position, flush)
                jobs.append(.restart(rt, key: key, position: position, serial: l.restarts, flush: flush))
            case .replaceCurrent(let key, let position):
                guard let rt = l.runtime else { continue }
                l.restarts += 1
                l.pendingRestart = (l.restarts, position, true)
                jobs.append(.restart(rt, key: key, position: position, serial: l.restarts, flush: true))
            case .startRendering:
                if let rt = l.runtime { jobs.append(.startRendering(rt)) }
            case .pauseRendering:
                if let rt = l.runtime { jobs.append(.pauseRendering(rt)) }
            case .closeRuntime(let drain):
                if let rt = l.runtime { jobs.append(.close(rt, drain: drain)) }
                l.runtime = nil
                l.pendingRestart = nil
            case .applyVolume(let v):
                if let rt = l.runtime { jobs.append(.volume(rt, v)) }
            case .awaitJoin(let frames):
                guard let rt = l.runtime else { continue }
                l.joinWaits += 1
                jobs.append(.awaitJoin(rt, seconds: Double(frames) / rt.format.sampleRate, serial: l.joinWaits))
            case .drainEnd(let epoch):
                if let rt = l.runtime { jobs.append(.drainEnd(rt, epoch: epoch)) }
            case .retainSelf:
                l.keepAlive = self
            case .releaseSelf:
                l.keepAlive = nil
            }
        }
        return jobs
    }

    /// Enqueues `jobs` on the executor as one batch (after every batch enqueued before it).
    /// Never waits. Called with the lock held, so that the executor carries out batches in the
    /// order the machine produced them.
    private func enqueue(_ jobs: [Job], flow: DispatchGroup?) {
        guard !jobs.isEmpty else { return }
        flow?.enter()
        executor.enqueue { [self] in
            for job in jobs {
                guard carryOut(job, flow: flow) else { break }
            }
            flow?.leave()
        }
    }

    /// Runs `body` on a worker thread of its own (an open that may take a while), as part of `flow`.
    private func onWorker(_ flow: DispatchGroup?, _ body: @escaping @Sendable () -> Void) {
        flow?.enter()
        Thread.detachNewThread {
            body()
            flow?.leave()
        }
    }

    // MARK: The executor

    /// Carries out `job` on the executor. False: the rest of its batch is void (the start it
    /// belonged to failed; the machine says what happens instead).
    private func carryOut(_ job: Job, flow: DispatchGroup?) -> Bool {
        switch job {
        case .emit(let event):
            if let probe = lock.withLock({ $0.eventProbe }) { probe(event) }
            broadcaster.yield(event)
        case .open(let token, let key, let item, let remote):
            // play() waits for a local item, not for the network (bounded by the network limits).
            let waited = remote ? nil : flow
            onWorker(waited) { [self] in openForStart(token: token, key: key, item: item, flow: waited) }
        case .build(let token):
            onWorker(flow) { [self] in buildRuntime(token: token, flow: flow) }
        case .install(let built, let key, let position, let effects):
            let rt = built.runtime
            // Stopped meanwhile: its close follows, and it never takes the equaliser.
            guard lock.withLock({ $0.runtime === rt }) else { return true }
            do {
                let id = ObjectIdentifier(rt)
                try rt.install(eq: eq, effects: effects, events: { [weak self] e in self?.outputEvent(e, from: id) })
            } catch {
                return !renderingFailed(rt, error, flow: flow)
            }
            lock.withLock { l in
                guard l.runtime === rt else { return }
                scheduleHead(file: built.file, key: key, at: position, candidate: built.partner, in: &l, runtime: rt)
            }
        case .restart(let rt, let key, let position, let serial, let flush):
            restart(rt, key: key, at: position, serial: serial, flush: flush, flow: flow)
        case .reschedule(let rt, let key, let file, let candidate, let position, let serial, let flush):
            let stillWanted = { (l: Locked) in l.runtime === rt && l.restarts == serial }
            let reschedule = { [self] in
                lock.withLock { l in
                    guard stillWanted(l) else { return }
                    guard let position else {
                        keepRendered(rt, key: key, file: file, candidate: candidate, in: &l)
                        return
                    }
                    guard l.machine.currentEntry?.key == key else { return }
                    l.pendingRestart = nil
                    let playing = l.machine.state == .playing
                    rt.node.stop()
                    l.machine.noteRestart(at: position)
                    scheduleHead(file: file, key: key, at: position, candidate: candidate, in: &l, runtime: rt)
                    if playing { rt.node.play() }
                }
            }
            // Every re-schedule holds an untimed output's rendering (before this player's lock:
            // the render call under way may wait for the decoder, whose `consumed` handler takes
            // it): a restart that keeps what was rendered stops the node exactly where it had
            // rendered to and goes on from there, and no restart writes the silence of a stopped
            // node between its stop and its play (a seek through the file output wrote up to half
            // its file as silence before). Inside a flush it is taken within the driver's
            // (which may itself wait for the render call under way to end: the null output's).
            if flush && lock.withLock({ stillWanted($0) }) {
                // The new audio goes on the node inside the output's flush: what the node rendered
                // of the old is dropped, none of the new is (the lock order is the output's lock,
                // then this player's; nothing holds this player's lock and waits for the output's).
                rt.driver.flush(replacing: { rt.node.withRenderHeld(reschedule) })
            } else {
                rt.node.withRenderHeld(reschedule)
            }
            restartEndedOutput(rt)
        case .startRendering(let rt):
            do {
                try rt.startRendering()
            } catch {
                return !renderingFailed(rt, error, flow: flow)
            }
        case .pauseRendering(let rt):
            rt.pauseRendering()
        case .volume(let rt, let v):
            rt.engine.mainMixerNode.outputVolume = v
        case .effects(let rt, let chain):
            try? rt.setEffects(chain)
        case .awaitJoin(let rt, let seconds, let serial):
            // A one-shot wake-up (never a wait on the executor); a later wait or another runtime
            // makes it void.
            PlayerWakeups.queue.asyncAfter(deadline: .now() + max(0, seconds)) { [weak self] in
                self?.joinWaitEnded(rt, serial: serial)
            }
        case .drainEnd(let rt, let epoch):
            // The queue plays on (its state `playing`) until the output has played its end. The
            // drain ends when the server has taken the last frame; what the device (the sink)
            // still holds of it, the latency then, plays after that: a one-shot wake-up then.
            rt.driver.drain(timeout: rt.driver.latency + rt.engine.tailTime + 1)
            endHeardWhenOutputEmpties(rt, epoch: epoch, giveUpAt: .now() + 2)
        case .close(let rt, let drain):
            // Closing joins the node's threads: they never wait for the executor.
            if drain { rt.driver.drain(timeout: rt.driver.latency + rt.engine.tailTime + 1) }
            rt.close()
            let counted = rt.underrunCount
            lock.withLock { $0.closedUnderruns += counted }
        }
        return true
    }

    /// Runtime `rt` could not start: the machine says what happens instead, and the rest of the
    /// batch (what was to follow the start) is void — true. A runtime closed meanwhile failing is
    /// nothing to report, and the batch goes on — false.
    private func renderingFailed(_ rt: QueueRuntime, _ error: any Error, flow: DispatchGroup?) -> Bool {
        lock.withLock { l in
            guard l.runtime === rt else { return false }
            // The server went away as the output started: a loss like any other, watched for.
            if watchForReturn(of: rt.driver, in: &l) {
                let lost = QueueStateMachine.Input.deviceLost(reason: Self.typed(error).description,
                                                              position: Self.currentTime(&l), watching: true)
                enqueue(apply(l.machine.handle(lost), in: &l), flow: flow)
                return true
            }
            enqueue(apply(l.machine.handle(.renderingFailed(Self.typed(error))), in: &l), flow: flow)
            return true
        }
    }

    /// Watches for `driver`'s lost server to answer again (``outputReturned()`` is then called on
    /// the watch's thread), in place of the watch of an earlier loss; false when the driver has
    /// nothing to watch (null and file outputs, a stream killed on a server that is still there),
    /// and then the earlier watch, if any, stays. Called under the lock.
    private func watchForReturn(of driver: any AudioOutputDriver, in l: inout Locked) -> Bool {
        guard let watch = driver.watchForReturn({ [weak self] in self?.outputReturned() }) else { return false }
        l.outputWatch?.cancel()
        l.outputWatch = watch
        return true
    }

    private static func typed(_ error: any Error) -> TonearmError {
        (error as? TonearmError) ?? .invalidState("\(error)")
    }

    // MARK: Opening, on worker threads

    /// Opens an item: a file, or a network stream — fetched by a ``NetworkByteSource`` (an
    /// ``HLSByteSource`` for an `.m3u8` playlist) that the file keeps, decoded in streaming mode
    /// so that playback starts before the whole body has come. Blocks the calling thread while
    /// it connects (bounded by the network limits). Never called with the lock held nor on the
    /// executor.
    /// A stream opened for entry `key` is remembered, so that what has arrived of it can be told
    /// (``loadedTimeRanges``).
    private func open(_ item: QueueItem, key: UInt64?) -> Result<AudioFile, TonearmError> {
        do {
            let file = try fetches.open(item, key: key)
            return .success(try item.range.map { try AudioFile(section: $0, of: file) } ?? file)
        } catch {
            return .failure(Self.typed(error))
        }
    }

    /// Opens the item a crossfade after entry `key` (item `index`, in `order`) would go into,
    /// when one may apply. Off the lock.
    private func openCandidate(after index: Int, key: UInt64, order: PlayOrder) -> Candidate? {
        guard let next = lock.withLock({ $0.machine.crossfadeCandidate(after: index, key: key, order: order) }),
              case .success(let file) = open(next.item, key: next.key) else { return nil }
        return Candidate(key: next.key, file: file)
    }

    /// Start `token`: opens the current item and reports it to the machine.
    private func openForStart(token: UInt64, key: UInt64, item: QueueItem, flow: DispatchGroup?) {
        switch open(item, key: key) {
        case .success(let file):
            lock.withLock { l in
                let actions = l.machine.handle(.startOpened(token: token, key: key))
                if actions.contains(.buildRuntime(token: token)) { l.startFile = (token, file) }
                enqueue(apply(actions, in: &l), flow: flow)
            }
        case .failure(let error):
            feed(.startOpenFailed(token: token, key: key, error: error), flow: flow)
        }
    }

    /// Start `token`: builds the runtime for the opened item (opening the output) and reports it
    /// to the machine, which installs it — unless `stop()` (or another start) came first. The
    /// equaliser and the effects are the install's (on the executor), not the build's: a build
    /// for a cancelled start may still run while another runtime renders them.
    private func buildRuntime(token: UInt64, flow: DispatchGroup?) {
        guard let (file, index, key, order) = lock.withLock({ l -> (AudioFile, Int, UInt64, PlayOrder)? in
            guard let s = l.startFile, s.token == token, let key = l.machine.startedKey else { return nil }
            l.startFile = nil
            // An entry removed meanwhile has no index: the machine then starts with the current item.
            return (s.file, l.machine.entry(key: key)?.index ?? -1, key, l.machine.order)
        }) else { return }
        let partner = openCandidate(after: index, key: key, order: order)
        let rt: QueueRuntime
        var made: (any AudioOutputDriver)?
        do {
            let driver = try makeOutput()
            made = driver
            rt = try QueueRuntime(format: file.processingFormat, driver: driver)
        } catch {
            lock.withLock { l in
                // A server that answered and went away meanwhile is watched for, as when playing.
                let watching = made.map { watchForReturn(of: $0, in: &l) } ?? false
                enqueue(apply(l.machine.handle(.runtimeFailed(token: token, error: Self.typed(error), watching: watching)),
                              in: &l), flow: flow)
            }
            return
        }
        feed(.runtimeBuilt(token: token, rate: rt.format.sampleRate), flow: flow,
             built: Built(runtime: rt, file: file, partner: partner))
    }

    /// Restart `serial`: re-opens entry `key` on a worker thread and re-schedules it from
    /// `position` (nil: where the node has rendered to then, ``keepRendered(_:key:file:candidate:in:)``),
    /// and what follows it, on the running node — unless another restart began meanwhile (or,
    /// with a position, another item became current). On the executor.
    private func restart(_ rt: QueueRuntime, key: UInt64, at position: Double?, serial: UInt64, flush: Bool,
                         flow: DispatchGroup?) {
        guard let (index, item, order) = lock.withLock({ l -> (Int, QueueItem, PlayOrder)? in
            guard l.runtime === rt, l.restarts == serial, let (index, item) = l.machine.entry(key: key) else { return nil }
            // The play order once the entry is current (the one after a join not heard yet is not).
            var order = l.machine.order
            if order.current != index { _ = order.jump(toItem: index) }
            return (index, item, order)
        }) else { return }
        onWorker(flow) { [self] in
            switch open(item, key: key) {
            case .success(let file):
                let candidate = openCandidate(after: index, key: key, order: order)
                lock.withLock { l in
                    guard l.runtime === rt, l.restarts == serial else { return }
                    enqueue([.reschedule(rt, key: key, file: file, candidate: candidate, position: position, serial: serial,
                                         flush: flush)], flow: flow)
                }
            case .failure(let error):
                lock.withLock { l in
                    guard l.runtime === rt, l.restarts == serial else { return }
                    l.pendingRestart = nil
                    enqueue(apply(l.machine.handle(.restartOpenFailed(key: key, error: error)), in: &l), flow: flow)
                }
            }
        }
    }

    // MARK: Scheduling on the node (lock held)

    private static func facts(_ file: AudioFile) -> QueueSchedule.ItemFacts {
        let m = file.metadata
        return QueueSchedule.ItemFacts(length: file.length, rate: file.processingFormat.sampleRate,
                                       sourceRate: file.sourceFormat.sampleRate, album: m.album,
                                       albumArtist: m.albumArtist ?? m.artist, replayGain: m.replayGain)
    }

    private static func settings(_ m: QueueStateMachine) -> QueueSchedule.Settings {
        QueueSchedule.Settings(crossfade: m.crossfade, replayGain: m.replayGain, preamp: m.preamp)
    }

    /// What a crossfade out of the entry at `place` goes into: `candidate`, when it is still the
    /// item that follows in play order.
    private static func incoming(_ candidate: Candidate?, after place: QueueSchedule.Place,
                                 in m: QueueStateMachine) -> QueueSchedule.Incoming? {
        guard let candidate, let next = m.crossfadeCandidate(after: place.index, key: place.key, order: place.order),
              next.key == candidate.key else { return nil }
        return QueueSchedule.Incoming(place: QueueSchedule.Place(key: next.key, index: next.index, order: next.order),
                                      facts: facts(candidate.file))
    }

    /// Schedules the current item (entry `key`, opened as `file`) from `seconds` as the head.
    private func scheduleHead(file: AudioFile, key: UInt64, at seconds: Double, candidate: Candidate?,
                              in l: inout Locked, runtime rt: QueueRuntime) {
        let m = l.machine
        guard let cur = m.order.current, m.currentEntry?.key == key else { return }
        let place = QueueSchedule.Place(key: key, index: cur, order: m.order)
        let p = l.machine.schedule.placeHead(place, facts: Self.facts(file), path: m.entries[cur].item.path, at: seconds,
                                             playerFrame: rt.node.playerTime?.sampleTime ?? 0,
                                             incoming: Self.incoming(candidate, after: place, in: m), settings: Self.settings(m))
        put(file, p, key: key, in: &l, runtime: rt)
    }

    /// Carries out a restart that keeps what the output holds (lock held), entry `key` re-opened
    /// as `file`: the node is stopped where it has rendered to, the schedule keeps what the output
    /// holds (``QueueStateMachine/keepRendered(upTo:restartingAt:)``) and the entry goes on from
    /// there behind it, so that nothing is heard twice or left out, and each join kept is
    /// announced when heard. When the node went on into another entry while this one was
    /// re-opened, that one is restarted instead; when it rendered the queue's end, nothing is.
    private func keepRendered(_ rt: QueueRuntime, key: UInt64, file: AudioFile, candidate: Candidate?,
                              in l: inout Locked) {
        let m = l.machine
        if m.schedule.segments.isEmpty {
            // Nothing on the node (its head was refused): the current item from where it was.
            l.pendingRestart = nil
            guard m.currentEntry?.key == key else { return }
            scheduleHead(file: file, key: key, at: m.pendingPosition, candidate: candidate, in: &l, runtime: rt)
            return
        }
        // Where the node has rendered to now (it runs ahead of its completions: into the next
        // segment, or to the queue's end).
        let rendered = rt.node.playerTime?.sampleTime ?? 0
        guard let rendering = m.renderingKeyAt(rendered), m.entry(key: rendering) != nil else {
            l.pendingRestart = nil
            return
        }
        guard rendering == key else {
            l.restarts += 1
            l.pendingRestart = (l.restarts, nil, false)
            enqueue([.restart(rt, key: rendering, position: nil, serial: l.restarts, flush: false)], flow: nil)
            return
        }
        l.pendingRestart = nil
        let playing = m.state == .playing
        // Exactly where the node stopped (it renders on until then): within the entry, or at
        // the last frame of its segment when it crossed into the next one meanwhile (the few
        // frames rendered of that one are then heard again). Through an untimed output the
        // render is held while this runs (the `.reschedule` job): it stopped where it had
        // rendered to, so neither happens there.
        var stopped = rt.node.stopReturningPlayerTime()
        if case .running(let rate) = m.runtime, let (i, start) = m.schedule.segment(renderedAt: rendered, engineRate: rate) {
            let end = start + Int64((Double(m.schedule.segments[i].frames) * rate / m.schedule.segments[i].sourceRate).rounded())
            stopped = max(rendered, min(stopped, end - 1))
        }
        if let (place, seconds) = l.machine.keepRendered(upTo: stopped, restartingAt: rt.node.playerTime?.sampleTime ?? 0) {
            let facts = Self.facts(file)
            let now = l.machine
            let p = l.machine.schedule.place(place, facts: facts, path: now.entries[place.index].item.path,
                                             from: QueueSchedule.startFrame(seconds: seconds, facts: facts),
                                             incoming: Self.incoming(candidate, after: place, in: now),
                                             settings: Self.settings(now))
            put(file, p, key: key, in: &l, runtime: rt)
        }
        if playing { rt.node.play() }
        // The joins kept are waited for on the node's new timeline.
        enqueue(apply(l.machine.handle(.heard(Self.heardFrame(l, rt))), in: &l), flow: nil)
    }

    /// Puts placement `p` of `source` (entry `key`'s file, or an overlap going into it) on the
    /// node with its handlers; what opening the file and reading it meet is said as warnings.
    private func put(_ source: any PlaybackSource, _ p: QueueSchedule.Placement, key: UInt64,
                     in l: inout Locked, runtime rt: QueueRuntime) {
        if let file = source as? AudioFile, !file.warnings.isEmpty {
            enqueue(apply(l.machine.handle(.warnings(key: key, file.warnings, fromOpening: true)), in: &l), flow: nil)
        }
        do {
            try rt.node.scheduleSegment(source, startingFrame: p.start, frameCount: p.frameCount, gain: p.gain,
                                        consumed: { [weak self] _ in self?.consumed(token: p.token, epoch: p.epoch) },
                                        rendered: { [weak self] _ in self?.rendered(token: p.token, epoch: p.epoch) },
                                        warnings: { [weak self] met in
                                            self?.feed(.warnings(key: key, met, fromOpening: false), flow: nil)
                                        })
        } catch {
            l.machine.schedule.dropLast(token: p.token)
        }
    }

    // MARK: The node's and the output's threads

    /// Node decoder thread: segment `token` has been read; what follows it is opened here (off
    /// the lock) and put on the node if the schedule is still the same — so that the node goes
    /// straight on with it (gapless).
    private func consumed(token: UInt64, epoch: UInt64) {
        guard let (rt, last) = lock.withLock({ l -> (QueueRuntime, QueueSchedule.Segment)? in
            guard let rt = l.runtime, let last = l.machine.schedule.consumed(token: token, epoch: epoch) else { return nil }
            return (rt, last)
        }) else { return }
        switch last.then {
        case .crossfade(let p):
            // The overlap: both files opened afresh for the mixing source.
            guard let incomingItem = lock.withLock({ l in l.machine.entry(key: p.place.key)?.item }),
                  case .success(let outFile) = open(QueueItem(path: p.outgoingPath), key: nil),
                  case .success(let inFile) = open(incomingItem, key: nil) else { return }
            let (mode, preamp) = lock.withLock { ($0.machine.replayGain, $0.machine.preamp) }
            let inGain = mode.linearGain(for: inFile.metadata.replayGain, preamp: preamp)
            guard let mix = try? CrossfadeSource(outgoing: outFile, outGain: p.outGain, incoming: inFile, inGain: inGain,
                                                 frames: p.frames) else { return }
            follow(rt, token: token, epoch: epoch, .overlap(mix, p))
        case .rest(let place, let frame):
            guard let item = lock.withLock({ l -> QueueItem? in
                      let m = l.machine
                      return m.entries.indices.contains(place.index) && m.entries[place.index].key == place.key
                          ? m.entries[place.index].item : nil
                  }),
                  case .success(let file) = open(item, key: place.key) else { return }
            let candidate = openCandidate(after: place.index, key: place.key, order: place.order)
            follow(rt, token: token, epoch: epoch, .item(place, file: file, start: frame, candidate: candidate))
        case .next:
            scheduleNext(after: last.order, token: token, epoch: epoch, runtime: rt)
        case .restarted:
            return  // a restart's cut: what follows it is scheduled with it
        }
    }

    /// Puts `following` on the node of `rt` behind segment `token` of `epoch`, if that is still
    /// the last one scheduled. On the node's decoder thread, inside the handler the node calls
    /// before it commits the item's last block: the node's contract for gapless playback is that
    /// what follows is scheduled by then (handing it to the executor would let the render thread
    /// reach the end first). Serialised with the executor's restarts by the lock and the epoch.
    private func follow(_ rt: QueueRuntime, token: UInt64, epoch: UInt64, _ following: Following) {
        lock.withLock { l in
            guard l.runtime === rt, l.machine.schedule.isLast(token: token, epoch: epoch) else { return }
            switch following {
            case .overlap(let mix, let partner):
                let p = l.machine.schedule.placeOverlap(partner, frames: mix.frameLength, sourceRate: mix.sourceFormat.sampleRate,
                                                        incomingFrames: mix.incomingFrameLength)
                put(mix, p, key: partner.place.key, in: &l, runtime: rt)
            case .item(let place, let file, let start, let candidate):
                let m = l.machine
                guard m.entries.indices.contains(place.index), m.entries[place.index].key == place.key else { return }
                let p = l.machine.schedule.place(place, facts: Self.facts(file), path: m.entries[place.index].item.path,
                                                 from: start, incoming: Self.incoming(candidate, after: place, in: m),
                                                 settings: Self.settings(m))
                put(file, p, key: place.key, in: &l, runtime: rt)
            }
        }
    }

    /// Opens the item after the one in `order` (skipping those that cannot be opened) and puts it
    /// behind segment `token` of `epoch`. Node decoder thread.
    private func scheduleNext(after start: PlayOrder, token: UInt64, epoch: UInt64, runtime rt: QueueRuntime) {
        // What follows is chosen by the repeat and shuffle set now, not those of when `start`'s
        // segment was scheduled.
        var order = lock.withLock { $0.machine.current(start) }
        // Its events go through the executor, in order with the machine's.
        var events: [Job] = []
        defer { if !events.isEmpty { lock.withLock { _ in enqueue(events, flow: nil) } } }
        for _ in 0...lock.withLock({ $0.machine.entries.count }) {
            guard let (next, key, item) = lock.withLock({ l -> (Int, UInt64, QueueItem)? in
                guard order.advanceOnEnd(), let next = order.current, l.machine.entries.indices.contains(next) else { return nil }
                return (next, l.machine.entries[next].key, l.machine.entries[next].item)
            }) else { return }
            switch open(item, key: key) {
            case .success(let file):
                let candidate = openCandidate(after: next, key: key, order: order)
                let place = QueueSchedule.Place(key: key, index: next, order: order)
                follow(rt, token: token, epoch: epoch, .item(place, file: file, start: 0, candidate: candidate))
                return
            case .failure(let error):
                events.append(.emit(.itemFailed(index: next, item: item, error: error)))
                if order.repeatMode == .one { return }
            }
        }
    }

    /// Node event thread: segment `token` has been rendered to its last frame. The next one (if
    /// any) is already playing; it becomes current when the join is heard (the machine waits for
    /// it with ``QueueStateMachine/Action/awaitJoin(frames:)``).
    private func rendered(token: UInt64, epoch: UInt64) {
        lock.withLock { l in
            guard let rt = l.runtime else { return }
            let input = QueueStateMachine.Input.segmentRendered(token: token, epoch: epoch, heard: Self.heardFrame(l, rt))
            enqueue(apply(l.machine.handle(input), in: &l), flow: nil)
        }
    }

    /// A wait for a join ended: what is heard now goes to the machine, unless a later wait or
    /// another runtime came since.
    private func joinWaitEnded(_ rt: QueueRuntime, serial: UInt64) {
        lock.withLock { l in
            guard l.runtime === rt, l.joinWaits == serial else { return }
            enqueue(apply(l.machine.handle(.heard(Self.heardFrame(l, rt))), in: &l), flow: nil)
        }
    }

    /// The player-node frame heard now: what the node has rendered less what the output holds
    /// (lock held). Nil while a restart that goes somewhere (a seek, a skip) is under way — the
    /// schedule it replaces is not heard on — or before the node has a time. (A restart that
    /// keeps what the output holds changes nothing heard: the schedule of before is heard on.)
    private static func heardFrame(_ l: Locked, _ rt: QueueRuntime) -> Int64? {
        guard l.pendingRestart?.position == nil, let rendered = rt.node.playerTime?.sampleTime else { return nil }
        // The position first, then the latency (see ``currentTime(_:)``).
        return rendered - Int64((rt.driver.latency * rt.format.sampleRate).rounded())
    }

    /// The output has played the queue's end (schedule `epoch`): the machine is told, unless
    /// another runtime came since or a restart that goes somewhere is under way (a seek after the
    /// end was rendered schedules anew). A restart that keeps what the output holds, asked for
    /// before the end was rendered, finds nothing left to re-schedule: the end stands.
    /// After the drain: the end is heard when the output holds nothing more. What it holds is
    /// read from its clock reading (the latency at an instant, less the time since), and read
    /// again at each one-shot wake-up, since a busy server plays later than the reading at the
    /// drain said (a clean-clone run announced an end 19.5 ms before it was heard). A driver
    /// whose reading has no instant is waited for once, its latency at the drain. Gives up (says
    /// the end is heard) `giveUpAt`. Executor or a timer's thread; never waits.
    private func endHeardWhenOutputEmpties(_ rt: QueueRuntime, epoch: UInt64, giveUpAt: DispatchTime, first: Bool = true) {
        let reading = rt.driver.clockReading
        var rest = reading.latency
        if reading.hostNanos != 0 {
            rest -= Double(Int64(bitPattern: monotonicNanoseconds() &- reading.hostNanos)) / 1e9
        } else if !first {
            rest = 0
        }
        rest = min(1, rest)
        guard rest > 0.001, DispatchTime.now() < giveUpAt else { return endHeard(rt, epoch: epoch) }
        PlayerWakeups.queue.asyncAfter(deadline: .now() + rest) { [weak self] in
            self?.endHeardWhenOutputEmpties(rt, epoch: epoch, giveUpAt: giveUpAt, first: false)
        }
    }

    private func endHeard(_ rt: QueueRuntime, epoch: UInt64) {
        lock.withLock { l in
            guard l.runtime === rt, l.pendingRestart?.position == nil else { return }
            enqueue(apply(l.machine.handle(.endHeard(epoch: epoch)), in: &l), flow: nil)
        }
    }

    /// Called on the executor with every event just before the listeners get it. For tests.
    var eventProbe: (@Sendable (QueuePlayerEvent) -> Void)? {
        get { lock.withLock { $0.eventProbe } }
        set { lock.withLock { $0.eventProbe = newValue } }
    }

    /// The output's event task: an event of the output of runtime `id` (ignored once that runtime
    /// has been closed).
    private func outputEvent(_ e: AudioOutputEvent, from id: ObjectIdentifier) {
        let (current, forward) = lock.withLock { l in (l.runtime.map(ObjectIdentifier.init) == id, l.corkRequestHandler) }
        guard current else { return }
        switch e {
        case .corkRequested:
            if let forward { forward(true) } else { feed(.corkRequested, flow: nil) }
        case .uncorkRequested:
            if let forward { forward(false) } else { feed(.uncorkRequested, flow: nil) }
        case .deviceRemoved(let previous, _):
            feed(.deviceRemoved(previous: previous), flow: nil)
        case .deviceLost(let reason):
            lock.withLock { l in
                guard let rt = l.runtime, ObjectIdentifier(rt) == id else { return }
                // The watch's report takes the lock, so it is handled after this loss.
                l.outputWatch?.cancel()
                l.outputWatch = nil
                let watching = watchForReturn(of: rt.driver, in: &l)
                let lost = QueueStateMachine.Input.deviceLost(reason: reason, position: Self.currentTime(&l),
                                                              watching: watching)
                enqueue(apply(l.machine.handle(lost), in: &l), flow: nil)
            }
        case .drained:
            let rt = lock.withLock { l -> QueueRuntime? in
                guard let rt = l.runtime, ObjectIdentifier(rt) == id else { return nil }
                l.outputEnded = id
                return rt
            }
            if let rt { restartEndedOutput(rt) }
        case .moved, .bufferChanged:
            break
        }
    }

    /// Starts `rt`'s output again when it stopped pulling by itself at the end of what was
    /// scheduled (``Locked/outputEnded``) while the queue plays something not yet rendered — a
    /// seek or skip carried out as the end was rendered, whichever of the two came first; else
    /// nothing. Any thread.
    private func restartEndedOutput(_ rt: QueueRuntime) {
        lock.withLock { l in
            guard l.runtime === rt, l.outputEnded == ObjectIdentifier(rt), l.machine.state == .playing,
                  !l.machine.schedule.allRendered else { return }
            l.outputEnded = nil
            enqueue([.startRendering(rt)], flow: nil)
        }
    }

    /// The watch's thread: the lost output answers again.
    private func outputReturned() {
        lock.withLock { l in
            l.outputWatch = nil
            enqueue(apply(l.machine.handle(.outputReturned), in: &l), flow: nil)
        }
    }

    // MARK: Invariants

    /// Whether what the executor has carried out agrees with the machine: the node of the
    /// runtime plays exactly when the machine says playing (two callers' start and pause carried
    /// out in the other order would leave it otherwise). Meaningful once every call has returned
    /// (the executor has carried out what the machine decided); nil when it agrees.
    func renderingDisagreement() -> String? {
        lock.withLock { l in
            guard let rt = l.runtime else { return nil }
            let playing = l.machine.state == .playing
            return rt.node.isPlaying == playing ? nil : "node playing \(rt.node.isPlaying), machine \(l.machine.state)"
        }
    }

    /// Whether the queue holds itself alive now (it plays, or a start is under way).
    var keepsItselfAlive: Bool { lock.withLock { $0.keepAlive != nil } }

    /// The rules that hold between the machine and what carries it out at every moment, as the
    /// list of those broken now (empty: consistent). For the tests that drive the queue from
    /// many threads at once.
    func invariantViolations() -> [String] {
        lock.withLock { l in
            let m = l.machine
            var broken: [String] = []
            if m.order.count != m.entries.count { broken.append("play order of \(m.order.count) for \(m.entries.count) items") }
            if let c = m.order.current, !m.entries.indices.contains(c) { broken.append("current index \(c) of \(m.entries.count)") }
            if m.order.current == nil && !m.entries.isEmpty { broken.append("no current item in a queue of \(m.entries.count)") }
            if (l.runtime != nil) != m.isRunning { broken.append("runtime \(l.runtime != nil), machine \(m.runtime)") }
            if m.isRunning && m.state == .stopped { broken.append("a runtime while stopped") }
            if m.state == .playing && !m.isRunning { broken.append("playing without a runtime") }
            if (l.keepAlive != nil) != m.retained { broken.append("kept alive \(l.keepAlive != nil), machine \(m.retained)") }
            if !m.isRunning && !m.schedule.segments.isEmpty { broken.append("\(m.schedule.segments.count) segments without a runtime") }
            if l.pendingRestart != nil && l.runtime == nil { broken.append("a restart without a runtime") }
            return broken
        }
    }
}
