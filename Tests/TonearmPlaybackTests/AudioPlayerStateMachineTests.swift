// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmPlayback

@Suite struct AudioPlayerStateMachineTests {
    @Test func playFromIdlePreparesStartsAndRetains() {
        var m = AudioPlayerStateMachine()
        let a = m.handle(.play(delayFrames: 0))
        #expect(a == [.prepareOutput(generation: 1, frame: 0), .startRendering(delayFrames: 0), .retainSelf])
        #expect(m.state == .playing)
        #expect(m.handle(.play(delayFrames: 0)).isEmpty)
    }

    @Test func endOfCurrentGenerationFinishesAndReleases() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        let a = m.handle(.reachedEnd(generation: 1))
        #expect(a == [.drainAndCloseOutput, .emitFinished(successfully: true), .releaseSelf])
        #expect(m.state == .idle)
        #expect(m.resumeFrame == 0)
    }

    @Test func staleEndAfterSeekIsIgnored() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        let seek = m.handle(.seek(frame: 1000))
        #expect(seek == [.restartDecoding(generation: 2, frame: 1000)])
        // The end of the schedule from before the seek arrives late: no completion fires.
        #expect(m.handle(.reachedEnd(generation: 1)).isEmpty)
        #expect(m.state == .playing)
        #expect(m.handle(.reachedEnd(generation: 2)).contains(.emitFinished(successfully: true)))
    }

    @Test func staleEndAfterStopIsIgnored() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        #expect(m.handle(.stop) == [.closeOutput, .releaseSelf])
        #expect(m.handle(.reachedEnd(generation: 1)).isEmpty)
        // Playing again starts a new generation whose end is honoured.
        #expect(m.handle(.play(delayFrames: 0)).first == .prepareOutput(generation: 3, frame: 0))
        #expect(m.handle(.reachedEnd(generation: 3)).contains(.emitFinished(successfully: true)))
    }

    @Test func stopKeepsPositionForTheNextPlay() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        m.noteStopPosition(4800)
        _ = m.handle(.stop)
        #expect(m.handle(.play(delayFrames: 0)).first == .prepareOutput(generation: 3, frame: 4800))
    }

    @Test func seekWhileIdleOnlyMovesTheStart() {
        var m = AudioPlayerStateMachine()
        #expect(m.handle(.seek(frame: 96000)).isEmpty)
        #expect(m.handle(.prepare) == [.prepareOutput(generation: 1, frame: 96000)])
        #expect(m.state == .prepared)
        #expect(m.handle(.play(delayFrames: 0)) == [.startRendering(delayFrames: 0), .retainSelf])
    }

    @Test func pauseReleasesAndResumeRetains() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        #expect(m.handle(.pause) == [.pauseRendering, .releaseSelf])
        #expect(m.handle(.pause).isEmpty)
        #expect(m.handle(.play(delayFrames: 0)) == [.startRendering(delayFrames: 0), .retainSelf])
    }

    @Test func interruptionPausesAndResumesWhenAsked() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        #expect(m.handle(.interruptionBegan) == [.pauseRendering, .emitInterruptionBegan])
        #expect(m.state == .interrupted(from: .playing))
        #expect(m.handle(.interruptionEnded(shouldResume: true))
            == [.emitInterruptionEnded(shouldResume: true), .startRendering(delayFrames: 0)])
        #expect(m.state == .playing)
    }

    @Test func interruptionEndWithoutResumeStaysPaused() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        _ = m.handle(.interruptionBegan)
        #expect(m.handle(.interruptionEnded(shouldResume: false)) == [.emitInterruptionEnded(shouldResume: false), .releaseSelf])
        #expect(m.state == .paused)
    }

    @Test func interruptionOfPausedPlayerDoesNotResumeIt() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        _ = m.handle(.pause)
        _ = m.handle(.interruptionBegan)
        #expect(m.handle(.interruptionEnded(shouldResume: true)) == [.emitInterruptionEnded(shouldResume: true)])
        #expect(m.state == .paused)
    }

    /// AVAudioPlayer's delegate hears the end of every interruption it heard begin, whatever
    /// the app did meanwhile (seed 000 pauses on the session's notification and plays on the
    /// delegate's end): the player stays as the app left it, the end is reported once.
    @Test func theEndIsReportedAfterTheAppPausedOrPlayedDuringTheInterruption() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        _ = m.handle(.interruptionBegan)
        #expect(m.handle(.pause).isEmpty)
        #expect(m.handle(.interruptionEnded(shouldResume: true)) == [.emitInterruptionEnded(shouldResume: true)])
        #expect(m.state == .paused, "paused by the app: it does not resume by itself")
        #expect(m.handle(.interruptionEnded(shouldResume: true)).isEmpty, "reported once")

        _ = m.handle(.play(delayFrames: 0))
        _ = m.handle(.interruptionBegan)
        _ = m.handle(.play(delayFrames: 0))
        #expect(m.state == .playing)
        #expect(m.handle(.interruptionEnded(shouldResume: false)) == [.emitInterruptionEnded(shouldResume: false)])
        #expect(m.state == .playing, "played by the app: it goes on")
        // No interruption heard: no end reported.
        #expect(m.handle(.interruptionEnded(shouldResume: true)).isEmpty)
    }

    @Test func outputLossEndsUnsuccessfully() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        #expect(m.handle(.outputLost(watching: false)) == [.closeOutput, .emitFinished(successfully: false), .releaseSelf])
        #expect(m.handle(.outputLost(watching: false)).isEmpty)
        #expect(m.handle(.outputReturned).isEmpty)
    }

    // MARK: A sound server that comes back

    @Test func aWatchedLostOutputIsAnInterruptionThatPlaysOnFromThePlaceWhenItAnswers() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        m.noteStopPosition(48_000 * 3)
        #expect(m.handle(.outputLost(watching: true)) == [.closeOutput, .emitInterruptionBegan])
        #expect(m.retained, "held: it plays on by itself")
        #expect(m.state == .idle)
        let back = m.handle(.outputReturned)
        #expect(back == [.emitInterruptionEnded(shouldResume: true),
                         .prepareOutput(generation: m.generation, frame: 48_000 * 3), .startRendering(delayFrames: 0)])
        #expect(m.state == .playing)
        #expect(m.handle(.outputReturned).isEmpty, "said once")
    }

    @Test func aPausedPlayerWhoseOutputIsLostStaysStoppedWhenItAnswers() {
        var m = AudioPlayerStateMachine()
        _ = m.handle(.play(delayFrames: 0))
        _ = m.handle(.pause)
        #expect(m.handle(.outputLost(watching: true)) == [.closeOutput, .emitInterruptionBegan])
        #expect(!m.retained)
        #expect(m.handle(.outputReturned) == [.emitInterruptionEnded(shouldResume: false)])
        #expect(m.state == .idle)
    }

    @Test func pauseOrStopWhileWaitingForTheOutputCancelsPlayingOn() {
        for cancel in [AudioPlayerStateMachine.Input.pause, .stop] {
            var m = AudioPlayerStateMachine()
            _ = m.handle(.play(delayFrames: 0))
            _ = m.handle(.outputLost(watching: true))
            #expect(m.handle(cancel) == [.releaseSelf])
            #expect(m.handle(.outputReturned) == [.emitInterruptionEnded(shouldResume: false)])
            #expect(m.state == .idle)
        }
    }
}
