// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Testing
import TonearmCore
import TonearmNowPlaying

/// Records what targets received (targets run on the dispatching thread).
private final class Log: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ s: String) { entries.withLock { $0.append(s) } }
    var all: [String] { entries.withLock { $0 } }
}

@Suite struct RemoteCommandCenterTests {
    @Test func dispatchCallsTheTargetAndReturnsItsStatus() {
        let center = RemoteCommandCenter()
        let log = Log()
        center.play.addTarget { _ in log.add("play"); return .success }
        center.nextTrack.addTarget { _ in log.add("next"); return .noSuchContent }
        #expect(center.dispatch(center.play) == .success)
        #expect(center.dispatch(center.nextTrack) == .noSuchContent)
        #expect(log.all == ["play", "next"])
    }

    @Test func noTargetAndDisabledCommandsAreReported() {
        let center = RemoteCommandCenter()
        let log = Log()
        #expect(center.dispatch(center.pause) == .noActionableNowPlayingItem)
        #expect(!center.pause.isAvailable)
        center.pause.addTarget { _ in log.add("pause"); return .success }
        #expect(center.pause.isAvailable)
        center.pause.isEnabled = false
        #expect(!center.pause.isAvailable)
        #expect(center.dispatch(center.pause) == .commandFailed)
        #expect(log.all.isEmpty)
        center.pause.isEnabled = true
        #expect(center.dispatch(center.pause) == .success)
        #expect(log.all == ["pause"])
    }

    @Test func removedTargetsAreNotCalled() {
        let center = RemoteCommandCenter()
        let log = Log()
        let a = center.stop.addTarget { _ in log.add("a"); return .commandFailed }
        center.stop.addTarget { _ in log.add("b"); return .success }
        // One success among the targets is a success; all are called in order.
        #expect(center.dispatch(center.stop) == .success)
        center.stop.removeTarget(a)
        #expect(center.dispatch(center.stop) == .success)
        #expect(log.all == ["a", "b", "b"])
        center.stop.removeAllTargets()
        #expect(center.dispatch(center.stop) == .noActionableNowPlayingItem)
    }

    @Test func eventsCarryTheirTypedPayload() {
        let center = RemoteCommandCenter()
        let log = Log()
        center.changePlaybackPosition.addTarget { e in log.add("position \(e.positionTime)"); return .success }
        center.changeRepeatMode.addTarget { e in log.add("repeat \(e.repeatType)"); return .success }
        center.changeShuffleMode.addTarget { e in log.add("shuffle \(e.shuffleType)"); return .success }
        center.skipForward.addTarget { e in log.add("skip \(e.interval)"); return .success }
        center.seekBackward.addTarget { e in log.add("seek \(e.phase)"); return .success }
        center.changePlaybackRate.addTarget { e in log.add("rate \(e.playbackRate)"); return .success }
        center.changeVolume.addTarget { e in log.add("volume \(e.volume)"); return .success }
        center.dispatch(center.changePlaybackPosition, ChangePlaybackPositionCommandEvent(positionTime: 42.5))
        center.dispatch(center.changeRepeatMode, ChangeRepeatModeCommandEvent(repeatType: .one))
        center.dispatch(center.changeShuffleMode, ChangeShuffleModeCommandEvent(shuffleType: .albums))
        center.dispatch(center.skipForward, SkipIntervalCommandEvent(interval: center.skipForward.preferredIntervals[0]))
        center.dispatch(center.seekBackward, SeekCommandEvent(.beginSeeking))
        center.dispatch(center.changePlaybackRate, ChangePlaybackRateCommandEvent(playbackRate: 1.5))
        center.dispatch(center.changeVolume, ChangeVolumeCommandEvent(volume: 0.25))
        #expect(log.all == ["position 42.5", "repeat one", "shuffle albums", "skip 15.0", "seek beginSeeking",
                            "rate 1.5", "volume 0.25"])
        center.changePlaybackRate.supportedPlaybackRates = [2, 0.5, -1, 1]
        #expect(center.changePlaybackRate.supportedPlaybackRates == [0.5, 1, 2])
    }

    @Test func aTemporaryOwnerTakesTheCommandsAndGivesThemBack() {
        let center = RemoteCommandCenter()
        let log = Log()
        center.play.addTarget { _ in log.add("app play"); return .success }
        center.nextTrack.addTarget { _ in log.add("app next"); return .success }

        let video = center.pushOwner("video")
        #expect(center.ownerNames == ["application", "video"])
        center.play.addTarget(owner: video) { _ in log.add("video play"); return .success }
        #expect(center.dispatch(center.play) == .success)
        // The video owner has no next target: the command is unavailable, not the app's.
        #expect(!center.nextTrack.isAvailable)
        #expect(center.dispatch(center.nextTrack) == .noActionableNowPlayingItem)
        #expect(log.all == ["video play"])

        video.release()
        #expect(!video.isActive)
        #expect(center.ownerNames == ["application"])
        #expect(center.nextTrack.isAvailable)
        #expect(center.dispatch(center.play) == .success)
        #expect(center.dispatch(center.nextTrack) == .success)
        #expect(log.all == ["video play", "app play", "app next"])
    }

    @Test func anOwnerThatForgetsToGiveBackLosesTheCommandsWhenItGoes() {
        let center = RemoteCommandCenter()
        let log = Log()
        center.play.addTarget { _ in log.add("app"); return .success }
        do {
            let leaky = center.pushOwner("leaky video player")
            center.play.addTarget(owner: leaky) { _ in log.add("leaky"); return .success }
            center.dispatch(center.play)
        } // never released: its handle goes away here
        #expect(center.ownerNames == ["application"])
        center.dispatch(center.play)
        #expect(log.all == ["leaky", "app"])
    }

    @Test func releasingAnOwnerBelowTheTopKeepsTheTop() {
        let center = RemoteCommandCenter()
        let log = Log()
        let a = center.pushOwner("a")
        let b = center.pushOwner("b")
        center.play.addTarget(owner: a) { _ in log.add("a"); return .success }
        center.play.addTarget(owner: b) { _ in log.add("b"); return .success }
        a.release()
        a.release() // idempotent
        #expect(center.ownerNames == ["application", "b"])
        center.dispatch(center.play)
        b.release()
        #expect(center.dispatch(center.play) == .noActionableNowPlayingItem)
        #expect(log.all == ["b"])
    }

    @Test func changesAreBroadcast() async {
        let center = RemoteCommandCenter()
        let changes = center.changes
        center.play.isEnabled = false
        let token = center.play.addTarget { _ in .success }
        center.play.removeTarget(token)
        var count = 0
        for await _ in changes {
            count += 1
            if count == 3 { break }
        }
        #expect(count == 3)
    }
}

