// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm

/// Draws `tonearm pick` into lines of terminal text: a pure function of the picker and the
/// terminal's size, tested without a terminal. Every line fits the width in columns (wide CJK
/// text measured as two), and there are exactly `height` lines:
///
/// ```
///  Songs  Artists  Albums  Genres  Playlists  Selected (2)        the views, the current one lit
///  Search: sæglópur▏                                              the search (a cursor while typing)
///  Songs                                                 4 of 51  where, and how many rows
/// ▸✓ Sæglópur 2-1  Sigur Rós — Ágætis byrjun            0:00     the rows: highlight, selection
///  …
///  2 selected, 0:00 · Enter: play them                            what Enter does
///  ↑↓ move  space select  ^A all  →/← open/back  Tab view  …       the keys
/// ```
enum PickerScreen {
    /// Lines that are not rows.
    static let chrome = 5

    /// The keys line: each key with what it does, the least needed left out first when the
    /// terminal is narrow (the arrows, which explain themselves, first; Enter and Esc stay).
    static func help(verb: String, width: Int) -> String {
        // (key, what it does, how much it is needed)
        var items = [("↑↓", "move", 1), ("space", "select", 6), ("^A", "all", 2), ("→/←", "open/back", 5), ("Tab", "view", 4),
                     ("Enter", verb, 9), ("Esc", "cancel", 8)]
        func text(_ bold: Bool) -> String {
            " " + items.map { bold ? "\u{1B}[1m\($0.0)\u{1B}[22m \($0.1)" : "\($0.0) \($0.1)" }.joined(separator: "  ")
        }
        while TextWidth.of(text(false)) > width, let least = items.filter({ $0.2 < 8 }).min(by: { $0.2 < $1.2 }) {
            items.removeAll { $0.0 == least.0 }
        }
        let plain = text(false)
        guard TextWidth.of(plain) <= width else { return TextWidth.clip(plain, to: width) }
        return text(true) + String(repeating: " ", count: width - TextWidth.of(plain))
    }

    /// What the rows leave for a terminal of `height` lines.
    static func pageSize(height: Int) -> Int { max(1, height - chrome) }

