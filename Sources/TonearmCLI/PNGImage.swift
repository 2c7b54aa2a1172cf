// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A small RGB raster with the drawing `eq show --plot x.png` needs (filled rectangles,
/// anti-aliased-free lines of a given width, 5×7 bitmap text) and a PNG encoder of its own:
/// 8-bit RGB, filter 0 on every row, the zlib stream made of stored (uncompressed) deflate
/// blocks, which every PNG reader accepts. No image library is involved.
struct PNGImage {
    let width: Int
    let height: Int
    /// RGB bytes, row after row.
    private(set) var pixels: [UInt8]

    /// A `width` × `height` image filled with `background` (0xRRGGBB).
    init(width: Int, height: Int, background: UInt32 = 0xFFFFFF) {
        precondition(width > 0 && height > 0, "empty image")
        self.width = width
        self.height = height
        let (r, g, b) = Self.rgb(background)
        pixels = [UInt8](repeating: 0, count: width * height * 3)
        for i in stride(from: 0, to: pixels.count, by: 3) { pixels[i] = r; pixels[i + 1] = g; pixels[i + 2] = b }
    }

    static func rgb(_ c: UInt32) -> (UInt8, UInt8, UInt8) {
        (UInt8(c >> 16 & 0xFF), UInt8(c >> 8 & 0xFF), UInt8(c & 0xFF))
    }

    /// Blends `color` over the pixel at (x, y) with `opacity` (0…1); outside the image: ignored.
    mutating func plot(_ x: Int, _ y: Int, _ color: UInt32, opacity: Double = 1) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = (y * width + x) * 3
        let (r, g, b) = Self.rgb(color)
        let a = min(max(opacity, 0), 1)
        func mix(_ old: UInt8, _ new: UInt8) -> UInt8 { UInt8((Double(old) * (1 - a) + Double(new) * a).rounded()) }
        pixels[i] = mix(pixels[i], r); pixels[i + 1] = mix(pixels[i + 1], g); pixels[i + 2] = mix(pixels[i + 2], b)
    }

    /// The colour at (x, y) as 0xRRGGBB.
    func pixel(_ x: Int, _ y: Int) -> UInt32 {
        let i = (y * width + x) * 3
        return UInt32(pixels[i]) << 16 | UInt32(pixels[i + 1]) << 8 | UInt32(pixels[i + 2])
    }

    mutating func fill(x: Double, y: Double, width w: Double, height h: Double, _ color: UInt32) {
        for py in Int(y.rounded())..<Int((y + h).rounded()) {
            for px in Int(x.rounded())..<Int((x + w).rounded()) { plot(px, py, color) }
        }
    }

    /// A line from (x0, y0) to (x1, y1), `thickness` pixels wide (a square pen stamped along it).
    mutating func line(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, _ color: UInt32,
                       thickness: Double = 1, opacity: Double = 1) {
        let steps = max(1, Int(max(abs(x1 - x0), abs(y1 - y0)).rounded(.up)))
        let r = max(0, Int(((thickness - 1) / 2).rounded()))
        var last: (Int, Int)?
        for s in 0...steps {
            let t = Double(s) / Double(steps)
            let cx = Int((x0 + (x1 - x0) * t).rounded()), cy = Int((y0 + (y1 - y0) * t).rounded())
            if let l = last, l == (cx, cy) { continue }
            last = (cx, cy)
            for dy in -r...r { for dx in -r...r { plot(cx + dx, cy + dy, color, opacity: opacity) } }
        }
    }

    /// `text` in the 5×7 font at `scale`, its left edge at `x` (or centred on it, or ending at
    /// it), its baseline at `y`. Characters the font lacks are drawn as a gap.
    mutating func text(_ text: String, x: Double, y: Double, anchor: TextAnchor = .start, _ color: UInt32 = 0x000000, scale: Int = 1) {
        let advance = 6 * scale
        let total = Double(text.count * advance - scale)
        var left = Int(x.rounded())
        switch anchor {
        case .start: break
        case .middle: left = Int((x - total / 2).rounded())
        case .end: left = Int((x - total).rounded())
        }
        let top = Int(y.rounded()) - 7 * scale
        for (n, ch) in text.enumerated() {
            guard let rows = Self.font[ch] ?? Self.font[Character(ch.lowercased())] else { continue }
            for (ry, bits) in rows.enumerated() {
                for rx in 0..<5 where bits & (0x10 >> rx) != 0 {
                    for sy in 0..<scale { for sx in 0..<scale { plot(left + n * advance + rx * scale + sx, top + ry * scale + sy, color) } }
                }
            }
        }
    }

    enum TextAnchor { case start, middle, end }

    // MARK: Encoding

    /// The image as a PNG file.
    func pngData() -> Data {
        var raw = [UInt8]()
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)  // filter: none
            raw += pixels[(y * width * 3)..<((y + 1) * width * 3)]
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = Self.bigEndian(UInt32(width)) + Self.bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]  // 8 bits, RGB, deflate, filter 0, no interlace
        Self.chunk("IHDR", header, into: &out)
        Self.chunk("IDAT", Self.zlibStored(raw), into: &out)
        Self.chunk("IEND", [], into: &out)
        return Data(out)
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        out += bigEndian(UInt32(data.count))
        out += typeBytes
        out += data
        out += bigEndian(crc32(typeBytes + data))
    }

    /// A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951 §3.2.4) holding `data`.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]  // deflate, 32 K window, no dictionary, check bits
        var offset = 0
        repeat {
            let n = min(65_535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out.append(final)  // BFINAL, BTYPE = 00 (stored)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        out += bigEndian(adler32(data))
        return out
    }

    static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for chunkStart in stride(from: 0, to: bytes.count, by: 5552) {
            for x in bytes[chunkStart..<min(bytes.count, chunkStart + 5552)] { a += UInt32(x); b += a }
            a %= 65_521
            b %= 65_521
        }
        return b << 16 | a
    }

    // MARK: Font

    /// A 5×7 font (rows top to bottom, bit 4 = leftmost column) for the plot's labels.
    static let font: [Character: [UInt8]] = [
        "0": [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E], "1": [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        "2": [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F], "3": [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        "4": [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02], "5": [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        "6": [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E], "7": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        "8": [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E], "9": [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        "+": [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00], "-": [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        ".": [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C], ":": [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        ",": [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08], "(": [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ")": [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08], "/": [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        "a": [0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F], "b": [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E],
        "c": [0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E], "d": [0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F],
        "e": [0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E], "f": [0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08],
        "g": [0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E], "h": [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11],
        "i": [0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E], "j": [0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0C],
        "k": [0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12], "l": [0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        "m": [0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11], "n": [0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11],
        "o": [0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E], "p": [0x00, 0x00, 0x1E, 0x11, 0x1E, 0x10, 0x10],
        "q": [0x00, 0x00, 0x0D, 0x13, 0x0F, 0x01, 0x01], "r": [0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10],
        "s": [0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E], "t": [0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06],
        "u": [0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D], "v": [0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04],
        "w": [0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A], "x": [0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11],
        "y": [0x00, 0x00, 0x11, 0x11, 0x0F, 0x01, 0x0E], "z": [0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F],
        "B": [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E], "H": [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
    ]
}
