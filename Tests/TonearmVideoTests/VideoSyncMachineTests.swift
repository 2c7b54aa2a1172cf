// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmVideo

/// Each rule of ``VideoSyncMachine`` alone, then a simulated playback (no threads, no clock:
/// the test moves the clock by what the machine asks to wait).
@Suite struct VideoSyncMachineTests {
    typealias Frame = VideoSyncMachine.Frame

    /// Frames at `fps` from `start`, ids from `firstID`.
    func frames(_ count: Int, fps: Double = 25, start: Double = 0, firstID: UInt64 = 1) -> [Frame] {
        (0..<count).map { Frame(id: firstID + UInt64($0), time: start + Double($0) / fps) }
    }

    /// A machine that has shown a first frame already (the at-once rule is behind it).
    func started() -> VideoSyncMachine {
        var m = VideoSyncMachine()
        _ = m.decide(queue: [Frame(id: 0, time: 0)], clock: 0, rate: 1)
        return m
    }

    @Test func theFirstFrameIsShownAtOnceEvenWhenEarlyOrPaused() {
        var m = VideoSyncMachine()
        let a = m.decide(queue: frames(2, start: 5), clock: 0, rate: 0)
        #expect(a == [.present(id: 1, lateness: -5), .waitForEvent])
        #expect(m.presentedFrames == 1)
        #expect(!m.showsNextAtOnce)
    }

    @Test func anEarlyFrameWaitsUntilItIsDue() {
        var m = started()
        let a = m.decide(queue: [Frame(id: 1, time: 1.04)], clock: 1.0, rate: 1)
        #expect(a.count == 1)
        guard case .wait(let s) = a[0] else { Issue.record("\(a)"); return }
        #expect(abs(s - 0.04) < 1e-9)
        #expect(m.presentedFrames == 1)
    }

    @Test func aLongWaitIsCutSoTheClockIsReadAgain() {
        var m = started()
        #expect(m.decide(queue: [Frame(id: 1, time: 3)], clock: 1, rate: 1) == [.wait(seconds: 0.1)])
    }

    @Test func theWaitFollowsTheRate() {
        var m = started()
        let a = m.decide(queue: [Frame(id: 1, time: 1.08)], clock: 1.0, rate: 2)
        guard case .wait(let s) = a.first else { Issue.record("\(a)"); return }
        #expect(abs(s - 0.04) < 1e-9)
    }

    @Test func aDueFrameIsShownWithItsLatenessThenTheNextIsWaitedFor() {
        var m = started()
        let a = m.decide(queue: [Frame(id: 1, time: 1.0), Frame(id: 2, time: 1.04)], clock: 1.01, rate: 1)
        #expect(a.count == 2)
        #expect(a.first == .present(id: 1, lateness: 1.01 - 1.0))
        guard case .wait(let s) = a.last else { Issue.record("\(a)"); return }
        #expect(abs(s - 0.03) < 1e-9)
        #expect(m.lastLateness == 1.01 - 1.0)
    }

    @Test func aFrameSlightlyEarlyWithinTheToleranceIsShown() {
        var m = started()
        let a = m.decide(queue: [Frame(id: 1, time: 1.0015)], clock: 1.0, rate: 1)
        #expect(a.first == .present(id: 1, lateness: 1.0 - 1.0015))
    }

    @Test func aLateFrameIsDroppedWhenTheNextIsDueToo() {
        var m = started()
        let a = m.decide(queue: [Frame(id: 1, time: 1.0), Frame(id: 2, time: 1.04), Frame(id: 3, time: 1.08)],
                         clock: 1.05, rate: 1)
        #expect(a.prefix(2) == [.drop(id: 1), .present(id: 2, lateness: 1.05 - 1.04)])
        #expect(m.droppedFrames == 1)
        #expect(m.presentedFrames == 2)
    }

    @Test func everyFrameBehindTheLastDueOneIsDropped() {
        var m = started()
        let a = m.decide(queue: frames(6, fps: 25, start: 1.0), clock: 1.17, rate: 1)
        // 1.00, 1.04, 1.08, 1.12 dropped; 1.16 shown; 1.20 waited for.
        #expect(a.prefix(5) == [.drop(id: 1), .drop(id: 2), .drop(id: 3), .drop(id: 4), .present(id: 5, lateness: 1.17 - 1.16)])
        #expect(m.droppedFrames == 4)
    }

    @Test func aLateFrameWithNothingBehindItIsShownNotDropped() {
        var m = started()
        let a = m.decide(queue: [Frame(id: 1, time: 1.0)], clock: 1.3, rate: 1)
        #expect(a == [.present(id: 1, lateness: 1.3 - 1.0), .waitForEvent])
        #expect(m.droppedFrames == 0)
    }

    @Test func pausedNothingBecomesDue() {
        var m = started()
        #expect(m.decide(queue: [Frame(id: 1, time: 1.0)], clock: 2.0, rate: 0) == [.waitForEvent])
        #expect(m.presentedFrames == 1)
    }

