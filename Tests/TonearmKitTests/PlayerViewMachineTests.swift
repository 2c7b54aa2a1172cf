// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmKit
import TonearmWindow

/// Each rule of ``PlayerViewMachine`` alone: window events in, actions out.
@Suite struct PlayerViewMachineTests {
    let m = PlayerViewMachine()

    func state(playing: Bool = true, at t: Double = 30, duration: Double? = 120, volume: Float = 0.5,
               muted: Bool = false, fullScreen: Bool = false) -> PlayerViewMachine.State {
        .init(isPlaying: playing, currentTime: t, duration: duration, volume: volume, isMuted: muted, isFullScreen: fullScreen)
    }

    func key(_ k: VideoWindowKey, repeat r: Bool = false) -> VideoWindowEvent { .key(k, isRepeat: r) }

    @Test func spacePlaysAndPauses() {
        #expect(m.handle(key(.space), state: state(playing: true)) == [.showControls, .pause])
        #expect(m.handle(key(.space), state: state(playing: false)) == [.showControls, .play])
    }

    @Test func arrowsSeekFiveSecondsWithinTheItem() {
        #expect(m.handle(key(.right), state: state(at: 30)) == [.showControls, .seek(to: 35)])
        #expect(m.handle(key(.left), state: state(at: 30)) == [.showControls, .seek(to: 25)])
        #expect(m.handle(key(.left), state: state(at: 2)) == [.showControls, .seek(to: 0)])
        #expect(m.handle(key(.right), state: state(at: 118, duration: 120)) == [.showControls, .seek(to: 120)])
    }

    @Test func aLiveStreamDoesNotSeek() {
        #expect(m.handle(key(.right), state: state(duration: nil)) == [.showControls])
        #expect(m.handle(.controls(.seek(to: 10)), state: state(duration: nil)) == [.showControls])
    }

    @Test func upAndDownChangeTheVolumeWithinItsRange() {
        #expect(m.handle(key(.up), state: state(volume: 0.5)) == [.showControls, .setVolume(0.55)])
        #expect(m.handle(key(.down), state: state(volume: 0.5)) == [.showControls, .setVolume(0.45)])
        #expect(m.handle(key(.up), state: state(volume: 0.98)) == [.showControls, .setVolume(1)])
        #expect(m.handle(key(.up), state: state(volume: 1)) == [.showControls])
        #expect(m.handle(key(.down), state: state(volume: 0)) == [.showControls])
    }

    @Test func turningTheVolumeUpUnmutes() {
        #expect(m.handle(key(.up), state: state(volume: 0.5, muted: true)) == [.showControls, .setMuted(false), .setVolume(0.55)])
        #expect(m.handle(key(.down), state: state(volume: 0.5, muted: true)) == [.showControls, .setVolume(0.45)])
    }

    @Test func mMutesAndFTurnsFullScreen() {
        #expect(m.handle(key(.m), state: state(muted: false)) == [.showControls, .setMuted(true)])
        #expect(m.handle(key(.m), state: state(muted: true)) == [.showControls, .setMuted(false)])
        #expect(m.handle(key(.f), state: state(fullScreen: false)) == [.showControls, .setFullScreen(true)])
        #expect(m.handle(key(.f), state: state(fullScreen: true)) == [.showControls, .setFullScreen(false)])
    }

    @Test func jCyclesTheSubtitle() {
        #expect(m.handle(key(.j), state: state()) == [.showControls, .cycleSubtitle])
    }

    @Test func qEscapeAndTheCloseButtonClose() {
        #expect(m.handle(key(.q), state: state()) == [.showControls, .close])
        #expect(m.handle(key(.escape), state: state()) == [.showControls, .close])
        #expect(m.handle(.closeRequested, state: state()) == [.close])
    }

    @Test func aHeldKeyRepeatsOnlyTheArrows() {
        #expect(m.handle(key(.right, repeat: true), state: state(at: 30)) == [.showControls, .seek(to: 35)])
        #expect(m.handle(key(.up, repeat: true), state: state(volume: 0.5)) == [.showControls, .setVolume(0.55)])
        for k in [VideoWindowKey.space, .m, .f, .q, .escape, .j] {
            #expect(m.handle(key(k, repeat: true), state: state()).isEmpty, "\(k)")
        }
    }

    @Test func movementShowsTheControlsAndClicksDoWhatTheyShow() {
        #expect(m.handle(.mouseMoved(x: 3, y: 4), state: state()) == [.showControls])
        #expect(m.handle(.controls(.playPause), state: state(playing: true)) == [.showControls, .pause])
        #expect(m.handle(.controls(.seek(to: 60)), state: state()) == [.showControls, .seek(to: 60)])
        #expect(m.handle(.controls(.seek(to: 500)), state: state(duration: 120)) == [.showControls, .seek(to: 120)])
        #expect(m.handle(.resized(width: 10, height: 10), state: state()).isEmpty)
        #expect(m.handle(.closed, state: state()).isEmpty)
    }
}
