// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// The logic of ``QueuePlayer`` as a state machine that takes inputs and returns actions, like
/// ``AudioPlayerStateMachine``: it owns no threads, no files, no devices and no sound, so every
/// rule (what play does while a start is under way, which start a stop cancels, when an
/// interruption resumes, what a removed current item or a lost output does, which items a failed
/// start skips, where the queue goes at its end) is tested on its own. ``QueuePlayer`` feeds it
/// under its lock, opens files and outputs off the lock and feeds the results back as inputs, and
/// carries out the actions. What is scheduled on the node is the ``QueueSchedule``'s business.
struct QueueStateMachine: Sendable {
    struct Entry: Sendable, Equatable {
        var item: QueueItem
        /// A number that follows the entry through inserts, removes and moves.
        var key: UInt64
    }

    /// What the machine knows of the queue's runtime (engine, node and output).
    enum Runtime: Sendable, Equatable {
        case none
        /// Start `token` is under way: its first item is being opened (a network item may be
        /// connecting) or its output built, off the lock.
        case starting(token: UInt64)
        /// Running, its engine at `rate`.
        case running(rate: Double)
    }

    enum Input: Sendable, Equatable {
        case setQueue([QueueItem], order: PlayOrder?, position: Double)
        case insert(QueueItem, at: Int)
        case remove(at: Int)
        case move(from: Int, to: Int)
        /// The item at an index is replaced (its range changed: MPD's `rangeid`), keeping its
        /// place in the queue and in the play order.
        case replace(at: Int, QueueItem)
        case setRepeat(RepeatMode)
        /// `albums`: the album key of each entry (by entry key) for `.albums`, read off the lock.
        case setShuffle(ShuffleMode, albums: [UInt64: String], seed: UInt64)
        case startShuffled(ShuffleMode, first: Int?, albums: [UInt64: String], seed: UInt64)
        /// The items at `indices` get `priority` (``PlayOrder/setPriority(_:ofItem:afterCurrent:)``).
        case setPriority(UInt8, indices: [Int], afterCurrent: Bool)
        case setReplayGain(ReplayGainMode, preamp: Double)
        case setCrossfade(Double)
        case setVolume(Float)
        case setDuck(Float)

        case play
        case pause
        case stop
        case interrupt
        /// The sound server asked to stop (PulseAudio `request-cork`) / to go on.
        case corkRequested
        case uncorkRequested
        /// The device went away and the server moved the stream elsewhere.
        case deviceRemoved(previous: String)
        /// The stream failed; the queue was at `position` seconds. `watching`: a watch waits for
        /// the output to answer again (a restarted sound server), and will say so with
        /// `outputReturned`.
        case deviceLost(reason: String, position: Double, watching: Bool)
        /// The output lost earlier answers again (the watch of a `deviceLost` saw it).
        case outputReturned
        /// The output could not be started or resumed.
        case renderingFailed(TonearmError)

        case seek(Double)
        case skipToNext
        case skipToPrevious
        case skipToItem(Int)
        case skipToBeginning

        /// The item of entry `key` was opened for start `token` (off the lock).
        case startOpened(token: UInt64, key: UInt64)
        case startOpenFailed(token: UInt64, key: UInt64, error: TonearmError)
        /// The runtime for start `token` was built at engine rate `rate`.
        case runtimeBuilt(token: UInt64, rate: Double)
        /// `watching`: the output's server answered and then went away while the runtime was
        /// built, and a watch waits for it to answer again.
        case runtimeFailed(token: UInt64, error: TonearmError, watching: Bool)
        /// Re-opening the current item (entry `key`) for a restart failed.
        case restartOpenFailed(key: UInt64, error: TonearmError)
        /// The queue has played to its end: its last frame heard.
        case reachedEnd
        /// The node rendered the last frame of segment `token` of `epoch` (``QueueSchedule``); what
        /// is heard is at player-node frame `heard` (what the node rendered less what the output
        /// holds; nil when not known). Its end — a join into the next item, or the queue's end —
        /// takes effect when it is heard (``heard(_:)``; the queue's end at the latest when the
        /// output has played out what it holds, ``endHeard(epoch:)``).
        case segmentRendered(token: UInt64, epoch: UInt64, heard: Int64?)
        /// The output played out what it held after the queue's end was rendered
        /// (``Action/drainEnd(epoch:)`` for schedule `epoch`): the end is heard.
        case endHeard(epoch: UInt64)
        /// What is heard is at player-node frame `heard` (nil: not known), asked for by
        /// ``Action/awaitJoin(frames:)``: a join rendered before it is now heard — the next item
        /// becomes current (``QueuePlayerEvent/currentItemChanged(index:item:)``, its clock from
        /// its first heard frame) — or is still to come, and is waited for again.
        case heard(Int64?)
        /// Reading entry `key`'s file met `warnings` (corrupt packets skipped, a read that
        /// failed). `fromOpening`: found when the file was opened (a name that says another
        /// format) — said once per entry, however often a seek re-opens it. Said at once when the
        /// entry is the current one, else held and said right after it becomes current: the next
        /// item of a gapless queue is read before it is heard.
        case warnings(key: UInt64, [AudioWarning], fromOpening: Bool)
    }