    /// The screen, one string per line. `verb` names what Enter does ("play", "queue", "print").
    static func render(_ p: MediaPicker, width: Int, height: Int, verb: String, libraryPath: String) -> [String] {
        let w = max(20, width) - 1  // the last column stays free: no terminal wraps early
        var lines: [String] = []

        // The views.
        var tabs = ""
        var tabsWidth = 0
        for v in MediaPicker.View.allCases {
            let name = v == .selected && !p.selection.isEmpty ? "\(v.title) (\(p.selection.count))" : v.title
            let cell = " \(name) "
            guard tabsWidth + TextWidth.of(cell) + 1 <= w else { break }
            tabs += (v == p.view ? "\u{1B}[1;7m" + cell + "\u{1B}[0m" : cell) + " "
            tabsWidth += TextWidth.of(cell) + 1
        }
        lines.append(tabs + String(repeating: " ", count: max(0, w - tabsWidth)))

        // The search.
        let label = " Search: "
        let cursor = p.isTyping ? "▏" : ""
        let room = w - TextWidth.of(label) - TextWidth.of(cursor)
        var search = TextWidth.printable(p.search)
        // A long search shows its end, where the typing is.
        while TextWidth.of(search) > room, !search.isEmpty { search.removeFirst() }
        lines.append(TextWidth.fit(label + search + cursor, to: w))

        // Where, and how many.
        let count = p.rows.isEmpty ? "" : "\(p.cursor + 1) of \(p.rows.count) "
        let path = " " + p.path.map(TextWidth.printable).joined(separator: " › ")
        lines.append(TextWidth.fit(path, to: w - TextWidth.of(count)) + count)

        // The rows, or why there are none.
        let page = pageSize(height: height)
        if p.rows.isEmpty {
            var why: [String]
            if p.isLibraryEmpty {
                why = ["The library is empty: \(libraryPath)", "Scan folders into it first: tonearm library scan DIR"]
            } else if let m = p.message {
                why = ["The library cannot be read: \(m)"]
            } else if !p.search.isEmpty {
                why = ["Nothing matches “\(p.search)”."]
                if p.view == .songs && !p.canGoBack { why.append("Each word must start a word of a title, artist or album (Chinese, Japanese and Korean: any part; Chinese also in pinyin).") }
            } else if p.view == .selected {
                why = ["Nothing selected yet: space selects the highlighted row."]
            } else if p.view == .playlists {
                why = ["No playlists: tonearm library playlist create NAME"]
            } else {
                why = ["Nothing here."]
            }
            for line in why.prefix(page) { lines.append(TextWidth.fit(" " + TextWidth.printable(line), to: w)) }
            for _ in why.prefix(page).count..<page { lines.append(String(repeating: " ", count: w)) }
        } else {
            for i in p.top..<min(p.rows.count, p.top + page) {
                lines.append(row(p.rows[i], of: p, highlighted: i == p.cursor, width: w))
            }
            for _ in min(p.rows.count, p.top + page) - p.top..<page { lines.append(String(repeating: " ", count: w)) }
        }

        // What Enter does.
        let status: String
        if !p.selection.isEmpty {
            let seconds = p.selection.reduce(0) { $0 + $1.duration }
            status = " \(p.selection.count) selected, \(formatTime(seconds)) · Enter: \(verb) them"
        } else if let r = p.highlighted {
            status = r.kind == .song ? " Enter: \(verb) this song" : " Enter: \(verb) this \(r.kind.rawValue)'s \(r.items.count == 1 ? "song" : "\(r.items.count) songs")"
        } else {
            status = ""
        }
        lines.append(TextWidth.fit(status, to: w))
        lines.append(help(verb: verb, width: w))
        return Array(lines.prefix(max(1, height)))
    }

    /// One row: `▸` on the highlighted one, `✓` when selected (`~` partly), the title, the detail
    /// dimmed, the length on the right, and `›` when → opens it.
    static func row(_ r: MediaPicker.Row, of p: MediaPicker, highlighted: Bool, width w: Int) -> String {
        let mark: String
        switch p.selectionState(of: r) {
        case .all: mark = "✓"
        case .some: mark = "~"
        case .none: mark = " "
        }
        let left = (highlighted ? "▸" : " ") + mark + " "
        let right = " " + formatTime(r.duration) + (r.opens ? " ›" : "  ")
        let rest = max(0, w - TextWidth.of(left) - TextWidth.of(right))
        let title = TextWidth.printable(r.title)
        let detail = TextWidth.printable(r.detail)
        let tw = TextWidth.of(title), dw = TextWidth.of(detail)
        var titleText: String, detailText: String
        if detail.isEmpty || tw + 2 + dw <= rest {
            titleText = TextWidth.clip(title, to: rest)
            detailText = detail.isEmpty ? "" : TextWidth.clip(detail, to: max(0, rest - TextWidth.of(titleText) - 2))
        } else {
            // Too long for both: the title gets at least three fifths.
            titleText = TextWidth.clip(title, to: max(rest * 3 / 5, rest - dw - 2))
            let left = rest - TextWidth.of(titleText) - 2
            detailText = left >= 4 ? TextWidth.clip(detail, to: left) : ""
        }
        let used = TextWidth.of(titleText) + (detailText.isEmpty ? 0 : 2 + TextWidth.of(detailText))
        let pad = String(repeating: " ", count: max(0, rest - used))
        let body = left + titleText + (detailText.isEmpty ? "" : "  \u{1B}[2m" + detailText + "\u{1B}[22m") + pad + right
        // The highlight: reverse video in the list; while typing, only the ▸ (Enter's row).
        return highlighted && !p.isTyping ? "\u{1B}[7m" + body + "\u{1B}[0m" : body
    }
}
