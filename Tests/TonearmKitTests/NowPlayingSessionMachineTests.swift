// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmKit

/// Every rule of ``NowPlayingSessionMachine``: when a video player takes the session, the
/// remote commands and Now Playing, and when it gives them back.
@Suite struct NowPlayingSessionMachineTests {
    typealias M = NowPlayingSessionMachine
    static let take: [M.Action] = [.setMoviePlaybackCategory, .activateSession, .takeRemoteControl, .publishNowPlaying]
    static let giveBack: [M.Action] = [.deactivateSession, .giveBackRemoteControl]

    /// A machine that plays a loaded video and owns everything.
    func playingVideo() -> M {
        var m = M()
        _ = m.handle(.item(hasVideo: true))
        #expect(m.handle(.rate(playing: true)) == Self.take)
        return m
    }

    @Test func playingAVideoTakesTheSessionAsMoviePlaybackAndTheRemoteControl() {
        let m = playingVideo()
        #expect(m.ownsRemoteControl && m.sessionActive)
    }

    @Test func aVideoThatTurnsOutToBeOneWhileAlreadyPlayingTakesOnceLoaded() {
        var m = M()
        #expect(m.handle(.item(hasVideo: nil)).isEmpty)  // loading
        #expect(m.handle(.rate(playing: true)).isEmpty)  // not known to be video yet
        #expect(m.handle(.item(hasVideo: true)) == Self.take)
        #expect(m.handle(.item(hasVideo: true)) == [.publishNowPlaying])  // again: nothing new
    }

    @Test func aLoadedVideoThatIsNotPlayingTakesNothing() {
        var m = M()
        #expect(m.handle(.item(hasVideo: true)).isEmpty)
        #expect(m.handle(.itemUpdated).isEmpty)
        #expect(!m.ownsRemoteControl)
    }

    @Test func audioOnlyItemsTakeNothing() {
        var m = M()
        _ = m.handle(.item(hasVideo: false))
        #expect(m.handle(.rate(playing: true)).isEmpty)
        #expect(m.handle(.interruptionBegan).isEmpty)
        #expect(m.handle(.playedToEnd).isEmpty)
        #expect(m.handle(.closed).isEmpty)
        #expect(!m.ownsRemoteControl)
    }

    @Test func pausingKeepsEverythingAndPlayingAgainOnlyPublishes() {
        var m = playingVideo()
        #expect(m.handle(.rate(playing: false)) == [.publishNowPlaying])
        #expect(m.ownsRemoteControl && m.sessionActive)
        #expect(m.handle(.rate(playing: true)) == [.publishNowPlaying])
    }

    @Test func seeksAndNewMetadataArePublishedWhileOwning() {
        var m = playingVideo()
        #expect(m.handle(.itemUpdated) == [.publishNowPlaying])
    }

    @Test func theEndGivesBackAndNotifiesTheOthers() {
        var m = playingVideo()
        #expect(m.handle(.playedToEnd) == Self.giveBack)
        #expect(!m.ownsRemoteControl && !m.sessionActive)
        // Played again from the start: taken again.
        #expect(m.handle(.rate(playing: true)) == Self.take)
    }

    @Test func aFailureGivesBack() {
        var m = playingVideo()
        #expect(m.handle(.failed) == Self.giveBack)
    }

    @Test func aNewItemWithoutVideoGivesBackAndALoadingOneKeepsOwnership() {
        var m = playingVideo()
        #expect(m.handle(.item(hasVideo: nil)) == [.publishNowPlaying])  // the next one loads: kept
        #expect(m.ownsRemoteControl)
        #expect(m.handle(.item(hasVideo: false)) == Self.giveBack)
        #expect(m.handle(.rate(playing: true)).isEmpty)  // an audio item plays: nothing taken
    }

    @Test func closingGivesBackAndIsFinal() {
        var m = playingVideo()
        #expect(m.handle(.closed) == Self.giveBack)
        #expect(m.isClosed)
        #expect(m.handle(.rate(playing: true)).isEmpty)
        #expect(m.handle(.item(hasVideo: true)).isEmpty)
        #expect(m.handle(.closed).isEmpty)
        #expect(!m.ownsRemoteControl)
    }

    @Test func closingANeverPlayedSessionDoesNothing() {
        var m = M()
        _ = m.handle(.item(hasVideo: true))
        #expect(m.handle(.closed).isEmpty)
    }

    @Test func anInterruptionPausesAndItsEndWithShouldResumePlaysOn() {
        var m = playingVideo()
        #expect(m.handle(.interruptionBegan) == [.pausePlayer])
        #expect(!m.sessionActive && m.pausedByInterruption)
        #expect(m.handle(.rate(playing: false)) == [.publishNowPlaying])  // the pause it asked for
        #expect(m.pausedByInterruption)
        #expect(m.handle(.interruptionEnded(shouldResume: true)) == [.activateSession, .resumePlayer])
        #expect(m.sessionActive && !m.pausedByInterruption)
    }

    @Test func anInterruptionEndedWithoutShouldResumeStaysPausedAndPlayReactivates() {
        var m = playingVideo()
        _ = m.handle(.interruptionBegan)
        _ = m.handle(.rate(playing: false))
        #expect(m.handle(.interruptionEnded(shouldResume: false)).isEmpty)
        #expect(m.handle(.rate(playing: true)) == [.activateSession, .publishNowPlaying])
    }

    @Test func anInterruptionOfAPausedVideoResumesNothing() {
        var m = playingVideo()
        _ = m.handle(.rate(playing: false))
        #expect(m.handle(.interruptionBegan).isEmpty)
        #expect(m.handle(.interruptionEnded(shouldResume: true)).isEmpty)
    }

    @Test func theUserPlayingDuringAnInterruptionCancelsTheResume() {
        var m = playingVideo()
        _ = m.handle(.interruptionBegan)
        _ = m.handle(.rate(playing: false))
        #expect(m.handle(.rate(playing: true)) == [.activateSession, .publishNowPlaying])
        #expect(m.handle(.interruptionEnded(shouldResume: true)).isEmpty)
    }

    @Test func anInterruptedVideoThatEndsGivesBackWithoutDeactivatingTwice() {
        var m = playingVideo()
        _ = m.handle(.interruptionBegan)
        #expect(m.handle(.closed) == [.giveBackRemoteControl])
    }
}