    enum Action: Sendable, Equatable {
        case emit(QueuePlayerEvent)
        /// Open the item of entry `key` for start `token`, off the lock (on a thread of its own
        /// when `remote`: it connects), and report it with `startOpened` / `startOpenFailed`.
        case open(token: UInt64, key: UInt64, item: QueueItem, remote: Bool)
        /// Open the output and build the runtime for start `token`'s item; report it with
        /// `runtimeBuilt` / `runtimeFailed`.
        case buildRuntime(token: UInt64)
        /// Install the runtime just built (volume × duck on its mixer) and schedule the item of
        /// entry `key` from `position` on it.
        case installRuntime(key: UInt64, position: Double)
        /// The runtime just built is not wanted any more (stopped meanwhile): close it.
        case discardRuntime
        /// Re-open the item the node renders now (entry `key`: the current one, or the one after
        /// joins rendered and not heard yet) and re-schedule it from `position` seconds (where the
        /// node has rendered to when nil: ``keepRendered(upTo:restartingAt:)``) and what follows
        /// it, on the running node, keeping what the output holds: what is heard goes on
        /// seamlessly (the change is in what follows — the lookahead — or in a gain applied from
        /// the re-scheduled audio on), and the joins in it are announced when they are heard.
        case restartCurrent(key: UInt64, position: Double?)
        /// Like `restartCurrent`, but what is heard is replaced (a seek, a skip, another item made
        /// current): the output drops what it holds and has not played yet at the moment the new
        /// audio goes on the node (``AudioOutputDriver/flush(replacing:)``), so that the old audio
        /// does not play on for the length of the output's buffer. Never at a gapless join or a
        /// crossfade: those are not restarts.
        case replaceCurrent(key: UInt64, position: Double)
        case startRendering
        case pauseRendering
        /// Stop rendering and close the runtime (after letting the output play out when `drain`).
        case closeRuntime(drain: Bool)
        /// The queue's end is rendered: let the output play out what it holds (it is still
        /// playing the end of the last item), then feed ``Input/endHeard(epoch:)``.
        case drainEnd(epoch: UInt64)
        case applyVolume(Float)
        /// Feed ``Input/heard(_:)`` once about `frames` more frames (at the engine's rate) have
        /// been heard (0: at once): a rendered join waits to be heard.
        case awaitJoin(frames: Int64)
        /// Keep the player alive while it plays (released by `releaseSelf`).
        case retainSelf
        case releaseSelf
    }

    private(set) var entries: [Entry] = []
    private(set) var nextKey: UInt64 = 1
    private(set) var order = PlayOrder(count: 0)
    private(set) var runtime: Runtime = .none
    private(set) var state: PlaybackState = .stopped
    /// Where playback starts or resumes in the current item when not running (seconds).
    private(set) var pendingPosition: Double = 0
    private(set) var volume: Float = 1
    /// 1, or the level another session asked this one to duck to.
    private(set) var duck: Float = 1
    private(set) var replayGain: ReplayGainMode = .off
    private(set) var preamp: Double = 0
    private(set) var crossfade: Double = 0
    /// Interrupted by the sound server (a cork request), so that its uncork resumes.
    private(set) var corked = false
    /// The output was lost and a watch waits for it to answer again (`outputReturned`).
    private(set) var awaitingOutput = false
    /// Whether the queue plays on by itself when the lost output answers again: it was playing
    /// when the output was lost, or `play()` was asked while it was gone. Cleared by pause and
    /// stop. The player keeps itself alive meanwhile, as a playing one does.
    private(set) var resumesWhenOutputReturns = false
    private(set) var lastError: TonearmError?
    private var keepAlive = KeepAliveLatch()
    /// Whether the player keeps itself alive now (it plays).
    var retained: Bool { keepAlive.held }
    private(set) var nextStart: UInt64 = 1
    /// Items that failed to open in the start under way.
    private(set) var startFailures = 0
    /// The entry whose item the start under way opened.
    private(set) var startedKey: UInt64?
    /// The state the last `stateChanged` told the listeners (a start under way after the current
    /// item was removed while playing is `stopped` without having said so).
    private(set) var reportedState: PlaybackState = .stopped
    /// What is scheduled on the node.
    var schedule = QueueSchedule()
    /// Warnings of entries read ahead of being heard, by entry key (at most
    /// ``heldWarningLimit`` each), until the entry becomes current.
    private(set) var heldWarnings: [UInt64: [AudioWarning]] = [:]
    /// Entries whose opening warnings were said.
    private(set) var openingWarned: Set<UInt64> = []
    static let heldWarningLimit = 100
    /// The last ``Input/heard(_:)`` that waited for a join, and how long it asked to wait: when
    /// what is heard has not moved since, the next wait is twice as long (an output that stalls
    /// while playing is not asked again and again).
    private(set) var lastJoinWait: (heard: Int64?, frames: Int64)?

