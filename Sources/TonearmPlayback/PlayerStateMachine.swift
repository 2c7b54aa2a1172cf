// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// The logic of ``Player`` as a state machine: inputs in, actions out, no threads, devices or
/// network (swift-nio's style). It decides the time control status, when the output renders,
/// when a stall begins and ends, what a seek does, and which end-of-stream reports are stale.
/// ``Player`` feeds it and carries out the actions on its control queue, in order.
struct PlayerStateMachine: Sendable {
    /// Where the current item is.
    enum ItemPhase: Sendable, Equatable {
        /// No item.
        case none
        /// Being opened (connecting, reading the header).
        case loading
        /// Open: it can be played.
        case ready
        /// It failed; nothing more comes from it.
        case failed
    }

    enum Input: Sendable, Equatable {
        /// `play()`: the rate becomes the default rate.
        case play
        /// `pause()`: the rate becomes 0.
        case pause
        /// `rate = r` (0 pauses).
        case setRate(Float)
        /// The current item was replaced: by one being opened (true) or by none (false).
        case itemReplaced(loading: Bool)
        /// The item has been opened.
        case itemReady
        /// The item failed before it could play.
        case itemFailed
        /// The player measured the buffer: whether playback is likely to keep up from here.
        case bufferEvaluated(keepsUp: Bool)
        /// The render thread ran out of audio while playing `generation`; `keepsUp` says whether
        /// the buffer ahead (the network's) still covers the goal — then it was the decoder that
        /// was late for a moment, not the network, and it is no stall.
        case starved(generation: UInt64, keepsUp: Bool)
        /// The render thread rendered the end of `generation`.
        case reachedEnd(generation: UInt64)
        /// The decoder failed for good on the current generation (its end follows).
        case decodeFailed
        /// Seek to `seconds`.
        case seek(seconds: Double)
        /// The output could not be opened or went away; the position was `seconds`. `watching`: a
        /// watch waits for the output to answer again (a restarted sound server) and will say so
        /// with `outputReturned`.
        case outputLost(at: Double, watching: Bool)
        /// The output lost earlier answers again.
        case outputReturned
    }

    enum Action: Sendable, Equatable {
        /// Build the output, decoder and renderer for the ready item, decoding `generation` from
        /// `seconds`; not rendering yet.
        case openRuntime(generation: UInt64, seconds: Double, rate: Float)
        /// Point the decoder and renderer at `generation` from `seconds` (nil: where playback is
        /// now), at `rate` (a seek, a replay, a new speed).
        case restartDecoding(generation: UInt64, seconds: Double?, rate: Float)
        case startRendering
        case pauseRendering
        /// Let the output play what it holds (the end must be heard), then pause it.
        case drainOutput
        /// Tear the runtime down.
        case closeRuntime
        case emitStatus(TimeControlStatus)
        case emitRate(Float)
        case emitStalled
        case emitPlayedToEnd
        case emitFailedToPlayToEnd
        /// The output was lost; whether a watch waits for it.
        case emitOutputLost(awaitingReturn: Bool)
        /// The output lost earlier answers again; whether the player plays on.
        case emitOutputReturned(resuming: Bool)
        /// The item is failed now (after a failure during playback).
        case markItemFailed
        /// Measure the buffer and report it (``Input/bufferEvaluated(keepsUp:)``).
        case evaluateBuffer
        /// Keep the player alive while it has a rate (released by `releaseSelf`).
        case retainSelf
        case releaseSelf
    }

    private(set) var item: ItemPhase = .none
    /// The rate asked for (0: paused).
    private(set) var rate: Float = 0
    /// The rate `play()` uses.
    var defaultRate: Float = 1
    private(set) var status: TimeControlStatus = .paused
    /// The speed audio is decoded at: the last rate that was not 0.
    private(set) var decodingRate: Float = 1
    /// Whether the buffer is likely to keep up. While rendering it stays true until the render
    /// thread runs dry (estimates never stop audio that is flowing).
    private(set) var keepsUp = false
    private(set) var rendering = false
    private(set) var runtimeOpen = false
    /// The generation of what is decoded; bumped by every seek, replay and replacement.
    private(set) var generation: UInt64 = 0
    /// Where playback starts when there is no live position (after a seek while loading, say).
    private(set) var startSeconds: Double = 0
    /// The item played to its end (the next `play()` starts it over).
    private(set) var atEnd = false
    private var decodeFailedInGeneration = false
    private var retained = false
    /// The output was lost and a watch waits for it (`outputReturned`).
    private(set) var awaitingOutput = false
    /// The rate to play on at when the lost output answers again (it was playing when the output
    /// was lost, or `play()` was asked while it was gone); nil: it stays paused. Cleared by a
    /// pause. The player keeps itself alive meanwhile, as a playing one does.
    private(set) var resumeRate: Float?

