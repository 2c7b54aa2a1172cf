// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
@_exported import TonearmKit
@_exported import TonearmWindow

// AVKit's and AVFoundation's video views over Tonearm's (issue 23): `AVPlayerViewController`
// (a ``PlayerView``: a window with built-in controls) and `AVPlayerLayer` (a ``PlayerLayer``: the
// picture alone). On iOS both are parts of a UIKit view hierarchy, made before anything is on
// screen; here each opens a window of its own, so they are thin classes that hold what iOS code
// sets (the player, the gravity, the frame) and open Tonearm's view when UIKit would show it:
// `present(_:animated:completion:)` for the controller, `addSublayer(_:)` for the layer — which
// ported code replaces by ``AVPlayerViewController/present(animated:completion:)`` and
// ``AVPlayerLayer/show(title:)``. SDL is loaded only then (CSDL2Lazy), so importing this layer
// costs an audio-only program nothing.

/// `AVLayerVideoGravity`: `.resizeAspect`, `.resizeAspectFill`, `.resize`.
public typealias AVLayerVideoGravity = VideoGravity

/// `AVPlayerViewController`: shows its ``player`` in a ``PlayerView`` (the video at its size,
/// fitting the screen, with play/pause, a seek bar, the time and the volume; space, arrows, f,
/// q) once presented; closing the window — q, Esc, its close button or ``dismiss(animated:completion:)``
/// — pauses the player, as dismissing AVPlayerViewController does.
///
/// Threading: every member may be used from any thread.
public final class AVPlayerViewController: Sendable {
    private struct State {
        var player: Player?
        var videoGravity: VideoGravity = .resizeAspect
        var updatesNowPlayingInfoCenter = true
        var view: PlayerView?
        var presentation: Task<Void, Never>?
        var presentationError: PlayerViewError?
    }

    private let state = Mutex(State())

    public init() {}

    /// The player shown. Set before presenting; a player set while presented is shown at the
    /// next presentation (the window shows one player).
    public var player: Player? {
        get { state.withLock { $0.player } }
        set { state.withLock { $0.player = newValue } }
    }

    /// How the picture fills the window (`.resizeAspect` by default, as on iOS).
    public var videoGravity: AVLayerVideoGravity {
        get { state.withLock { $0.videoGravity } }
        set { set(\.videoGravity, newValue)?.layer.videoGravity = newValue }
    }

    /// Whether the view publishes its item to Now Playing by itself (default true, as on iOS):
    /// ``PlayerView/updatesNowPlayingInfoCenter``.
    public var updatesNowPlayingInfoCenter: Bool {
        get { state.withLock { $0.updatesNowPlayingInfoCenter } }
        set { set(\.updatesNowPlayingInfoCenter, newValue)?.updatesNowPlayingInfoCenter = newValue }
    }

    /// Stores `value` at `key`; returns the view to forward it to, while presented.
    private func set<T>(_ key: WritableKeyPath<State, T>, _ value: T) -> PlayerView? {
        state.withLock { s in
            s[keyPath: key] = value
            return s.view
        }
    }

    /// The view while presented (its ``PlayerView/window`` is the window on screen); nil before
    /// the window is up and after it closed.
    public var view: PlayerView? { state.withLock { $0.view } }

    /// Why the last presentation showed nothing (no item, an item that cannot load, no
    /// display); nil when it showed.
    public var presentationError: PlayerViewError? { state.withLock { $0.presentationError } }

    /// UIKit's `present(playerViewController, animated:completion:)`: opens the window for the
    /// player's current item once it has loaded (``PlayerView/open(for:options:infoCenter:)``),
    /// calls `completion` once it is up (on a task of its own; ``view`` is set by then), and
    /// answers it until it closes. Returns at once. When no window can show (no item, an item
    /// that fails, no display) ``presentationError`` says why, the reason is logged (UIKit's
    /// presentation cannot fail, so ported code has no error to catch) and `completion` is not
    /// called. A second call while presented does nothing, as UIKit refuses it.
    public func present(animated: Bool = true, completion: (@Sendable () -> Void)? = nil) {
        state.withLock { s in
            guard s.presentation == nil else { return }
            s.presentationError = nil
            let (player, gravity) = (s.player, s.videoGravity)
            s.presentation = Task.detached { [self] in
                await self.presentation(player: player, gravity: gravity, completion: completion)
            }
        }
    }

    private func presentation(player: Player?, gravity: VideoGravity, completion: (@Sendable () -> Void)?) async {
        defer { state.withLock { $0.presentation = nil } }
        do throws(PlayerViewError) {
            guard let player else { throw .noItem }
            let view = try await PlayerView.open(for: player, options: .init(gravity: gravity))
            let updates = state.withLock { s -> Bool in
                s.view = view
                return s.updatesNowPlayingInfoCenter
            }
            view.updatesNowPlayingInfoCenter = updates
            completion?()
            await view.run()
            state.withLock { $0.view = nil }
        } catch {
            state.withLock { $0.presentationError = error }
            compatLogger.warning("AVPlayerViewController: the presentation showed nothing: \(error)")
        }
    }

