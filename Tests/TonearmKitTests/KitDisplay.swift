// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmPlayback
import TonearmTestSupport
import TonearmWindow

/// A private Xvfb display for the kit's tests, with SDL's x11 driver; the environment is put
/// back after. One window at a time per process: the suites using it are serialized and run in
/// scripts/test's one-at-a-time phase.
enum KitDisplay {
    static func with<T>(width: Int = 640, height: Int = 480, _ body: (VirtualDisplay) async throws -> T) async throws -> T {
        let display = try VirtualDisplay(width: width, height: height)
        defer { display.stop() }
        return try await ProcessEnvironment.with(display.sdlEnvironment) { try await body(display) }
    }

    /// Where a screenshot is kept for a person to look at (TONEARM_KEEP_SCREENSHOTS=DIR), else nowhere.
    static func keep(_ name: String) -> String? {
        guard let dir = ProcessInfo.processInfo.environment["TONEARM_KEEP_SCREENSHOTS"], !dir.isEmpty else { return nil }
        return "\(dir)/\(name).png"
    }

    /// A screenshot taken while `window` showed one frame throughout (the presentation read before
    /// and after it is the same), with that presentation. The player is paused: no new frame comes.
    static func stableShot(_ display: VirtualDisplay, _ window: VideoWindow, keep name: String? = nil) throws
        -> (Screenshot, VideoPresentation) {
        for _ in 0..<5 {
            let before = try #require(window.waitForPresentation(timeout: 20) { $0.frameTime != nil })
            let shot = try display.screenshot(keepingPNGAt: name.flatMap(keep))
            if let after = window.lastPresentation, after.submission == before.submission { return (shot, after) }
        }
        throw TestSupportError("the window kept changing its frame while paused")
    }

    /// The colour at (x, y) of the window's drawable area in `shot`.
    static func color(_ shot: Screenshot, _ p: VideoPresentation, _ x: Double, _ y: Double) -> Screenshot.Color {
        shot.color(x: p.windowX + Int(x.rounded(.down)), y: p.windowY + Int(y.rounded(.down)))
    }

    static let red = Screenshot.Color(r: 255, g: 0, b: 0)
    static let blue = Screenshot.Color(r: 0, g: 0, b: 255)
    static let black = Screenshot.Color(r: 0, g: 0, b: 0)
}

/// The first event of `player` that `match` accepts, from a stream taken before `action` runs.
/// Pauses `player` and waits for its `paused` event — or not at all when it was not playing
/// any more (a clip that reached its end while a loaded machine drew it has paused by itself,
/// and `pause()` then changes nothing: "timed out waiting for paused" in two clean-clone runs).
/// A timeout says where the player was.
func pauseAndWait(_ player: Player, _ what: String, timeout: Double = 30) async throws {
    let events = player.events
    let wasPlaying = player.rate != 0
    let before = player.currentTime()
    player.pause()
    guard wasPlaying else { return }
    do {
        _ = try await waitForEvent(events, timeout: timeout, what) { $0 == .timeControlStatusChanged(.paused) }
    } catch let e as TimedOut {
        throw TimedOut(what: "\(e.what) (at \(before) s when paused, now \(player.currentTime()) s, \(player.timeControlStatus), rate \(player.rate))")
    }
}

func playerEvent(_ player: Player, _ what: String, timeout: Double = 30, after action: () throws -> Void = {},
                 where match: @escaping @Sendable (PlayerEvent) -> Bool) async throws -> PlayerEvent {
    let events = player.events
    try action()
    return try await waitForEvent(events, timeout: timeout, what, where: match)
}
