// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import Tonearm

/// The play-time state machine, without threads or sound.
@Suite struct PlayTallyTests {
    @Test func playingTimeIsCountedPerItemAndPausesAreNot() {
        var t = PlayTally()
        #expect(t.handle(.itemChanged(1), at: 0) == nil)
        #expect(t.handle(.playing, at: 1) == nil)
        #expect(t.handle(.paused, at: 11) == nil)               // 10 s heard
        #expect(t.handle(.playing, at: 100) == nil)             // 89 s paused: not counted
        let left = t.handle(.itemChanged(2), at: 105)           // 5 s more, then the next item
        #expect(left == PlayTally.Leaving(persistentID: 1, playedSeconds: 15, forAnotherItem: true))
        #expect(t.current == 2)
        // Still playing: the next item's time starts at the change.
        let second = t.handle(.stopped, at: 107.5)
        #expect(second == PlayTally.Leaving(persistentID: 2, playedSeconds: 2.5, forAnotherItem: false))
        #expect(t.current == nil)
        #expect(t.handle(.stopped, at: 108) == nil, "a second stop leaves nothing")
    }

    @Test func anItemNeverPlayedIsLeftSilentlyAndTheEndOfTheQueueIsNotASkip() {
        var t = PlayTally()
        _ = t.handle(.itemChanged(7), at: 0)
        #expect(t.handle(.itemChanged(7), at: 1) == nil && t.current == 7, "announced again: still current")
        #expect(t.handle(.itemChanged(8), at: 3) == nil, "never played: not a skip")
        _ = t.handle(.playing, at: 3)
        let last = t.handle(.itemChanged(nil), at: 4)
        #expect(last == PlayTally.Leaving(persistentID: 8, playedSeconds: 1, forAnotherItem: false))
        #expect(t.handle(.paused, at: 5) == nil && t.handle(.itemChanged(9), at: 6) == nil)
        // The queue resets to its first item while stopped; a new queue then: nothing counted.
        #expect(t.handle(.itemChanged(1), at: 7) == nil && t.handle(.stopped, at: 8) == nil)
    }

    @Test func aClockGoingBackCountsNothingNegative() {
        var t = PlayTally()
        _ = t.handle(.itemChanged(1), at: 10)
        _ = t.handle(.playing, at: 10)
        #expect(t.handle(.stopped, at: 9)?.playedSeconds == 0, "played (for no time): left at 0")
    }

    @Test func anItemPlayedToItsEndIsCompletedWhateverTheClockSays() {
        var t = PlayTally()
        _ = t.handle(.itemChanged(1), at: 0)
        _ = t.handle(.playing, at: 0)
        let end = t.handle(.playedToEnd, at: 0.001)
        #expect(end == PlayTally.Leaving(persistentID: 1, playedSeconds: 0.001, forAnotherItem: false, completed: true))
        #expect(t.handle(.itemChanged(2), at: 0.001) == nil, "already left")
        let second = t.handle(.itemChanged(3), at: 0.5)
        #expect(second?.persistentID == 2 && second?.forAnotherItem == true && second?.completed == false)
    }
}
