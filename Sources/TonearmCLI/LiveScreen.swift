// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Tonearm

/// What the live screen shows, as a plain value.
struct ScreenState: Sendable {
    enum Status: String, Sendable {
        case playing = "▶ Playing", paused = "⏸ Paused", loading = "… Loading", stopped = "■ Stopped"
        /// Waiting for the network (a stream's buffer ran dry or has not filled yet).
        case buffering = "⧗ Buffering"
    }

    /// One item of the queue as listed: its title and artist (from the tags; the file name
    /// when untagged), and why it failed, when it did.
    struct QueueRow: Sendable, Equatable {
        var title: String
        var artist: String?
        var failure: String?
    }

    var status: Status = .loading
    var title: String = ""
    var artist: String?
    var album: String?
    var albumArtist: String?
    var artwork: Artwork?
    var format: String = ""
    var elapsed: Double = 0
    var duration: Double = 0
    var volume: Float = 1
    var muted = false
    /// The volume of the output in use (the system's), when known.
    var systemVolume: SystemVolumeState?
    var repeatMode: RepeatMode = .none
    var shuffleMode: ShuffleMode = .off
    var eq: String = "flat"
    var rate: Float = 1
    var output: String = ""
    var notice: String?
    var message: String?
    /// The queue in play order (shuffled: the order it plays in).
    var queue: [QueueRow] = []
    /// The row of ``queue`` that is playing.
    var current: Int?
    /// The row under the cursor while the queue has the focus (nil: it has not).
    var cursor: Int?
    /// A stream's parts in memory, in seconds (drawn on the progress bar).
    var loaded: [ClosedRange<Double>] = []
    /// A live stream (radio): no duration; the bar shows the buffer instead.
    var isLive = false
    /// Seconds buffered ahead of the playhead (streams).
    var bufferedAhead: Double?
    /// The keys line, when not the one made from ``keys``.
    var help: String?
    /// The key help drawn over the screen (`?`).
    var showsHelp = false
    /// Whether colours may be used (not when `NO_COLOR` is set; reverse video and bold stay).
    var color = true
    var keys: KeyBindings = .defaults

    /// Whether colours may be used in this environment (https://no-color.org: `NO_COLOR` set
    /// and not empty turns them off).
    static func colorAllowed(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        (environment["NO_COLOR"] ?? "").isEmpty
    }
}

/// How a repeat mode is named on the screen: as the `--repeat` option names it.
extension RepeatMode {
    var displayName: String {
        switch self {
        case .none: "off"
        case .one: "one"
        case .all: "all"
        }
    }
}

/// How the shuffle mode is named on the screen: on or off, as the `s` key and `--shuffle` /
/// `--no-shuffle` say it (every shuffle Tonearm does is of songs).
extension ShuffleMode {
    var displayName: String { self == .off ? "off" : "on" }
}

/// Draws the live screen of `tonearm play`: a pure function of the state and the terminal's
/// size, tested without a terminal. Every line fits the width in columns (wide CJK text counts
/// two; the last column stays free, so that no terminal wraps), and there are exactly `height`
/// lines. The now-playing block (title, artist, album, format, progress, volume and modes)
/// always stays in view; the queue takes the rows that are left, around the current item (or the
/// cursor), with "… N more" where it is cut; the keys line is the last row. On a terminal too
/// short even for the block, blank lines go first, then the queue, then the album and format.
enum LiveScreen {
    /// The keys line of the default bindings (for the command's help).
    static var help: String { keysLine(.defaults, queueFocused: false, width: 200) }

    static func render(_ s: ScreenState, width: Int, height: Int = 40) -> String {
        lines(s, width: width, height: height).joined(separator: "\n")
    }

    /// A line and how much it is needed when rows are short (higher stays longer).
    private struct Line {
        var text: String
        var keep: Int
        /// Text already fitted and styled (escape sequences inside).
        var styled = false
    }

