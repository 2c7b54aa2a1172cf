// SPDX-License-Identifier: GPL-3.0-or-later

/// Text measured in terminal columns: CJK ideographs, kana, hangul, fullwidth forms and emoji
/// take two, combining marks none. The locale is not consulted (`wcwidth` answers -1 for all of
/// them under the C locale); characters of ambiguous width count one, as in Western terminals.
enum TextWidth {
    /// Columns `text` takes.
    static func of(_ text: some StringProtocol) -> Int { text.reduce(0) { $0 + of($1) } }

    /// Columns a character (a grapheme cluster) takes.
    static func of(_ c: Character) -> Int {
        guard let first = c.unicodeScalars.first else { return 0 }
        // An emoji made to look like one (VS16) is drawn two columns wide.
        if c.unicodeScalars.count > 1, c.unicodeScalars.contains("\u{FE0F}"), first.properties.isEmoji { return 2 }
        return of(first)
    }

    static func of(_ s: Unicode.Scalar) -> Int {
        let v = s.value
        if v < 0x20 || (0x7F..<0xA0).contains(v) { return 0 }
        if v < 0x300 { return 1 }
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if (0x1160...0x11FF).contains(v) { return 0 }  // hangul vowels and final consonants join the syllable
        if s.properties.isEmojiPresentation { return 2 }
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt, W and F, by block).
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F,
        0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
        0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x1F300...0x1F64F,
        0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// `text` cut to at most `columns` columns, ending in "…" when cut (a wide character that
    /// would straddle the edge is left out whole).
    static func clip(_ text: String, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        guard of(text) > columns else { return text }
        var out = ""
        var used = 0
        for c in text {
            let w = of(c)
            if used + w > columns - 1 { break }
            out.append(c)
            used += w
        }
        return out + "…"
    }

    /// `text` clipped to `columns` and padded with spaces to exactly that many.
    static func fit(_ text: String, to columns: Int) -> String {
        let clipped = clip(text, to: columns)
        return clipped + String(repeating: " ", count: max(0, columns - of(clipped)))
    }

    /// Text from a tag made safe to draw: control characters (an escape sequence hidden in a
    /// title would drive the terminal) become "?", and bidirectional overrides are dropped.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) || bidi.contains($0.value) })
        else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if bidi.contains(s.value) { continue }
            out.append(s.value < 0x20 || (0x7F..<0xA0).contains(s.value) ? "?" : s)
        }
        return String(out)
    }

    private static let bidi: Set<UInt32> = [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
}