    /// UIKit's `dismiss(animated:completion:)`: closes the window (the player pauses) and calls
    /// `completion` once it has closed. Nothing is presented: `completion` is called at once.
    public func dismiss(animated: Bool = true, completion: (@Sendable () -> Void)? = nil) {
        let (view, presentation) = state.withLock { ($0.view, $0.presentation) }
        view?.close()
        Task.detached {
            await presentation?.value
            completion?()
        }
    }

    /// Waits until the presentation has ended (the window closed, or it failed to open);
    /// returns at once when nothing is presented.
    public func waitUntilDismissed() async {
        await state.withLock { $0.presentation }?.value
    }
}

/// `AVPlayerLayer`: its ``player``'s picture in a window of its own, with no controls. Made and
/// configured as on iOS (`AVPlayerLayer(player:)`, ``frame``, ``videoGravity``); the window opens
/// with ``show(title:)``, where UIKit code adds the layer to a view (`view.layer.addSublayer`),
/// at ``frame``'s size (the item's picture size when the frame is empty). Setting ``frame``
/// afterwards resizes the window (`viewDidLayoutSubviews`).
///
/// Threading: every member may be used from any thread.
public final class AVPlayerLayer: Sendable {
    private struct State {
        var player: Player?
        var frame = CGRect.zero
        var videoGravity: VideoGravity = .resizeAspect
        var layer: PlayerLayer?
    }

    private let state = Mutex(State())

    /// `AVPlayerLayer(player:)`: a layer for `player`, shown once ``show(title:)`` opens its window.
    public init(player: Player? = nil) {
        state.withLock { $0.player = player }
    }

    /// The player shown; setting it while shown shows the new one (``PlayerLayer/player``).
    public var player: Player? {
        get { state.withLock { $0.player } }
        set { set(\.player, newValue)?.player = newValue }
    }

    /// Where the layer is in its view: its size is the window's drawable size (the origin is
    /// kept and unused: the window is the view). Setting it while shown resizes the window.
    public var frame: CGRect {
        get { state.withLock { $0.frame } }
        set {
            let layer = set(\.frame, newValue)
            if let layer, let (w, h) = Self.pixels(newValue) { layer.window.setSize(width: w, height: h) }
        }
    }

    /// Stores `value` at `key`; returns the layer to forward it to, while shown.
    private func set<T>(_ key: WritableKeyPath<State, T>, _ value: T) -> PlayerLayer? {
        state.withLock { s in
            s[keyPath: key] = value
            return s.layer
        }
    }

    /// `bounds`: the frame's size at the origin.
    public var bounds: CGRect { CGRect(origin: .zero, size: frame.size) }

    /// How the picture fills the layer (`.resizeAspect` by default, as on iOS).
    public var videoGravity: AVLayerVideoGravity {
        get { state.withLock { $0.videoGravity } }
        set { set(\.videoGravity, newValue)?.videoGravity = newValue }
    }

    /// Whether the frame for the player's position is on screen (``PlayerLayer/isReadyForDisplay``);
    /// false while not shown.
    public var isReadyForDisplay: Bool { state.withLock { $0.layer }?.isReadyForDisplay ?? false }

    /// Where the picture is in the layer, as last drawn (`.zero` before the first frame).
    public var videoRect: CGRect {
        guard let r = state.withLock({ $0.layer })?.videoRect else { return .zero }
        return CGRect(x: r.x, y: r.y, width: r.width, height: r.height)
    }

    /// Tonearm's layer while shown (its ``PlayerLayer/window`` is the window).
    public var playerLayer: PlayerLayer? { state.withLock { $0.layer } }

    /// Opens the layer's window, titled `title`, at ``frame``'s size (or the current item's
    /// picture size, 640×360 without one, when the frame is empty), and shows the player in it —
    /// what adding the layer to a UIKit view does. Does nothing when shown already.
    /// - Throws: ``VideoWindowError`` when no window can open (``VideoWindowError/noDisplay(_:)``).
    public func show(title: String = "Tonearm") throws(VideoWindowError) {
        let (shown, player, frame, gravity) = state.withLock { ($0.layer != nil, $0.player, $0.frame, $0.videoGravity) }
        guard !shown else { return }
        let picture = player?.currentItem?.presentationSize ?? .zero
        let (w, h) = Self.pixels(frame) ?? (picture == .zero ? (640, 360) : (picture.width, picture.height))
        let layer = try PlayerLayer(player: nil, configuration: .init(title: title, width: w, height: h, gravity: gravity))
        let current = state.withLock { s -> Player? in
            s.layer = layer
            return s.player
        }
        layer.player = current
    }

    /// `removeFromSuperlayer()`: closes the window and lets the player go.
    public func removeFromSuperlayer() {
        let layer = state.withLock { s -> PlayerLayer? in
            defer { s.layer = nil }
            return s.layer
        }
        layer?.close()
    }

    /// A frame's size in whole pixels; nil for an empty or non-finite one.
    private static func pixels(_ rect: CGRect) -> (Int, Int)? {
        let (w, h) = (Double(rect.width), Double(rect.height))
        guard w.isFinite, h.isFinite, w >= 1, h >= 1 else { return nil }
        return (Int(w.rounded()), Int(h.rounded()))
    }
}