    init(items: [QueueItem] = []) {
        entries = items.enumerated().map { Entry(item: $0.element, key: UInt64($0.offset) + 1) }
        nextKey = UInt64(items.count) + 1
        order = PlayOrder(count: items.count)
    }

    var isRunning: Bool { if case .running = runtime { true } else { false } }
    var currentEntry: Entry? { order.current.flatMap { entries.indices.contains($0) ? entries[$0] : nil } }
    var currentItem: QueueItem? { currentEntry?.item }

    /// The entry of `key` and its index.
    func entry(key: UInt64) -> (index: Int, item: QueueItem)? {
        entries.firstIndex { $0.key == key }.map { ($0, entries[$0].item) }
    }

    /// Seconds into the current item, with the node at `playerSampleTime` and `heldFrames` of what
    /// it rendered still in the output (not heard yet; never before the head's start).
    func currentTime(playerSampleTime: Int64?, heldFrames: Int64 = 0) -> Double {
        guard case .running(let rate) = runtime,
              let t = schedule.currentTime(playerSampleTime: playerSampleTime.map { $0 - max(0, heldFrames) },
                                           engineRate: rate) else { return pendingPosition }
        return t
    }

    /// ``currentTime(playerSampleTime:heldFrames:)`` not clamped to the current item (see
    /// ``QueueSchedule/unclampedTime(playerSampleTime:engineRate:)``); nil when not running or
    /// nothing is scheduled.
    func unclampedTime(playerSampleTime: Int64?, heldFrames: Int64) -> Double? {
        guard case .running(let rate) = runtime else { return nil }
        return schedule.unclampedTime(playerSampleTime: playerSampleTime.map { $0 - max(0, heldFrames) }, engineRate: rate)
    }

    /// The item after item `index` (entry `key`) in `order` that a crossfade would go into, when
    /// one may apply: a crossfade is set, both are local files (a network item is never opened
    /// for a crossfade: it would wait for the network), and the next item is another one (not
    /// repeat-one). Whether it does apply depends on the files (``QueueSchedule/crossfadeFrames``).
    func crossfadeCandidate(after index: Int, key: UInt64, order: PlayOrder)
        -> (key: UInt64, index: Int, order: PlayOrder, item: QueueItem)? {
        guard crossfade > 0, entries.indices.contains(index), entries[index].key == key, !entries[index].item.isRemote
        else { return nil }
        var nextOrder = order
        guard nextOrder.advanceOnEnd(), let next = nextOrder.current, next != index, entries.indices.contains(next),
              !entries[next].item.isRemote else { return nil }
        return (entries[next].key, next, nextOrder, entries[next].item)
    }

    /// Records that the current item is being re-scheduled from `position` seconds.
    mutating func noteRestart(at position: Double) { pendingPosition = position }

    /// Whether what is scheduled after the current item no longer matches the play order.
    var lookaheadIsStale: Bool {
        let current = order.current.map { entries.indices.contains($0) ? entries[$0].key : 0 }
        let next = order.nextOnEnd.map { entries.indices.contains($0) ? entries[$0].key : 0 }
        return schedule.lookaheadIsStale(current: current, next: next)
    }

    mutating func handle(_ input: Input) -> [Action] {
        let actions = releasingHeldWarnings(rule(input))
        for case .emit(.stateChanged(let s)) in actions { reportedState = s }
        return actions
    }

    /// `actions` with the held warnings of an entry said right after it becomes current.
    private mutating func releasingHeldWarnings(_ actions: [Action]) -> [Action] {
        guard !heldWarnings.isEmpty else { return actions }
        var out: [Action] = []
        out.reserveCapacity(actions.count)
        for action in actions {
            out.append(action)
            if case .emit(.currentItemChanged(let index?, _)) = action, entries.indices.contains(index),
               let held = heldWarnings.removeValue(forKey: entries[index].key) {
                out += held.map { .emit(.decodeWarning($0)) }
            }
        }
        return out
    }