    /// The screen, one string per line (exactly `height`; at least one).
    static func lines(_ s: ScreenState, width: Int, height: Int) -> [String] {
        let w = max(1, width - 1)
        let h = max(1, height)
        var top: [Line] = []
        func add(_ text: String, _ keep: Int) { top.append(Line(text: text, keep: keep)) }
        add(fit(" Tonearm  \(s.status.rawValue)", right: "output: \(s.output) ", width: w), 100)
        if let n = s.notice { add(" ! \(n)", 60) }
        add("", 10)
        add(" Title   \(TextWidth.printable(s.title))", 100)
        add(" Artist  \(TextWidth.printable(s.artist ?? "—"))", 90)
        add(" Album   \(TextWidth.printable(s.album ?? "—"))", 50)
        add(" Format  \(s.format)", 40)
        add("", 10)
        if s.isLive {
            let ahead = s.bufferedAhead.map { String(format: " · %.1f s buffered", $0) } ?? ""
            add(" ● LIVE  \(formatTime(s.elapsed)) played\(ahead)", 100)
        } else {
            let times = " \(formatTime(s.elapsed)) / \(formatTime(s.duration))"
            let barWidth = max(3, w - TextWidth.of(times) - 3)
            add(" " + progressBar(elapsed: s.elapsed, duration: s.duration, loaded: s.loaded, width: barWidth) + times, 100)
        }
        let vol = Int((s.volume * 100).rounded())
        let volBar = max(5, min(20, w - 25))
        add(" Volume  " + bar(fraction: s.muted ? 0 : Double(s.volume), width: volBar) + " \(vol)%" + (s.muted ? " (muted)" : ""), 95)
        let modes = ["Repeat: \(s.repeatMode.displayName)", "Shuffle: \(s.shuffleMode.displayName)", "EQ: \(s.eq)",
                     "Speed: \(String(format: "%.1f", s.rate))×"]
        for line in flow(modes, width: w) { add(line, 95) }
        if let sv = s.systemVolume {
            let pct = Int((sv.volume * 100).rounded())
            add(" System  " + bar(fraction: Double(min(1, sv.volume)), width: volBar) + " \(pct)%\(sv.isMuted ? " (muted)" : "")   \(sv.outputName)", 80)
        }
        add("", 10)
        if let m = s.message {
            add(" \(TextWidth.printable(m))", 85)
            add("", 10)
        }
        let keysLine = Line(text: s.help ?? keysLine(s.keys, queueFocused: s.cursor != nil, width: w), keep: 70)

        // The queue gets the rows the block and the keys line leave, when at least two. Too
        // short: blank lines go first, then (when the block itself does not fit) the least needed.
        var room = h - top.count - 1
        while room < (s.queue.isEmpty ? 0 : 2), let blank = top.lastIndex(where: { $0.keep <= 10 }) {
            top.remove(at: blank)
            room += 1
        }
        while top.count + 1 > h, let least = top.indices.filter({ top[$0].keep < 100 }).min(by: { top[$0].keep < top[$1].keep }) {
            top.remove(at: least)
            room += 1
        }
        var body = top
        if !s.queue.isEmpty && room >= 2 {
            body += queueLines(s, width: w, rows: room - 1)
        }
        var out = body.map { $0.styled ? $0.text : TextWidth.clip($0.text, to: w) }
        // Blank rows down to the keys line, which is the last row.
        if out.count < h - 1 { out += Array(repeating: "", count: h - 1 - out.count) }
        out = Array(out.prefix(h - 1))
        out.append(TextWidth.clip(keysLine.text, to: w))
        if s.showsHelp { out = overlayHelp(on: out, keys: s.keys, width: w, height: h) }
        return out
    }

    /// The queue's title line and rows: a window of `rows` rows around the cursor (or the
    /// current item), with "… N more" for what is cut after it (and before it).
    private static func queueLines(_ s: ScreenState, width w: Int, rows: Int) -> [Line] {
        var lines: [Line] = []
        let focused = s.cursor != nil
        lines.append(Line(text: " Queue (\(s.queue.count))" + (focused ? " — browsing" : "") + ":", keep: 0))
        let count = s.queue.count
        let focus = min(max(0, s.cursor ?? s.current ?? 0), count - 1)
        let (start, end) = window(count: count, focus: focus, rows: rows)
        if start > 0 { lines.append(Line(text: "   … \(start) more", keep: 0)) }
        for i in start..<end {
            lines.append(Line(text: row(s, i, width: w), keep: 0, styled: true))
        }
        if end < count { lines.append(Line(text: "   … \(count - end) more", keep: 0)) }
        return lines
    }

