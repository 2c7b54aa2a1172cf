// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmWindow

/// The built-in controls as a value: when they show and hide, and what is drawn where for a state.
@Suite struct ControlsOverlayTests {
    let state = ControlsState(isPlaying: true, currentTime: 83, duration: 300, bufferedUntil: 150, volume: 0.5)

    @Test func activityShowsThemAndTheyHideAfterTheDelay() {
        var overlay = ControlsOverlay(hideDelay: 3)
        #expect(!overlay.isVisible(at: 0))
        #expect(overlay.rectangles(for: state, width: 640, height: 360, at: 0).isEmpty)
        #expect(overlay.hideTime(after: 0) == nil)
        overlay.activity(at: 10)
        #expect(overlay.isVisible(at: 10))
        #expect(overlay.isVisible(at: 12.9))
        #expect(!overlay.isVisible(at: 13))
        #expect(overlay.hideTime(after: 11) == 13)
        #expect(!overlay.rectangles(for: state, width: 640, height: 360, at: 11).isEmpty)
        // More activity pushes the hiding back.
        overlay.activity(at: 12)
        #expect(overlay.isVisible(at: 14.5))
        #expect(overlay.hideTime(after: 14.5) == 15)
        overlay.hide()
        #expect(!overlay.isVisible(at: 14.5))
    }

    func parts(_ rects: [OverlayRect], _ part: OverlayRect.Part) -> [OverlayRect] { rects.filter { $0.part == part } }

    @Test func theSeekBarShowsThePlayedAndTheBufferedParts() throws {
        let rects = ControlsOverlay.layout(state, width: 640, height: 360)
        let panel = try #require(parts(rects, .panel).first)
        #expect(panel == OverlayRect(x: 0, y: 320, width: 640, height: 40, color: .panel, part: .panel))
        let track = try #require(parts(rects, .seekTrack).first)
        let buffered = try #require(parts(rects, .seekBuffered).first)
        let played = try #require(parts(rects, .seekPlayed).first)
        #expect(track.y > panel.y && track.y + track.height < 360)
        #expect(buffered.x == track.x && played.x == track.x)
        #expect(abs(Double(buffered.width) - Double(track.width) * 150 / 300) <= 0.5)
        #expect(abs(Double(played.width) - Double(track.width) * 83 / 300) <= 0.5)
        // Drawn in order: the track, then the buffered part over it, then the played part.
        let order = rects.map(\.part)
        #expect(order.firstIndex(of: .seekTrack)! < order.firstIndex(of: .seekBuffered)!)
        #expect(order.firstIndex(of: .seekBuffered)! < order.firstIndex(of: .seekPlayed)!)
        // A local file (all of it there): buffered is the whole track.
        var local = state
        local.bufferedUntil = nil
        let all = try #require(parts(ControlsOverlay.layout(local, width: 640, height: 360), .seekBuffered).first)
        #expect(all.width == track.width)
    }