    private mutating func warnings(key: UInt64, _ met: [AudioWarning], fromOpening: Bool) -> [Action] {
        guard !met.isEmpty, entry(key: key) != nil else { return [] }
        if fromOpening { guard openingWarned.insert(key).inserted else { return [] } }
        if currentEntry?.key == key { return met.map { .emit(.decodeWarning($0)) } }
        let room = max(0, Self.heldWarningLimit - (heldWarnings[key]?.count ?? 0))
        if room > 0 { heldWarnings[key, default: []] += met.prefix(room) }
        return []
    }

    private mutating func rule(_ input: Input) -> [Action] {
        switch input {
        case .setQueue(let items, let o, let position):
            var actions = stop()
            entries = items.map { item in
                defer { nextKey += 1 }
                return Entry(item: item, key: nextKey)
            }
            // New entries, new keys: what was held or said of the old ones is gone with them.
            heldWarnings = [:]
            openingWarned = []
            if let o, o.count == items.count {
                order = o
            } else {
                order = PlayOrder(count: items.count, repeatMode: order.repeatMode)
            }
            pendingPosition = max(0, position)
            actions += [.emit(.queueChanged), emitCurrent()]
            return actions

        case .insert(let item, let index):
            let i = min(max(0, index), entries.count)
            entries.insert(Entry(item: item, key: nextKey), at: i)
            nextKey += 1
            order.insertItem(at: i, album: "")
            var actions = restartIfStale()
            actions.append(.emit(.queueChanged))
            if order.current == 0 && entries.count == 1 { actions.append(emitCurrent()) }
            return actions

        case .remove(let index):
            guard entries.indices.contains(index) else { return [] }
            if schedule.renderedUnheard > 0, let rendering = schedule.renderingKey, entries[index].key == rendering,
               order.current != index {
                // The item the node renders now, not heard yet: the joins rendered take effect
                // first and it is removed as the current item (what the output holds is
                // dropped) — never announced, as it is never heard.
                let settled = settleJoins().filter { if case .emit(.currentItemChanged) = $0 { false } else { true } }
                heldWarnings[rendering] = nil
                return settled + handle(.remove(at: index))
            }
            if order.current == index, case .starting = runtime {
                // A start under way goes on with the next item (it opens that one instead).
                entries.remove(at: index)
                order.removeItem(at: index)
                pendingPosition = 0
                if order.current == nil { runtime = .none }
                return [emitCurrent(), .emit(.queueChanged)]
            }
            if order.current == index {
                let playing = state == .playing
                var actions = closeRuntime()
                entries.remove(at: index)
                order.removeItem(at: index)
                pendingPosition = 0
                state = .stopped
                actions.append(emitCurrent())
                if playing && order.current != nil {
                    actions += handle(.play)
                } else {
                    // Stopped: a paused queue lets go of itself too.
                    actions += release()
                    actions.append(.emit(.stateChanged(.stopped)))
                }
                return actions + [.emit(.queueChanged)]
            }
            entries.remove(at: index)
            order.removeItem(at: index)
            return restartIfStale() + [.emit(.queueChanged)]

        case .replace(let index, let item):
            guard entries.indices.contains(index) else { return [] }
            if order.current == index {
                // The current item goes on as it was opened; what replaced it is read when it is
                // opened again (a restart, a seek back to it from the next one).
                entries[index].item = item
                return [.emit(.queueChanged)]
            }
            // A new key: a join already scheduled to the old one is stale and made again.
            entries[index] = Entry(item: item, key: nextKey)
            nextKey += 1
            return restartIfStale() + [.emit(.queueChanged)]

        case .move(let from, let to):
            guard entries.indices.contains(from), entries.indices.contains(to), from != to else {
                return [.emit(.queueChanged)]
            }
            let e = entries.remove(at: from)
            entries.insert(e, at: to)
            order.moveItem(from: from, to: to)
            return restartIfStale() + [.emit(.queueChanged)]

        case .setRepeat(let mode):
            order.setRepeat(mode)
            return restartIfStale() + [.emit(.repeatModeChanged(mode))]

        case .setShuffle(let mode, let albums, let seed):
            if mode == .albums {
                var o = PlayOrder(count: entries.count, albums: albumKeys(albums), start: order.current ?? 0,
                                  repeatMode: order.repeatMode, seed: seed, priorities: order.priorities)
                o.setShuffle(.albums)
                order = o
            } else if mode == .songs && order.shuffleMode == .off {
                var o = PlayOrder(count: entries.count, start: order.current ?? 0, repeatMode: order.repeatMode, seed: seed,
                                  priorities: order.priorities)
                o.setShuffle(.songs)
                order = o
            } else {
                order.setShuffle(mode)
            }
            return restartIfStale() + [.emit(.shuffleModeChanged(mode))]

        case .startShuffled(let mode, let first, let albums, let seed):
            let before = order.current
            var o = PlayOrder(count: entries.count, albums: mode == .albums ? albumKeys(albums) : nil,
                              repeatMode: order.repeatMode, seed: seed, priorities: order.priorities)
            o.startShuffled(mode, first: first)
            order = o
            var actions: [Action] = [.emit(.shuffleModeChanged(mode))]
            if o.current != before {
                pendingPosition = 0
                actions += jumped()
            } else {
                actions += restartIfStale()
            }
            return actions

        case .setPriority(let priority, let indices, let afterCurrent):
            let before = order.current
            var changed = false
            for i in indices where order.setPriority(priority, ofItem: i, afterCurrent: afterCurrent) { changed = true }
            guard changed else { return [] }
            var actions: [Action] = []
            if order.current != before {
                pendingPosition = 0
                actions += jumped()
            } else {
                actions += restartIfStale()
            }
            return actions + [.emit(.queueChanged)]

        case .setReplayGain(let mode, let p):
            replayGain = mode
            preamp = p
            return restart(at: nil)

        case .setCrossfade(let seconds):
            crossfade = max(0, min(30, seconds.isFinite ? seconds : 0))
            return []

        case .setVolume(let v):
            volume = max(0, min(1, v.isFinite ? v : 0))
            return (isRunning ? [.applyVolume(volume * duck)] : []) + [.emit(.volumeChanged(volume))]

        case .setDuck(let level):
            let d = max(0, min(1, level.isFinite ? level : 1))
            let changed = d != duck
            duck = d
            return (isRunning ? [.applyVolume(volume * duck)] : []) + (changed ? [.emit(.ducked(level: d))] : [])

        case .play:
            if state == .playing { return [] }
            if case .starting = runtime { return [] }
            if isRunning {
                state = .playing
                corked = false
                // A join rendered before the pause is waited for again.
                lastJoinWait = nil
                let join: [Action] = schedule.renderedUnheard > 0 ? [.awaitJoin(frames: 0)] : []
                return retain() + [.startRendering, .emit(.stateChanged(.playing))] + join
            }
            guard let cur = currentEntry else { return [] }
            let token = nextStart
            nextStart += 1
            runtime = .starting(token: token)
            startFailures = 0
            return [.open(token: token, key: cur.key, item: cur.item, remote: cur.item.isRemote)]

        case .pause:
            if resumesWhenOutputReturns && !isRunning {
                // Waiting for a lost output: it stays paused when the output comes back.
                resumesWhenOutputReturns = false
                return release()
            }
            guard state == .playing, isRunning else { return [] }
            state = .paused
            return [.pauseRendering, .emit(.stateChanged(.paused))]

        case .stop:
            return stop()

        case .interrupt:
            guard state == .playing, isRunning else { return [] }
            state = .interrupted
            return [.pauseRendering, .emit(.stateChanged(.interrupted))]

        case .corkRequested:
            guard state == .playing, isRunning else { return [] }
            state = .interrupted
            corked = true
            return [.pauseRendering, .emit(.stateChanged(.interrupted))]

        case .uncorkRequested:
            guard state == .interrupted, corked else { return [] }
            state = .paused
            return handle(.play)

        case .deviceRemoved(let previous):
            // The unplugged-headphones rule: pause rather than go on out of the speakers.
            return handle(.pause) + [.emit(.outputRemoved(previous: previous))]

        case .deviceLost(let reason, let position, let watching):
            // The stream is gone: keep the place, so that play() resumes on the output there is —
            // and, while a watch waits for the output to answer again, play on by itself when it
            // does if it was playing (a restarted sound server).
            let was = state
            var actions = closeRuntime()
            pendingPosition = position
            state = was == .stopped ? .stopped : .paused
            awaitingOutput = watching
            resumesWhenOutputReturns = watching && was == .playing
            if !resumesWhenOutputReturns { actions += release() }
            actions.append(.emit(.outputLost(reason: reason, awaitingReturn: watching)))
            if was != .stopped { actions.append(.emit(.stateChanged(.paused))) }
            return actions

        case .outputReturned:
            guard awaitingOutput else { return [] }
            awaitingOutput = false
            let resume = resumesWhenOutputReturns
            resumesWhenOutputReturns = false
            switch runtime {
            case .starting:
                // A play() under way goes on, now that there is an output.
                return [.emit(.outputReturned(resuming: true))]
            case .running:
                return [.emit(.outputReturned(resuming: false))]  // playing meanwhile (another output)
            case .none:
                // Paused by the loss, or never started (the server went away as it opened).
                var start = resume && state != .playing ? handle(.play) : []
                // Held since the loss while the start it asked for is under way; a start that fails
                // lets go (finishQueue, fail).
                let starts = start.contains { if case .open = $0 { true } else { false } }
                if !starts { start += release() }
                return [.emit(.outputReturned(resuming: starts))] + start
            }

        case .renderingFailed(let error):
            return fail(error)

        case .seek(let seconds):
            let target = max(0, seconds.isFinite ? seconds : 0)
            pendingPosition = target
            return replace(at: target) + [.emit(.seeked(to: target))]

        case .skipToNext:
            pendingPosition = 0
            return order.skipToNext() ? jumped() : finishQueue(drain: false)

        case .skipToPrevious:
            pendingPosition = 0
            return order.skipToPrevious() ? jumped() : handle(.seek(0))

        case .skipToItem(let index):
            pendingPosition = 0
            return order.jump(toItem: index) ? jumped() : []

        case .skipToBeginning:
            pendingPosition = 0
            order.skipToBeginning()
            return jumped()

        case .startOpened(let token, let key):
            guard runtime == .starting(token: token) else { return [] }
            // Another item became current while this one was opening: open that one.
            guard let cur = currentEntry else { return finishStart(token: token, error: lastError) }
            if cur.key != key { return [.open(token: token, key: cur.key, item: cur.item, remote: cur.item.isRemote)] }
            startedKey = key
            return [.buildRuntime(token: token)]

        case .startOpenFailed(let token, let key, let error):
            guard runtime == .starting(token: token) else { return [] }
            var actions: [Action] = []
            if let (index, item) = entry(key: key) {
                actions.append(.emit(.itemFailed(index: index, item: item, error: error)))
            }
            startFailures += 1
            pendingPosition = 0
            if startFailures < entries.count && order.skipToNext(), let cur = currentEntry {
                return actions + [.open(token: token, key: cur.key, item: cur.item, remote: cur.item.isRemote)]
            }
            return actions + finishStart(token: token, error: error)

        case .runtimeBuilt(let token, let rate):
            guard runtime == .starting(token: token), let opened = startedKey else { return [.discardRuntime] }
            guard let cur = currentEntry else { return [.discardRuntime] + finishStart(token: token, error: lastError) }
            runtime = .running(rate: rate)
            state = .playing
            lastError = nil
            startedKey = nil
            var actions = retain() + [.installRuntime(key: opened, position: pendingPosition), .applyVolume(volume * duck)]
            // Another item became current while the output opened: it plays instead.
            if cur.key != opened { actions.append(.replaceCurrent(key: cur.key, position: pendingPosition)) }
            return actions + [.startRendering, emitCurrent(), .emit(.stateChanged(.playing))]

        case .runtimeFailed(let token, let error, let watching):
            guard runtime == .starting(token: token) else { return [] }
            runtime = .none
            if awaitingOutput, case .outputUnavailable = error {
                // play() while the lost output is still gone: play on when it answers.
                resumesWhenOutputReturns = true
                return retain()
            }
            if watching {
                // The server went away while the output was being opened: play when it is back.
                awaitingOutput = true
                resumesWhenOutputReturns = true
                return retain() + [.emit(.outputLost(reason: error.description, awaitingReturn: true))]
            }
            return fail(error)

        case .restartOpenFailed(let key, let error):
            guard let (index, item) = entry(key: key) else { return [] }
            return [.emit(.itemFailed(index: index, item: item, error: error))] + handle(.skipToNext)

        case .reachedEnd:
            return finishQueue(drain: true)

        case .segmentRendered(let token, let epoch, let heard):
            guard isRunning, schedule.markRendered(token: token, epoch: epoch) else { return [] }
            let actions = joinsHeard(at: heard)
            // The end of the queue, not heard yet: the queue plays until the output has played
            // out what it holds (a join before it is announced when heard, or then).
            guard isRunning, schedule.allRendered else { return actions }
            return actions + [.drainEnd(epoch: epoch)]

        case .endHeard(let epoch):
            guard isRunning, schedule.epoch == epoch, schedule.allRendered, !schedule.segments.isEmpty else { return [] }
            // Drained already: the runtime is closed without waiting again.
            return settleJoins().map { $0 == .closeRuntime(drain: true) ? .closeRuntime(drain: false) : $0 }

        case .heard(let heard):
            return joinsHeard(at: heard)

        case .warnings(let key, let met, let fromOpening):
            return warnings(key: key, met, fromOpening: fromOpening)
        }
    }