@Suite struct NowPlayingInfoCenterTests {
    @Test func storesTheValueAndBroadcastsEachChangeOnce() async {
        let center = NowPlayingInfoCenter()
        #expect(center.nowPlayingInfo == nil)
        let changes = center.changes
        let info = NowPlayingInfo(title: "Song", artist: "Artist", artwork: Artwork(data: [1, 2, 3], mimeType: "image/png"),
                                  duration: 200, persistentID: 7, queueIndex: 0, queueCount: 3)
        center.nowPlayingInfo = info
        center.nowPlayingInfo = info // unchanged: no event
        center.playbackState = .playing
        center.volume = -3 // clamped
        center.repeatType = .all
        center.shuffleType = .songs
        center.didSeek(to: 12)
        var seen: [NowPlayingInfoCenter.Change] = []
        for await c in changes {
            seen.append(c)
            if seen.count == 6 { break }
        }
        #expect(seen[0] == .nowPlayingInfo(info))
        #expect(seen[1] == .playbackState(.playing))
        #expect(seen[2] == .volume(0))
        #expect(seen[3] == .repeatType(.all))
        #expect(seen[4] == .shuffleType(.songs))
        #expect(seen[5] == .seeked(to: 12))
        #expect(center.nowPlayingInfo?.elapsedTime == 12)
        #expect(center.nowPlayingInfo?.persistentID == 7)
    }

    @Test func theElapsedTimeAdvancesWithTheRateOnlyWhilePlaying() {
        let center = NowPlayingInfoCenter()
        center.playbackState = .paused
        center.nowPlayingInfo = NowPlayingInfo(duration: 100, elapsedTime: 10, playbackRate: 2)
        let s = center.snapshot()
        let later = s.elapsedTimeSetAt.advanced(by: .seconds(3))
        #expect(s.elapsedTime(at: later) == 10) // paused: not advancing
        center.playbackState = .playing
        let p = center.snapshot()
        let t = try! #require(p.elapsedTime(at: p.elapsedTimeSetAt.advanced(by: .seconds(3))))
        #expect(abs(t - 16) < 0.01)
        // Clamped to the duration.
        #expect(p.elapsedTime(at: p.elapsedTimeSetAt.advanced(by: .seconds(500))) == 100)
        center.playbackState = .paused
        let q = center.snapshot()
        #expect(q.elapsedTime(at: q.elapsedTimeSetAt.advanced(by: .seconds(60))) == q.nowPlayingInfo?.elapsedTime)
    }

    /// Issue 23: as on iOS, where `playbackState` does not exist, code that sets only the info's
    /// playback rate and elapsed time is shown playing (rate > 0, the position advancing) and
    /// paused (rate 0, the position held); a state that was set wins.
    @Test func withoutAStateTheInfosRateSaysPlayingOrPaused() async {
        let center = NowPlayingInfoCenter()
        let changes = center.changes
        #expect(center.snapshot().shownPlaybackState == .unknown)
        center.nowPlayingInfo = NowPlayingInfo(title: "Seed", duration: 100, elapsedTime: 10, playbackRate: 1)
        let playing = center.snapshot()
        #expect(playing.playbackState == .unknown && playing.shownPlaybackState == .playing)
        #expect(abs((playing.elapsedTime(at: playing.elapsedTimeSetAt.advanced(by: .seconds(3))) ?? 0) - 13) < 0.01)
        center.nowPlayingInfo = NowPlayingInfo(title: "Seed", duration: 100, elapsedTime: 13, playbackRate: 0)
        let paused = center.snapshot()
        #expect(paused.shownPlaybackState == .paused)
        #expect(paused.elapsedTime(at: paused.elapsedTimeSetAt.advanced(by: .seconds(30))) == 13)
        // An explicit state wins over the rate.
        center.playbackState = .playing
        #expect(center.snapshot().shownPlaybackState == .playing)
        var seen: [NowPlayingInfoCenter.Change] = []
        for await c in changes {
            seen.append(c)
            if seen.count == 5 { break }
        }
        #expect(seen.map { if case .playbackState(let s) = $0 { "\(s)" } else if case .nowPlayingInfo = $0 { "info" } else { "other" } }
                == ["info", "playing", "info", "paused", "playing"])
    }

    @Test func seekingWithoutInfoDoesNothing() {
        let center = NowPlayingInfoCenter()
        center.didSeek(to: 5)
        #expect(center.currentElapsedTime == nil)
    }
}
