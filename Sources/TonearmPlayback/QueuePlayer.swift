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
///
/// Structure: the rules live in a ``QueueStateMachine`` (inputs in, actions out) and what is on
/// the node in its ``QueueSchedule``; this class feeds the machine under its lock and carries out
/// the actions. Files, network items and outputs are opened off the lock (the result comes back
/// as an input, checked against what changed meanwhile); runtimes are closed off the lock.
public final class QueuePlayer: @unchecked Sendable {
    /// The equaliser (10 graphic bands, flat and bit-transparent until changed).
    public let eq = AudioUnitEQ(preset: .flat)

    /// Everything under the lock: the machine, and what carries its actions out.
    private struct Locked {
        var machine: QueueStateMachine
        var runtime: QueueRuntime?
        var effects: [AudioNode] = []
        var keepAlive: QueuePlayer?
        var corkRequestHandler: (@Sendable (Bool) -> Void)?
        /// The first item of the start under way, opened off the lock, until its runtime is built.
        var startFile: (token: UInt64, file: AudioFile)?
    }

    /// An action to carry out after the lock is released, in order.
    private enum Deferred: Sendable {
        case emit(QueuePlayerEvent)
        case open(token: UInt64, key: UInt64, item: QueueItem, remote: Bool)
        case build(token: UInt64)
        case restart(key: UInt64, position: Double)
        case startRendering(QueueRuntime)
        case pauseRendering(QueueRuntime)
        case close(QueueRuntime, drain: Bool)
    }

    /// A runtime just built for a start, with its first item and the item it may crossfade into.
    private struct Built {
        var runtime: QueueRuntime
        var file: AudioFile
        var partner: Candidate?
    }

    /// An item opened off the lock as the one a crossfade may go into.
    private struct Candidate {
        var key: UInt64
        var file: AudioFile
    }

    // The state of QueuePlayer is the lock's: only `eq` (itself thread-safe) is outside it.
    private let lock: Mutex<Locked>
    private let broadcaster = EventBroadcaster<QueuePlayerEvent>()
    private let makeOutput: @Sendable () throws -> any AudioOutputDriver

    /// A queue of `items`, played through the output `output` makes when playback starts (by
    /// default PulseAudio when a server answers, otherwise the silent real-time null output).
    public init(items: [QueueItem] = [],
                output: @escaping @Sendable () throws -> any AudioOutputDriver = QueuePlayer.automaticOutput) {
        makeOutput = output
        lock = Mutex(Locked(machine: QueueStateMachine(items: items)))
    }

    /// PulseAudio when a server answers, otherwise the real-time null output.
    public static let automaticOutput: @Sendable () throws -> any AudioOutputDriver = {
        OutputSelection.automatic().selection.makeDriver(streamName: "Tonearm")
    }

    /// Events, from the moment of the call. A new stream per call.
    public var events: AsyncStream<QueuePlayerEvent> { broadcaster.stream(bufferingNewest: 1024) }

    // MARK: Queue

    /// The items, in queue order.
    public func items() -> [QueueItem] { lock.withLock { $0.machine.entries.map(\.item) } }

