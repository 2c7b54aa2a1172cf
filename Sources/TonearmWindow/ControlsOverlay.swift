// SPDX-License-Identifier: GPL-3.0-or-later

/// What a player's built-in controls show: the state they are drawn from.
public struct ControlsState: Sendable, Hashable {
    public var isPlaying: Bool
    /// Seconds played.
    public var currentTime: Double
    /// The item's length in seconds; nil when unknown (a live stream: no remaining time).
    public var duration: Double?
    /// How far the item is loaded (buffered), in seconds from its start; nil when all of it is
    /// there (a local file).
    public var bufferedUntil: Double?
    /// 0…1.
    public var volume: Double
    public var isMuted: Bool

    public init(isPlaying: Bool, currentTime: Double, duration: Double?, bufferedUntil: Double? = nil,
                volume: Double = 1, isMuted: Bool = false) {
        self.isPlaying = isPlaying
        self.currentTime = currentTime
        self.duration = duration
        self.bufferedUntil = bufferedUntil
        self.volume = volume
        self.isMuted = isMuted
    }
}

/// A colour with opacity, 8 bits a channel.
public struct OverlayColor: Sendable, Hashable {
    public var r: UInt8, g: UInt8, b: UInt8, a: UInt8
    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8 = 255) {
        self.r = r
        self.g = g
        self.b = b
        self.a = a
    }

    public static let panel = OverlayColor(0, 0, 0, 160)
    public static let track = OverlayColor(96, 96, 96)
    public static let buffered = OverlayColor(160, 160, 160)
    public static let played = OverlayColor(255, 255, 255)
    public static let glyph = OverlayColor(255, 255, 255)
    public static let text = OverlayColor(255, 255, 255)
    public static let muted = OverlayColor(200, 60, 60)
}

/// One filled rectangle of the overlay, in window pixels (drawn in order, blended).
public struct OverlayRect: Sendable, Hashable {
    public var x: Int, y: Int, width: Int, height: Int
    public var color: OverlayColor
    /// What it is part of (for hit tests and for tests).
    public var part: Part

    public enum Part: String, Sendable, Hashable {
        case panel, playPause, elapsed, remaining, seekTrack, seekBuffered, seekPlayed, volumeTrack, volumeLevel
    }

    public init(x: Int, y: Int, width: Int, height: Int, color: OverlayColor, part: Part) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.color = color
        self.part = part
    }

    public func contains(x px: Int, y py: Int) -> Bool { px >= x && px < x + width && py >= y && py < y + height }
}

/// A player's built-in controls over the video, as a plain value: when they are visible
/// (shown by activity — the mouse, a key — and hidden `hideDelay` seconds after the last), and
/// what to draw for a state in a window of a given size: a bar along the bottom with a
/// play/pause glyph, the elapsed time, a seek bar (played and buffered parts), the remaining
/// time and the volume. Times are seconds on any monotonic clock the caller keeps.
public struct ControlsOverlay: Sendable, Hashable {
    public var hideDelay: Double
    /// When the last activity was; nil when never (hidden).
    public private(set) var lastActivity: Double?

    public init(hideDelay: Double = 3) {
        self.hideDelay = hideDelay
    }

    /// The mouse moved or a key was pressed at `time`: the controls show (again) from then.
    public mutating func activity(at time: Double) { lastActivity = time }

    /// Hides the controls now.
    public mutating func hide() { lastActivity = nil }

    public func isVisible(at time: Double) -> Bool {
        guard let last = lastActivity else { return false }
        return time >= last && time < last + hideDelay
    }

    /// When the controls hide, if they are visible at `time` (the moment to draw again).
    public func hideTime(after time: Double) -> Double? {
        isVisible(at: time) ? lastActivity.map { $0 + hideDelay } : nil
    }

    // The layout, in pixels.
    static let barHeight = 40
    static let margin = 8
    static let glyphSize = 20
    static let trackHeight = 6
    /// The narrowest seek bar drawn before the volume and then the remaining time make room.
    static let minimumSeekWidth = 32
    static let volumeWidth = 40
    static let textScale = 2

    /// What to draw at `time` for `state` in a `width × height` window; nothing when hidden.
    public func rectangles(for state: ControlsState, width: Int, height: Int, at time: Double) -> [OverlayRect] {
        guard isVisible(at: time) else { return [] }
        return Self.layout(state, width: width, height: height)
    }

