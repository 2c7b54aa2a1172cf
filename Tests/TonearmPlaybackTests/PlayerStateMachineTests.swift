// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmPlayback

/// The rules of ``Player`` without threads, network or sound.
@Suite struct PlayerStateMachineTests {
    typealias M = PlayerStateMachine

    /// A machine with a ready item whose buffer keeps up, playing.
    private func playing() -> M {
        var m = M()
        _ = m.handle(.itemReplaced(loading: true))
        _ = m.handle(.itemReady)
        _ = m.handle(.bufferEvaluated(keepsUp: true))
        _ = m.handle(.play)
        return m
    }

    @Test func playWithoutAnItemWaitsForOne() {
        var m = M()
        let a = m.handle(.play)
        #expect(a.contains(.emitRate(1)))
        #expect(a.contains(.emitStatus(.waitingToPlayAtSpecifiedRate(.noItemToPlay))))
        #expect(a.contains(.retainSelf))
        #expect(!a.contains(.startRendering))
    }

    @Test func aLoadingItemIsEvaluatedThenPlaysOnceTheBufferKeepsUp() {
        var m = M()
        _ = m.handle(.itemReplaced(loading: true))
        #expect(m.handle(.play).contains(.emitStatus(.waitingToPlayAtSpecifiedRate(.evaluatingBufferingRate))))
        let ready = m.handle(.itemReady)
        #expect(ready.first == .openRuntime(generation: m.generation, seconds: 0, rate: 1))
        #expect(ready.contains(.evaluateBuffer))
        #expect(ready.contains(.emitStatus(.waitingToPlayAtSpecifiedRate(.toMinimizeStalls))))
        #expect(m.needsBufferEvaluation)
        #expect(m.handle(.bufferEvaluated(keepsUp: false)).isEmpty)
        #expect(m.handle(.bufferEvaluated(keepsUp: true)) == [.startRendering, .emitStatus(.playing)])
        #expect(!m.needsBufferEvaluation)
    }

