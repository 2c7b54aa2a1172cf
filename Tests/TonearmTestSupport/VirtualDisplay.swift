// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A private X display for tests: `Xvfb` on a free display number it picks itself (`-displayfd`,
/// no TCP), with one screen of the given size and 24-bit colour. Start-up is waited for by an
/// event, not by time: Xvfb writes its display number once it accepts clients.
///
/// ``screenshot()`` reads the whole screen back (`xwd -root`), parsed here, so tests can check
/// the colour of any pixel that a window drew.
///
/// Thread-safety: one test uses one display; ``stop()`` is idempotent and also runs on deinit.
public final class VirtualDisplay: @unchecked Sendable {
    /// The X display, `:N`.
    public let display: String
    public let width: Int
    public let height: Int
    private let xvfb: ChildProcess
    private let directory: TempDir

    /// Starts Xvfb and waits (up to `timeout` seconds) until it accepts clients.
    /// - Throws: ``TestSupportError`` when it does not start (with Xvfb's own words).
    public init(width: Int = 640, height: Int = 480, timeout: Double = 10) throws {
        self.width = width
        self.height = height
        directory = try TempDir("tonearm-xvfb")
        // -displayfd 1: Xvfb chooses a free display and prints its number when it is ready.
        do {
            xvfb = try ChildProcess(["Xvfb", "-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "\(width)x\(height)x24"],
                                    captureStandardError: true, captureStandardOutput: true)
        } catch {
            directory.remove()
            throw error
        }
        let out = xvfb.waitForStandardOutputBlocking(timeout: timeout) { $0.text.contains("\n") || $0.ended }
        guard let number = Int(out.text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            xvfb.terminate()
            directory.remove()
            throw TestSupportError("Xvfb did not start: \(xvfb.standardErrorText.suffix(2000))")
        }
        display = ":\(number)"
    }

    deinit { stop() }

    /// Stops Xvfb (waiting for it).
    public func stop() {
        xvfb.terminate()
        directory.remove()
    }

    /// Whether Xvfb still runs.
    public var isRunning: Bool { xvfb.isRunning }

    /// `xclient.py` beside this file: a small X client (ctypes over libX11) that sends a window
    /// what a desktop or a user would.
    public static let clientScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("xclient.py").path

    /// Sends the top-level window titled `title` each of `actions` in order — `close` (the
    /// window manager's WM_DELETE_WINDOW), `key:NAME` (an X keysym: `space`, `Left`, `q`…),
    /// `motion:X,Y`, `click:X,Y` — and returns once the X server has them (XSync).
    public func send(toWindowTitled title: String, _ actions: [String]) throws {
        let r = try run("python3", [Self.clientScript, display, title] + actions)
        guard r.status == 0 else { throw TestSupportError("xclient.py \(actions) failed (\(r.status)): \(r.stderr)") }
    }

    /// The whole screen as it is now (`xwd -root`), parsed. With `keepingPNGAt`, also converted
    /// to a PNG there (by ffmpeg) for a person to look at.
    public func screenshot(keepingPNGAt png: String? = nil) throws -> Screenshot {
        let file = directory.file("screen-\(UUID().uuidString.prefix(8)).xwd")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try run("xwd", ["-root", "-silent", "-display", display, "-out", file])
        guard r.status == 0 else { throw TestSupportError("xwd failed (\(r.status)): \(r.stderr)") }
        let shot = try Screenshot(xwd: try Data(contentsOf: URL(fileURLWithPath: file)))
        if let png {
            let c = try run("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-f", "xwd_pipe", "-i", file, png])
            guard c.status == 0 else { throw TestSupportError("ffmpeg could not convert the screenshot: \(c.stderr)") }
        }
        return shot
    }
}

/// A picture of an X screen: 8-bit R, G, B per pixel, rows from the top.
public struct Screenshot: Sendable {
    public struct Color: Sendable, Hashable, CustomStringConvertible {
        public var r: Int
        public var g: Int
        public var b: Int
        public init(r: Int, g: Int, b: Int) { self.r = r; self.g = g; self.b = b }
        public var description: String { "rgb(\(r), \(g), \(b))" }
        /// Whether each channel is within `tolerance` of `other`'s.
        public func isClose(to other: Color, tolerance: Int = 40) -> Bool {
            abs(r - other.r) <= tolerance && abs(g - other.g) <= tolerance && abs(b - other.b) <= tolerance
        }
    }

    public let width: Int
    public let height: Int
    private let pixels: [UInt32]  // 0x00RRGGBB

    public func color(x: Int, y: Int) -> Color {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "(\(x), \(y)) is off the \(width)×\(height) screen")
        let p = pixels[y * width + x]
        return Color(r: Int((p >> 16) & 0xff), g: Int((p >> 8) & 0xff), b: Int(p & 0xff))
    }

    /// Parses an XWD file (X Window Dump, version 7) of a TrueColor screen, 24 or 32 bits a pixel.
    public init(xwd data: Data) throws {
        let bytes = [UInt8](data)
        func field(_ i: Int) -> Int {
            let o = i * 4
            return Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3])
        }
        guard bytes.count >= 100, field(1) == 7, field(2) == 2 else {
            throw TestSupportError("not a version-7 ZPixmap XWD file (\(bytes.count) bytes)")
        }
        let headerSize = field(0), width = field(4), height = field(5), byteOrder = field(7)
        let bitsPerPixel = field(11), bytesPerLine = field(12)
        let masks = (field(14), field(15), field(16)), colors = field(19)
        guard bitsPerPixel == 32 || bitsPerPixel == 24 else {
            throw TestSupportError("XWD with \(bitsPerPixel) bits a pixel")
        }
        let start = headerSize + colors * 12
        guard bytes.count >= start + bytesPerLine * height else { throw TestSupportError("XWD file cut short") }
        func shift(_ mask: Int) -> Int { mask == 0 ? 0 : mask.trailingZeroBitCount }
        let bpp = bitsPerPixel / 8
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let o = start + y * bytesPerLine + x * bpp
                var v = 0
                for k in 0..<bpp {
                    // byte_order 0: least significant byte first.
                    let b = Int(bytes[o + k])
                    v |= byteOrder == 0 ? b << (8 * k) : b << (8 * (bpp - 1 - k))
                }
                let r = (v & masks.0) >> shift(masks.0), g = (v & masks.1) >> shift(masks.1), b = (v & masks.2) >> shift(masks.2)
                pixels[y * width + x] = UInt32(r << 16 | g << 8 | b)
            }
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }
}
