// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore
import TonearmPlayback
import TonearmWindow

/// A player's picture in a window (AVPlayerLayer): while attached to a ``player``, each frame of
/// the player's current item is drawn into ``window`` when it is due against the audio (the
/// layer is the player's ``PlayerVideoRenderer``), with the layer's ``videoGravity``, rotation
/// and pixel aspect honoured.
///
/// Ownership of the window: a layer made with ``init(player:window:)`` draws into a window the
/// caller opened and keeps; the caller closes it. A layer made with
/// ``init(player:configuration:)`` opens its own window and owns it: ``close()`` closes it (and
/// detaches the player). Either way the window outlives nothing it was given: closing the layer
/// detaches it from its player first.
///
/// The player holds the layer while attached (as a renderer); set ``player`` to nil (or
/// ``close()``) to let go. Setting another player detaches from the old one first, so one layer
/// shows one player at a time.
///
/// Threading: every member may be used from any thread; ``show(_:)`` is called on the player's
/// video thread.
///
/// ```swift
/// let player = Player(url: URL(fileURLWithPath: "clip.mp4"))
/// let layer = try PlayerLayer(player: player, configuration: .init(title: "clip.mp4", width: 640, height: 360))
/// layer.videoGravity = .resizeAspectFill
/// player.play()
/// ```
public final class PlayerLayer: PlayerVideoRenderer, Sendable {
    /// The window the picture is drawn into.
    public let window: VideoWindow
    /// Whether the layer opened ``window`` (and closes it on ``close()``).
    public let ownsWindow: Bool

    private let attached = Mutex<Player?>(nil)

    /// A layer drawing into `window` (which the caller keeps and closes), showing `player`.
    public init(player: Player? = nil, window: VideoWindow) {
        self.window = window
        ownsWindow = false
        self.player = player
    }

    /// A layer with a window of its own, opened with `configuration`, showing `player`.
    /// - Throws: what ``VideoWindow/init(_:)`` throws (``VideoWindowError/noDisplay(_:)`` without a display).
    public init(player: Player? = nil, configuration: VideoWindow.Configuration) throws(VideoWindowError) {
        window = try VideoWindow(configuration)
        ownsWindow = true
        self.player = player
    }

    /// The player whose video is shown (AVPlayerLayer's `player`). Setting it detaches the layer
    /// from the player before (its frames stop coming) and attaches it to the new one.
    public var player: Player? {
        get { attached.withLock { $0 } }
        set {
            let old = attached.withLock { current -> Player? in
                let old = current
                current = newValue
                return old
            }
            if let old, old !== newValue { old.removeVideoRenderer(self) }
            if let newValue, old !== newValue { newValue.addVideoRenderer(self) }
        }
    }

    /// How the picture fills the window (`.resizeAspect` unless the window was opened otherwise).
    public var videoGravity: VideoGravity {
        get { window.gravity }
        set { window.gravity = newValue }
    }

    /// Whether the frame for the player's current position is on screen: the player has shown
    /// the first frame since its item started or its last seek, and the window has drawn a frame.
    public var isReadyForDisplay: Bool {
        guard let player else { return false }
        return player.isReadyForDisplay && window.isReadyForDisplay
    }

    /// Where the picture is in the window, in pixels, as last drawn (zero before the first frame).
    public var videoRect: VideoRect { window.videoRect }

    /// Player's video thread: draws the frame (the latest wins when the window is behind). A
    /// frame the window refuses (malformed) is not drawn; the previous one stays.
    public func show(_ frame: VideoFrame) {
        _ = try? window.show(frame)
    }

    /// Detaches the player; closes the window when the layer opened it.
    public func close() {
        player = nil
        if ownsWindow { window.close() }
    }
}