    @Test func theTimesAreWrittenInTheDigitFont() throws {
        let rects = ControlsOverlay.layout(state, width: 640, height: 360)
        let elapsed = parts(rects, .elapsed), remaining = parts(rects, .remaining)
        let ex = try #require(elapsed.map(\.x).min()), ey = try #require(elapsed.map(\.y).min())
        #expect(DigitFont.read(elapsed, x: ex, y: ey, scale: 2, count: 4) == "1:23")
        let rx = try #require(remaining.map(\.x).min()), ry = try #require(remaining.map(\.y).min())
        #expect(DigitFont.read(remaining, x: rx, y: ry, scale: 2, count: 5) == "-3:37")
        // Every glyph reads back as itself.
        let all = "0123456789:-"
        #expect(DigitFont.read(DigitFont.rectangles(all, x: 5, y: 7, scale: 3, color: .text, part: .elapsed),
                               x: 5, y: 7, scale: 3, count: all.count) == all)
        #expect(DigitFont.width(of: "1:23", scale: 2) == (4 * 4 - 1) * 2)
    }

    @Test func clockText() {
        #expect(ControlsOverlay.clock(0) == "0:00")
        #expect(ControlsOverlay.clock(59.99) == "0:59")
        #expect(ControlsOverlay.clock(83) == "1:23")
        #expect(ControlsOverlay.clock(3600 + 62) == "1:01:02")
        #expect(ControlsOverlay.clock(-5) == "0:00")
        #expect(ControlsOverlay.clock(.nan) == "0:00")
    }

    @Test func aLiveStreamHasNoRemainingTimeAndNoPlayedPart() {
        let live = ControlsState(isPlaying: true, currentTime: 42, duration: nil)
        let rects = ControlsOverlay.layout(live, width: 640, height: 360)
        #expect(parts(rects, .remaining).isEmpty)
        #expect(parts(rects, .seekPlayed).isEmpty)
        #expect(!parts(rects, .seekTrack).isEmpty)
        #expect(ControlsOverlay.hit(x: 320, y: 340, state: live, width: 640, height: 360) == nil)
    }

    @Test func theGlyphIsPauseWhilePlayingAndPlayWhilePaused() {
        let pause = parts(ControlsOverlay.layout(state, width: 640, height: 360), .playPause)
        #expect(pause.count == 2 && pause.allSatisfy { $0.height == ControlsOverlay.glyphSize })
        var paused = state
        paused.isPlaying = false
        let play = parts(ControlsOverlay.layout(paused, width: 640, height: 360), .playPause)
        // A triangle pointing right: one row each, widest in the middle, narrow at the tips.
        #expect(play.count == ControlsOverlay.glyphSize)
        let widths = play.map(\.width)
        #expect(widths.first! < widths[widths.count / 2] && widths.last! < widths[widths.count / 2])
        #expect(Set(play.map(\.x)).count == 1)
    }

    @Test func theVolumeShowsItsLevelOrMuted() throws {
        let level = try #require(parts(ControlsOverlay.layout(state, width: 640, height: 360), .volumeLevel).first)
        #expect(level.width == ControlsOverlay.volumeWidth / 2 && level.color == .played)
        var muted = state
        muted.isMuted = true
        let m = try #require(parts(ControlsOverlay.layout(muted, width: 640, height: 360), .volumeLevel).first)
        #expect(m.color == .muted)
    }

    /// A narrow window keeps a seek bar: the volume makes room first (a 160-pixel video), then
    /// the remaining time; a wide one has all.
    @Test func aNarrowWindowKeepsTheSeekBar() throws {
        let small = ControlsState(isPlaying: true, currentTime: 1, duration: 30, volume: 1)
        let at160 = ControlsOverlay.layout(small, width: 160, height: 90)
        let track = try #require(parts(at160, .seekTrack).first, "a 160-pixel window has a seek bar")
        #expect(track.width >= ControlsOverlay.minimumSeekWidth)
        #expect(parts(at160, .volumeTrack).isEmpty && !parts(at160, .remaining).isEmpty)
        #expect(ControlsOverlay.hit(x: track.x + track.width / 2, y: track.y, state: small, width: 160, height: 90) != nil)
        let at120 = ControlsOverlay.layout(small, width: 120, height: 90)
        #expect((parts(at120, .seekTrack).first?.width ?? 0) >= ControlsOverlay.minimumSeekWidth)
        #expect(parts(at120, .volumeTrack).isEmpty && parts(at120, .remaining).isEmpty)
        let wide = ControlsOverlay.layout(small, width: 640, height: 360)
        #expect(!parts(wide, .volumeTrack).isEmpty && !parts(wide, .remaining).isEmpty)
    }

    @Test func clicksSeekOnTheBarAndPlayPauseOnTheGlyph() throws {
        let rects = ControlsOverlay.layout(state, width: 640, height: 360)
        let track = try #require(parts(rects, .seekTrack).first)
        let y = track.y + 1
        #expect(ControlsOverlay.hit(x: track.x, y: y, state: state, width: 640, height: 360) == .seek(to: 0))
        #expect(ControlsOverlay.hit(x: track.x + track.width - 1, y: y, state: state, width: 640, height: 360) == .seek(to: 300))
        guard case .seek(let mid) = ControlsOverlay.hit(x: track.x + (track.width - 1) / 2, y: 345, state: state, width: 640, height: 360) else {
            Issue.record("no seek in the middle of the bar")
            return
        }
        #expect(abs(mid - 150) < 300.0 / Double(track.width))
        #expect(ControlsOverlay.hit(x: 15, y: 340, state: state, width: 640, height: 360) == .playPause)
        #expect(ControlsOverlay.hit(x: 320, y: 100, state: state, width: 640, height: 360) == nil)  // over the video
    }

    @Test func aTinyWindowStillGetsAPanelAndNoNegativeSizes() {
        for (w, h) in [(1, 1), (60, 20), (100, 40)] {
            let rects = ControlsOverlay.layout(state, width: w, height: h)
            #expect(!rects.isEmpty)
            #expect(rects.allSatisfy { $0.width >= 0 && $0.height >= 0 })
        }
        #expect(ControlsOverlay.layout(state, width: 0, height: 100).isEmpty)
    }
}