    /// The current item and its index in the queue (nil when the queue is empty).
    public var currentItem: QueueItem? { lock.withLock { $0.machine.currentItem } }
    public var currentIndex: Int? { lock.withLock { $0.machine.order.current } }

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
            // Re-wiring may wait for the engine to take the new graph: not under the lock.
            let rt = lock.withLock { l in
                l.effects = newValue
                return l.runtime
            }
            if let rt { try? rt.setEffects(newValue) }
        }
    }

    // MARK: Transport

    public var playbackState: PlaybackState { lock.withLock { $0.machine.state } }

    /// Why the last `play()` could not start (nil when it did).
    public var lastError: TonearmError? { lock.withLock { $0.machine.lastError } }

    /// Plays from the current position. Items that cannot be opened are reported
    /// (``QueuePlayerEvent/itemFailed(index:item:error:)``) and skipped.
    public func play() { send(.play) }

    public func pause() { send(.pause) }

    /// Stops and goes back to the start of the current item.
    public func stop() { send(.stop) }

    /// Seconds into the current item.
    public var currentTime: Double { lock.withLock { Self.currentTime($0) } }

    private static func currentTime(_ l: Locked) -> Double {
        l.machine.currentTime(playerSampleTime: l.runtime?.node.playerTime?.sampleTime)
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

    // MARK: Carrying out the machine's actions

    /// Feeds `input` to the machine and carries out its actions.
    private func send(_ input: QueueStateMachine.Input) {
        perform(lock.withLock { l in apply(l.machine.handle(input), in: &l) })
    }

    /// Carries out the part of `actions` that belongs under the lock (the runtime taken out or
    /// installed, the volume, the keep-alive, scheduling on the node), and returns the rest.
    /// `built`: the runtime just built, for `installRuntime`. Lock held.
    private func apply(_ actions: [QueueStateMachine.Action], in l: inout Locked, built: Built? = nil) -> [Deferred] {
        var deferred: [Deferred] = []
        for action in actions {
            switch action {
            case .emit(let event):
                deferred.append(.emit(event))
            case .open(let token, let key, let item, let remote):
                deferred.append(.open(token: token, key: key, item: item, remote: remote))
            case .buildRuntime(let token):
                deferred.append(.build(token: token))
            case .installRuntime(let key, let position):
                guard let built else { continue }
                l.runtime = built.runtime
                scheduleHead(file: built.file, key: key, at: position, partner: built.partner, in: &l, runtime: built.runtime)
            case .discardRuntime:
                if let built { deferred.append(.close(built.runtime, drain: false)) }
            case .restartCurrent(let key, let position):
                deferred.append(.restart(key: key, position: position ?? Self.currentTime(l)))
            case .startRendering:
                if let rt = l.runtime { deferred.append(.startRendering(rt)) }
            case .pauseRendering:
                if let rt = l.runtime { deferred.append(.pauseRendering(rt)) }
            case .closeRuntime(let drain):
                if let rt = l.runtime { deferred.append(.close(rt, drain: drain)) }
                l.runtime = nil
            case .applyVolume(let v):
                l.runtime?.engine.mainMixerNode.outputVolume = v
            case .retainSelf:
                l.keepAlive = self
            case .releaseSelf:
                l.keepAlive = nil
            }
        }
        return deferred
    }

    /// Carries out `deferred`, in order, off the lock. After a draining close the rest goes on on
    /// a thread of its own (not the node's event thread: closing the runtime joins it).
    private func perform(_ deferred: [Deferred]) {
        for (i, d) in deferred.enumerated() {
            switch d {
            case .emit(let event):
                broadcaster.yield(event)
            case .open(let token, let key, let item, let remote):
                if remote {
                    // Connecting may take a while (bounded by the network limits): not on the caller's thread.
                    Thread.detachNewThread { [self] in openForStart(token: token, key: key, item: item) }
                } else {
                    openForStart(token: token, key: key, item: item)
                }
            case .build(let token):
                buildRuntime(token: token)
            case .restart(let key, let position):
                restartCurrent(key: key, at: position)
            case .startRendering(let rt):
                do {
                    try rt.startRendering()
                } catch {
                    // What was to follow the start (its events) is void: the machine says what happens instead.
                    send(.renderingFailed(Self.typed(error)))
                    return
                }
            case .pauseRendering(let rt):
                rt.pauseRendering()
            case .close(let rt, drain: false):
                rt.close()
            case .close(let rt, drain: true):
                let rest = Array(deferred[(i + 1)...])
                Thread.detachNewThread { [self] in
                    rt.driver.drain(timeout: rt.driver.latency + rt.engine.tailTime + 1)
                    rt.close()
                    perform(rest)
                }
                return
            }
        }
    }

    private static func typed(_ error: any Error) -> TonearmError {
        (error as? TonearmError) ?? .invalidState("\(error)")
    }

    /// Opens an item: a file, or a network stream — fetched by a ``NetworkByteSource`` (an
    /// ``HLSByteSource`` for an `.m3u8` playlist) that the file keeps, decoded in streaming mode
    /// so that playback starts before the whole body has come. Blocks the calling thread while
    /// it connects (bounded by the network limits). Never called with the lock held.
    private static func open(_ item: QueueItem) -> Result<AudioFile, TonearmError> {
        do {
            if item.isRemote {
                return .success(try ItemFetch.make(url: item.url).openFile(name: item.url.absoluteString))
            }
            return .success(try AudioFile(path: item.path))
        } catch {
            return .failure(Self.typed(error))
        }
    }

    /// Opens the item a crossfade after entry `key` (item `index`, in `order`) would go into,
    /// when one may apply. Off the lock.
    private func openCandidate(after index: Int, key: UInt64, order: PlayOrder) -> Candidate? {
        guard let next = lock.withLock({ $0.machine.crossfadeCandidate(after: index, key: key, order: order) }),
              case .success(let file) = Self.open(next.item) else { return nil }
        return Candidate(key: next.key, file: file)
    }

    /// Start `token`: opens the current item off the lock and reports it to the machine.
    private func openForStart(token: UInt64, key: UInt64, item: QueueItem) {
        switch Self.open(item) {
        case .success(let file):
            perform(lock.withLock { l in
                let actions = l.machine.handle(.startOpened(token: token, key: key))
                if actions.contains(.buildRuntime(token: token)) { l.startFile = (token, file) }
                return apply(actions, in: &l)
            })
        case .failure(let error):
            send(.startOpenFailed(token: token, key: key, error: error))
        }
    }

    /// Start `token`: builds the runtime for the opened item (opening the output) off the lock,
    /// and reports it to the machine, which installs it — unless `stop()` (or another start)
    /// came first.
    private func buildRuntime(token: UInt64) {
        guard let (file, index, key, order, effects) = lock.withLock({ l -> (AudioFile, Int, UInt64, PlayOrder, [AudioNode])? in
            guard let s = l.startFile, s.token == token, let key = l.machine.startedKey else { return nil }
            l.startFile = nil
            // An entry removed meanwhile has no index: the machine then starts with the current item.
            return (s.file, l.machine.entry(key: key)?.index ?? -1, key, l.machine.order, l.effects)
        }) else { return }
        let partner = openCandidate(after: index, key: key, order: order)
        let rt: QueueRuntime
        do {
            let driver = try makeOutput()
            rt = try QueueRuntime(format: file.processingFormat, driver: driver, eq: eq)
        } catch {
            send(.runtimeFailed(token: token, error: Self.typed(error)))
            return
        }
        try? rt.setEffects(effects)
        rt.watchOutput { [weak self] e in self?.outputEvent(e) }
        let built = Built(runtime: rt, file: file, partner: partner)
        perform(lock.withLock { l in
            apply(l.machine.handle(.runtimeBuilt(token: token, rate: rt.format.sampleRate)), in: &l, built: built)
        })
    }

    /// Re-schedules the current item (entry `key`) from `position`, and what follows it, on the
    /// running node. The item is opened off the lock (a network item connects); if another item
    /// became current meanwhile, this restart gives way to it.
    private func restartCurrent(key: UInt64, at position: Double) {
        guard let (index, item, order) = lock.withLock({ l -> (Int, QueueItem, PlayOrder)? in
            guard l.runtime != nil, let (index, item) = l.machine.entry(key: key) else { return nil }
            return (index, item, l.machine.order)
        }) else { return }
        let file: AudioFile
        switch Self.open(item) {
        case .success(let f): file = f
        case .failure(let error):
            send(.restartOpenFailed(key: key, error: error))
            return
        }
        let partner = openCandidate(after: index, key: key, order: order)
        lock.withLock { l in
            guard let rt = l.runtime, l.machine.currentEntry?.key == key else { return }
            let playing = l.machine.state == .playing
            rt.node.stop()
            l.machine.noteRestart(at: position)
            scheduleHead(file: file, key: key, at: position, partner: partner, in: &l, runtime: rt)
            if playing { rt.node.play() }
        }
    }

    // MARK: Scheduling on the node

    private static func facts(_ file: AudioFile) -> QueueSchedule.ItemFacts {
        let m = file.metadata
        return QueueSchedule.ItemFacts(length: file.length, rate: file.processingFormat.sampleRate,
                                       sourceRate: file.sourceFormat.sampleRate, album: m.album,
                                       albumArtist: m.albumArtist ?? m.artist, replayGain: m.replayGain)
    }

    /// Schedules the current item (entry `key`, opened as `file`) from `seconds` as the head.
    /// Lock held.
    private func scheduleHead(file: AudioFile, key: UInt64, at seconds: Double, partner: Candidate?,
                              in l: inout Locked, runtime rt: QueueRuntime) {
        guard let cur = l.machine.order.current, l.machine.currentEntry?.key == key else { return }
        l.machine.schedule.beginHead(playerFrame: rt.node.playerTime?.sampleTime ?? 0)
        let start = QueueSchedule.startFrame(seconds: seconds, facts: Self.facts(file))
        scheduleItem(file: file, index: cur, start: start, order: l.machine.order, partner: partner, in: &l, runtime: rt)
    }

    /// Schedules item `index` (opened as `file`) from `start`: to its end, or — when a crossfade
    /// into `partner` applies — to where the overlap begins. Lock held.
    private func scheduleItem(file: AudioFile, index: Int, start: AudioFramePosition, order: PlayOrder,
                              partner candidate: Candidate?, in l: inout Locked, runtime rt: QueueRuntime) {
        let m = l.machine
        let key = m.entries[index].key
        var partner: QueueSchedule.Partner?
        if let candidate, let next = m.crossfadeCandidate(after: index, key: key, order: order), next.key == candidate.key,
           let frames = QueueSchedule.crossfadeFrames(seconds: m.crossfade, outgoing: Self.facts(file),
                                                      incoming: Self.facts(candidate.file), consecutive: next.index == index + 1) {
            partner = QueueSchedule.Partner(key: next.key, index: next.index, order: next.order,
                                            outgoingPath: m.entries[index].item.path,
                                            outGain: m.replayGain.linearGain(for: file.metadata.replayGain, preamp: m.preamp),
                                            frames: frames)
        }
        let (end, then) = QueueSchedule.plan(length: file.length, start: start, partner: partner)
        enqueue(file: file, key: key, start: start, end: end, order: order, then: then, in: &l, runtime: rt)
    }

    /// Puts one segment on the node with its handlers. Lock held.
    private func enqueue(file: any PlaybackSource, key: UInt64, start: AudioFramePosition, end: AudioFramePosition,
                         order: PlayOrder, then: QueueSchedule.Continuation, gain fixedGain: Float? = nil,
                         in l: inout Locked, runtime rt: QueueRuntime) {
        let m = l.machine
        let gain = fixedGain ?? (file as? AudioFile).map { m.replayGain.linearGain(for: $0.metadata.replayGain, preamp: m.preamp) } ?? 1
        let (token, epoch) = l.machine.schedule.append(key: key, start: start, end: end, sourceRate: file.sourceFormat.sampleRate,
                                                       order: order, then: then)
        do {
            try rt.node.scheduleSegment(file, startingFrame: start, frameCount: AudioFrameCount(max(0, end - start)), gain: gain,
                                        consumed: { [weak self] _ in self?.consumed(token: token, epoch: epoch) },
                                        rendered: { [weak self] _ in self?.rendered(token: token, epoch: epoch) })
        } catch {
            l.machine.schedule.dropLast(token: token)
        }
    }

    /// Node decoder thread: segment `token` has been read; schedule what follows it now, so the
    /// node goes straight on with it (gapless). What follows is opened off the lock, then
    /// scheduled if the schedule is still the same.
    private func consumed(token: UInt64, epoch: UInt64) {
        guard let last = lock.withLock({ l in l.runtime == nil ? nil : l.machine.schedule.consumed(token: token, epoch: epoch) })
        else { return }
        switch last.then {
        case .crossfade(let p):
            // The overlap: both files opened afresh for the mixing source.
            guard let incomingItem = lock.withLock({ l in l.machine.entry(key: p.key)?.item }),
                  case .success(let outFile) = Self.open(QueueItem(path: p.outgoingPath)),
                  case .success(let inFile) = Self.open(incomingItem) else { return }
            let (mode, preamp) = lock.withLock { ($0.machine.replayGain, $0.machine.preamp) }
            let inGain = mode.linearGain(for: inFile.metadata.replayGain, preamp: preamp)
            guard let mix = try? CrossfadeSource(outgoing: outFile, outGain: p.outGain, incoming: inFile, inGain: inGain,
                                                 frames: p.frames) else { return }
            lock.withLock { l in
                guard let rt = l.runtime, l.machine.schedule.isLast(token: token, epoch: epoch) else { return }
                enqueue(file: mix, key: p.key, start: 0, end: mix.frameLength, order: p.order,
                        then: .rest(key: p.key, index: p.index, order: p.order, frame: mix.incomingFrameLength), gain: 1,
                        in: &l, runtime: rt)
            }
        case .rest(let key, let index, let order, let frame):
            guard let item = lock.withLock({ l -> QueueItem? in
                      l.machine.entries.indices.contains(index) && l.machine.entries[index].key == key ? l.machine.entries[index].item : nil
                  }),
                  case .success(let file) = Self.open(item) else { return }
            let partner = openCandidate(after: index, key: key, order: order)
            lock.withLock { l in
                guard let rt = l.runtime, l.machine.schedule.isLast(token: token, epoch: epoch),
                      l.machine.entries.indices.contains(index), l.machine.entries[index].key == key else { return }
                scheduleItem(file: file, index: index, start: frame, order: order, partner: partner, in: &l, runtime: rt)
            }
        case .next:
            scheduleNext(after: last.order, token: token, epoch: epoch)
        }
    }

    /// Schedules the item after the one in `order` (skipping those that cannot be opened),
    /// behind segment `token` of `epoch`, if that is still the last one scheduled.
    private func scheduleNext(after start: PlayOrder, token: UInt64, epoch: UInt64) {
        var order = start
        var failures: [(Int, QueueItem, TonearmError)] = []
        defer { for (i, item, e) in failures { broadcaster.yield(.itemFailed(index: i, item: item, error: e)) } }
        for _ in 0...lock.withLock({ $0.machine.entries.count }) {
            guard let (next, key, item) = lock.withLock({ l -> (Int, UInt64, QueueItem)? in
                guard order.advanceOnEnd(), let next = order.current, l.machine.entries.indices.contains(next) else { return nil }
                return (next, l.machine.entries[next].key, l.machine.entries[next].item)
            }) else { return }
            switch Self.open(item) {
            case .success(let file):
                for warning in file.takeWarnings() { broadcaster.yield(.decodeWarning(warning)) }
                let partner = openCandidate(after: next, key: key, order: order)
                lock.withLock { l in
                    // Still the same schedule and the same item there: go on with it.
                    guard let rt = l.runtime, l.machine.schedule.isLast(token: token, epoch: epoch),
                          l.machine.entries.indices.contains(next), l.machine.entries[next].key == key else { return }
                    scheduleItem(file: file, index: next, start: 0, order: order, partner: partner, in: &l, runtime: rt)
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
        perform(lock.withLock { l in
            guard let rt = l.runtime else { return [] }
            let outcome = l.machine.schedule.rendered(token: token, epoch: epoch, engineRate: rt.format.sampleRate)
            return apply(l.machine.handle(rendered: outcome), in: &l)
        })
    }

    private func outputEvent(_ e: AudioOutputEvent) {
        let forward = lock.withLock { $0.corkRequestHandler }
        switch e {
        case .corkRequested:
            if let forward { forward(true) } else { send(.corkRequested) }
        case .uncorkRequested:
            if let forward { forward(false) } else { send(.uncorkRequested) }
        case .deviceRemoved(let previous, _):
            send(.deviceRemoved(previous: previous))
        case .deviceLost(let reason):
            perform(lock.withLock { l in
                apply(l.machine.handle(.deviceLost(reason: reason, position: Self.currentTime(l))), in: &l)
            })
        case .drained, .moved:
            break
        }
    }
}