    /// The controls' rectangles whether visible or not (the layout alone).
    public static func layout(_ state: ControlsState, width: Int, height: Int) -> [OverlayRect] {
        guard width > 0, height > 0 else { return [] }
        var out: [OverlayRect] = []
        let top = max(0, height - barHeight)
        let midY = top + barHeight / 2
        out.append(OverlayRect(x: 0, y: top, width: width, height: height - top, color: .panel, part: .panel))

        // Play/pause: while playing the pause glyph (two bars), while paused the play glyph (a
        // right-pointing triangle, one rectangle a row).
        let gx = margin, gy = midY - glyphSize / 2
        if state.isPlaying {
            let bar = glyphSize / 3
            out.append(OverlayRect(x: gx, y: gy, width: bar, height: glyphSize, color: .glyph, part: .playPause))
            out.append(OverlayRect(x: gx + glyphSize - bar, y: gy, width: bar, height: glyphSize, color: .glyph, part: .playPause))
        } else {
            for row in 0..<glyphSize {
                let fromEdge = min(row, glyphSize - 1 - row)  // 0 at the tips, most at the middle
                out.append(OverlayRect(x: gx, y: gy + row, width: min(glyphSize, (fromEdge + 1) * 2), height: 1,
                                       color: .glyph, part: .playPause))
            }
        }

        // Elapsed time after the glyph; remaining time (when the length is known) and the volume at the right.
        let elapsedText = Self.clock(state.currentTime)
        var x = gx + glyphSize + margin
        let textY = midY - DigitFont.height * textScale / 2
        out += DigitFont.rectangles(elapsedText, x: x, y: textY, scale: textScale, color: .text, part: .elapsed)
        x += DigitFont.width(of: elapsedText, scale: textScale) + margin

        // In a narrow window the seek bar keeps at least ``minimumSeekWidth``: the volume goes
        // first, then the remaining time (a 160-pixel video has a bar, as mpv's has).
        let remainingText = state.duration.map { "-" + Self.clock(max(0, $0 - state.currentTime)) }
        let remainingWidth = remainingText.map { DigitFont.width(of: $0, scale: textScale) + margin } ?? 0
        let full = width - margin - x
        let showsVolume = full - volumeWidth - margin - remainingWidth >= minimumSeekWidth
        let showsRemaining = full - (showsVolume ? volumeWidth + margin : 0) - remainingWidth >= minimumSeekWidth
        var right = width - margin
        if showsVolume {
            let volumeX = right - volumeWidth
            out.append(OverlayRect(x: volumeX, y: midY - trackHeight / 2, width: volumeWidth, height: trackHeight,
                                   color: .track, part: .volumeTrack))
            let level = Int((min(max(state.volume, 0), 1) * Double(volumeWidth)).rounded())
            out.append(OverlayRect(x: volumeX, y: midY - trackHeight / 2, width: state.isMuted ? volumeWidth : level,
                                   height: trackHeight, color: state.isMuted ? .muted : .played, part: .volumeLevel))
            right = volumeX - margin
        }
        if showsRemaining, let remainingText {
            let w = DigitFont.width(of: remainingText, scale: textScale)
            out += DigitFont.rectangles(remainingText, x: right - w, y: textY, scale: textScale, color: .text, part: .remaining)
            right -= w + margin
        }

        // The seek bar between: the track, the buffered part over it, the played part over that.
        let trackWidth = right - x
        if trackWidth > 0 {
            let ty = midY - trackHeight / 2
            out.append(OverlayRect(x: x, y: ty, width: trackWidth, height: trackHeight, color: .track, part: .seekTrack))
            if let duration = state.duration, duration > 0 {
                let buffered = state.bufferedUntil.map { min(max($0 / duration, 0), 1) } ?? 1
                out.append(OverlayRect(x: x, y: ty, width: Int((buffered * Double(trackWidth)).rounded()), height: trackHeight,
                                       color: .buffered, part: .seekBuffered))
                let played = min(max(state.currentTime / duration, 0), 1)
                out.append(OverlayRect(x: x, y: ty, width: Int((played * Double(trackWidth)).rounded()), height: trackHeight,
                                       color: .played, part: .seekPlayed))
            }
        }
        return out
    }