    @Test func aStallPausesRenderingUntilTheBufferRefills() {
        var m = playing()
        let g = m.generation
        #expect(m.handle(.starved(generation: g, keepsUp: true)).isEmpty, "a late decoder with the network ahead is no stall")
        let stall = m.handle(.starved(generation: g, keepsUp: false))
        #expect(stall == [.emitStalled, .pauseRendering, .emitStatus(.waitingToPlayAtSpecifiedRate(.toMinimizeStalls)),
                          .evaluateBuffer])
        #expect(m.rate == 1, "a stall keeps the rate")
        #expect(m.handle(.bufferEvaluated(keepsUp: false)).isEmpty)
        #expect(m.handle(.bufferEvaluated(keepsUp: true)) == [.startRendering, .emitStatus(.playing)])
    }

    @Test func estimatesNeverStopAudioThatFlowsAndStaleStarvationIsIgnored() {
        var m = playing()
        #expect(m.handle(.bufferEvaluated(keepsUp: false)).isEmpty)
        #expect(m.status == .playing)
        let old = m.generation
        _ = m.handle(.seek(seconds: 5))
        #expect(m.handle(.starved(generation: old, keepsUp: false)).isEmpty, "starvation of the generation before the seek")
        #expect(m.handle(.reachedEnd(generation: old)).isEmpty, "the end of the generation before the seek")
    }

    @Test func aSeekRestartsDecodingAndWhileLoadingIsWhereItStarts() {
        var m = playing()
        let a = m.handle(.seek(seconds: 12.5))
        #expect(a == [.restartDecoding(generation: m.generation, seconds: 12.5, rate: 1)])
        var l = M()
        _ = l.handle(.itemReplaced(loading: true))
        #expect(l.handle(.seek(seconds: 3)).isEmpty)
        #expect(l.handle(.itemReady).first == .openRuntime(generation: l.generation, seconds: 3, rate: 1))
    }

    @Test func theEndIsHeardThenThePlayerPausesAndPlayStartsOver() {
        var m = playing()
        let end = m.handle(.reachedEnd(generation: m.generation))
        #expect(end.first == .drainOutput)
        #expect(end.contains(.emitPlayedToEnd))
        #expect(end.contains(.emitRate(0)))
        #expect(end.contains(.releaseSelf))
        #expect(end.suffix(3) == [.pauseRendering, .emitStatus(.paused), .emitPlayedToEnd])
        let again = m.handle(.play)
        #expect(again.first == .restartDecoding(generation: m.generation, seconds: 0, rate: 1))
        #expect(again.contains(.startRendering))
    }

    @Test func aDecodeFailureEndsInFailedToPlayToEnd() {
        var m = playing()
        #expect(m.handle(.decodeFailed).isEmpty)
        let end = m.handle(.reachedEnd(generation: m.generation))
        #expect(end.contains(.emitFailedToPlayToEnd))
        #expect(end.contains(.markItemFailed))
        #expect(end.contains(.closeRuntime))
        #expect(!end.contains(.emitPlayedToEnd))
        #expect(m.item == .failed)
        #expect(m.handle(.play).isEmpty, "a failed item has nothing to play")
    }

    @Test func aSeekAfterADecodeFailureForgetsIt() {
        var m = playing()
        _ = m.handle(.decodeFailed)
        _ = m.handle(.seek(seconds: 1))
        #expect(m.handle(.reachedEnd(generation: m.generation)).contains(.emitPlayedToEnd))
    }

    @Test func aNewRateWhilePlayingRestartsDecodingWhereItIs() {
        var m = playing()
        let a = m.handle(.setRate(1.5))
        #expect(a == [.emitRate(1.5), .restartDecoding(generation: m.generation, seconds: nil, rate: 1.5)])
        #expect(m.handle(.pause) == [.emitRate(0), .releaseSelf, .pauseRendering, .emitStatus(.paused)])
        #expect(m.handle(.play) == [.emitRate(1), .restartDecoding(generation: m.generation, seconds: nil, rate: 1),
                                    .retainSelf, .startRendering, .emitStatus(.playing)])
    }

    @Test func replacingTheItemClosesTheRuntimeAndKeepsTheRate() {
        var m = playing()
        let a = m.handle(.itemReplaced(loading: true))
        #expect(a == [.closeRuntime, .emitStatus(.waitingToPlayAtSpecifiedRate(.evaluatingBufferingRate))])
        #expect(m.rate == 1)
        let none = m.handle(.itemReplaced(loading: false))
        #expect(none == [.emitStatus(.waitingToPlayAtSpecifiedRate(.noItemToPlay))])
    }

    @Test func aFailedItemPausesThePlayer() {
        var m = M()
        _ = m.handle(.itemReplaced(loading: true))
        _ = m.handle(.play)
        let a = m.handle(.itemFailed)
        #expect(a.contains(.emitRate(0)))
        #expect(a.contains(.emitStatus(.paused)))
        #expect(a.contains(.releaseSelf))
        #expect(m.handle(.play).isEmpty)
        #expect(m.status == .paused)
    }

    @Test func aLostOutputPausesAndPlayOpensItAgainWhereItWas() {
        var m = playing()
        let lost = m.handle(.outputLost(at: 7, watching: false))
        #expect(lost.first == .closeRuntime)
        #expect(lost.contains(.emitStatus(.paused)))
        #expect(lost.contains(.releaseSelf))
        #expect(lost.contains(.emitOutputLost(awaitingReturn: false)))
        let again = m.handle(.play)
        #expect(again.contains(.openRuntime(generation: m.generation, seconds: 7, rate: 1)))
    }

    // MARK: A sound server that comes back

    @Test func aWatchedLostOutputPausesHeldAndPlaysOnAtTheSameRateWhenItAnswers() {
        var m = playing()
        _ = m.handle(.setRate(1.5))
        let lost = m.handle(.outputLost(at: 7, watching: true))
        #expect(lost.first == .closeRuntime)
        #expect(lost.contains(.emitRate(0)))
        #expect(!lost.contains(.releaseSelf), "held while it waits to play on")
        #expect(lost.contains(.emitOutputLost(awaitingReturn: true)))
        #expect(m.resumeRate == 1.5)
        let back = m.handle(.outputReturned)
        #expect(back.first == .emitOutputReturned(resuming: true))
        #expect(back.contains(.emitRate(1.5)))
        #expect(back.contains(.openRuntime(generation: m.generation, seconds: 7, rate: 1.5)))
        #expect(!back.contains(.retainSelf), "held once")
        #expect(m.handle(.outputReturned).isEmpty, "said once")
    }

    @Test func pauseWhileWaitingForTheOutputLetsGoAndStaysPaused() {
        var m = playing()
        _ = m.handle(.outputLost(at: 7, watching: true))
        #expect(m.handle(.pause) == [.releaseSelf])
        #expect(m.handle(.outputReturned) == [.emitOutputReturned(resuming: false)])
        #expect(m.rate == 0)
    }

    @Test func playWhileTheWatchedOutputIsStillGoneWaitsForItQuietly() {
        var m = playing()
        _ = m.handle(.pause)
        _ = m.handle(.outputLost(at: 3, watching: true))
        let play = m.handle(.play)
        #expect(play.contains(.openRuntime(generation: m.generation, seconds: 3, rate: 1)))
        #expect(play.contains(.retainSelf))
        // Opening fails: still gone. Not said twice; held; plays on when it answers.
        let failed = m.handle(.outputLost(at: 3, watching: true))
        #expect(!failed.contains(.releaseSelf))
        #expect(!failed.contains { if case .emitOutputLost = $0 { true } else { false } })
        #expect(m.resumeRate == 1)
        let back = m.handle(.outputReturned)
        #expect(back.contains(.openRuntime(generation: m.generation, seconds: 3, rate: 1)))
    }
}
