// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What the full-text index (`itemSearch`, over the item's `searchKey` column) holds for an item,
/// and how a user's text becomes an FTS5 query over it. Pure; any thread.
///
/// - Words: the folded title, artist and album (``SearchKey``); every query word must start a
///   word of one of them ("lemon" finds "Lemonade").
/// - Chinese, Japanese and Korean: FTS5's unicode61 tokenizer splits text at spaces and
///   punctuation only, so a run of Chinese (written without spaces) would be one word, found only
///   from its first character. The indexed text has each CJK character (Han, kana, Hangul
///   syllable) as a word of its own, and a query's CJK characters must follow one another (an
///   FTS5 phrase), so any substring finds the text: "月" and "花月" find 春江花月夜.
/// - Pinyin: each run of Chinese characters is also indexed in pinyin without tones (ICU's
///   Han-Latin transform, through Foundation: ``HanLatin``), three ways: its syllables ("chen yi xun"), the
///   syllables joined ("chenyixun") and their initials ("cyx"). So "chen", "chen yi xun",
///   "chenyixun", "chenyi" and "cyx" find 陈奕迅. (Japanese kanji get their Mandarin reading;
///   polyphonic characters their most common one.)
///
/// Changing what is indexed changes the stored `searchKey` column: a schema migration recomputes
/// it (see ``Schema``).
enum SearchIndex {
    /// The `searchKey` of an item from its folded title, artist and album (``SearchKey/fold(_:)``).
    static func text(keys: some Collection<String>) -> String {
        // Most tags are ASCII: the keys joined by spaces, nothing to space out or read (made
        // at once: the general path's arrays and `joined` were 5.7k instructions a file).
        if keys.allSatisfy({ $0.utf8.allSatisfy { $0 < 0x80 } }) {
            var out = ""
            out.reserveCapacity(keys.reduce(keys.count) { $0 + $1.utf8.count })
            for key in keys where !key.isEmpty {
                if !out.isEmpty { out.append(" ") }
                out.append(key)
            }
            return out
        }
        var parts: [String] = []
        var readings: [String] = []
        for key in keys where !key.isEmpty {
            // Most tags are ASCII: nothing to space out or read.
            if key.utf8.allSatisfy({ $0 < 0x80 }) { parts.append(key); continue }
            parts.append(spacedOut(key))
            readings += pinyin(key)
        }
        return (parts + readings).joined(separator: " ")
    }

    /// An FTS5 query for user text: each folded word required, as a prefix; a word with CJK
    /// characters as a phrase of them (its last token a prefix unless it is CJK). Nil for text
    /// with no words.
    static func query(_ text: String) -> String? {
        let words = SearchKey.fold(text).split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        guard !words.isEmpty else { return nil }
        return words.map { word -> String in
            let spaced = spacedOut(String(word))
            let endsInCJK = word.unicodeScalars.last.map(isCJK) ?? false
            return "\"\(spaced)\"" + (endsInCJK ? "" : "*")
        }.joined(separator: " AND ")
    }

    /// `text` with a space before and after each CJK character (none doubled, none at the ends).
    static func spacedOut(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isCJK) else { return text }
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for s in text.unicodeScalars {
            let cjk = isCJK(s)
            if (cjk || pendingSpace) && !out.isEmpty && out.last != " " && s != " " { out.append(" ") }
            out.append(s)
            pendingSpace = cjk
        }
        return String(out)
    }

    /// The pinyin of each run of Chinese characters in `text` (folded, so without tones): its
    /// syllables, the syllables joined, and their initials (the last two for runs of two or more).
    static func pinyin(_ text: String) -> [String] {
        var result: [String] = []
        var run = String.UnicodeScalarView()
        func flush() {
            guard !run.isEmpty else { return }
            let syllables = readings(of: String(run))
            run.removeAll()
            guard !syllables.isEmpty else { return }
            result.append(syllables.joined(separator: " "))
            if syllables.count > 1 {
                result.append(syllables.joined())
                result.append(String(syllables.compactMap(\.first)))
            }
        }
        for s in text.unicodeScalars {
            if isHan(s) { run.append(s) } else { flush() }
        }
        flush()
        return result
    }

    /// The toneless pinyin syllables of a run of Chinese characters. The run is read whole, so
    /// that ICU reads a character in its context (重庆 "chong qing", not "zhong"); when that does
    /// not give one syllable per character, each character is read alone.
    private static func readings(of run: String) -> [String] {
        func latin(_ text: String) -> [String] {
            SearchKey.fold(HanLatin.latin(text)).split(separator: " ").map(String.init)
        }
        let whole = latin(run)
        let syllables = whole.count == run.unicodeScalars.count ? whole : run.unicodeScalars.flatMap { latin(String($0)) }
        return syllables.filter { $0.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic } }
    }

    static func isHan(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3134F: true
        default: false
        }
    }

    /// Han, kana and Hangul syllables: scripts written without spaces between words (Korean
    /// has spaces, but a word's syllables are searched as substrings too).
    static func isCJK(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x3041...0x30FF, 0x31F0...0x31FF, 0xAC00...0xD7A3: true
        default: isHan(s)
        }
    }
}
