// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmPlayback

/// Every rule of ``QueueStateMachine`` on its own: no threads, no files, no sound.
@Suite struct QueueStateMachineTests {
    let a = QueueItem(path: "/music/A/01.flac")
    let b = QueueItem(path: "/music/A/02.flac")
    let c = QueueItem(path: "/music/B/01.flac")
    let radio = QueueItem(pathOrURL: "http://127.0.0.1:9/stream.mp3")
    let broken = TonearmError.fileNotFound(path: "/music/A/01.flac")

    /// A machine with `items` whose start 1 has opened its first item and built its runtime.
    func running(_ items: [QueueItem]) -> QueueStateMachine {
        var m = QueueStateMachine(items: items)
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        _ = m.handle(.runtimeBuilt(token: 1, rate: 48000))
        return m
    }

    /// `m` with the current item and the next one scheduled on the node (as the player does).
    func scheduled(_ m: inout QueueStateMachine, keys: [UInt64]) {
        m.schedule.beginHead(playerFrame: 0)
        for k in keys {
            _ = m.schedule.append(key: k, start: 0, end: 48000, sourceRate: 48000, order: m.order, then: .next)
        }
    }

    /// `m` with `count` items from the current one scheduled back to back, a second each at 48 kHz
    /// from player frame 0, each with the play order of when it is current (as the player does).
    func scheduledInOrder(_ m: inout QueueStateMachine, count: Int) {
        m.schedule.beginHead(playerFrame: 0)
        var o = m.order
        for i in 0..<count {
            if i > 0 { _ = o.advanceOnEnd() }
            _ = m.schedule.append(key: m.entries[o.current!].key, start: 0, end: 48000, sourceRate: 48000, order: o,
                                  then: .next)
        }
    }

    // MARK: Starting

    @Test func playWithAnEmptyQueueDoesNothing() {
        var m = QueueStateMachine()
        #expect(m.handle(.play).isEmpty)
        #expect(m.runtime == .none)
        #expect(m.state == .stopped)
    }

    @Test func playOpensTheCurrentItemOffTheLock() {
        var m = QueueStateMachine(items: [a, b])
        #expect(m.handle(.play) == [.open(token: 1, key: 1, item: a, remote: false)])
        #expect(m.runtime == .starting(token: 1))
        // A second play while the first start is under way starts nothing more.
        #expect(m.handle(.play).isEmpty)
    }

    @Test func aNetworkItemIsOpenedOnAThreadOfItsOwn() {
        var m = QueueStateMachine(items: [radio])
        #expect(m.handle(.play) == [.open(token: 1, key: 1, item: radio, remote: true)])
    }

