// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmWindow

/// The rules of ``PlayerView``'s built-in controls (AVPlayerViewController's): what a key, a
/// click or a close request in the window does to the player and the window.
///
/// - space: play or pause; ←/→: 5 s back or on (kept within the item); ↑/↓: volume ±5 % (0…1);
///   m: mute or unmute; f: full screen on or off; j: the next subtitle (mpv's key: the `.srt`
///   beside the video or the file chosen, then each text track, then none); q and Esc: close.
/// - A click on the controls' play/pause glyph or seek bar does what it shows.
/// - Any key or mouse movement shows the controls (they hide by themselves after a delay: the
///   window's ``ControlsOverlay`` owns that timer).
/// - A close request (the window manager's close button) closes; closing stops the player and
///   gives the window back.
/// - A held key repeats ←/→ and ↑/↓ (a long seek, a volume sweep), never space, m, f, j or q.
///
/// A pure value: window events and the player's state in, actions out; no threads, no window.
public struct PlayerViewMachine: Sendable, Hashable {
    /// What the machine knows of the player and the window when an event comes.
    public struct State: Sendable, Hashable {
        public var isPlaying: Bool
        public var currentTime: Double
        /// Nil for a live stream (no seeking then).
        public var duration: Double?
        public var volume: Float
        public var isMuted: Bool
        public var isFullScreen: Bool

        public init(isPlaying: Bool, currentTime: Double, duration: Double?, volume: Float, isMuted: Bool,
                    isFullScreen: Bool) {
            self.isPlaying = isPlaying
            self.currentTime = currentTime
            self.duration = duration
            self.volume = volume
            self.isMuted = isMuted
            self.isFullScreen = isFullScreen
        }
    }

    /// What to do to the player or the window.
    public enum Action: Sendable, Hashable {
        case play
        case pause
        case seek(to: Double)
        case setVolume(Float)
        case setMuted(Bool)
        case setFullScreen(Bool)
        case showControls
        /// Draw the next subtitle (``SubtitleSelection/next(after:in:)``).
        case cycleSubtitle
        /// Stop the player and close the window.
        case close
    }

    /// The step of ←/→ (seconds) and of ↑/↓ (volume, 0…1).
    public var seekStep: Double = 5
    public var volumeStep: Float = 0.05

    public init() {}

    /// The actions that `event` leads to, given `state`.
    public func handle(_ event: VideoWindowEvent, state: State) -> [Action] {
        switch event {
        case .key(let key, let isRepeat):
            if isRepeat, ![.left, .right, .up, .down].contains(key) { return [] }
            return [.showControls] + keyActions(key, state: state)
        case .mouseMoved:
            return [.showControls]
        case .clicked:
            return [.showControls]
        case .controls(.playPause):
            return [.showControls, state.isPlaying ? .pause : .play]
        case .controls(.seek(let to)):
            guard let to = seekTarget(to, state: state) else { return [.showControls] }
            return [.showControls, .seek(to: to)]
        case .closeRequested:
            return [.close]
        case .resized, .closed:
            return []
        }
    }

    private func keyActions(_ key: VideoWindowKey, state: State) -> [Action] {
        switch key {
        case .space:
            return [state.isPlaying ? .pause : .play]
        case .left, .right:
            let target = state.currentTime + (key == .left ? -seekStep : seekStep)
            return seekTarget(target, state: state).map { [.seek(to: $0)] } ?? []
        case .up, .down:
            let v = min(1, max(0, state.volume + (key == .up ? volumeStep : -volumeStep)))
            // Turning the volume up unmutes, as a desktop player does.
            return (key == .up && state.isMuted ? [.setMuted(false)] : []) + (v == state.volume ? [] : [.setVolume(v)])
        case .m:
            return [.setMuted(!state.isMuted)]
        case .f:
            return [.setFullScreen(!state.isFullScreen)]
        case .j:
            return [.cycleSubtitle]
        case .q, .escape:
            return [.close]
        }
    }

    /// `seconds` kept within the item (0…duration), or nil when the item cannot seek (live).
    private func seekTarget(_ seconds: Double, state: State) -> Double? {
        guard let d = state.duration, d.isFinite, d > 0, seconds.isFinite else { return nil }
        return min(max(0, seconds), d)
    }
}
