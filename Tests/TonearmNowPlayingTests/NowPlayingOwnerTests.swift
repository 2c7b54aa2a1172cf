// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore
@testable import TonearmNowPlaying

/// The owner stack as a value: every rule of who is shown and which changes it makes.
@Suite struct NowPlayingOwnerStackTests {
    let t0 = ContinuousClock.now
    let song = NowPlayingInfo(title: "Song", duration: 200, elapsedTime: 30, playbackRate: 1, persistentID: 1)
    let clip = NowPlayingInfo(title: "Clip", duration: 10, elapsedTime: 0, playbackRate: 1, persistentID: 2)

    @Test func theApplicationIsShownAlone() {
        var s = NowPlayingOwnerStack(now: t0)
        #expect(s.names == ["application"])
        // With no state set, the info's rate (1) shows it playing, as on iOS; setting the same
        // state explicitly then changes nothing shown, setting another does.
        #expect(s.apply(.nowPlayingInfo(song), to: NowPlayingOwnerStack.base, now: t0) == [.nowPlayingInfo(song), .playbackState(.playing)])
        #expect(s.apply(.playbackState(.playing), to: NowPlayingOwnerStack.base, now: t0) == [])
        #expect(s.apply(.playbackState(.paused), to: NowPlayingOwnerStack.base, now: t0) == [.playbackState(.paused)])
        #expect(s.apply(.playbackState(.playing), to: NowPlayingOwnerStack.base, now: t0) == [.playbackState(.playing)])
        #expect(s.shown.nowPlayingInfo == song)
        // The same value again: nothing shown changes.
        #expect(s.apply(.nowPlayingInfo(song), to: NowPlayingOwnerStack.base, now: t0).isEmpty)
    }

    @Test func pushingShowsTheNewOwnersEmptyStateAndReleasingShowsTheOneBelowAsItIsThen() {
        var s = NowPlayingOwnerStack(now: t0)
        _ = s.apply(.nowPlayingInfo(song), to: NowPlayingOwnerStack.base, now: t0)
        _ = s.apply(.playbackState(.playing), to: NowPlayingOwnerStack.base, now: t0)
        _ = s.apply(.volume(0.5), to: NowPlayingOwnerStack.base, now: t0)
        let (video, pushed) = s.push(name: "video", now: t0)
        #expect(pushed == [.nowPlayingInfo(nil), .playbackState(.unknown), .volume(1)])
        #expect(s.names == ["application", "video"])
        #expect(s.apply(.nowPlayingInfo(clip), to: video, now: t0) == [.nowPlayingInfo(clip), .playbackState(.playing)])
        // The application's edits while hidden are kept, not shown.
        #expect(s.apply(.playbackState(.interrupted), to: NowPlayingOwnerStack.base, now: t0).isEmpty)
        #expect(s.shown.nowPlayingInfo == clip)
        let released = s.release(video, now: t0)
        #expect(released == [.nowPlayingInfo(song), .playbackState(.interrupted), .volume(0.5)])
        #expect(s.shown.nowPlayingInfo?.title == "Song")
        #expect(s.names == ["application"])
        // Released twice, or the base: nothing.
        #expect(s.release(video, now: t0).isEmpty)
        #expect(s.release(NowPlayingOwnerStack.base, now: t0).isEmpty)
        #expect(s.names == ["application"])
    }

    @Test func releasingAnOwnerBelowTheTopChangesNothingShown() {
        var s = NowPlayingOwnerStack(now: t0)
        let (a, _) = s.push(name: "a", now: t0)
        _ = s.apply(.nowPlayingInfo(song), to: a, now: t0)
        let (b, _) = s.push(name: "b", now: t0)
        _ = s.apply(.nowPlayingInfo(clip), to: b, now: t0)
        #expect(s.release(a, now: t0).isEmpty)
        #expect(s.names == ["application", "b"])
        #expect(s.shown.nowPlayingInfo == clip)
        #expect(s.apply(.nowPlayingInfo(song), to: a, now: t0).isEmpty)  // released: ignored
    }