    @Test func anOpenedItemGetsItsRuntimeBuilt() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        #expect(m.handle(.startOpened(token: 1, key: 1)) == [.buildRuntime(token: 1)])
        #expect(m.startedKey == 1)
    }

    @Test func aBuiltRuntimeIsInstalledStartedAndKeepsThePlayerAlive() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        #expect(m.handle(.runtimeBuilt(token: 1, rate: 44100)) == [
            .retainSelf, .installRuntime(key: 1, position: 0), .applyVolume(1), .startRendering,
            .emit(.currentItemChanged(index: 0, item: a)), .emit(.stateChanged(.playing)),
        ])
        #expect(m.runtime == .running(rate: 44100))
        #expect(m.state == .playing)
        #expect(m.handle(.play).isEmpty)
    }

    @Test func stopDuringAStartCancelsIt() {
        var m = QueueStateMachine(items: [a])
        _ = m.handle(.play)
        #expect(m.handle(.stop).isEmpty)  // it was not playing yet: no state change to report
        #expect(m.runtime == .none)
        #expect(m.handle(.startOpened(token: 1, key: 1)).isEmpty)
        #expect(m.handle(.startOpenFailed(token: 1, key: 1, error: broken)).isEmpty)
        #expect(m.handle(.runtimeFailed(token: 1, error: broken, watching: false)).isEmpty)
        // A runtime built for the cancelled start is closed, not installed.
        #expect(m.handle(.runtimeBuilt(token: 1, rate: 48000)) == [.discardRuntime])
        // The next play is a new start.
        #expect(m.handle(.play) == [.open(token: 2, key: 1, item: a, remote: false)])
    }

    @Test func aSkipWhileOpeningOpensTheNewCurrentItem() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        #expect(m.handle(.skipToNext) == [.emit(.currentItemChanged(index: 1, item: b))])
        #expect(m.handle(.startOpened(token: 1, key: 1)) == [.open(token: 1, key: 2, item: b, remote: false)])
        #expect(m.handle(.startOpened(token: 1, key: 2)) == [.buildRuntime(token: 1)])
    }

    @Test func aSkipWhileTheOutputOpensPlaysTheNewCurrentItem() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        _ = m.handle(.skipToNext)
        let actions = m.handle(.runtimeBuilt(token: 1, rate: 48000))
        #expect(actions.contains(.installRuntime(key: 1, position: 0)))
        #expect(actions.contains(.replaceCurrent(key: 2, position: 0)))
        #expect(actions.contains(.emit(.currentItemChanged(index: 1, item: b))))
    }

    @Test func anItemThatCannotBeOpenedIsReportedAndSkipped() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        #expect(m.handle(.startOpenFailed(token: 1, key: 1, error: broken)) == [
            .emit(.itemFailed(index: 0, item: a, error: broken)), .open(token: 1, key: 2, item: b, remote: false),
        ])
        #expect(m.order.current == 1)
    }

    @Test func whenNoItemCanBeOpenedTheQueueFinishesWithTheLastError() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        _ = m.handle(.startOpenFailed(token: 1, key: 1, error: broken))
        let other = TonearmError.fileNotFound(path: b.path)
        #expect(m.handle(.startOpenFailed(token: 1, key: 2, error: other)) == [
            .emit(.itemFailed(index: 1, item: b, error: other)),
            .emit(.stateChanged(.stopped)), .emit(.finished), .emit(.currentItemChanged(index: 0, item: a)),
        ])
        #expect(m.lastError == other)
        #expect(m.runtime == .none)
        #expect(m.order.current == 0)
    }

    @Test func withRepeatAllEveryItemIsTriedOnce() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.setRepeat(.all))
        _ = m.handle(.play)
        _ = m.handle(.startOpenFailed(token: 1, key: 1, error: broken))
        let last = m.handle(.startOpenFailed(token: 1, key: 2, error: broken))
        #expect(last.contains(.emit(.finished)))
        #expect(!last.contains { if case .open = $0 { true } else { false } })
    }

    @Test func anOutputThatCannotBeOpenedStopsWithOutputLost() {
        var m = QueueStateMachine(items: [a])
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        #expect(m.handle(.runtimeFailed(token: 1, error: broken, watching: false)) == [
            .emit(.outputLost(reason: broken.description, awaitingReturn: false)), .emit(.stateChanged(.stopped)),
        ])
        #expect(m.lastError == broken)
        #expect(m.runtime == .none)
    }

    @Test func aSuccessfulStartClearsTheLastError() {
        var m = QueueStateMachine(items: [a])
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        _ = m.handle(.runtimeFailed(token: 1, error: broken, watching: false))
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 2, key: 1))
        _ = m.handle(.runtimeBuilt(token: 2, rate: 48000))
        #expect(m.lastError == nil)
    }

    // MARK: Transport

    @Test func pauseAndResumeKeepTheRuntime() {
        var m = running([a, b])
        #expect(m.handle(.pause) == [.pauseRendering, .emit(.stateChanged(.paused))])
        #expect(m.handle(.pause).isEmpty)
        #expect(m.handle(.play) == [.startRendering, .emit(.stateChanged(.playing))])
        #expect(m.retained)
    }

    @Test func pauseWhenNotRunningDoesNothing() {
        var m = QueueStateMachine(items: [a])
        #expect(m.handle(.pause).isEmpty)
        #expect(m.handle(.interrupt).isEmpty)
        #expect(m.handle(.corkRequested).isEmpty)
    }

    @Test func stopClosesReleasesAndGoesBackToTheStartOfTheItem() {
        var m = running([a, b])
        _ = m.handle(.seek(30))
        #expect(m.handle(.stop) == [.closeRuntime(drain: false), .releaseSelf, .emit(.stateChanged(.stopped))])
        #expect(m.pendingPosition == 0)
        #expect(m.handle(.stop).isEmpty)
        #expect(m.order.current == 0)
    }

    @Test func stopMakesTheScheduleStale() {
        var m = running([a, b])
        scheduled(&m, keys: [1])
        let epoch = m.schedule.epoch
        _ = m.handle(.stop)
        #expect(m.schedule.segments.isEmpty)
        #expect(m.schedule.rendered(token: 1, epoch: epoch, engineRate: 48000) == .ignored)
    }

    @Test func anInterruptionIsResumedByPlayNotByTheServer() {
        var m = running([a])
        #expect(m.handle(.interrupt) == [.pauseRendering, .emit(.stateChanged(.interrupted))])
        #expect(m.state == .interrupted)
        #expect(m.handle(.uncorkRequested).isEmpty)
        #expect(m.handle(.play) == [.startRendering, .emit(.stateChanged(.playing))])
    }

    @Test func theServersCorkIsUndoneByItsUncork() {
        var m = running([a])
        #expect(m.handle(.corkRequested) == [.pauseRendering, .emit(.stateChanged(.interrupted))])
        #expect(m.handle(.uncorkRequested) == [.startRendering, .emit(.stateChanged(.playing))])
        #expect(m.state == .playing)
        // Once resumed, another uncork does nothing.
        #expect(m.handle(.uncorkRequested).isEmpty)
    }

    @Test func aCorkedQueueResumedByTheUserIsNotResumedAgain() {
        var m = running([a])
        _ = m.handle(.corkRequested)
        _ = m.handle(.play)
        _ = m.handle(.interrupt)
        #expect(m.handle(.uncorkRequested).isEmpty)
    }

    @Test func aCorkOfAPausedQueueDoesNothing() {
        var m = running([a])
        _ = m.handle(.pause)
        #expect(m.handle(.corkRequested).isEmpty)
        #expect(m.handle(.uncorkRequested).isEmpty)
        #expect(m.state == .paused)
    }

    @Test func aRemovedDevicePausesAndIsReported() {
        var m = running([a])
        #expect(m.handle(.deviceRemoved(previous: "headphones")) == [
            .pauseRendering, .emit(.stateChanged(.paused)), .emit(.outputRemoved(previous: "headphones")),
        ])
        var stopped = QueueStateMachine(items: [a])
        #expect(stopped.handle(.deviceRemoved(previous: "headphones")) == [.emit(.outputRemoved(previous: "headphones"))])
    }

    @Test func aLostOutputPausesAtItsPlace() {
        var m = running([a, b])
        #expect(m.handle(.deviceLost(reason: "gone", position: 12.5, watching: false)) == [
            .closeRuntime(drain: false), .releaseSelf, .emit(.outputLost(reason: "gone", awaitingReturn: false)),
            .emit(.stateChanged(.paused)),
        ])
        #expect(m.state == .paused)
        #expect(m.currentTime(playerSampleTime: 480000) == 12.5)
        // play() starts afresh, on whatever output there is, from the same place.
        #expect(m.handle(.play) == [.open(token: 2, key: 1, item: a, remote: false)])
        _ = m.handle(.startOpened(token: 2, key: 1))
        #expect(m.handle(.runtimeBuilt(token: 2, rate: 48000)).contains(.installRuntime(key: 1, position: 12.5)))
    }

    @Test func aLostOutputWhileStoppedIsOnlyReported() {
        var m = QueueStateMachine(items: [a])
        #expect(m.handle(.deviceLost(reason: "gone", position: 0, watching: false))
            == [.emit(.outputLost(reason: "gone", awaitingReturn: false))])
        #expect(m.state == .stopped)
    }

    // MARK: A sound server that comes back

    @Test func aLostOutputThatIsWatchedPausesHeldAndPlaysOnFromItsPlaceWhenItAnswers() {
        var m = running([a, b])
        #expect(m.handle(.deviceLost(reason: "gone", position: 12.5, watching: true)) == [
            .closeRuntime(drain: false), .emit(.outputLost(reason: "gone", awaitingReturn: true)), .emit(.stateChanged(.paused)),
        ])
        #expect(m.state == .paused)
        #expect(m.retained)  // it will play on by itself: it keeps itself alive meanwhile
        #expect(m.resumesWhenOutputReturns)
        #expect(m.handle(.outputReturned) == [
            .emit(.outputReturned(resuming: true)), .open(token: 2, key: 1, item: a, remote: false),
        ])
        _ = m.handle(.startOpened(token: 2, key: 1))
        let built = m.handle(.runtimeBuilt(token: 2, rate: 48000))
        #expect(built.contains(.installRuntime(key: 1, position: 12.5)))
        #expect(!built.contains(.retainSelf))  // held once, not twice
        #expect(m.state == .playing)
        #expect(!m.awaitingOutput)
    }

    @Test func aLostOutputWhilePausedStaysPausedWhenItAnswers() {
        var m = running([a])
        _ = m.handle(.pause)
        #expect(m.handle(.deviceLost(reason: "gone", position: 3, watching: true)) == [
            .closeRuntime(drain: false), .releaseSelf, .emit(.outputLost(reason: "gone", awaitingReturn: true)),
            .emit(.stateChanged(.paused)),
        ])
        #expect(!m.retained)
        #expect(m.handle(.outputReturned) == [.emit(.outputReturned(resuming: false))])
        #expect(m.state == .paused)
        #expect(m.currentTime(playerSampleTime: nil) == 3)
    }

    @Test func pauseOrStopWhileWaitingForTheOutputCancelsPlayingOn() {
        var paused = running([a])
        _ = paused.handle(.deviceLost(reason: "gone", position: 3, watching: true))
        #expect(paused.handle(.pause) == [.releaseSelf])
        #expect(!paused.resumesWhenOutputReturns)
        #expect(paused.handle(.outputReturned) == [.emit(.outputReturned(resuming: false))])

        var stopped = running([a])
        _ = stopped.handle(.deviceLost(reason: "gone", position: 3, watching: true))
        #expect(stopped.handle(.stop) == [.releaseSelf, .emit(.stateChanged(.stopped))])
        #expect(stopped.handle(.outputReturned) == [.emit(.outputReturned(resuming: false))])
        #expect(stopped.state == .stopped)
        #expect(stopped.currentTime(playerSampleTime: nil) == 0)
    }

    @Test func playWhileTheWatchedOutputIsStillGoneWaitsForItInsteadOfStopping() {
        var m = running([a])
        _ = m.handle(.pause)
        _ = m.handle(.deviceLost(reason: "gone", position: 4, watching: true))
        #expect(m.handle(.play) == [.open(token: 2, key: 1, item: a, remote: false)])
        _ = m.handle(.startOpened(token: 2, key: 1))
        let unavailable = TonearmError.outputUnavailable(driver: "pulse", reason: "Connection refused")
        #expect(m.handle(.runtimeFailed(token: 2, error: unavailable, watching: false)) == [.retainSelf])
        #expect(m.state == .paused)
        #expect(m.resumesWhenOutputReturns)
        #expect(m.lastError == nil)
        #expect(m.handle(.outputReturned) == [
            .emit(.outputReturned(resuming: true)), .open(token: 3, key: 1, item: a, remote: false),
        ])
        // Once the output has answered, failing to open it stops as before.
        var other = running([a])
        _ = other.handle(.deviceLost(reason: "gone", position: 4, watching: true))
        _ = other.handle(.outputReturned)
        _ = other.handle(.startOpened(token: 2, key: 1))
        #expect(other.handle(.runtimeFailed(token: 2, error: unavailable, watching: false)).contains(.emit(.stateChanged(.stopped))))
    }

    @Test func aServerThatWentAwayWhileTheOutputOpenedIsWaitedForAndPlays() {
        var m = QueueStateMachine(items: [a])
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        let gone = TonearmError.outputUnavailable(driver: "pulse", reason: "Connection terminated")
        #expect(m.handle(.runtimeFailed(token: 1, error: gone, watching: true)) == [
            .retainSelf, .emit(.outputLost(reason: gone.description, awaitingReturn: true)),
        ])
        #expect(m.resumesWhenOutputReturns)
        #expect(m.handle(.outputReturned) == [
            .emit(.outputReturned(resuming: true)), .open(token: 2, key: 1, item: a, remote: false),
        ])
    }

    @Test func anOutputThatAnswersWhileAStartIsUnderWayLetsTheStartGoOn() {
        var m = running([a])
        _ = m.handle(.pause)
        _ = m.handle(.deviceLost(reason: "gone", position: 4, watching: true))
        _ = m.handle(.play)
        #expect(m.handle(.outputReturned) == [.emit(.outputReturned(resuming: true))])
        _ = m.handle(.startOpened(token: 2, key: 1))
        #expect(m.handle(.runtimeBuilt(token: 2, rate: 48000)).contains(.installRuntime(key: 1, position: 4)))
        #expect(m.handle(.outputReturned).isEmpty)  // said once
    }

    @Test func aRenderingFailureStops() {
        var m = running([a])
        let e = TonearmError.invalidState("no output")
        #expect(m.handle(.renderingFailed(e)) == [
            .closeRuntime(drain: false), .releaseSelf, .emit(.outputLost(reason: e.description, awaitingReturn: false)), .emit(.stateChanged(.stopped)),
        ])
        #expect(m.lastError == e)
    }

    // MARK: Position

    @Test func aSeekWhileStoppedOnlyMovesTheStart() {
        var m = QueueStateMachine(items: [a])
        #expect(m.handle(.seek(5)) == [.emit(.seeked(to: 5))])
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        #expect(m.handle(.runtimeBuilt(token: 1, rate: 48000)).contains(.installRuntime(key: 1, position: 5)))
    }

    @Test func aSeekWhileRunningReschedulesTheCurrentItem() {
        var m = running([a, b])
        #expect(m.handle(.seek(5)) == [.replaceCurrent(key: 1, position: 5), .emit(.seeked(to: 5))])
    }

    /// What replaces what is heard — a seek, a skip, the previous/next item, a jump, a shuffled
    /// start on another item, a failed restart's skip — is a `replaceCurrent` (the output is
    /// flushed); what only changes what follows or a gain — an insert, a remove, a move, repeat,
    /// shuffle, ReplayGain — is a `restartCurrent` (what is heard plays on); an item's end (a
    /// gapless join or a crossfade) is neither.
    @Test func onlyWhatReplacesWhatIsHeardFlushesTheOutput() {
        func flushes(_ actions: [QueueStateMachine.Action]) -> Bool {
            actions.contains { if case .replaceCurrent = $0 { true } else { false } }
        }
        func keeps(_ actions: [QueueStateMachine.Action]) -> Bool {
            actions.contains { if case .restartCurrent = $0 { true } else { false } }
        }
        var m = running([a, b, c])
        #expect(flushes(m.handle(.seek(3))))
        #expect(flushes(m.handle(.skipToNext)))
        #expect(flushes(m.handle(.skipToPrevious)))
        #expect(flushes(m.handle(.skipToItem(2))))
        #expect(flushes(m.handle(.skipToBeginning)))
        #expect(flushes(m.handle(.skipToPrevious)))  // the first item: a seek to its start
        #expect(flushes(m.handle(.startShuffled(.songs, first: 2, albums: [:], seed: 5))))
        #expect(flushes(m.handle(.restartOpenFailed(key: m.currentEntry!.key, error: broken))))

        var n = running([a, b, c])
        scheduled(&n, keys: [1, 2])
        let keyed = n.handle(.insert(QueueItem(path: "/music/C/01.flac"), at: 1))
        #expect(keeps(keyed) && !flushes(keyed))
        for input: QueueStateMachine.Input in [.move(from: 2, to: 1), .setRepeat(.one), .setReplayGain(.album, preamp: 1)] {
            let actions = n.handle(input)
            #expect(!flushes(actions), "\(input): \(actions)")
        }
        // An item played to its end goes on to the next without a restart of any kind.
        #expect(!flushes(n.handle(rendered: .advanced(ended: 1, order: n.order))))
        #expect(!keeps(n.handle(rendered: .advanced(ended: 1, order: n.order))))
    }

    @Test func aSkipWhileTheOutputOpensReplacesWhatTheStartPlaysFirst() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        _ = m.handle(.startOpened(token: 1, key: 1))
        _ = m.handle(.skipToNext)
        let actions = m.handle(.runtimeBuilt(token: 1, rate: 48000))
        #expect(!actions.contains { if case .restartCurrent = $0 { true } else { false } })
    }

    @Test func theTimeHeardIsTheNodesLessWhatTheOutputHolds() {
        var m = running([a])
        m.schedule.beginHead(playerFrame: 48000)
        _ = m.schedule.append(key: 1, start: 96000, end: 480000, sourceRate: 48000, order: m.order, then: .next)
        // 1.5 s rendered past the head's start (at 2 s): 0.25 s of it still in the output.
        #expect(m.currentTime(playerSampleTime: 120_000, heldFrames: 12_000) == 3.25)
        // Less rendered than held (just after a flush or a start): the head's start, not before.
        #expect(m.currentTime(playerSampleTime: 50_000, heldFrames: 12_000) == 2)
    }

    @Test func aSeekToNothingIsASeekToTheStart() {
        var m = QueueStateMachine(items: [a])
        #expect(m.handle(.seek(-3)) == [.emit(.seeked(to: 0))])
        #expect(m.handle(.seek(.nan)) == [.emit(.seeked(to: 0))])
        #expect(m.pendingPosition == 0)
    }

    @Test func theTimeComesFromTheNodeWhileRunning() {
        var m = running([a])
        m.schedule.beginHead(playerFrame: 48000)
        _ = m.schedule.append(key: 1, start: 96000, end: 480000, sourceRate: 48000, order: m.order, then: .next)
        #expect(m.currentTime(playerSampleTime: 72000) == 2.5)
        #expect(m.currentTime(playerSampleTime: nil) == 0)
    }

    // MARK: Skipping

    @Test func skippingWhileRunningReschedulesTheNewItemFromItsStart() {
        var m = running([a, b])
        #expect(m.handle(.skipToNext) == [.emit(.currentItemChanged(index: 1, item: b)), .replaceCurrent(key: 2, position: 0)])
        #expect(m.handle(.skipToPrevious) == [.emit(.currentItemChanged(index: 0, item: a)), .replaceCurrent(key: 1, position: 0)])
        #expect(m.handle(.skipToItem(1)) == [.emit(.currentItemChanged(index: 1, item: b)), .replaceCurrent(key: 2, position: 0)])
        #expect(m.handle(.skipToBeginning) == [.emit(.currentItemChanged(index: 0, item: a)), .replaceCurrent(key: 1, position: 0)])
    }

    @Test func skippingWhileStoppedOnlyMovesTheCurrentItem() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.seek(9))
        #expect(m.handle(.skipToNext) == [.emit(.currentItemChanged(index: 1, item: b))])
        #expect(m.pendingPosition == 0)
    }

    @Test func skippingPastTheEndFinishesTheQueue() {
        var m = running([a, b])
        _ = m.handle(.skipToNext)
        #expect(m.handle(.skipToNext) == [
            .closeRuntime(drain: false), .releaseSelf, .emit(.stateChanged(.stopped)), .emit(.finished),
            .emit(.currentItemChanged(index: 0, item: a)),
        ])
        #expect(m.state == .stopped)
        #expect(m.runtime == .none)
    }

    @Test func skippingBackFromTheFirstItemSeeksToItsStart() {
        var m = running([a, b])
        #expect(m.handle(.skipToPrevious) == [.replaceCurrent(key: 1, position: 0), .emit(.seeked(to: 0))])
    }

    @Test func skippingToAnItemThatIsNotThereDoesNothing() {
        var m = running([a, b])
        #expect(m.handle(.skipToItem(7)).isEmpty)
        #expect(m.order.current == 0)
    }

    // MARK: The queue

    @Test func setQueueStopsAndReplacesTheItems() {
        var m = running([a, b])
        _ = m.handle(.setRepeat(.all))
        #expect(m.handle(.setQueue([c], order: nil, position: 4)) == [
            .closeRuntime(drain: false), .releaseSelf, .emit(.stateChanged(.stopped)), .emit(.queueChanged),
            .emit(.currentItemChanged(index: 0, item: c)),
        ])
        #expect(m.entries == [.init(item: c, key: 3)])
        #expect(m.order.repeatMode == .all)
        #expect(m.pendingPosition == 4)
    }

    @Test func setQueueTakesASavedOrderOfTheSameLength() {
        var m = QueueStateMachine()
        let saved = PlayOrder(count: 3, start: 2, repeatMode: .one, seed: 1)
        _ = m.handle(.setQueue([a, b, c], order: saved, position: 0))
        #expect(m.order == saved)
        _ = m.handle(.setQueue([a, b], order: saved, position: -1))
        #expect(m.order == PlayOrder(count: 2, repeatMode: .one))
        #expect(m.pendingPosition == 0)
    }

    @Test func theFirstItemInsertedBecomesCurrent() {
        var m = QueueStateMachine()
        #expect(m.handle(.insert(a, at: 5)) == [.emit(.queueChanged), .emit(.currentItemChanged(index: 0, item: a))])
        #expect(m.handle(.insert(b, at: 0)) == [.emit(.queueChanged)])
        #expect(m.entries.map(\.key) == [2, 1])
    }

    @Test func insertingBetweenTheCurrentAndTheScheduledNextItemReschedules() {
        var m = running([a, b])
        scheduled(&m, keys: [1, 2])
        #expect(m.handle(.insert(c, at: 1)) == [.restartCurrent(key: 1, position: nil), .emit(.queueChanged)])
    }

    @Test func insertingAfterTheScheduledNextItemDoesNotReschedule() {
        var m = running([a, b])
        scheduled(&m, keys: [1, 2])
        #expect(m.handle(.insert(c, at: 2)) == [.emit(.queueChanged)])
    }

    /// `replace` (MPD's `rangeid`): the scheduled next item replaced gets a new key, so the
    /// join prepared to the old one is made again; one after it changes nothing scheduled; the
    /// current one keeps its key (it plays on as opened); an index outside the queue is ignored.
    @Test func replacingTheScheduledNextItemReschedulesAndTheCurrentOneKeepsItsKey() {
        var m = running([a, b, c])
        scheduled(&m, keys: [1, 2])
        var ranged = b
        ranged.range = PlaybackRange(start: 1, end: 2)
        #expect(m.handle(.replace(at: 1, ranged)) == [.restartCurrent(key: 1, position: nil), .emit(.queueChanged)])
        #expect(m.entries.map(\.item) == [a, ranged, c] && m.entries[1].key == 4)
        var later = c
        later.range = PlaybackRange(start: 3)
        var n = running([a, b, c])
        scheduled(&n, keys: [1, 2])
        #expect(n.handle(.replace(at: 2, later)) == [.emit(.queueChanged)])
        var current = a
        current.range = PlaybackRange(start: 0.5)
        #expect(n.handle(.replace(at: 0, current)) == [.emit(.queueChanged)])
        #expect(n.entries[0].key == 1 && n.entries[0].item == current)
        #expect(n.handle(.replace(at: 7, current)).isEmpty)
    }

    @Test func removingTheCurrentItemWhilePlayingStartsTheNextOne() {
        var m = running([a, b])
        #expect(m.handle(.remove(at: 0)) == [
            .closeRuntime(drain: false), .emit(.currentItemChanged(index: 0, item: b)),
            .open(token: 2, key: 2, item: b, remote: false), .emit(.queueChanged),
        ])
        // Still kept alive: the runtime of the next start does not retain twice.
        #expect(m.retained)
        _ = m.handle(.startOpened(token: 2, key: 2))
        #expect(!m.handle(.runtimeBuilt(token: 2, rate: 48000)).contains(.retainSelf))
    }

    /// Found by QueuePlayerStressTests: the listeners last heard "playing"; the start that
    /// replaces the removed item is stopped before it plays, and they must hear "stopped".
    @Test func stoppingTheStartThatFollowsARemovedPlayingItemSaysStopped() {
        var m = running([a, b])
        _ = m.handle(.remove(at: 0))
        #expect(m.state == .stopped)
        #expect(m.handle(.stop) == [.releaseSelf, .emit(.stateChanged(.stopped))])
        // Said once: a second stop has nothing to report.
        #expect(m.handle(.stop).isEmpty)
    }

    @Test func removingTheItemAStartIsOpeningStartsWithTheNextOne() {
        var m = QueueStateMachine(items: [a, b])
        _ = m.handle(.play)
        #expect(m.handle(.remove(at: 0)) == [.emit(.currentItemChanged(index: 0, item: b)), .emit(.queueChanged)])
        #expect(m.runtime == .starting(token: 1))
        #expect(m.handle(.startOpened(token: 1, key: 1)) == [.open(token: 1, key: 2, item: b, remote: false)])
        // With nothing left, the start ends.
        _ = m.handle(.remove(at: 0))
        #expect(m.runtime == .none)
        #expect(m.handle(.startOpened(token: 1, key: 2)).isEmpty)
    }

    @Test func removingTheCurrentItemWhileStoppedReportsTheNewOne() {
        var m = QueueStateMachine(items: [a, b])
        #expect(m.handle(.remove(at: 0)) == [
            .emit(.currentItemChanged(index: 0, item: b)), .emit(.stateChanged(.stopped)), .emit(.queueChanged),
        ])
    }

    @Test func removingTheCurrentItemWhilePausedStopsAndLetsGo() {
        var m = running([a, b])
        _ = m.handle(.pause)
        #expect(m.retained)
        #expect(m.handle(.remove(at: 0)) == [
            .closeRuntime(drain: false), .emit(.currentItemChanged(index: 0, item: b)), .releaseSelf,
            .emit(.stateChanged(.stopped)), .emit(.queueChanged),
        ])
        #expect(!m.retained)
        #expect(m.state == .stopped)
    }

    @Test func removingTheScheduledNextItemReschedules() {
        var m = running([a, b, c])
        scheduled(&m, keys: [1, 2])
        #expect(m.handle(.remove(at: 1)) == [.restartCurrent(key: 1, position: nil), .emit(.queueChanged)])
        #expect(m.handle(.remove(at: 9)).isEmpty)
    }

    @Test func movingReschedulesOnlyWhenTheNextItemChanges() {
        var m = running([a, b, c])
        scheduled(&m, keys: [1, 2])
        #expect(m.handle(.move(from: 2, to: 1)) == [.restartCurrent(key: 1, position: nil), .emit(.queueChanged)])
        #expect(m.entries.map(\.item) == [a, c, b])
        #expect(m.handle(.move(from: 0, to: 0)) == [.emit(.queueChanged)])
    }

    // MARK: Modes

    @Test func repeatOneReschedulesWhatFollows() {
        var m = running([a, b])
        scheduled(&m, keys: [1, 2])
        #expect(m.handle(.setRepeat(.one)) == [.restartCurrent(key: 1, position: nil), .emit(.repeatModeChanged(.one))])
        // Once re-scheduled (the item again after itself), the same mode again changes nothing.
        scheduled(&m, keys: [1, 1])
        #expect(m.handle(.setRepeat(.one)) == [.emit(.repeatModeChanged(.one))])
    }

    @Test func shufflingKeepsTheCurrentItem() {
        var m = QueueStateMachine(items: [a, b, c])
        _ = m.handle(.skipToItem(1))
        #expect(m.handle(.setShuffle(.songs, albums: [:], seed: 7)) == [.emit(.shuffleModeChanged(.songs))])
        #expect(m.order.current == 1)
        #expect(m.order.shuffleMode == .songs)
        _ = m.handle(.setShuffle(.off, albums: [:], seed: 7))
        #expect(m.order.current == 1)
        #expect(m.order.shuffleMode == .off)
    }

    @Test func albumShuffleKeepsTheAlbumsTogether() {
        var m = QueueStateMachine(items: [a, c, b])
        // b has no key read (added after the tags were read): its folder is its album, as a's.
        _ = m.handle(.setShuffle(.albums, albums: [1: "/music/A", 2: "other"], seed: 3))
        let o = m.order.order
        let ia = o.firstIndex(of: 0)!, ib = o.firstIndex(of: 2)!
        #expect(abs(ia - ib) == 1)
    }

    @Test func startShuffledMovesToItsFirstItem() {
        var m = running([a, b, c])
        let actions = m.handle(.startShuffled(.songs, first: 2, albums: [:], seed: 5))
        #expect(actions == [.emit(.shuffleModeChanged(.songs)), .emit(.currentItemChanged(index: 2, item: c)),
                            .replaceCurrent(key: 3, position: 0)])
        #expect(m.order.current == 2)
    }

    @Test func startShuffledWithTheCurrentItemFirstKeepsItsPlace() {
        var m = QueueStateMachine(items: [a, b, c])
        _ = m.handle(.seek(8))
        #expect(m.handle(.startShuffled(.songs, first: 0, albums: [:], seed: 5)) == [.emit(.shuffleModeChanged(.songs))])
        #expect(m.pendingPosition == 8)
    }

    @Test func replayGainReschedulesTheCurrentItemAtItsPlace() {
        var m = running([a])
        #expect(m.handle(.setReplayGain(.album, preamp: 3)) == [.restartCurrent(key: 1, position: nil)])
        #expect(m.replayGain == .album)
        #expect(m.preamp == 3)
        var stopped = QueueStateMachine(items: [a])
        #expect(stopped.handle(.setReplayGain(.track, preamp: 0)).isEmpty)
    }

    @Test func theCrossfadeIsKeptBetweenNothingAndThirtySeconds() {
        var m = QueueStateMachine()
        _ = m.handle(.setCrossfade(45))
        #expect(m.crossfade == 30)
        _ = m.handle(.setCrossfade(-1))
        #expect(m.crossfade == 0)
        _ = m.handle(.setCrossfade(.infinity))
        #expect(m.crossfade == 0)
    }

    @Test func volumeAndDuckingMultiplyOnTheRunningMixer() {
        var m = running([a])
        #expect(m.handle(.setVolume(0.5)) == [.applyVolume(0.5), .emit(.volumeChanged(0.5))])
        #expect(m.handle(.setDuck(0.2)) == [.applyVolume(0.1), .emit(.ducked(level: 0.2))])
        // The same level again changes nothing worth reporting.
        #expect(m.handle(.setDuck(0.2)) == [.applyVolume(0.1)])
        #expect(m.handle(.setDuck(1)) == [.applyVolume(0.5), .emit(.ducked(level: 1))])
        #expect(m.volume == 0.5)
    }

    @Test func volumeIsKeptWhileStoppedAndClamped() {
        var m = QueueStateMachine()
        #expect(m.handle(.setVolume(3)) == [.emit(.volumeChanged(1))])
        #expect(m.handle(.setVolume(.nan)) == [.emit(.volumeChanged(0))])
        #expect(m.handle(.setDuck(.nan)).isEmpty)
        #expect(m.duck == 1)
    }

    // MARK: Segments played

    /// The join is announced when it is heard, not when it is rendered: the node rendered the end
    /// of A (a second at 48 kHz, scheduled from player frame 0), but the output still holds what
    /// came before — heard at frame 36,000 — so A stays current, its clock at 0.75 s and never
    /// past its end, and the machine asks to be told again 12,000 frames on. A wake-up before
    /// the join (the output's buffer grew meanwhile) waits again for what is left; at the join,
    /// B becomes current, its clock from its first heard frame: 0 at the join, 0.1 s 4,800
    /// frames after it — never negative, never held at 0.
    @Test func theNextItemIsAnnouncedWhenTheJoinIsHeardNotWhenItIsRendered() {
        var m = running([a, b, c])
        scheduledInOrder(&m, count: 2)
        let (head, epoch) = (m.schedule.segments[0].token, m.schedule.epoch)
        #expect(m.handle(.segmentRendered(token: head, epoch: epoch, heard: 36_000)) == [.awaitJoin(frames: 12_000)])
        #expect(m.order.current == 0)
        #expect(m.currentItem == a)
        #expect(m.currentTime(playerSampleTime: 52_000, heldFrames: 16_000) == 0.75)
        #expect(m.currentTime(playerSampleTime: 60_000, heldFrames: 0) == 1, "A's clock runs past its end")
        // Woken early (the buffer grew from 75 to 250 ms): the rest is waited for.
        #expect(m.handle(.heard(45_000)) == [.awaitJoin(frames: 3_000)])
        #expect(m.order.current == 0)
        // The join is heard.
        #expect(m.handle(.heard(48_000)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .emit(.currentItemChanged(index: 1, item: b)),
        ])
        #expect(m.order.current == 1)
        #expect(m.currentTime(playerSampleTime: 60_000, heldFrames: 12_000) == 0)
        #expect(m.currentTime(playerSampleTime: 64_800, heldFrames: 12_000) == 0.1)
        // A stale or repeated completion changes nothing.
        #expect(m.handle(.segmentRendered(token: head, epoch: epoch, heard: 90_000)).isEmpty)
        #expect(m.order.current == 1)
    }

    /// An output that holds nothing (the file output, `null:untimed`) hears a join as soon as it
    /// is rendered: B is current at once, nothing is waited for.
    @Test func aJoinRenderedWhereItIsHeardIsAnnouncedAtOnce() {
        var m = running([a, b])
        scheduledInOrder(&m, count: 2)
        #expect(m.handle(.segmentRendered(token: m.schedule.segments[0].token, epoch: m.schedule.epoch, heard: 48_000)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .emit(.currentItemChanged(index: 1, item: b)),
        ])
    }

    /// Paused with a join waiting: nothing is waited for while paused (what is heard stands
    /// still); play asks at once again. What is heard not moving while playing doubles the wait.
    @Test func aJoinWaitingWhilePausedIsWaitedForAgainOnPlay() {
        var m = running([a, b])
        scheduledInOrder(&m, count: 2)
        _ = m.handle(.segmentRendered(token: m.schedule.segments[0].token, epoch: m.schedule.epoch, heard: 47_900))
        _ = m.handle(.pause)
        #expect(m.handle(.heard(47_950)).isEmpty)
        #expect(m.handle(.play) == [.startRendering, .emit(.stateChanged(.playing)), .awaitJoin(frames: 0)])
        #expect(m.handle(.heard(47_950)) == [.awaitJoin(frames: 240)])
        #expect(m.handle(.heard(47_950)) == [.awaitJoin(frames: 480)])
        #expect(m.handle(.heard(nil)) == [.awaitJoin(frames: 240)])
        #expect(m.handle(.heard(nil)) == [.awaitJoin(frames: 480)])
        #expect(m.handle(.heard(48_000)).contains(.emit(.currentItemChanged(index: 1, item: b))))
    }

    /// While a join waits to be heard, an insert that leaves what follows as it is announces
    /// nothing early; removing the item the node renders now (B, not heard yet) makes it current
    /// first and removes it as the current item: what the output holds of it is dropped and C
    /// plays — B, never heard, is never announced (before, B was announced and C right after it).
    @Test func editingTheQueueWhileAJoinWaits() {
        var m = running([a, b, c])
        scheduledInOrder(&m, count: 2)
        _ = m.handle(.segmentRendered(token: m.schedule.segments[0].token, epoch: m.schedule.epoch, heard: 40_000))
        _ = m.handle(.warnings(key: 2, [corrupt(b.path, 1)], fromOpening: false))
        #expect(m.handle(.insert(radio, at: 3)) == [.emit(.queueChanged)])
        #expect(m.order.current == 0)
        let removed = m.handle(.remove(at: 1))
        #expect(Array(removed.prefix(3)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .closeRuntime(drain: false), .emit(.currentItemChanged(index: 1, item: c)),
        ])
        #expect(removed.filter { if case .emit(.currentItemChanged) = $0 { true } else { false } }.count == 1, "\(removed)")
        #expect(removed.contains(.open(token: 2, key: 3, item: c, remote: false)), "\(removed)")
        #expect(m.currentItem == c)
        #expect(m.heldWarnings.isEmpty, "B's warnings went with it")
    }

    /// The queue plays until its end is heard: the node rendered the last frame of B while the
    /// output still holds some of it, so the state stays `playing` (nothing said yet), a join
    /// still waiting before it is announced when heard, and the output is asked to play out
    /// what it holds. When it has, the queue stops and finishes (the runtime closed without a
    /// second drain). Before the fix the state read `stopped` the moment the end was rendered.
    @Test func theQueuePlaysUntilItsEndIsHeard() {
        var m = running([a, b])
        scheduledInOrder(&m, count: 2)
        let epoch = m.schedule.epoch
        _ = m.handle(.segmentRendered(token: m.schedule.segments[0].token, epoch: epoch, heard: 40_000))
        #expect(m.handle(.segmentRendered(token: m.schedule.segments[1].token, epoch: epoch, heard: 88_000)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .emit(.currentItemChanged(index: 1, item: b)),
            .awaitJoin(frames: 8_000), .drainEnd(epoch: epoch),
        ])
        #expect(m.state == .playing)
        #expect(m.isRunning)
        #expect(m.currentTime(playerSampleTime: 96_000, heldFrames: 6_000) == 1 - 6_000 / 48_000.0)
        // Nothing is left to re-schedule: a setting changed now restarts nothing.
        #expect(m.handle(.setReplayGain(.track, preamp: 0)).isEmpty)
        #expect(m.handle(.heard(90_000)) == [.awaitJoin(frames: 6_000)])
        #expect(m.state == .playing)
        // A drain of another schedule (a seek came since) is not this end.
        #expect(m.handle(.endHeard(epoch: epoch + 1)).isEmpty)
        #expect(m.handle(.endHeard(epoch: epoch)) == [
            .emit(.itemPlayedToEnd(index: 1, item: b)), .closeRuntime(drain: false), .releaseSelf,
            .emit(.stateChanged(.stopped)), .emit(.finished), .emit(.currentItemChanged(index: 0, item: a)),
        ])
        #expect(m.state == .stopped)
        #expect(m.handle(.endHeard(epoch: epoch)).isEmpty)
    }

    /// The end heard before the drain returned (what is heard passed it), or at once (an output
    /// that holds nothing): the queue finishes then, and the drain's report changes nothing.
    @Test func anEndHeardBeforeTheDrainFinishesThen() {
        var m = running([a, b])
        scheduledInOrder(&m, count: 2)
        let (epoch, tokens) = (m.schedule.epoch, m.schedule.segments.map(\.token))
        _ = m.handle(.segmentRendered(token: tokens[0], epoch: epoch, heard: 48_000))
        _ = m.handle(.segmentRendered(token: tokens[1], epoch: epoch, heard: 90_000))
        #expect(m.handle(.heard(96_000)) == [
            .emit(.itemPlayedToEnd(index: 1, item: b)), .closeRuntime(drain: true), .releaseSelf,
            .emit(.stateChanged(.stopped)), .emit(.finished), .emit(.currentItemChanged(index: 0, item: a)),
        ])
        #expect(m.handle(.endHeard(epoch: epoch)).isEmpty)

        var n = running([a])
        scheduledInOrder(&n, count: 1)
        #expect(n.handle(.segmentRendered(token: n.schedule.segments[0].token, epoch: n.schedule.epoch, heard: 48_000)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .closeRuntime(drain: true), .releaseSelf,
            .emit(.stateChanged(.stopped)), .emit(.finished), .emit(.currentItemChanged(index: 0, item: a)),
        ])
    }

    /// The player's part of a restart that keeps what the output holds, done as it does it: the
    /// node, rendered to player frame `rendered`, stopped (its timeline back at 0), what was kept
    /// and the rest of the item re-scheduled behind it (each item a second at 48 kHz).
    func carryOutKeptRestart(_ m: inout QueueStateMachine, rendered: Int64) throws {
        let kept = m.keepRendered(upTo: rendered, restartingAt: 0)
        let (place, seconds) = try #require(kept)
        let facts = QueueSchedule.ItemFacts(length: 48_000, rate: 48_000)
        _ = m.schedule.place(place, facts: facts, path: m.entries[place.index].item.path,
                             from: QueueSchedule.startFrame(seconds: seconds, facts: facts), incoming: nil, settings: .init())
    }

    /// ReplayGain set while the join into B is rendered but not heard (inside the output's
    /// latency) re-schedules B — the item the node renders — and B is still announced when its
    /// first frame is heard, once, however often it is restarted meanwhile; its clock runs on
    /// through the restarts (nothing heard twice or left out). Before the fix B was announced
    /// at the restart, a quarter of a second early.
    @Test func aRestartWhileAJoinWaitsAnnouncesTheNextItemWhenItsStartIsHeard() throws {
        var m = running([a, b, c])
        scheduledInOrder(&m, count: 2)
        let (aToken, oldEpoch) = (m.schedule.segments[0].token, m.schedule.epoch)
        let bToken = m.schedule.segments[1].token
        var said: [QueueStateMachine.Action] = []
        said += m.handle(.segmentRendered(token: aToken, epoch: oldEpoch, heard: 40_000))
        let restart = m.handle(.setReplayGain(.track, preamp: 0))
        said += restart
        #expect(restart == [.restartCurrent(key: 2, position: nil)])
        #expect(m.currentItem == a)
        // Carried out with a quarter of B rendered (the node at 60,000); the node starts again at 0.
        try carryOutKeptRestart(&m, rendered: 60_000)
        #expect(m.schedule.segments.map(\.key) == [1, 2, 2])
        #expect(m.schedule.segments[2].startFrame == 12_000, "B goes on where it was rendered to")
        // What is heard, on the node's new timeline: 4,000 frames before the join, still A.
        #expect(m.handle(.heard(-16_000)) == [.awaitJoin(frames: 4_000)])
        #expect(m.currentItem == a)
        #expect(m.currentTime(playerSampleTime: 0, heldFrames: 16_000) == 44_000 / 48_000.0)
        // A second restart (another setting) before the join is heard: B again, not announced.
        let again = m.handle(.setReplayGain(.album, preamp: 0))
        said += again
        #expect(again == [.restartCurrent(key: 2, position: nil)])
        try carryOutKeptRestart(&m, rendered: 2_400)  // 0.3 s of B rendered in all
        #expect(m.schedule.segments.map(\.startFrame) == [0, 0, 12_000, 14_400])
        // The join is heard (12,000 + 2,400 frames before the node's new start): B is current.
        let joined = m.handle(.heard(-14_400))
        said += joined
        #expect(Array(joined.prefix(2)) == [.emit(.itemPlayedToEnd(index: 0, item: a)), .emit(.currentItemChanged(index: 1, item: b))])
        #expect(m.currentItem == b)
        // B's clock from its first heard frame, across the cuts.
        #expect(m.currentTime(playerSampleTime: 0, heldFrames: 12_000) == 0.05)
        said += m.handle(.heard(-2_400))
        said += m.handle(.heard(0))
        #expect(m.currentTime(playerSampleTime: 4_800, heldFrames: 0) == 0.4)
        #expect(m.schedule.currentDuration == 1)
        // The completions of the schedules before the restarts are stale.
        #expect(m.handle(.segmentRendered(token: bToken, epoch: oldEpoch, heard: 96_000)).isEmpty)
        let announced = said.filter { if case .emit(.currentItemChanged) = $0 { true } else { false } }
        #expect(announced == [.emit(.currentItemChanged(index: 1, item: b))], "\(said)")
        #expect(m.currentItem == b)
    }

    /// A look-ahead made stale while the join into B waits (repeat-one set: B follows B, not C)
    /// re-schedules B, which was rendered; C, read ahead but not rendered, is dropped — never
    /// announced — and B is announced when heard. A skip there goes from what is heard: A's next,
    /// B, replacing what the output holds.
    @Test func aStaleLookaheadWhileAJoinWaitsDropsWhatWasOnlyRead() throws {
        var m = running([a, b, c])
        scheduledInOrder(&m, count: 3)
        _ = m.handle(.segmentRendered(token: m.schedule.segments[0].token, epoch: m.schedule.epoch, heard: 40_000))
        var n = m
        var said = m.handle(.setRepeat(.one))
        #expect(said == [.restartCurrent(key: 2, position: nil), .emit(.repeatModeChanged(.one))])
        #expect(m.currentItem == a)
        try carryOutKeptRestart(&m, rendered: 50_000)
        #expect(m.schedule.segments.map(\.key) == [1, 2, 2], "C is gone from the schedule")
        #expect(m.schedule.segments[2].order.repeatMode == .one, "what follows B is B again")
        said += m.handle(.heard(-2_000))
        said += m.handle(.heard(60_000))
        let announced = said.filter { if case .emit(.currentItemChanged) = $0 { true } else { false } }
        #expect(announced == [.emit(.currentItemChanged(index: 1, item: b))], "\(said)")
        #expect(m.order.current == 1)
        #expect(m.order.repeatMode == .one)
        #expect(n.handle(.skipToNext) == [.emit(.currentItemChanged(index: 1, item: b)), .replaceCurrent(key: 2, position: 0)])
    }

    @Test func theNextItemBecomesCurrentWhenTheCurrentOneHasPlayed() {
        var m = running([a, b])
        var next = m.order
        _ = next.advanceOnEnd()
        #expect(m.handle(rendered: .advanced(ended: 1, order: next)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .emit(.currentItemChanged(index: 1, item: b)),
        ])
        #expect(m.order.current == 1)
    }

    /// Repeat and shuffle set after the next item was scheduled (its segment recorded the order
    /// of then) hold when that item becomes current: the queue's modes, not the recorded ones.
    @Test func repeatAndShuffleSetWhileTheNextItemWaitsHoldWhenItPlays() {
        var m = running([a, b, c])
        var recorded = m.order
        _ = recorded.advanceOnEnd()
        _ = m.handle(.setShuffle(.songs, albums: [:], seed: 7))
        _ = m.handle(.setRepeat(.one))
        let shuffled = m.order.order
        _ = m.handle(rendered: .advanced(ended: 1, order: recorded))
        #expect(m.order.current == 1)
        #expect(m.order.repeatMode == .one)
        #expect(m.order.shuffleMode == .songs)
        #expect(m.order.order == shuffled)
        // What is scheduled after a segment follows them too: repeat-one plays the item again.
        var following = m.current(recorded)
        _ = following.advanceOnEnd()
        #expect(following.current == 1)
    }

    @Test func theEndOfACrossfadeOverlapIsNotAnItemChange() {
        var m = running([a, b])
        var next = m.order
        _ = next.advanceOnEnd()
        #expect(m.handle(rendered: .sameItem(order: next)).isEmpty)
        #expect(m.order.current == 1)
    }

    @Test func theEndOfTheLastItemDrainsAndFinishes() {
        var m = running([a])
        #expect(m.handle(rendered: .finished(ended: 1, position: 3)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .closeRuntime(drain: true), .releaseSelf,
            .emit(.stateChanged(.stopped)), .emit(.finished), .emit(.currentItemChanged(index: 0, item: a)),
        ])
        #expect(m.state == .stopped)
    }

    @Test func aStaleSegmentEndChangesNothing() {
        var m = running([a])
        #expect(m.handle(rendered: .ignored).isEmpty)
        #expect(m.state == .playing)
    }

    @Test func aFailedRestartSkipsTheItem() {
        var m = running([a, b])
        #expect(m.handle(.restartOpenFailed(key: 1, error: broken)) == [
            .emit(.itemFailed(index: 0, item: a, error: broken)), .emit(.currentItemChanged(index: 1, item: b)),
            .replaceCurrent(key: 2, position: 0),
        ])
        #expect(m.handle(.restartOpenFailed(key: 99, error: broken)).isEmpty)
    }

    // MARK: Crossfade candidates

    @Test func aCrossfadeGoesIntoTheNextLocalItem() {
        var m = QueueStateMachine(items: [a, b, radio])
        #expect(m.crossfadeCandidate(after: 0, key: 1, order: m.order) == nil)  // no crossfade set
        _ = m.handle(.setCrossfade(2))
        let next = m.crossfadeCandidate(after: 0, key: 1, order: m.order)
        #expect(next?.key == 2)
        #expect(next?.index == 1)
        #expect(next?.order.current == 1)
        // Never into or out of a network item; never at the end; never with repeat-one.
        var o = m.order
        _ = o.jump(toItem: 1)
        #expect(m.crossfadeCandidate(after: 1, key: 2, order: o) == nil)
        _ = o.jump(toItem: 2)
        #expect(m.crossfadeCandidate(after: 2, key: 3, order: o) == nil)
        _ = m.handle(.setRepeat(.one))
        #expect(m.crossfadeCandidate(after: 0, key: 1, order: m.order) == nil)
        // An entry that moved meanwhile is not crossfaded out of.
        _ = m.handle(.setRepeat(.none))
        #expect(m.crossfadeCandidate(after: 0, key: 2, order: m.order) == nil)
    }

    // MARK: Warnings

    func corrupt(_ path: String, _ packet: Int) -> AudioWarning {
        .corruptPacket(path: path, packetIndex: packet, framePosition: AudioFramePosition(packet * 1152), detail: "bad")
    }

    @Test func warningsOfTheCurrentItemAreSaidAtOnce() {
        var m = running([a, b])
        let w = corrupt(a.path, 3)
        #expect(m.handle(.warnings(key: 1, [w], fromOpening: false)) == [.emit(.decodeWarning(w))])
        #expect(m.heldWarnings.isEmpty)
    }

    /// The next item of a gapless queue is read ahead of being heard: what reading it met is
    /// said right after it becomes current, not while the item before it still plays.
    @Test func warningsOfTheNextItemWaitUntilItIsCurrent() {
        var m = running([a, b])
        let w = corrupt(b.path, 7)
        #expect(m.handle(.warnings(key: 2, [w], fromOpening: false)).isEmpty)
        var next = m.order
        _ = next.advanceOnEnd()
        #expect(m.handle(rendered: .advanced(ended: 1, order: next)) == [
            .emit(.itemPlayedToEnd(index: 0, item: a)), .emit(.currentItemChanged(index: 1, item: b)),
            .emit(.decodeWarning(w)),
        ])
        #expect(m.heldWarnings.isEmpty)
    }

    /// A skip to the item makes it current as well.
    @Test func heldWarningsAreSaidWhenASkipMakesTheItemCurrent() {
        var m = running([a, b, c])
        let w = corrupt(c.path, 1)
        _ = m.handle(.warnings(key: 3, [w], fromOpening: false))
        let actions = m.handle(.skipToItem(2))
        let changed = actions.firstIndex(of: .emit(.currentItemChanged(index: 2, item: c)))
        #expect(changed != nil)
        #expect(changed.map { actions[$0 + 1] } == .emit(.decodeWarning(w)))
    }

    /// A name that says another format is said once per entry, however often a seek re-opens it.
    @Test func openingWarningsAreSaidOncePerEntry() {
        var m = running([a])
        let w = AudioWarning.extensionMismatch(path: a.path, extension: "flac", actualFormat: "MP3")
        #expect(m.handle(.warnings(key: 1, [w], fromOpening: true)) == [.emit(.decodeWarning(w))])
        #expect(m.handle(.warnings(key: 1, [w], fromOpening: true)).isEmpty)
        // What decoding meets is said every time.
        let c1 = corrupt(a.path, 2)
        #expect(m.handle(.warnings(key: 1, [c1], fromOpening: false)) == [.emit(.decodeWarning(c1))])
        #expect(m.handle(.warnings(key: 1, [c1], fromOpening: false)) == [.emit(.decodeWarning(c1))])
    }

    @Test func heldWarningsAreBoundedAndGoWithTheirQueue() {
        var m = running([a, b])
        let many = (0..<150).map { corrupt(b.path, $0) }
        _ = m.handle(.warnings(key: 2, many, fromOpening: false))
        _ = m.handle(.warnings(key: 2, many, fromOpening: false))
        #expect(m.heldWarnings[2]?.count == QueueStateMachine.heldWarningLimit)
        // Warnings of an entry that is not in the queue are dropped.
        #expect(m.handle(.warnings(key: 99, [corrupt("/x", 1)], fromOpening: false)).isEmpty)
        #expect(m.heldWarnings[99] == nil)
        _ = m.handle(.setQueue([c], order: nil, position: 0))
        #expect(m.heldWarnings.isEmpty)
        #expect(m.openingWarned.isEmpty)
    }

    /// An item inserted (or removed) while the next segment waited: the order that segment
    /// recorded has the old length; the queue's order is put at the segment's entry instead
    /// (QueuePlayerStressTests saw "play order of 6 for 5 items" under TSan).
    @Test func anInsertWhileTheNextSegmentWaitedKeepsTheOrderTheQueuesLength() {
        var m = running([a, b])
        var recorded = m.order
        _ = recorded.advanceOnEnd()  // at b (entry 2), recorded with two items
        _ = m.handle(.insert(c, at: 0))  // c, a, b
        #expect(m.handle(rendered: .advanced(ended: 1, order: recorded, current: 2)).contains(.emit(.currentItemChanged(index: 2, item: b))))
        #expect(m.order.count == m.entries.count)
        #expect(m.order.current == 2)
        // Removed meanwhile: the order keeps the queue's length.
        var n = running([a, b, c])
        var old = n.order
        _ = old.advanceOnEnd()
        _ = n.handle(.remove(at: 2))
        _ = n.handle(rendered: .advanced(ended: 1, order: old, current: 99))
        #expect(n.order.count == n.entries.count)
        _ = n.handle(rendered: .sameItem(order: old, current: 2))
        #expect(n.order.count == n.entries.count)
    }
}