    /// Which rows of `count` show in `rows` lines, `focus` among them: (first, past the last).
    /// A line goes to "… N more" at each end that is cut (when there are three lines or more).
    static func window(count: Int, focus: Int, rows: Int) -> (Int, Int) {
        guard rows > 0, count > 0 else { return (0, 0) }
        if count <= rows { return (0, count) }
        if rows < 3 {
            let start = min(max(0, focus - rows / 2), count - rows)
            return (start, start + rows)
        }
        // With "… N more" at both ends, a third of the rows before the focus.
        let n = rows - 2
        let start = focus - n / 3
        if start <= 0 { return (0, rows - 1) }  // cut at the end only
        if start + n >= count - 1 { return (count - (rows - 1), count) }  // at the start only
        return (start, start + n)
    }

    /// One queue row, fitted to `w`: `▶` on the current item, `✗` on a failed one (with why),
    /// the current item bold (and coloured unless NO_COLOR), the cursor's row in reverse video.
    static func row(_ s: ScreenState, _ i: Int, width w: Int) -> String {
        let r = s.queue[i]
        let isCurrent = i == s.current
        let mark = isCurrent ? "▶" : (r.failure != nil ? "✗" : " ")
        var text = " \(mark) \(i + 1). \(TextWidth.printable(r.title))"
        if let a = r.artist, !a.isEmpty { text += " — \(TextWidth.printable(a))" }
        if let f = r.failure { text += "  (\(TextWidth.printable(f)))" }
        let plain = TextWidth.clip(text, to: w)
        let isCursor = i == s.cursor
        var style: [String] = []
        if isCurrent { style.append("1") }
        if isCurrent && s.color { style.append("36") }
        if r.failure != nil && s.color && !isCurrent { style.append("31") }
        if isCursor { style.append("7") }
        guard !style.isEmpty else { return plain }
        // The cursor's bar spans the width.
        let body = isCursor ? plain + String(repeating: " ", count: max(0, w - TextWidth.of(plain))) : plain
        return "\u{1B}[" + style.joined(separator: ";") + "m" + body + "\u{1B}[0m"
    }

