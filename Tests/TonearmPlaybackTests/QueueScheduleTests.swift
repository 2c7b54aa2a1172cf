// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore
@testable import TonearmPlayback

/// Every rule of the gapless/crossfade scheduler (``QueueSchedule``) on its own: no node, no files.
@Suite struct QueueScheduleTests {
    let order = PlayOrder(count: 3)
    var second: PlayOrder {
        var o = order
        _ = o.advanceOnEnd()
        return o
    }

    func facts(_ seconds: Double, rate: Double = 48000, album: String? = "A", artist: String? = "X") -> QueueSchedule.ItemFacts {
        .init(length: AudioFramePosition(seconds * rate), rate: rate, album: album, albumArtist: artist)
    }

    @Test func onlyTheLastSegmentScheduledSchedulesWhatFollows() {
        var s = QueueSchedule()
        s.beginHead(playerFrame: 0)
        let first = s.append(key: 1, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        #expect(s.consumed(token: first.token, epoch: first.epoch)?.key == 1)
        let second = s.append(key: 2, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        #expect(s.consumed(token: first.token, epoch: first.epoch) == nil)
        #expect(s.isLast(token: second.token, epoch: second.epoch))
        #expect(first.token != second.token)
    }

    @Test func aNewHeadMakesEveryEarlierCompletionStale() {
        var s = QueueSchedule()
        s.beginHead(playerFrame: 0)
        let old = s.append(key: 1, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        s.beginHead(playerFrame: 0)
        let new = s.append(key: 1, start: 50, end: 100, sourceRate: 48000, order: order, then: .next)
        #expect(s.consumed(token: old.token, epoch: old.epoch) == nil)
        #expect(s.rendered(token: old.token, epoch: old.epoch, engineRate: 48000) == .ignored)
        #expect(s.consumed(token: new.token, epoch: new.epoch) != nil)
        s.clear()
        #expect(s.segments.isEmpty)
        #expect(s.consumed(token: new.token, epoch: new.epoch) == nil)
    }

    @Test func aRefusedSegmentIsForgotten() {
        var s = QueueSchedule()
        let t = s.append(key: 1, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        s.dropLast(token: t.token + 1)
        #expect(s.segments.count == 1)
        s.dropLast(token: t.token)
        #expect(s.segments.isEmpty)
    }

    @Test func theNextItemPlaysWhenTheHeadHasBeenRendered() {
        var s = QueueSchedule()
        s.beginHead(playerFrame: 1000)
        let a = s.append(key: 1, start: 0, end: 44100, sourceRate: 44100, order: order, then: .next)
        _ = s.append(key: 2, start: 0, end: 48000, sourceRate: 48000, order: second, then: .next)
        #expect(s.rendered(token: a.token, epoch: a.epoch, engineRate: 48000) == .advanced(ended: 1, order: second))
        // One second of the 44.1 kHz item is 48000 frames of a 48 kHz engine.
        #expect(s.headStartPlayerFrame == 49000)
        #expect(s.currentTime(playerSampleTime: 49000 + 24000, engineRate: 48000) == 0.5)
        #expect(s.currentDuration == 1)
    }

    @Test func onlyTheHeadsCompletionCounts() {
        var s = QueueSchedule()
        _ = s.append(key: 1, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        let b = s.append(key: 2, start: 0, end: 100, sourceRate: 48000, order: second, then: .next)
        #expect(s.rendered(token: b.token, epoch: b.epoch, engineRate: 48000) == .ignored)
        #expect(s.segments.count == 2)
    }

    @Test func theRestOfACrossfadedItemIsTheSameItem() {
        var s = QueueSchedule()
        let mix = s.append(key: 2, start: 0, end: 4800, sourceRate: 48000, order: second,
                           then: .rest(key: 2, index: 1, order: second, frame: 4800))
        _ = s.append(key: 2, start: 4800, end: 48000, sourceRate: 48000, order: second, then: .next)
        #expect(s.rendered(token: mix.token, epoch: mix.epoch, engineRate: 48000) == .sameItem(order: second))
    }

    @Test func theLastSegmentRenderedEndsTheQueueAtItsEnd() {
        var s = QueueSchedule()
        let a = s.append(key: 1, start: 24000, end: 96000, sourceRate: 48000, order: order, then: .next)
        #expect(s.rendered(token: a.token, epoch: a.epoch, engineRate: 48000) == .finished(ended: 1, position: 2))
        #expect(s.currentDuration == nil)
        #expect(s.currentTime(playerSampleTime: 10, engineRate: 48000) == nil)
    }

    @Test func theStartFrameStaysWithinTheItem() {
        let f = facts(10)
        #expect(QueueSchedule.startFrame(seconds: 1.5, facts: f) == 72000)
        #expect(QueueSchedule.startFrame(seconds: -1, facts: f) == 0)
        #expect(QueueSchedule.startFrame(seconds: 99, facts: f) == f.length)
    }

    @Test func noCrossfadeWithoutADuration() {
        #expect(QueueSchedule.crossfadeFrames(seconds: 0, outgoing: facts(10), incoming: facts(10, album: "B"),
                                              consecutive: false) == nil)
    }

    @Test func consecutiveTracksOfAnAlbumStayGapless() {
        #expect(QueueSchedule.crossfadeFrames(seconds: 2, outgoing: facts(10), incoming: facts(10), consecutive: true) == nil)
        // The same album out of order (shuffled), or another artist's album of that name: crossfaded.
        #expect(QueueSchedule.crossfadeFrames(seconds: 2, outgoing: facts(10), incoming: facts(10), consecutive: false) == 96000)
        #expect(QueueSchedule.crossfadeFrames(seconds: 2, outgoing: facts(10), incoming: facts(10, artist: "Y"),
                                              consecutive: true) == 96000)
        // Files without an album are not an album.
        #expect(QueueSchedule.crossfadeFrames(seconds: 2, outgoing: facts(10, album: nil), incoming: facts(10, album: nil),
                                              consecutive: true) == 96000)
    }

    @Test func theOverlapIsAtMostHalfOfEitherItem() {
        #expect(QueueSchedule.crossfadeFrames(seconds: 5, outgoing: facts(4), incoming: facts(10, album: "B"),
                                              consecutive: true) == 96000)
        #expect(QueueSchedule.crossfadeFrames(seconds: 5, outgoing: facts(10), incoming: facts(2, album: "B"),
                                              consecutive: true) == 48000)
    }

    @Test func itemsOfAnotherRateAreCrossfadedInTheOutgoingItemsFrames() {
        // Half of 2 s at 44.1 kHz is 1 s: 48000 frames of the 48 kHz outgoing item.
        #expect(QueueSchedule.crossfadeFrames(seconds: 3, outgoing: facts(10), incoming: facts(2, rate: 44100, album: "B"),
                                              consecutive: false) == 48000)
    }

    @Test func tooShortAnItemIsNotCrossfaded() {
        let tiny = QueueSchedule.ItemFacts(length: 1, rate: 48000)
        #expect(QueueSchedule.crossfadeFrames(seconds: 2, outgoing: facts(10), incoming: tiny, consecutive: false) == nil)
    }

    @Test func anItemWithACrossfadeEndsWhereTheOverlapBegins() {
        let p = QueueSchedule.Partner(key: 2, index: 1, order: second, outgoingPath: "/a.flac", outGain: 1, frames: 1000)
        let planned = QueueSchedule.plan(length: 10000, start: 0, partner: p)
        #expect(planned.end == 9000)
        #expect(planned.then == .crossfade(p))
        // Started inside the overlap (a seek): played to its end, then the next item from its start.
        let late = QueueSchedule.plan(length: 10000, start: 9500, partner: p)
        #expect(late.end == 10000)
        #expect(late.then == .next)
        #expect(QueueSchedule.plan(length: 10000, start: 0, partner: nil).then == .next)
    }

    @Test func theLookaheadIsStaleWhenTheNextItemChanged() {
        var s = QueueSchedule()
        _ = s.append(key: 1, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        // Nothing scheduled after the head: nothing to be stale.
        #expect(!s.lookaheadIsStale(current: 1, next: 3))
        _ = s.append(key: 2, start: 0, end: 100, sourceRate: 48000, order: second, then: .next)
        #expect(!s.lookaheadIsStale(current: 1, next: 2))
        #expect(s.lookaheadIsStale(current: 1, next: 3))
        #expect(s.lookaheadIsStale(current: 1, next: nil))
        #expect(s.lookaheadIsStale(current: 4, next: 2))
        #expect(!s.lookaheadIsStale(current: nil, next: 2))
    }
}
