// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// How a picture fills the region it is shown in (AVLayerVideoGravity).
public enum VideoGravity: String, Sendable, Hashable, CaseIterable, Codable {
    /// The whole picture, its shape kept, centred; bars (black) fill the rest.
    case resizeAspect
    /// The whole region, the picture's shape kept, centred; what overflows is cut off.
    case resizeAspectFill
    /// The whole region, the picture stretched to it.
    case resize
}

/// A rectangle in a window's pixels (origin at the top left, y downwards), in fractions of a
/// pixel where the arithmetic gives them (as AVPlayerLayer's `videoRect` is a `CGRect`).
public struct VideoRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public static let zero = VideoRect(x: 0, y: 0, width: 0, height: 0)

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var midX: Double { x + width / 2 }
    public var midY: Double { y + height / 2 }
    public var isEmpty: Bool { !(width > 0 && height > 0) }

    /// The rectangle with each edge moved to the nearest whole pixel (edges, not sizes, are
    /// rounded, so two rectangles that touch still touch and a centred one stays centred).
    public var integral: VideoRect {
        let left = x.rounded(), top = y.rounded()
        return VideoRect(x: left, y: top, width: maxX.rounded() - left, height: maxY.rounded() - top)
    }

    /// The same rectangle turned a quarter about its centre: width and height swapped, the
    /// centre kept.
    public var quarterTurned: VideoRect {
        VideoRect(x: midX - height / 2, y: midY - width / 2, width: height, height: width)
    }

    public var description: String { "(\(x), \(y), \(width)×\(height))" }
}

/// Where a picture goes in a region: the arithmetic of AVPlayerLayer's `videoRect`, alone.
public enum VideoGeometry {
    /// The rectangle a picture of `displaySize` (square pixels, upright: ``VideoFrame/displaySize``)
    /// covers in `bounds` with `gravity`. With ``VideoGravity/resizeAspectFill`` it can reach past
    /// `bounds` (the part outside is not drawn). An empty display size or empty bounds give an
    /// empty rectangle at the centre of `bounds`.
    public static func videoRect(displaySize: (width: Int, height: Int), in bounds: VideoRect,
                                 gravity: VideoGravity) -> VideoRect {
        let w = Double(displaySize.width), h = Double(displaySize.height)
        guard w > 0, h > 0, !bounds.isEmpty else {
            return VideoRect(x: bounds.midX, y: bounds.midY, width: 0, height: 0)
        }
        switch gravity {
        case .resize:
            return bounds
        case .resizeAspect, .resizeAspectFill:
            let sx = bounds.width / w, sy = bounds.height / h
            let scale = gravity == .resizeAspect ? min(sx, sy) : max(sx, sy)
            // The side that fits is the bounds' own side exactly (no rounding error in w * scale).
            let width = scale == sx ? bounds.width : w * scale
            let height = scale == sy ? bounds.height : h * scale
            return VideoRect(x: bounds.midX - width / 2, y: bounds.midY - height / 2, width: width, height: height)
        }
    }

    /// The rectangle of `frame` in `bounds` (its pixel aspect and rotation applied).
    public static func videoRect(of frame: VideoFrame, in bounds: VideoRect, gravity: VideoGravity) -> VideoRect {
        videoRect(displaySize: frame.displaySize, in: bounds, gravity: gravity)
    }

    /// The size to open a window at for a picture of `size` on a screen whose usable area is
    /// `screen`: the picture's own size, scaled down (its shape kept, whole pixels, at least 1)
    /// to at most `fraction` of the screen each way; never scaled up. An unknown (empty) screen
    /// leaves the size as it is.
    public static func windowSize(for size: (width: Int, height: Int), screen: (width: Int, height: Int),
                                  fraction: Double = 0.9) -> (width: Int, height: Int) {
        let w = max(1, size.width), h = max(1, size.height)
        guard screen.width > 0, screen.height > 0 else { return (w, h) }
        let limitW = Double(screen.width) * fraction, limitH = Double(screen.height) * fraction
        let scale = min(1, limitW / Double(w), limitH / Double(h))
        guard scale < 1 else { return (w, h) }
        return (max(1, Int((Double(w) * scale).rounded(.down))), max(1, Int((Double(h) * scale).rounded(.down))))
    }

    /// How to draw a texture of the coded picture so that, turned by `rotation` degrees clockwise
    /// about its centre, it covers `videoRect`: the rectangle to draw the unturned texture into
    /// (for a quarter turn, `videoRect` with width and height swapped about the same centre) and
    /// the angle. The pixel aspect is in the rectangle's shape already.
    public static func placement(videoRect: VideoRect, rotation: Int) -> (destination: VideoRect, angle: Double) {
        let r = ((rotation % 360) + 360) % 360
        return (r == 90 || r == 270 ? videoRect.quarterTurned : videoRect, Double(r))
    }
}