    /// Items joined by three spaces on lines of at most `width` columns, each line led by a space.
    static func flow(_ items: [String], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for item in items {
            let candidate = line.isEmpty ? " " + item : line + "   " + item
            if TextWidth.of(candidate) <= width || line.isEmpty {
                line = candidate
            } else {
                lines.append(line)
                line = " " + item
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// The keys line: the most needed keys (from the bindings) that fit the width.
    static func keysLine(_ keys: KeyBindings, queueFocused: Bool, width: Int) -> String {
        func k(_ a: KeyAction, _ n: Int = 1) -> String? {
            let ks = keys.keys(for: a)
            return ks.isEmpty ? nil : ks.prefix(n).map(KeyBindings.display).joined(separator: "/")
        }
        func pair(_ a: KeyAction, _ b: KeyAction) -> String? {
            guard let x = k(a), let y = k(b) else { return k(a) ?? k(b) }
            return x + "/" + y
        }
        // (text, how much it is needed)
        let items: [(String?, Int)]
        if queueFocused {
            items = [(pair(.queueUp, .queueDown).map { "\($0) move" }, 9), (k(.queuePlay).map { "\($0) play" }, 8),
                     (k(.queueRemove).map { "\($0) remove" }, 7), (pair(.queueMoveUp, .queueMoveDown).map { "\($0) reorder" }, 6),
                     (k(.add).map { "\($0) add" }, 5), (k(.focusQueue).map { "\($0) back" }, 9), (k(.help).map { "\($0) keys" }, 4),
                     (k(.quit).map { "\($0) quit" }, 9)]
        } else {
            items = [(k(.pause).map { "\($0) pause" }, 9), (pair(.seekBack, .seekForward).map { "\($0) seek" }, 6),
                     (pair(.volumeUp, .volumeDown).map { "\($0) volume" }, 5), (pair(.next, .previous).map { "\($0) next/prev" }, 7),
                     (k(.repeat).map { "\($0) repeat" }, 2), (k(.shuffle).map { "\($0) shuffle" }, 2), (k(.eqNext).map { "\($0) EQ" }, 1),
                     (pair(.slower, .faster).map { "\($0) speed" }, 1), (k(.focusQueue).map { "\($0) queue" }, 3),
                     (k(.help).map { "\($0) keys" }, 8), (k(.quit).map { "\($0) quit" }, 9)]
        }
        var shown = items.compactMap { t, n in t.map { ($0, n) } }
        func text() -> String { " " + shown.map(\.0).joined(separator: " · ") }
        while TextWidth.of(text()) > width, let least = shown.indices.filter({ shown[$0].1 < 9 }).min(by: { shown[$0].1 < shown[$1].1 }) {
            shown.remove(at: least)
        }
        return TextWidth.clip(text(), to: width)
    }

    /// The key help (`?`): every action with its keys, in a box drawn over the screen's lower
    /// part (over all of it when it is short).
    static func overlayHelp(on screen: [String], keys: KeyBindings, width w: Int, height h: Int) -> [String] {
        var entries: [(String, String)] = []
        for a in KeyAction.allCases {
            let ks = keys.keys(for: a).map(KeyBindings.display)
            guard !ks.isEmpty else { continue }
            entries.append((ks.joined(separator: " "), a.summary))
        }
        let keyColumn = min(12, entries.map { TextWidth.of($0.0) }.max() ?? 0)
        let cells = entries.map { " " + TextWidth.fit($0.0, to: keyColumn) + "  " + $0.1 }
        let cellWidth = cells.map { TextWidth.of($0) }.max() ?? 0
        var box = [" Keys — any key closes this"]
        if 2 * cellWidth + 3 <= w - 2 {
            // Two columns: the first half of the actions on the left.
            let half = (cells.count + 1) / 2
            for i in 0..<half {
                box.append(TextWidth.fit(cells[i], to: cellWidth) + "  " + (i + half < cells.count ? cells[i + half] : ""))
            }
        } else {
            box += cells
        }
        let inner = min(w - 2, (box.map { TextWidth.of($0) }.max() ?? 0) + 1)
        guard inner >= 4, h >= 3 else { return screen }
        // Rows for the entries inside the frame; what does not fit ends in "…".
        let fits = min(box.count, h - 2)
        var body = Array(box.prefix(fits))
        if fits < box.count, let last = body.indices.last { body[last] = "  …" }
        var framed = ["┌" + String(repeating: "─", count: inner) + "┐"]
        framed += body.map { "│" + TextWidth.fit($0, to: inner) + "│" }
        framed.append("└" + String(repeating: "─", count: inner) + "┘")
        var out = screen
        let first = max(0, min(h - framed.count, h / 3))
        for (n, line) in framed.enumerated() where first + n < out.count {
            out[first + n] = "\u{1B}[7m" + line + "\u{1B}[0m"
        }
        return out
    }

    /// The progress bar of a stream: played cells `█`, cells in memory but not played `▒`, the
    /// rest `░` (without loaded ranges: the plain bar).
    static func progressBar(elapsed: Double, duration: Double, loaded: [ClosedRange<Double>], width: Int) -> String {
        guard !loaded.isEmpty, duration > 0 else { return bar(fraction: duration > 0 ? elapsed / duration : 0, width: width) }
        var cells = ""
        for i in 0..<width {
            let start = Double(i) / Double(width) * duration
            let end = Double(i + 1) / Double(width) * duration
            if end <= elapsed + duration / Double(width) / 2 && start < elapsed {
                cells += "█"
            } else if loaded.contains(where: { $0.lowerBound <= start + 1e-9 && $0.upperBound >= end - 1e-9 }) {
                cells += "▒"
            } else {
                cells += "░"
            }
        }
        return "[" + cells + "]"
    }

    /// `[█████░░░░░]` with `width` cells inside the brackets.
    static func bar(fraction: Double, width: Int) -> String {
        let f = fraction.isFinite ? max(0, min(1, fraction)) : 0
        let filled = Int((f * Double(width)).rounded(.down))
        return "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "]"
    }

    /// `left` and `right` on one line of `width` columns, apart; clipped when they do not fit.
    static func fit(_ left: String, right: String, width: Int) -> String {
        let pad = width - TextWidth.of(left) - TextWidth.of(right)
        return pad >= 1 ? left + String(repeating: " ", count: pad) + right : TextWidth.clip(left + "  " + right, to: width)
    }
}