    /// A segment played to its end (``QueueSchedule/rendered(token:epoch:engineRate:)``): the
    /// events and actions that follow from it.
    mutating func handle(rendered outcome: QueueSchedule.Rendered) -> [Action] {
        releasingHeldWarnings(renderedRule(outcome))
    }

    private mutating func renderedRule(_ outcome: QueueSchedule.Rendered) -> [Action] {
        switch outcome {
        case .ignored:
            return []
        case .sameItem(let o, let key):
            pendingPosition = 0
            order = current(o, key: key)
            return []
        case .advanced(let ended, let o, let key):
            pendingPosition = 0
            let endedAction = entry(key: ended).map { Action.emit(.itemPlayedToEnd(index: $0.index, item: $0.item)) }
            order = current(o, key: key)
            return (endedAction.map { [$0] } ?? []) + [emitCurrent()]
        case .finished(let ended, let position):
            // Until the end is carried out, the time is the end of the last item, not 0.
            pendingPosition = position
            let endedAction = entry(key: ended).map { Action.emit(.itemPlayedToEnd(index: $0.index, item: $0.item)) }
            return (endedAction.map { [$0] } ?? []) + handle(.reachedEnd)
        }
    }

    /// The play order at `recorded`'s item, as it stands now: a segment records the order of
    /// when it was scheduled, but repeat and shuffle may have been set since (over MPRIS, by a
    /// key) while it waited. The queue's own order when it is at that item, else that order
    /// moved on past its current item when that reaches the item, else the queue's order put at
    /// the item — always the repeat and shuffle set now. When items were inserted or removed
    /// since it was recorded, its indices are stale: the queue's order is put at entry `key`
    /// (the segment's own entry), or stays as it is when that is not known or gone — never an
    /// order of another length than the queue (found by QueuePlayerStressTests under TSan:
    /// "play order of 6 for 5 items" after an insert while the next segment waited).
    func current(_ recorded: PlayOrder, key: UInt64? = nil) -> PlayOrder {
        guard recorded.count == order.count else {
            var at = order
            if let key, let index = entries.firstIndex(where: { $0.key == key }), at.jump(toItem: index) { return at }
            return order
        }
        guard let item = recorded.current else { return recorded }
        if order.current == item { return order }
        var next = order
        if next.advanceOnEnd(), next.current == item { return next }
        var at = order
        return at.jump(toItem: item) ? at : recorded
    }

