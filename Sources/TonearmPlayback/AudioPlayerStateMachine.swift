// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmEngine

/// The logic of ``AudioPlayer`` as a state machine that takes inputs and returns actions, in the
/// style of swift-nio's state machines: it owns no threads, no devices and no sound, so every
/// rule (what play does when finished, which completions are stale after a seek, when an
/// interruption resumes) is tested on its own. ``AudioPlayer`` feeds it and carries out the
/// actions.
struct AudioPlayerStateMachine: Sendable {
    enum State: Sendable, Equatable {
        /// Not prepared: no output open, no decoding.
        case idle
        /// Output open, buffers filled, not playing.
        case prepared
        case playing
        case paused
        /// Paused by an interruption; `from` is the state it interrupted.
        case interrupted(from: Interrupted)
    }

    /// The states an interruption can take the player out of.
    enum Interrupted: Sendable, Equatable {
        case playing, paused, prepared
    }

    enum Input: Sendable, Equatable {
        case prepare
        case play(delayFrames: Int)
        case pause
        case stop
        case seek(frame: AudioFramePosition)
        /// The render thread rendered the end of `generation`.
        case reachedEnd(generation: UInt64)
        case interruptionBegan
        case interruptionEnded(shouldResume: Bool)
        /// The output went away. `watching`: a watch waits for it to answer again (a restarted
        /// sound server) and says so with `outputReturned`; without one, it is gone for good.
        case outputLost(watching: Bool)
        /// The output lost earlier answers again.
        case outputReturned
    }

    enum Action: Sendable, Equatable {
        /// Open the output and start decoding `generation` from `frame` (and wait for the first data).
        case prepareOutput(generation: UInt64, frame: AudioFramePosition)
        /// Point the decoder and the renderer at a new generation starting at `frame`.
        case restartDecoding(generation: UInt64, frame: AudioFramePosition)
        case startRendering(delayFrames: Int)
        case pauseRendering
        /// Stop rendering, close the output and stop decoding.
        case closeOutput
        /// Like `closeOutput`, after letting the output play what it has buffered (a natural end).
        case drainAndCloseOutput
        /// Keep the player alive while it plays (released by `releaseSelf`).
        case retainSelf
        case releaseSelf
        case emitFinished(successfully: Bool)
        case emitInterruptionBegan
        case emitInterruptionEnded(shouldResume: Bool)
    }

    private(set) var state: State = .idle
    /// The generation of the current schedule; bumped on every seek, stop and restart.
    private(set) var generation: UInt64 = 0
    /// Where playback starts (or restarts) when there is no live render position.
    private(set) var resumeFrame: AudioFramePosition = 0
    private var keepAlive = KeepAliveLatch()
    /// The output was lost and a watch waits for it (`outputReturned`).
    private(set) var awaitingOutput = false
    /// Whether the player plays on from where it was when the lost output answers again (it was
    /// playing). Cleared by pause and stop; the player keeps itself alive meanwhile.
    private(set) var resumesWhenOutputReturns = false
    /// Whether an interruption began (and was reported) whose end has not been reported yet:
    /// its end is reported whatever the app did meanwhile — paused, played or stopped the player
    /// — as AVAudioPlayer's delegate hears `audioPlayerEndInterruption` for every interruption it
    /// heard begin (seed 000's handler pauses on the session's notification, its delegate plays
    /// on the end).
    private(set) var interruptionPending = false
    /// Whether the player keeps itself alive now (it plays).
    var retained: Bool { keepAlive.held }

    var isPlaying: Bool { state == .playing }

