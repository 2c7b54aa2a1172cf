// SPDX-License-Identifier: GPL-3.0-or-later

/// One decoded picture, ready to show: the pixels, when it is due, and how to display it
/// (the counterpart of the `CVPixelBuffer` that `AVPlayerItemVideoOutput` hands out).
///
/// Planes hold their own bytes (`[UInt8]`), so a frame is a value that crosses threads freely:
/// the video decoder's thread makes it, a renderer (a window, a file writer, a test) reads it.
/// Frames never reach the audio render thread.
public struct VideoFrame: Sendable, Hashable {
    /// How the pixels are laid out.
    public enum PixelFormat: String, Sendable, Hashable, Codable, CaseIterable {
        /// 8-bit Y′CbCr 4:2:0 in three planes (Y, Cb, Cr; FFmpeg's `yuv420p`, SDL's IYUV/I420):
        /// the chroma planes are half the width and half the height, rounded up.
        case yuv420p
        /// 8-bit packed R, G, B, A in one plane, four bytes a pixel, A = 255 (FFmpeg's `rgba`).
        case rgba
    }

    /// One plane of pixels: `height` rows of `bytesPerRow` bytes, of which the first
    /// `width × bytes-per-sample` are the picture (the rest is padding).
    public struct Plane: Sendable, Hashable {
        public var bytes: [UInt8]
        public var bytesPerRow: Int
        public var width: Int
        public var height: Int

        public init(bytes: [UInt8], bytesPerRow: Int, width: Int, height: Int) {
            self.bytes = bytes
            self.bytesPerRow = bytesPerRow
            self.width = width
            self.height = height
        }
    }

    /// The shape of one pixel (`sample_aspect_ratio`): 1:1 for square pixels; 4:3 for
    /// anamorphic DV, where a pixel is shown wider than it is tall.
    public struct PixelAspectRatio: Sendable, Hashable, Codable, CustomStringConvertible {
        public var horizontal: Int
        public var vertical: Int

        public static let square = PixelAspectRatio(horizontal: 1, vertical: 1)

        /// Makes a ratio; a zero or negative part (a file that does not say) means square.
        public init(horizontal: Int, vertical: Int) {
            if horizontal > 0, vertical > 0 {
                self.horizontal = horizontal
                self.vertical = vertical
            } else {
                self.horizontal = 1
                self.vertical = 1
            }
        }

        public var description: String { "\(horizontal):\(vertical)" }
    }

    public var pixelFormat: PixelFormat
    /// The picture's size in pixels as coded (before the pixel aspect and the rotation).
    public var width: Int
    public var height: Int
    /// The planes, as many as ``PixelFormat`` says (three for `yuv420p`, one for `rgba`).
    public var planes: [Plane]
    /// When the frame is due, in seconds on the item's timeline (the same timeline as the
    /// audio's `currentTime`).
    public var time: Double
    /// How long it stays on screen, when the stream says; nil when it does not.
    public var duration: Double?
    public var pixelAspectRatio: PixelAspectRatio
    /// Degrees to turn the picture clockwise to show it upright: 0, 90, 180 or 270 (a phone's
    /// portrait video is stored sideways with a rotation in its display matrix).
    public var rotation: Int

    public init(pixelFormat: PixelFormat, width: Int, height: Int, planes: [Plane], time: Double,
                duration: Double? = nil, pixelAspectRatio: PixelAspectRatio = .square, rotation: Int = 0) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.planes = planes
        self.time = time
        self.duration = duration
        self.pixelAspectRatio = pixelAspectRatio
        self.rotation = ((rotation % 360) + 360) % 360
    }

    /// The size to show the picture at, in square pixels, upright: the width stretched by the
    /// pixel aspect, then width and height swapped for a quarter turn.
    public var displaySize: (width: Int, height: Int) {
        let w = Int((Double(width) * Double(pixelAspectRatio.horizontal) / Double(pixelAspectRatio.vertical)).rounded())
        return rotation == 90 || rotation == 270 ? (height, w) : (w, height)
    }
}