    // MARK: Rules shared by several inputs

    private func emitCurrent() -> Action {
        .emit(.currentItemChanged(index: order.current, item: currentItem))
    }

    private func albumKeys(_ albums: [UInt64: String]) -> [String] {
        entries.map { albums[$0.key] ?? $0.item.url.deletingLastPathComponent().path }
    }

    /// Re-schedules the item the node renders now at `seconds` (where it has rendered to when
    /// nil) when running, keeping what the output holds: the current item, or — while joins the
    /// node rendered wait to be heard — the item after them, which becomes current when its
    /// start is heard, as without the restart. Nothing once the queue's end is rendered.
    private mutating func restart(at seconds: Double?) -> [Action] {
        guard isRunning, let cur = currentEntry else { return [] }
        if schedule.segments.isEmpty { return [.restartCurrent(key: cur.key, position: seconds)] }
        guard let key = schedule.renderingKey else { return [] }
        return [.restartCurrent(key: key, position: seconds)]
    }

    /// The entry of the segment the node renders at player frame `rendered` (nil: none, it has
    /// rendered everything scheduled).
    func renderingKeyAt(_ rendered: Int64) -> UInt64? {
        guard case .running(let rate) = runtime, let (i, _) = schedule.segment(renderedAt: rendered, engineRate: rate) else {
            return nil
        }
        return schedule.segments[i].key
    }

