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
        #expect(s.rendered(token: a.token, epoch: a.epoch, engineRate: 48000) == .advanced(ended: 1, order: second, current: 2))
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
                           then: .rest(.init(key: 2, index: 1, order: second), frame: 4800))
        _ = s.append(key: 2, start: 4800, end: 48000, sourceRate: 48000, order: second, then: .next)
        #expect(s.rendered(token: mix.token, epoch: mix.epoch, engineRate: 48000) == .sameItem(order: second, current: 2))
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
        let p = QueueSchedule.Partner(place: .init(key: 2, index: 1, order: second), outgoingPath: "/a.flac", outGain: 1, frames: 1000)
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

    /// A restart that keeps what the output holds, with the join A→B rendered (not heard) and C
    /// read ahead: A stays with its join, B is cut where the node had rendered to (0.25 s of it,
    /// from a 44.1 kHz source on a 48 kHz engine), C is forgotten, and the timeline moves to the
    /// node's restart (at frame 0): A's join is where it was relative to what is heard. The cut
    /// and the rest placed after it are one item (its duration, the look-ahead after it).
    @Test func aRestartKeepsWhatWasRenderedAndCutsTheSegmentTheNodeRenders() throws {
        var s = QueueSchedule()
        s.beginHead(playerFrame: 1000)
        let a = s.append(key: 1, start: 0, end: 48000, sourceRate: 48000, order: order, then: .next)
        _ = s.append(key: 2, start: 0, end: 44100, sourceRate: 44100, order: second, then: .next)
        _ = s.append(key: 3, start: 0, end: 48000, sourceRate: 48000, order: third, then: .next)
        let marked = s.markRendered(token: a.token, epoch: a.epoch)
        #expect(marked)
        #expect(s.renderingKey == 2)
        let kept = s.keepRendered(upTo: 1000 + 48000 + 12000, restartingAt: 0, engineRate: 48000)
        let cut = try #require(kept)
        #expect(cut == .init(key: 2, order: second, seconds: 0.25))
        #expect(s.segments.map(\.key) == [1, 2])
        #expect(s.segments[1].frames == 11025 && s.segments[1].then == .restarted)
        #expect(s.allRendered && s.renderingKey == nil)
        #expect(s.joinFrame(engineRate: 48000) == -12000)
        #expect(s.consumed(token: a.token, epoch: a.epoch) == nil, "the completions of before are stale")
        let rest = s.append(key: 2, start: 11025, end: 44100, sourceRate: 44100, order: second, then: .next)
        #expect(s.renderingKey == 2)
        #expect(s.joinHeard(engineRate: 48000) == .advanced(ended: 1, order: second, current: 2))
        #expect(s.currentDuration == 1, "B's duration, not its cut")
        #expect(!s.lookaheadIsStale(current: 2, next: 3), "the rest of B is not the item after B")
        _ = s.append(key: 1, start: 0, end: 48000, sourceRate: 48000, order: order, then: .next)
        #expect(s.lookaheadIsStale(current: 2, next: 3))
        #expect(s.joinHeard(engineRate: 48000) == .sameItem(order: second, current: 2))
        #expect(s.segments.first?.token == rest.token)
        // Nothing left to render (the queue's end rendered): nothing to keep, nothing changes.
        var end = QueueSchedule()
        let only = end.append(key: 1, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        _ = end.markRendered(token: only.token, epoch: only.epoch)
        #expect(end.keepRendered(upTo: 100, restartingAt: 0, engineRate: 48000) == nil)
        #expect(end.epoch == only.epoch)
    }

    /// The node runs ahead of its completions: it has rendered into B while A's completion has
    /// not come yet. The restart cuts B — the segment the node renders — and keeps A whole as
    /// rendered (its late completion is stale); nothing past what the node rendered is kept, so
    /// what follows the cut is B's rest, not B from its start (which would be heard twice: 22 s
    /// of a 30 s queue written twice after 12 restarts through the file output before the fix).
    /// Everything rendered (the queue's end): no cut, the epoch stays, the end's completion holds.
    @Test func aRestartCutsTheSegmentTheNodeRendersEvenBeforeTheCompletionsBeforeIt() throws {
        var s = QueueSchedule()
        s.beginHead(playerFrame: 0)
        let a = s.append(key: 1, start: 0, end: 48000, sourceRate: 48000, order: order, then: .next)
        _ = s.append(key: 2, start: 0, end: 48000, sourceRate: 48000, order: second, then: .next)
        #expect(s.segment(renderedAt: 60000, engineRate: 48000)?.index == 1)
        #expect(s.segment(renderedAt: 96000, engineRate: 48000) == nil)
        let kept = s.keepRendered(upTo: 60000, restartingAt: 0, engineRate: 48000)
        let cut = try #require(kept)
        #expect(cut == .init(key: 2, order: second, seconds: 0.25))
        #expect(s.segments.map(\.frames) == [48000, 12000] && s.renderedUnheard == 2)
        #expect(s.joinFrame(engineRate: 48000) == -12000)
        let late = s.markRendered(token: a.token, epoch: a.epoch)
        #expect(!late, "A's completion from before the restart is stale")
        var end = QueueSchedule()
        let only = end.append(key: 1, start: 0, end: 100, sourceRate: 48000, order: order, then: .next)
        #expect(end.keepRendered(upTo: 100, restartingAt: 0, engineRate: 48000) == nil)
        #expect(end.epoch == only.epoch && end.segments.count == 1)
    }

    // MARK: Placing items: where each item's frames go on the node

    var third: PlayOrder {
        var o = second
        _ = o.advanceOnEnd()
        return o
    }

    func place(_ key: UInt64, _ index: Int, _ order: PlayOrder) -> QueueSchedule.Place {
        .init(key: key, index: index, order: order)
    }

    @Test func withoutACrossfadeAnItemIsPlacedWholeAndTheNextFollowsGapless() {
        var s = QueueSchedule()
        let a = facts(2, album: "A")
        let head = s.placeHead(place(1, 0, order), facts: a, path: "/a.flac", at: 0, playerFrame: 500,
                               incoming: .init(place: place(2, 1, second), facts: facts(3, album: "B")), settings: .init())
        #expect(head.start == 0 && head.end == a.length && head.gain == 1)
        #expect(s.segments.last?.then == .next)
        // What follows goes behind it from its first frame, its whole length: one frame after the other.
        let b = facts(3, album: "B")
        let next = s.place(place(2, 1, second), facts: b, path: "/b.flac", from: 0, incoming: nil, settings: .init())
        #expect(next.start == 0 && next.end == b.length)
        #expect(next.token != head.token && next.epoch == head.epoch)
        #expect(s.segments.map(\.key) == [1, 2])
        #expect(s.rendered(token: head.token, epoch: head.epoch, engineRate: 48000) == .advanced(ended: 1, order: second, current: 2))
        #expect(s.headStartPlayerFrame == 500 + a.length)
    }

    @Test func theHeadStartsAtItsOffsetClampedToTheItem() {
        var s = QueueSchedule()
        let a = facts(2, rate: 44100)
        let p = s.placeHead(place(1, 0, order), facts: a, path: "/a.flac", at: 1.5, playerFrame: 0, incoming: nil, settings: .init())
        #expect(p.start == 66150 && p.end == a.length)
        #expect(s.currentTime(playerSampleTime: 0, engineRate: 44100) == 1.5)
        let past = s.placeHead(place(1, 0, order), facts: a, path: "/a.flac", at: 9, playerFrame: 0, incoming: nil, settings: .init())
        #expect(past.start == a.length && past.frameCount == 0)
        // A new head: what was placed before is stale.
        #expect(past.epoch == p.epoch + 1)
        #expect(s.segments.count == 1)
    }

    @Test func aCrossfadedItemEndsWhereTheOverlapBeginsAndTheOverlapLeadsIntoTheRest() {
        var s = QueueSchedule()
        let a = facts(10, album: "A")
        let b = facts(8, album: "B")
        let settings = QueueSchedule.Settings(crossfade: 2)
        let head = s.placeHead(place(1, 0, order), facts: a, path: "/a.flac", at: 0, playerFrame: 0,
                               incoming: .init(place: place(2, 1, second), facts: b), settings: settings)
        #expect(head.end == a.length - 96000)
        guard case .crossfade(let partner)? = s.segments.last?.then else {
            Issue.record("no crossfade planned: \(String(describing: s.segments.last?.then))")
            return
        }
        #expect(partner == .init(place: place(2, 1, second), outgoingPath: "/a.flac", outGain: 1, frames: 96000))
        #expect(s.consumed(token: head.token, epoch: head.epoch) != nil)
        let overlap = s.placeOverlap(partner, frames: 96000, sourceRate: 48000, incomingFrames: 96000)
        #expect(overlap.start == 0 && overlap.end == 96000 && overlap.gain == 1)
        #expect(s.segments.last?.then == .rest(place(2, 1, second), frame: 96000))
        // The rest of the incoming item from where the overlap left it, to its end.
        let rest = s.place(place(2, 1, second), facts: b, path: "/b.flac", from: 96000, incoming: nil, settings: settings)
        #expect(rest.start == 96000 && rest.end == b.length)
        #expect(s.rendered(token: head.token, epoch: head.epoch, engineRate: 48000) == .advanced(ended: 1, order: second, current: 2))
        #expect(s.rendered(token: overlap.token, epoch: overlap.epoch, engineRate: 48000) == .sameItem(order: second, current: 2))
    }

    @Test func aHeadStartedInsideTheOverlapPlaysToItsEndWithoutACrossfade() {
        var s = QueueSchedule()
        let a = facts(10, album: "A")
        let p = s.placeHead(place(1, 0, order), facts: a, path: "/a.flac", at: 9, playerFrame: 0,
                            incoming: .init(place: place(2, 1, second), facts: facts(8, album: "B")), settings: .init(crossfade: 2))
        #expect(p.start == 9 * 48000 && p.end == a.length)
        #expect(s.segments.last?.then == .next)
    }

    @Test func theNextTrackOfTheSameAlbumStaysGaplessButAnotherItemOfItIsCrossfaded() {
        var s = QueueSchedule()
        let a = facts(10)
        let settings = QueueSchedule.Settings(crossfade: 2)
        let next = s.place(place(1, 0, order), facts: a, path: "/a.flac", from: 0,
                           incoming: .init(place: place(2, 1, second), facts: facts(8)), settings: settings)
        #expect(next.end == a.length)
        // Shuffled: the same album's track 3 after track 1 is crossfaded.
        let skipped = s.place(place(1, 0, order), facts: a, path: "/a.flac", from: 0,
                              incoming: .init(place: place(3, 2, third), facts: facts(8)), settings: settings)
        #expect(skipped.end == a.length - 96000)
    }

    @Test func anItemIsPlacedAtItsReplayGainAndTheCrossfadeCarriesIt() {
        var s = QueueSchedule()
        var a = facts(10, album: "A")
        a.replayGain = ReplayGain(trackGain: -6, trackPeak: 0.5)
        let settings = QueueSchedule.Settings(crossfade: 1, replayGain: .track, preamp: 0)
        let expected = ReplayGainMode.track.linearGain(for: a.replayGain, preamp: 0)
        #expect(expected < 0.6 && expected > 0.4)
        let p = s.place(place(1, 0, order), facts: a, path: "/a.flac", from: 0,
                        incoming: .init(place: place(2, 1, second), facts: facts(8, album: "B")), settings: settings)
        #expect(p.gain == expected)
        guard case .crossfade(let partner)? = s.segments.last?.then else {
            Issue.record("no crossfade planned")
            return
        }
        #expect(partner.outGain == expected)
        let off = s.place(place(1, 0, order), facts: a, path: "/a.flac", from: 0, incoming: nil, settings: .init())
        #expect(off.gain == 1)
    }
}