    @Test func aSeekIsShownOnlyForTheOwnerOnTop() {
        var s = NowPlayingOwnerStack(now: t0)
        _ = s.apply(.nowPlayingInfo(song), to: NowPlayingOwnerStack.base, now: t0)
        let (video, _) = s.push(name: "video", now: t0)
        #expect(s.apply(.seek(50), to: NowPlayingOwnerStack.base, now: t0).isEmpty)
        #expect(s.apply(.seek(3), to: video, now: t0).isEmpty)  // no info: nothing
        _ = s.apply(.nowPlayingInfo(clip), to: video, now: t0)
        #expect(s.apply(.seek(3), to: video, now: t0) == [.seeked(to: 3)])
        #expect(s.release(video, now: t0).first == .nowPlayingInfo(NowPlayingInfo(title: "Song", duration: 200, elapsedTime: 50,
                                                                                     playbackRate: 1, persistentID: 1)))
    }

    @Test func aPlayingOwnerComesBackAtItsPositionNow() {
        var s = NowPlayingOwnerStack(now: t0)
        _ = s.apply(.nowPlayingInfo(song), to: NowPlayingOwnerStack.base, now: t0)
        _ = s.apply(.playbackState(.playing), to: NowPlayingOwnerStack.base, now: t0)
        let (video, _) = s.push(name: "video", now: t0)
        _ = s.release(video, now: t0.advanced(by: .seconds(10)))
        let t = s.shown.elapsedTime(at: t0.advanced(by: .seconds(10)))
        #expect(t.map { abs($0 - 40) < 0.001 } == true)
    }
}

@Suite struct NowPlayingInfoOwnerTests {
    @Test func anOwnerShowsItsStateAndGivesTheApplicationsBackWhenReleased() async {
        let center = NowPlayingInfoCenter()
        center.nowPlayingInfo = NowPlayingInfo(title: "Song")
        center.playbackState = .playing
        let changes = center.changes
        let owner = center.pushOwner("video")
        #expect(owner.isShown && owner.isActive)
        owner.nowPlayingInfo = NowPlayingInfo(title: "Clip")
        owner.playbackState = .playing
        #expect(center.snapshot().nowPlayingInfo?.title == "Clip")
        #expect(center.nowPlayingInfo?.title == "Song")  // the application's, kept
        owner.release()
        #expect(!owner.isActive)
        #expect(center.snapshot().nowPlayingInfo?.title == "Song")
        var seen: [NowPlayingInfoCenter.Change] = []
        for await c in changes {
            seen.append(c)
            if seen.count == 5 { break }
        }
        // Pushed: the empty owner; its info (rate 1, so shown playing — its explicit `.playing`
        // then changes nothing shown); released: the song again (playing on both sides, so only
        // the info changes; its position advanced while it played).
        #expect(seen.count == 5)
        #expect(Array(seen.prefix(4)) == [.nowPlayingInfo(nil), .playbackState(.unknown), .nowPlayingInfo(NowPlayingInfo(title: "Clip")),
                                          .playbackState(.playing)])
        if case .nowPlayingInfo(let last) = seen.last { #expect(last?.title == "Song") } else { Issue.record("\(seen)") }
    }

    @Test func anOwnerThatIsDeallocatedGivesNowPlayingBack() {
        let center = NowPlayingInfoCenter()
        center.nowPlayingInfo = NowPlayingInfo(title: "Song")
        do {
            let owner = center.pushOwner("video")
            owner.nowPlayingInfo = NowPlayingInfo(title: "Clip")
            #expect(center.snapshot().nowPlayingInfo?.title == "Clip")
            #expect(center.ownerNames == ["application", "video"])
        }
        #expect(center.ownerNames == ["application"])
        #expect(center.snapshot().nowPlayingInfo?.title == "Song")
    }
}