    mutating func handle(_ input: Input) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .play:
            actions += replayIfAtEnd()
            actions += setRate(defaultRate)
        case .pause:
            actions += cancelResume()
            actions += setRate(0)
        case .setRate(let r):
            if r != 0 { actions += replayIfAtEnd() } else { actions += cancelResume() }
            actions += setRate(r)
        case .itemReplaced(let loading):
            if runtimeOpen {
                actions.append(.closeRuntime)
                runtimeOpen = false
            }
            rendering = false
            generation += 1
            item = loading ? .loading : .none
            keepsUp = false
            atEnd = false
            startSeconds = 0
            decodeFailedInGeneration = false
        case .itemReady:
            guard item == .loading else { return [] }
            item = .ready
            actions += openIfNeeded(force: true)
            actions.append(.evaluateBuffer)
        case .itemFailed:
            guard item == .loading || item == .ready else { return [] }
            item = .failed
            if runtimeOpen {
                actions.append(.closeRuntime)
                runtimeOpen = false
                rendering = false
            }
            actions += setRate(0)
        case .bufferEvaluated(let k):
            guard item == .ready, !rendering else { return [] }
            keepsUp = k
        case .starved(let g, let bufferKeepsUp):
            guard g == generation, rendering, item == .ready, !bufferKeepsUp else { return [] }
            keepsUp = false
            actions.append(.emitStalled)
            actions += settle()
            actions.append(.evaluateBuffer)
            return actions
        case .decodeFailed:
            decodeFailedInGeneration = true
            return []
        case .reachedEnd(let g):
            guard g == generation, runtimeOpen else { return [] }
            generation += 1
            let failed = decodeFailedInGeneration
            decodeFailedInGeneration = false
            if rendering { actions.append(.drainOutput) }
            atEnd = true
            if failed {
                item = .failed
                actions.append(.closeRuntime)
                runtimeOpen = false
                rendering = false
                actions.append(.markItemFailed)
            }
            actions += setRate(0)
            actions += settle()
            actions.append(failed ? .emitFailedToPlayToEnd : .emitPlayedToEnd)
            return actions
        case .seek(let s):
            startSeconds = max(0, s)
            atEnd = false
            decodeFailedInGeneration = false
            if runtimeOpen {
                generation += 1
                actions.append(.restartDecoding(generation: generation, seconds: startSeconds, rate: decodingRate))
            }
        case .outputLost(let at, let watching):
            let was = rate
            let reported = awaitingOutput && watching  // a play() while still gone: said already
            startSeconds = at
            if runtimeOpen {
                actions.append(.closeRuntime)
                runtimeOpen = false
                rendering = false
            }
            awaitingOutput = watching
            // Played on when the output answers (held meanwhile: setRate keeps the hold).
            if !watching {
                resumeRate = nil
            } else if was != 0 {
                resumeRate = was
            }
            actions += setRate(0)
            if !reported { actions.append(.emitOutputLost(awaitingReturn: watching)) }
        case .outputReturned:
            guard awaitingOutput else { return [] }
            awaitingOutput = false
            let r = resumeRate
            resumeRate = nil
            actions.append(.emitOutputReturned(resuming: r != nil))
            if let r { actions += setRate(r) }  // held since the loss: no second hold
            if rate == 0 && retained {
                retained = false  // nothing to play on (the item failed meanwhile)
                actions.append(.releaseSelf)
            }
        }
        actions += settle()
        return actions
    }

    /// A pause while waiting for a lost output: it stays paused when the output answers.
    private mutating func cancelResume() -> [Action] {
        guard resumeRate != nil else { return [] }
        resumeRate = nil
        if retained && rate == 0 {
            retained = false
            return [.releaseSelf]
        }
        return []
    }

    /// Whether the player should be told about the buffer (it is waiting for it to fill).
    var needsBufferEvaluation: Bool { item == .ready && !rendering && !keepsUp }

    private mutating func setRate(_ r: Float) -> [Action] {
        let new = r.isFinite ? max(0, r) : 0
        guard new != rate else { return [] }
        // A failed item has nothing to play: the player stays paused.
        if item == .failed && new != 0 { return [] }
        rate = new
        var actions: [Action] = [.emitRate(new)]
        if new != 0 && new != decodingRate {
            decodingRate = new
            if runtimeOpen {
                generation += 1
                actions.append(.restartDecoding(generation: generation, seconds: nil, rate: new))
            }
        }
        if new != 0 {
            actions += openIfNeeded(force: false)
            if !retained { retained = true; actions.append(.retainSelf) }
        } else if retained && resumeRate == nil {
            retained = false
            actions.append(.releaseSelf)
        }
        return actions
    }

    /// `play()` after the end starts the item over (AVPlayer would stay at the end).
    private mutating func replayIfAtEnd() -> [Action] {
        guard atEnd else { return [] }
        atEnd = false
        startSeconds = 0
        guard runtimeOpen else { return [] }
        generation += 1
        return [.restartDecoding(generation: generation, seconds: 0, rate: decodingRate)]
    }

    /// Opens the runtime for a ready item: at once when it becomes ready, and again on play
    /// after the output was lost.
    private mutating func openIfNeeded(force: Bool) -> [Action] {
        guard item == .ready, !runtimeOpen, force || rate != 0 else { return [] }
        runtimeOpen = true
        generation += 1
        return [.openRuntime(generation: generation, seconds: startSeconds, rate: decodingRate)]
    }

    /// Brings rendering and the status in line with the rate, the item and the buffer.
    private mutating func settle() -> [Action] {
        let want: TimeControlStatus
        if rate == 0 {
            want = .paused
        } else {
            switch item {
            case .none, .failed: want = .waitingToPlayAtSpecifiedRate(.noItemToPlay)
            case .loading: want = .waitingToPlayAtSpecifiedRate(.evaluatingBufferingRate)
            case .ready: want = keepsUp && runtimeOpen ? .playing : .waitingToPlayAtSpecifiedRate(.toMinimizeStalls)
            }
        }
        var actions: [Action] = []
        let render = want == .playing
        if render != rendering {
            rendering = render
            actions.append(render ? .startRendering : .pauseRendering)
        }
        if want != status {
            status = want
            actions.append(.emitStatus(want))
        }
        return actions
    }
}