    /// What a click at (x, y) means with these controls showing: a seek to a time (on the seek
    /// bar, or the bar's height around it), play/pause (on the glyph), or nothing.
    public static func hit(x: Int, y: Int, state: ControlsState, width: Int, height: Int) -> ControlsAction? {
        let rects = layout(state, width: width, height: height)
        guard let panel = rects.first(where: { $0.part == .panel }), panel.contains(x: x, y: y) else { return nil }
        if let track = rects.first(where: { $0.part == .seekTrack }), x >= track.x, x < track.x + track.width,
           let duration = state.duration, duration > 0 {
            let fraction = Double(x - track.x) / Double(max(1, track.width - 1))
            return .seek(to: min(max(fraction, 0), 1) * duration)
        }
        if x < margin + glyphSize + margin / 2 { return .playPause }
        return nil
    }

    /// `m:ss`, or `h:mm:ss` from an hour on (whole seconds, rounded down).
    public static func clock(_ seconds: Double) -> String {
        let total = seconds.isFinite ? max(0, Int(seconds.rounded(.down))) : 0
        let h = total / 3600, m = (total / 60) % 60, s = total % 60
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }
}

/// What a click on the controls asks for.
public enum ControlsAction: Sendable, Hashable {
    case playPause
    case seek(to: Double)
}

/// A 3×5 pixel font of the digits, `:` and `-` (what a clock needs), drawn as rectangles.
enum DigitFont {
    static let width = 3, height = 5, spacing = 1

    /// Rows of three bits, top first, the left pixel the highest bit.
    static func glyph(_ c: Character) -> [UInt8] {
        switch c {
        case "0": [7, 5, 5, 5, 7]
        case "1": [2, 6, 2, 2, 7]
        case "2": [7, 1, 7, 4, 7]
        case "3": [7, 1, 7, 1, 7]
        case "4": [5, 5, 7, 1, 1]
        case "5": [7, 4, 7, 1, 7]
        case "6": [7, 4, 7, 5, 7]
        case "7": [7, 1, 2, 2, 2]
        case "8": [7, 5, 7, 5, 7]
        case "9": [7, 5, 7, 1, 7]
        case ":": [0, 2, 0, 2, 0]
        case "-": [0, 0, 7, 0, 0]
        default: [0, 0, 0, 0, 0]
        }
    }

    static func width(of text: String, scale: Int) -> Int {
        text.isEmpty ? 0 : (text.count * (width + spacing) - spacing) * scale
    }

    /// One rectangle per lit pixel run of each row.
    static func rectangles(_ text: String, x: Int, y: Int, scale: Int, color: OverlayColor,
                           part: OverlayRect.Part) -> [OverlayRect] {
        var out: [OverlayRect] = []
        for (i, c) in text.enumerated() {
            let gx = x + i * (width + spacing) * scale
            for (row, bits) in glyph(c).enumerated() {
                var col = 0
                while col < width {
                    guard bits & (1 << (width - 1 - col)) != 0 else { col += 1; continue }
                    var end = col
                    while end < width, bits & (1 << (width - 1 - end)) != 0 { end += 1 }
                    out.append(OverlayRect(x: gx + col * scale, y: y + row * scale, width: (end - col) * scale,
                                           height: scale, color: color, part: part))
                    col = end
                }
            }
        }
        return out
    }

    /// The text read back from rectangles drawn by ``rectangles(_:x:y:scale:color:part:)`` at
    /// (x, y) (for tests: what a person would read).
    static func read(_ rects: [OverlayRect], x: Int, y: Int, scale: Int, count: Int) -> String {
        var text = ""
        for i in 0..<count {
            let gx = x + i * (width + spacing) * scale
            var rows = [UInt8](repeating: 0, count: height)
            for r in rects {
                for px in stride(from: r.x, to: r.x + r.width, by: scale) {
                    let col = (px - gx) / scale, row = (r.y - y) / scale
                    if col >= 0, col < width, row >= 0, row < height { rows[row] |= 1 << (width - 1 - col) }
                }
            }
            let all: [Character] = Array("0123456789:-")
            text.append(all.first { glyph($0) == rows } ?? "?")
        }
        return text
    }
}