    /// A restart that keeps what the output holds, carried out: the node, which had rendered to
    /// player frame `rendered`, was stopped and goes on from `restartFrame` (see
    /// ``QueueSchedule/keepRendered(upTo:restartingAt:engineRate:)``). Returns where the restart
    /// goes on — the entry, its index and its play order, and the position in it — for the
    /// player to schedule behind what was kept; nil when that entry is gone or the node renders
    /// nothing scheduled (nothing changes then). ``renderingKeyAt(_:)`` says beforehand which entry.
    mutating func keepRendered(upTo rendered: Int64, restartingAt restartFrame: Int64)
        -> (place: QueueSchedule.Place, seconds: Double)? {
        guard case .running(let rate) = runtime, let (i, _) = schedule.segment(renderedAt: rendered, engineRate: rate) else {
            return nil
        }
        let key = schedule.segments[i].key
        guard let index = entries.firstIndex(where: { $0.key == key }),
              let cut = schedule.keepRendered(upTo: rendered, restartingAt: restartFrame, engineRate: rate) else { return nil }
        var order = current(cut.order, key: key)
        if order.current != index {
            // Recorded before items were inserted or removed: the queue's order put at the entry.
            order = self.order
            _ = order.jump(toItem: index)
        }
        lastJoinWait = nil
        return (QueueSchedule.Place(key: key, index: index, order: order), cut.seconds)
    }