    mutating func handle(_ input: Input) -> [Action] {
        switch (state, input) {
        case (.idle, .prepare):
            generation += 1
            state = .prepared
            return [.prepareOutput(generation: generation, frame: resumeFrame)]
        case (_, .prepare):
            return []

        case (.idle, .play(let d)):
            generation += 1
            state = .playing
            return [.prepareOutput(generation: generation, frame: resumeFrame), .startRendering(delayFrames: d)]
                + retain()
        case (.prepared, .play(let d)), (.paused, .play(let d)), (.interrupted, .play(let d)):
            state = .playing
            return [.startRendering(delayFrames: d)] + retain()
        case (.playing, .play):
            return []

        case (.playing, .pause):
            state = .paused
            return [.pauseRendering] + release()
        case (.interrupted, .pause):
            state = .paused
            return []
        case (.idle, .pause) where resumesWhenOutputReturns, (.idle, .stop) where resumesWhenOutputReturns:
            // Waiting for a lost output: it stays stopped when the output comes back.
            resumesWhenOutputReturns = false
            return release()
        case (_, .pause):
            return []

        case (.idle, .stop):
            return []
        case (_, .stop):
            // AVAudioPlayer.stop keeps currentTime; it undoes prepareToPlay.
            state = .idle
            generation += 1
            return [.closeOutput] + release()

        case (.idle, .seek(let f)):
            resumeFrame = f
            return []
        case (_, .seek(let f)):
            generation += 1
            resumeFrame = f
            return [.restartDecoding(generation: generation, frame: f)]

        case (.playing, .reachedEnd(let g)) where g == generation,
             (.paused, .reachedEnd(let g)) where g == generation,
             (.interrupted, .reachedEnd(let g)) where g == generation:
            state = .idle
            resumeFrame = 0
            generation += 1
            return [.drainAndCloseOutput, .emitFinished(successfully: true)] + release()
        case (_, .reachedEnd):
            // A stale end (from before a seek or stop): ignored by design.
            return []

        case (.playing, .interruptionBegan):
            state = .interrupted(from: .playing)
            interruptionPending = true
            return [.pauseRendering, .emitInterruptionBegan]
        case (.paused, .interruptionBegan):
            state = .interrupted(from: .paused)
            interruptionPending = true
            return [.emitInterruptionBegan]
        case (.prepared, .interruptionBegan):
            state = .interrupted(from: .prepared)
            interruptionPending = true
            return [.emitInterruptionBegan]
        case (_, .interruptionBegan):
            return []

        case (.interrupted(let from), .interruptionEnded(let shouldResume)):
            interruptionPending = false
            switch from {
            case .playing where shouldResume:
                state = .playing
                return [.emitInterruptionEnded(shouldResume: true), .startRendering(delayFrames: 0)]
            case .playing:
                state = .paused
                return [.emitInterruptionEnded(shouldResume: false)] + release()
            case .paused:
                state = .paused
                return [.emitInterruptionEnded(shouldResume: shouldResume)]
            case .prepared:
                state = .prepared
                return [.emitInterruptionEnded(shouldResume: shouldResume)]
            }
        case (_, .interruptionEnded(let shouldResume)) where interruptionPending:
            // The app paused, played or stopped the player during the interruption: it stays as
            // the app left it, and hears the end.
            interruptionPending = false
            return [.emitInterruptionEnded(shouldResume: shouldResume)]
        case (_, .interruptionEnded):
            return []

        case (.idle, .outputLost):
            return []
        case (_, .outputLost(let watching)) where watching:
            // A sound server that went away (restarted): an interruption, as the delegate knows it,
            // that ends when the server answers again — playing on from here if it was playing.
            let wasPlaying = state == .playing || state == .interrupted(from: .playing)
            state = .idle
            generation += 1
            awaitingOutput = true
            resumesWhenOutputReturns = wasPlaying
            return [.closeOutput, .emitInterruptionBegan] + (wasPlaying ? [] : release())
        case (_, .outputLost):
            state = .idle
            generation += 1
            return [.closeOutput, .emitFinished(successfully: false)] + release()

        case (_, .outputReturned):
            guard awaitingOutput else { return [] }
            awaitingOutput = false
            let resume = resumesWhenOutputReturns && state == .idle
            resumesWhenOutputReturns = false
            guard resume else { return [.emitInterruptionEnded(shouldResume: false)] + (isPlaying ? [] : release()) }
            generation += 1
            state = .playing
            return [.emitInterruptionEnded(shouldResume: true), .prepareOutput(generation: generation, frame: resumeFrame),
                    .startRendering(delayFrames: 0)] + retain()
        }
    }

    /// Records where playback is, so that a later prepare/play after stop resumes there.
    mutating func noteStopPosition(_ frame: AudioFramePosition) { resumeFrame = frame }

    private mutating func retain() -> [Action] { keepAlive.retain(.retainSelf) }

    private mutating func release() -> [Action] { keepAlive.release(.releaseSelf) }
}
