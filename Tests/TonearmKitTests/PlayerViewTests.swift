// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmKit
import TonearmNowPlaying
import TonearmPlayback
import TonearmRender
import TonearmTestSupport
import TonearmWindow

/// PlayerView on a private Xvfb display: the window opens at the video's size titled with the
/// file name, and real key presses and close requests (xclient.py, to the window found by that
/// title) pause, seek and close; closing stops the player. Waits are on the player's events,
/// the window's presentations and run()'s return, with deadlines.
@Suite(.serialized) struct PlayerViewTests {
    /// `testsrc` 160×90 with a sine, `seconds` long.
    static func clip(_ dir: TempDir, seconds: Double) throws -> String {
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: seconds)
        return clip
    }

    /// Opens a view for a player of `clip`, runs it and plays until the first frame is drawn.
    static func openAndPlay(_ clip: String, options: PlayerView.Options = .init()) async throws
        -> (Player, PlayerView, Task<Void, Never>) {
        let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: clip)), output: { NullOutput() })
        let view = try await PlayerView.open(for: player, options: options)
        let running = Task { await view.run() }
        _ = try await playerEvent(player, "playing", after: { player.play() }) { $0 == .timeControlStatusChanged(.playing) }
        _ = try #require(view.window.waitForPresentation(timeout: 30) { $0.frameTime != nil }, "no frame was drawn")
        return (player, view, running)
    }

    /// Waits (with a deadline) for `run()` to return.
    static func ended(_ running: Task<Void, Never>) async throws {
        try await withDeadline(20, "PlayerView.run() to return") { await running.value }
    }

    @Test func spacePausesRightSeeksFiveSecondsAndQClosesAndStopsThePlayer() async throws {
        let dir = try TempDir("kit-view-keys")
        defer { dir.remove() }
        let clip = try Self.clip(dir, seconds: 12)
        try await KitDisplay.with { display in
            let (player, view, running) = try await Self.openAndPlay(clip)
            defer { view.close() }  // before the display goes, whatever happened
            let first = try #require(view.window.lastPresentation)
            #expect(first.outputWidth == 160 && first.outputHeight == 90, "the video's size: \(first.outputWidth)×\(first.outputHeight)")
            #expect(!view.isClosed)

            // The keys go to the window titled with the file name.
            _ = try await playerEvent(player, "paused by space", after: {
                try display.send(toWindowTitled: "clip.mp4", ["key:space"])
            }) { $0 == .timeControlStatusChanged(.paused) }
            #expect(player.rate == 0)
            let before = player.currentTime()
            let seeked = try await playerEvent(player, "the seek of →", after: {
                try display.send(toWindowTitled: "clip.mp4", ["key:Right"])
            }) { if case .seeked = $0 { true } else { false } }
            guard case .seeked(let to) = seeked else { return }
            #expect(abs(to - (before + 5)) < 0.05, "→ from \(before) s went to \(to) s")
            #expect(player.rate == 0, "a seek keeps the pause")
            _ = try? display.screenshot(keepingPNGAt: KitDisplay.keep("view-paused"))

            // m mutes, f goes full screen and back.
            try display.send(toWindowTitled: "clip.mp4", ["key:m", "key:f"])
            let full = try #require(view.window.waitForPresentation(timeout: 20) { $0.isFullScreen }, "f did not go full screen")
            #expect(full.outputWidth == 640 && full.outputHeight == 480)
            #expect(player.isMuted, "m mutes (taken before f, in order)")
            try display.send(toWindowTitled: "clip.mp4", ["key:f"])
            _ = try #require(view.window.waitForPresentation(timeout: 20) { !$0.isFullScreen && $0.number > full.number })

            // Playing again, then q: the window closes, run() returns, the player stops.
            _ = try await playerEvent(player, "playing by space", after: {
                try display.send(toWindowTitled: "clip.mp4", ["key:space"])
            }) { $0 == .timeControlStatusChanged(.playing) }
            try display.send(toWindowTitled: "clip.mp4", ["key:q"])
            try await Self.ended(running)
            #expect(view.isClosed)
            #expect(!view.window.isOpen)
            #expect(player.rate == 0, "closing the window stops the player")
            #expect(view.layer.player == nil, "the player is detached from the window")
        }
    }

    @Test func theCloseButtonClosesTheWindowAndStopsThePlayer() async throws {
        let dir = try TempDir("kit-view-close")
        defer { dir.remove() }
        let clip = try Self.clip(dir, seconds: 6)
        try await KitDisplay.with { display in
            let (player, view, running) = try await Self.openAndPlay(clip)
            defer { view.close() }  // before the display goes, whatever happened
            #expect(player.rate != 0)
            try display.send(toWindowTitled: "clip.mp4", ["close"])
            try await Self.ended(running)
            #expect(view.isClosed && !view.window.isOpen)
            #expect(player.rate == 0)
            // close() after the window closed is harmless.
            view.close()
            // The window is given back: this process can open another (SDL's video is one a process).
            let again = try VideoWindow(.init(title: "again", width: 64, height: 36))
            again.close()
        }
    }

    /// `PlayerView.open` has the player open and decode its picture while the window opens
    /// (`EarlyFrames` is its renderer meanwhile), then draws that frame: here the paused player
    /// presents its first frame with no window anywhere, and the window, opened after, draws it
    /// without the player presenting another.
    @Test func theFirstFrameIsDecodedBeforeTheWindowIsUpAndDrawnWhenItIs() async throws {
        let dir = try TempDir("kit-view-early")
        defer { dir.remove() }
        let clip = try Self.clip(dir, seconds: 2)
        try await KitDisplay.with { _ in
            let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: clip)), output: { NullOutput() })
            let early = EarlyFrames()
            _ = try await playerEvent(player, "the first frame, before any window", after: { player.addVideoRenderer(early) }) {
                if case .readyForDisplay = $0 { true } else { false }
            }
            let presented = try #require(player.videoStatistics).presentedFrames
            #expect(presented == 1, "a paused player presents its first frame only")
            let layer = try PlayerLayer(player: player, configuration: .init(title: "early", width: 160, height: 90))
            defer { layer.close() }
            early.hand(to: layer)
            player.removeVideoRenderer(early)
            let p = try #require(layer.window.waitForPresentation(timeout: 30) { $0.frameTime != nil }, "the held frame was not drawn")
            #expect(p.frameTime == 0)
            #expect(player.videoStatistics?.presentedFrames == presented, "the window drew the frame decoded before it opened")
            #expect(player.isPlayingVideo, "the pipeline went on from the holder to the layer")
        }
    }

    @Test func anItemThatCannotLoadOpensNoWindow() async throws {
        let dir = try TempDir("kit-view-bad")
        defer { dir.remove() }
        let bad = dir.file("not-a-video.mp4")
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: bad))
        try await KitDisplay.with { _ in
            let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: bad)), output: { NullOutput() })
            do throws(PlayerViewError) {
                _ = try await PlayerView.open(for: player)
                Issue.record("a view opened for an item that cannot load")
            } catch {
                guard case .itemFailed = error else { Issue.record("\(error)"); return }
            }
            await #expect(throws: PlayerViewError.noItem) { _ = try await PlayerView.open(for: Player(output: { NullOutput() })) }
        }
    }

    @Test func closeFromTheProgramEndsRunAndTheControlsAreFedOnlyWhileVisible() async throws {
        let dir = try TempDir("kit-view-program")
        defer { dir.remove() }
        let clip = try Self.clip(dir, seconds: 6)
        try await KitDisplay.with { display in
            let (player, view, running) = try await Self.openAndPlay(clip, options: .init(controlsHideDelay: 0.5))
            defer { view.close() }  // before the display goes, whatever happened
            // A mouse movement shows the controls; a periodic observer feeds them from the
            // player until they hide, not after. (Not to the window's centre: Xvfb's pointer
            // starts at the screen's centre, which is there — the window reports that as a first
            // movement when it opens — and a move to where the pointer is is no move.)
            let feed = view.controlsFeedChanges
            try display.send(toWindowTitled: "clip.mp4", ["motion:10,10"])
            _ = try #require(view.window.waitForPresentation(timeout: 20) { $0.controlsVisible }, "the controls did not show")
            if !view.isFeedingControls { _ = try await waitForEvent(feed, "the feed to start") { $0 } }
            // A stop that is stale when read (the controls shown when the window opened under the
            // pointer hid, and this movement showed them again) is not the one waited for.
            #expect(try await waitForEvent(feed, "the feed to stop") { !$0 && !view.isFeedingControls } == false)
            _ = try #require(view.window.waitForPresentation(timeout: 20) { !$0.controlsVisible }, "the controls did not hide")
            // Another movement: fed again.
            try display.send(toWindowTitled: "clip.mp4", ["motion:20,20"])
            #expect(try await waitForEvent(feed, "the feed to start again") { $0 } == true)
            #expect(view.controlsAreLive)
            let state = view.controlsState()
            #expect(state.isPlaying)
            #expect(abs((state.duration ?? 0) - 6) < 0.2)
            #expect(state.bufferedUntil == nil, "a local file is all there")
            view.close()
            try await Self.ended(running)
            #expect(view.isClosed && !view.window.isOpen)
            #expect(player.rate == 0)
        }
    }

    /// `updatesNowPlayingInfoCenter` (default true): without a NowPlayingSession the view
    /// publishes its item's title, duration, position and rate itself, on an owner of its own;
    /// setting it false, or closing the window, shows the application's Now Playing again.
    @Test func theViewPublishesNowPlayingByItselfAndStopsWhenItCloses() async throws {
        let dir = try TempDir("kit-view-now-playing")
        defer { dir.remove() }
        let clip = try Self.clip(dir, seconds: 6)
        let center = NowPlayingInfoCenter()
        center.nowPlayingInfo = NowPlayingInfo(title: "Song", duration: 60, persistentID: 1)
        try await KitDisplay.with { display in
            let player = Player(playerItem: PlayerItem(url: URL(fileURLWithPath: clip)), output: { NullOutput() })
            let view = try await PlayerView.open(for: player, infoCenter: center)
            defer { view.close() }  // before the display goes, whatever happened
            #expect(view.updatesNowPlayingInfoCenter)
            #expect(!view.publishesNowPlaying, "nothing is published before run()")
            let changes = center.changes
            let running = Task { await view.run() }
            player.play()
            _ = try await waitForEvent(changes, "the video shown playing") { $0 == .playbackState(.playing) }
            #expect(center.ownerNames == ["application", "video"])
            let playing = try #require(center.snapshot().nowPlayingInfo)
            #expect(playing.title == "clip.mp4")
            #expect(abs((playing.duration ?? 0) - 6) < 0.2, "duration \(String(describing: playing.duration))")
            #expect(playing.playbackRate == 1)

            _ = try await playerEvent(player, "paused by space", after: {
                try display.send(toWindowTitled: "clip.mp4", ["key:space"])
            }) { $0 == .timeControlStatusChanged(.paused) }
            _ = try await waitForEvent(changes, "the video shown paused") { $0 == .playbackState(.paused) }
            let paused = try #require(center.snapshot().nowPlayingInfo)
            #expect(paused.playbackRate == 0)
            #expect(paused.elapsedTime > 0 && abs(paused.elapsedTime - player.currentTime()) < 0.1,
                    "elapsed \(paused.elapsedTime) s, the player at \(player.currentTime()) s")

            view.updatesNowPlayingInfoCenter = false
            #expect(center.ownerNames == ["application"] && !view.publishesNowPlaying)
            #expect(center.snapshot().nowPlayingInfo?.title == "Song")
            view.updatesNowPlayingInfoCenter = true
            #expect(center.ownerNames == ["application", "video"])
            #expect(center.snapshot().nowPlayingInfo?.title == "clip.mp4")

            try display.send(toWindowTitled: "clip.mp4", ["key:q"])
            try await Self.ended(running)
            #expect(center.ownerNames == ["application"] && !view.publishesNowPlaying)
            #expect(center.snapshot().nowPlayingInfo?.title == "Song")
        }
    }
}