    /// Re-schedules the current item at `seconds` when running, replacing what is heard.
    private func replace(at seconds: Double) -> [Action] {
        guard isRunning, let cur = currentEntry else { return [] }
        return [.replaceCurrent(key: cur.key, position: seconds)]
    }

    /// Re-schedules the current item when what follows it no longer matches the play order —
    /// judged, while a rendered join waits to be heard, after that join (what is heard then goes
    /// on unannounced unless a restart is needed).
    private mutating func restartIfStale() -> [Action] {
        guard schedule.renderedUnheard > 0 else { return lookaheadIsStale ? restart(at: nil) : [] }
        var settled = self
        _ = settled.settleJoins()
        return settled.lookaheadIsStale ? restart(at: nil) : []
    }

    /// Every join the node rendered takes effect now, heard or not (a restart goes on after what
    /// was rendered; the queue's end was rendered).
    private mutating func settleJoins() -> [Action] {
        guard case .running(let rate) = runtime else { return [] }
        var actions: [Action] = []
        while isRunning, schedule.joinFrame(engineRate: rate) != nil {
            actions += renderedRule(schedule.joinHeard(engineRate: rate))
        }
        lastJoinWait = nil
        return actions
    }

    /// The joins rendered that are heard at player-node frame `heard` take effect; while one is
    /// still to be heard and the queue plays, it is waited for (about as long as the frames to
    /// it; twice the last wait when nothing moved since).
    private mutating func joinsHeard(at heard: Int64?) -> [Action] {
        guard case .running(let rate) = runtime else { return [] }
        var actions: [Action] = []
        while isRunning, let join = schedule.joinFrame(engineRate: rate), let heard, heard >= join {
            actions += renderedRule(schedule.joinHeard(engineRate: rate))
            lastJoinWait = nil
        }
        guard isRunning, state == .playing, let join = schedule.joinFrame(engineRate: rate) else {
            lastJoinWait = nil
            return actions
        }
        let least = Int64(rate / 200)  // 5 ms
        var frames = max(least, heard.map { join - $0 } ?? least)
        if let last = lastJoinWait, last.heard == heard { frames = max(frames, min(2 * last.frames, Int64(rate))) }
        lastJoinWait = (heard, frames)
        return actions + [.awaitJoin(frames: frames)]
    }

    /// Another item became current by a skip: what is heard is replaced.
    private mutating func jumped() -> [Action] { [emitCurrent()] + replace(at: 0) }

    private mutating func closeRuntime() -> [Action] {
        let had = isRunning
        runtime = .none
        schedule.clear()
        return had ? [.closeRuntime(drain: false)] : []
    }

    private mutating func stop() -> [Action] {
        let was = state
        resumesWhenOutputReturns = false
        var actions = closeRuntime()
        state = .stopped
        pendingPosition = 0
        actions += release()
        runtime = .none  // a start under way ends
        if was != .stopped || reportedState != .stopped { actions.append(.emit(.stateChanged(.stopped))) }
        return actions
    }

    /// The end of the queue: the output drained (when `drain`, so that the end is heard) and
    /// closed, stopped, back at the start of the play order.
    private mutating func finishQueue(drain: Bool) -> [Action] {
        let had = isRunning
        runtime = .none
        schedule.clear()
        state = .stopped
        pendingPosition = 0
        order.skipToBeginning()
        let close: [Action] = had ? [.closeRuntime(drain: drain)] : []
        return close + release() + [.emit(.stateChanged(.stopped)), .emit(.finished), emitCurrent()]
    }

    /// Start `token` found nothing it could open: the queue ends there.
    private mutating func finishStart(token: UInt64, error: TonearmError?) -> [Action] {
        runtime = .none
        startedKey = nil
        lastError = error
        return finishQueue(drain: false)
    }

    private mutating func fail(_ error: TonearmError) -> [Action] {
        var actions = closeRuntime()
        state = .stopped
        lastError = error
        actions += release()
        return actions + [.emit(.outputLost(reason: error.description, awaitingReturn: false)), .emit(.stateChanged(.stopped))]
    }

    private mutating func retain() -> [Action] { keepAlive.retain(.retainSelf) }

    private mutating func release() -> [Action] { keepAlive.release(.releaseSelf) }
}