    @Test func aFrameFarFromTheClockIsShownWithoutSync() {
        var m = started()
        let ahead = m.decide(queue: [Frame(id: 1, time: 100)], clock: 1, rate: 1)
        #expect(ahead.first == .present(id: 1, lateness: 1 - 100))
        let behind = m.decide(queue: [Frame(id: 2, time: 1), Frame(id: 3, time: 1.04)], clock: 50, rate: 1)
        #expect(behind.first == .present(id: 2, lateness: 49))
        #expect(m.droppedFrames == 0)
    }

    @Test func afterASeekTheFirstFrameIsShownAtOnce() {
        var m = started()
        m.reset()
        #expect(m.lastLateness == nil)
        let a = m.decide(queue: [Frame(id: 9, time: 30)], clock: 29.5, rate: 1)
        #expect(a.first == .present(id: 9, lateness: -0.5))
        // …and only the first.
        #expect(m.decide(queue: [Frame(id: 10, time: 30.04)], clock: 29.5, rate: 1) == [.wait(seconds: 0.1)])
    }

    @Test func nothingQueuedWaitsForAnEvent() {
        var m = started()
        #expect(m.decide(queue: [Frame](), clock: 1, rate: 1) == [.waitForEvent])
    }

    /// 10 s of 30 fps against a clock that moves exactly as the machine waits: every frame shown
    /// once, in order, none dropped, none shown early beyond the tolerance or late.
    @Test func steadyPlaybackShowsEveryFrameOnTime() {
        var m = VideoSyncMachine()
        var queue = frames(300, fps: 30)
        var clock = 0.0
        var shown: [UInt64] = []
        var worst = 0.0
        var steps = 0
        while !queue.isEmpty, steps < 10_000 {
            steps += 1
            let window = Array(queue.prefix(3))
            for action in m.decide(queue: window, clock: clock, rate: 1) {
                switch action {
                case .present(let id, let lateness):
                    shown.append(id)
                    queue.removeFirst()
                    if id != 1 { worst = max(worst, abs(lateness)) }
                case .drop:
                    queue.removeFirst()
                case .wait(let s):
                    clock += s
                case .waitForEvent:
                    break
                }
            }
        }
        #expect(shown == (1...300).map(UInt64.init))
        #expect(m.droppedFrames == 0)
        #expect(worst <= VideoSyncMachine.Thresholds().earlyTolerance + 1e-9)
    }

    /// The presenter stalls for 150 ms once (a busy machine): frames behind the clock are dropped
    /// — only those — and the picture is back in sync within two decisions.
    @Test func aStallDropsTheFramesItMissedAndSyncReturns() {
        var m = VideoSyncMachine()
        var queue = frames(60, fps: 30)
        var clock = 0.0
        var stalled = false
        var latenessAfterStall: [Double] = []
        var steps = 0
        while !queue.isEmpty, steps < 10_000 {
            steps += 1
            if !stalled, clock >= 1.0 {
                stalled = true
                clock += 0.15
            }
            for action in m.decide(queue: Array(queue.prefix(3)), clock: clock, rate: 1) {
                switch action {
                case .present(_, let lateness):
                    queue.removeFirst()
                    if stalled { latenessAfterStall.append(lateness) }
                case .drop:
                    queue.removeFirst()
                case .wait(let s):
                    clock += s
                case .waitForEvent:
                    break
                }
            }
        }
        // By 1.15 s five frames were due (1.000…1.133). The presenter sees three queued at a time,
        // as the decoder's queue holds: drop 1.000 and 1.033, show 1.067 (83 ms late), drop 1.100,
        // show 1.133 (17 ms late), then every frame on time.
        #expect(m.droppedFrames == 3)
        #expect(m.droppedFrames + m.presentedFrames == 60)
        #expect(latenessAfterStall.count == 60 - 31 - 3 + 1)
        #expect(latenessAfterStall.prefix(2).allSatisfy { $0 > 0.002 && $0 < 0.1 })
        #expect(latenessAfterStall.dropFirst(2).allSatisfy { abs($0) <= 0.002 + 1e-9 })
    }

    @Test func theSystemClockRunsAtItsRateAndHoldsWhenPaused() {
        var c = SystemVideoClock(itemTime: 10, hostTime: 100, rate: 1)
        #expect(c.time(atHostTime: 102) == 12)
        c.setRate(2, atHostTime: 102)
        #expect(c.time(atHostTime: 103) == 14)
        c.setRate(0, atHostTime: 103)
        #expect(c.time(atHostTime: 200) == 14)
        c.move(to: 5, atHostTime: 200)
        #expect(c.time(atHostTime: 300) == 5)
        c.setRate(1, atHostTime: 300)
        #expect(c.time(atHostTime: 301.5) == 6.5)
        #expect(SystemVideoClock(hostTime: 0, rate: -1).rate == 0)
    }
}
