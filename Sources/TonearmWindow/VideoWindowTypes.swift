// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// Why a ``VideoWindow`` could not open, or refused a frame.
public enum VideoWindowError: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no display to open a window on: neither `DISPLAY` nor `WAYLAND_DISPLAY` is set,
    /// or SDL could not start its video (the reason is SDL's). A player then plays the sound only.
    case noDisplay(String)
    /// SDL started but could not make the window or a renderer for it (SDL's reason).
    case cannotCreateWindow(String)
    /// SDL2 (`library`, loaded when a window first opens) cannot be loaded: it is not installed,
    /// or lacks a function Tonearm calls (`reason`: the loader's). A player then plays the sound only.
    case sdlNotInstalled(library: String, reason: String)
    /// Another ``VideoWindow`` of this process is open: SDL's video belongs to one thread at a
    /// time, so one window is open at once (close the other first).
    case anotherWindowIsOpen
    /// A frame whose planes do not hold the picture its size and format say.
    case malformedFrame(String)

    public var description: String {
        switch self {
        case .noDisplay(let why): "no display to show video on: \(why)"
        case .cannotCreateWindow(let why): "cannot open a video window: \(why)"
        case .sdlNotInstalled(let library, let reason): "SDL2 is not installed (\(library)): \(reason)"
        case .anotherWindowIsOpen: "another video window is open in this process"
        case .malformedFrame(let why): "malformed video frame: \(why)"
        }
    }
}

/// The keys a video window reports (the ones a player's window answers to; `j`: the next
/// subtitle, as in mpv).
public enum VideoWindowKey: String, Sendable, Hashable, CaseIterable {
    case space, left, right, up, down, f, m, q, escape, j
}

/// What happens in a ``VideoWindow``, as it happens (``VideoWindow/events``).
public enum VideoWindowEvent: Sendable, Hashable {
    /// A key was pressed (`isRepeat` when it is the key's auto-repeat).
    case key(VideoWindowKey, isRepeat: Bool)
    /// The mouse moved over the window, to (x, y) in window pixels.
    case mouseMoved(x: Int, y: Int)
    /// The left mouse button was pressed at (x, y).
    case clicked(x: Int, y: Int)
    /// A click on the built-in controls: play/pause, or a seek on the seek bar.
    case controls(ControlsAction)
    /// The window's drawable area is now `width × height` pixels.
    case resized(width: Int, height: Int)
    /// The user (or the desktop) asked to close the window. With
    /// ``VideoWindow/Configuration/closesOnRequest`` the window then closes itself.
    case closeRequested
    /// The window is closed (always the last event).
    case closed
}

/// One picture put on screen by a ``VideoWindow``: what was drawn where.
public struct VideoPresentation: Sendable, Hashable {
    /// 1 for the window's first presentation, then one more each time.
    public var number: Int
    /// The ``VideoWindow/show(_:)`` number of the frame drawn; 0 when none has been shown yet.
    public var submission: UInt64
    /// Frames taken into the window (uploaded) so far, and frames given to ``VideoWindow/show(_:)``
    /// but replaced by a later one before the window thread took them: every frame given is one
    /// or the other once the last is presented (there is no queue to wait in).
    public var framesTaken: Int
    public var framesReplaced: Int
    /// The frame's ``VideoFrame/time``, when a frame was drawn.
    public var frameTime: Double?
    /// The drawable area, in pixels.
    public var outputWidth: Int
    public var outputHeight: Int
    /// Where the window's top-left corner is on the screen.
    public var windowX: Int
    public var windowY: Int
    /// Where the picture went (whole pixels), empty when no frame was drawn.
    public var videoRect: VideoRect
    public var gravity: VideoGravity
    public var isFullScreen: Bool
    /// Whether the built-in controls were drawn over the picture.
    public var controlsVisible: Bool
}

extension VideoFrame {
    /// Why the planes cannot hold the picture this frame's size and format say, or nil when
    /// they can.
    public var layoutProblem: String? {
        guard width > 0, height > 0 else { return "size \(width)×\(height)" }
        func check(_ index: Int, _ w: Int, _ h: Int, bytesPerPixel: Int) -> String? {
            guard index < planes.count else { return "\(pixelFormat.rawValue) needs plane \(index)" }
            let p = planes[index]
            guard p.width >= w, p.height >= h else {
                return "plane \(index) is \(p.width)×\(p.height), needs \(w)×\(h)"
            }
            guard p.bytesPerRow >= w * bytesPerPixel else {
                return "plane \(index) has \(p.bytesPerRow) bytes a row, needs \(w * bytesPerPixel)"
            }
            guard p.bytes.count >= p.bytesPerRow * (h - 1) + w * bytesPerPixel else {
                return "plane \(index) has \(p.bytes.count) bytes, needs \(p.bytesPerRow * (h - 1) + w * bytesPerPixel)"
            }
            return nil
        }
        switch pixelFormat {
        case .yuv420p:
            let cw = (width + 1) / 2, ch = (height + 1) / 2
            return check(0, width, height, bytesPerPixel: 1) ?? check(1, cw, ch, bytesPerPixel: 1)
                ?? check(2, cw, ch, bytesPerPixel: 1)
        case .rgba:
            return check(0, width, height, bytesPerPixel: 4)
        }
    }
}

/// `error.localizedDescription` is the same text as ``description`` (ported iOS code reports
/// errors that way; see TonearmCore's LocalizedErrors.swift).
extension VideoWindowError: LocalizedError {
    public var errorDescription: String? { description }
}
