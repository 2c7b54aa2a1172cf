// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The order of names in listings, and the alphabetical section each name falls in (the index
/// letters of MPMediaQuery's sections). Pure; any thread.
///
/// The rule:
/// - Leading punctuation and spaces are skipped, and an English article ("The", "A", "An")
///   before another word: "The Band" sorts as "Band", "(What's the Story)" under W.
/// - Latin script, folded like ``SearchKey`` ("Élan" and "elan" together): sections A–Z.
/// - Chinese characters are read in pinyin and sorted with the Latin names under the letter of
///   their pinyin: 周杰伦 (zhōu jié lún) under Z, between "Zebra" and "Zulu", as the Chinese
///   music apps do. Japanese kanji get their Mandarin reading too (there is no reading of kanji
///   without a dictionary); kana do not.
/// - Other alphabets (Cyrillic, Greek, Hebrew, Arabic…) after Z, each letter its own section
///   ("Д", "Ω").
/// - Japanese kana after those, in the rows of the kana table (あ か さ た な は ま や ら わ);
///   katakana as hiragana, voiced kana with their row (が under か).
/// - Korean after kana, under the initial consonant of the first syllable (ㄱ ㄴ ㄷ … ㅎ; a
///   doubled consonant with its single one).
/// - Digits, symbols and names with no letters last, under "#".
/// - Numbers sort by their value wherever they are ("natural" order): "Track 2" before
///   "Track 10", "第2号" before "第10号", "Vol. 9" before "Vol. 10"; leading zeros are ignored
///   ("07" sorts as "7").
///
/// A sort key is a class digit (1–5 in the order above) and the folded reading with each run of
/// digits preceded by its length (``numbered(_:)``), compared byte-wise (SQLite's BINARY
/// collation), so sorting by it in SQL — through the `…Sort` columns' indexes — gives this
/// order and every section's names are contiguous.
///
/// Changing the key changes the stored `…Sort` columns: a schema migration recomputes them (see
/// ``Schema``).
public enum SortKey {
    /// The sort key of `text` ("5" for nil or empty).
    public static func make(_ text: String?) -> String {
        guard let text else { return "5" }
        return makeASCII(text) ?? makeUnicode(text)
    }

    /// ``make(_:)`` of text that is all ASCII (most tags), read byte by byte: the same key as
    /// ``makeUnicode(_:)`` (a test compares them) at a fraction of the cost — the general path
    /// walks Characters to skip punctuation and articles, and was an eighth of a library scan's
    /// instructions. Nil for other text.
    static func makeASCII(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { b -> String? in
            for x in b where x >= 0x80 { return nil }
            // Character.isLetter and isNumber, within ASCII.
            func isLetterOrNumber(_ x: UInt8) -> Bool {
                (0x30...0x39).contains(x) || (0x41...0x5A).contains(x) || (0x61...0x7A).contains(x)
            }
            var start = 0
            while start < b.count && !isLetterOrNumber(b[start]) { start += 1 }
            guard start < b.count else { return "5" + (SearchKey.foldASCII(String(decoding: b, as: UTF8.self)) ?? "") }
            // An article ("the ", "a ", "an ", any case) before something to sort by.
            for article in articleBytes where b.count - start > article.count {
                var k = 0
                while k < article.count && ((0x41...0x5A).contains(b[start + k]) ? b[start + k] | 0x20 : b[start + k]) == article[k] {
                    k += 1
                }
                guard k == article.count else { continue }
                var rest = start + k
                while rest < b.count && !isLetterOrNumber(b[rest]) { rest += 1 }
                if rest < b.count {
                    start = rest
                    break
                }
            }
            // The class digit (the reading starts with the letter or digit found above), then
            // numbered(foldASCII(the rest)) in one pass: lower case, white space collapsed,
            // each run of digits preceded by its length.
            // Written straight into the string's storage (no array first, no copy): the class
            // digit, then at most each byte of the text and a length byte per run of digits.
            let capacity = 1 + 2 * (b.count - start)
            return String(unsafeUninitializedCapacity: capacity) { out in
                var count = 0
                func put(_ x: UInt8) {
                    out[count] = x
                    count += 1
                }
                put(b[start] >= 0x30 && b[start] <= 0x39 ? 0x35 : 0x31)
                var digits = start..<start  // the run of digits being read
                func flushDigits() {
                    guard !digits.isEmpty else { return }
                    var first = digits.lowerBound
                    while first < digits.upperBound - 1 && b[first] == 0x30 { first += 1 }  // one "0" kept
                    put(UInt8(0x30 + min(digits.upperBound - first, 0x7E - 0x30)))
                    for k in first..<digits.upperBound { put(b[k]) }
                    digits = start..<start
                }
                var pendingSpace = false
                for i in start..<b.count {
                    let x = b[i]
                    if x == 0x20 || (0x09...0x0D).contains(x) {  // Unicode's white space within ASCII
                        flushDigits()
                        pendingSpace = count > 1
                        continue
                    }
                    if pendingSpace { put(0x20); pendingSpace = false }
                    if x >= 0x30 && x <= 0x39 {
                        digits = digits.isEmpty ? i..<(i + 1) : digits.lowerBound..<(i + 1)
                    } else {
                        flushDigits()
                        put((0x41...0x5A).contains(x) ? x | 0x20 : x)
                    }
                }
                flushDigits()
                return count
            }
        }
    }

    /// The articles ``dropLeadingArticle(_:)`` drops, as lower-case bytes.
    private static let articleBytes: [[UInt8]] = [Array("the ".utf8), Array("a ".utf8), Array("an ".utf8)]

    /// ``make(_:)`` for any text.
    static func makeUnicode(_ text: String) -> String {
        let trimmed = dropLeadingArticle(skipLeadingPunctuation(text))
        guard !trimmed.isEmpty else { return "5" + SearchKey.fold(text) }
        // Chinese characters anywhere are read in pinyin (ICU's Han-Latin), so "周杰伦 Live"
        // and "Live 周杰伦" sort by their sound.
        let reading = containsHan(trimmed)
            ? SearchKey.fold(HanLatin.latin(String(trimmed)))
            : SearchKey.fold(String(trimmed))
        guard let lead = reading.unicodeScalars.first else { return "5" }
        switch lead.value {
        case 0x61...0x7A: return "1" + numbered(reading)
        case 0x30...0x39: return "5" + numbered(reading)
        case 0x3041...0x3096, 0x30A1...0x30FA: return "3" + numbered(hiragana(reading))
        case 0xAC00...0xD7A3: return "4" + numbered(reading)
        default:
            return (lead.properties.isAlphabetic ? "2" : "5") + numbered(reading)
        }
    }

    /// `text` with every run of ASCII digits, its leading zeros dropped (one "0" kept), preceded
    /// by its number of digits as one character ("1"…"9", then ":", ";"… for longer runs), so that
    /// byte-wise comparison orders numbers by value: "track 2" → "track 12", "track 10" →
    /// "track 210". Text without digits is returned as it is.
    static func numbered(_ text: String) -> String {
        guard text.utf8.contains(where: { (0x30...0x39).contains($0) }) else { return text }
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count + 4)
        var run = [UInt8]()
        func flush() {
            guard !run.isEmpty else { return }
            let digits = run.drop { $0 == 0x30 }
            let kept = digits.isEmpty ? [0x30] : Array(digits)
            // Lengths up to 78 get a character of their own below DEL; longer runs share the last.
            out.append(UInt8(0x30 + min(kept.count, 0x7E - 0x30)))
            out += kept
            run.removeAll(keepingCapacity: true)
        }
        for b in text.utf8 {
            if (0x30...0x39).contains(b) { run.append(b) } else { flush(); out.append(b) }
        }
        flush()
        return String(decoding: out, as: UTF8.self)
    }

    /// The section title of a sort key made by ``make(_:)``: "A"–"Z", a letter of another
    /// alphabet, a kana row, a Korean initial consonant, or "#".
    public static func section(ofKey key: String) -> String {
        var scalars = key.unicodeScalars.makeIterator()
        guard let kind = scalars.next(), let lead = scalars.next() else { return "#" }
        switch kind {
        case "1": return String(lead).uppercased()
        case "2": return String(lead).uppercased()
        case "3": return kanaRow(lead)
        case "4": return hangulInitial(lead)
        default: return "#"
        }
    }

    /// The section `text` falls in.
    public static func section(of text: String?) -> String { section(ofKey: make(text)) }

    // MARK: The pieces

    private static func skipLeadingPunctuation(_ text: String) -> Substring {
        text.drop { c in !c.isLetter && !c.isNumber }
    }

    /// "The Band" → "Band"; an article alone stays.
    private static func dropLeadingArticle(_ text: Substring) -> Substring {
        for article in ["the ", "a ", "an "] where text.count > article.count {
            let head = text.prefix(article.count)
            if head.lowercased() == article {
                let rest = skipLeadingPunctuation(String(text.dropFirst(article.count)))
                if !rest.isEmpty { return rest }
            }
        }
        return text
    }

    private static func isHan(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3134F: true
        default: false
        }
    }

    private static func containsHan(_ text: Substring) -> Bool { text.unicodeScalars.contains(where: isHan) }

    /// Katakana made hiragana (the same kana, 0x60 lower).
    private static func hiragana(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if (0x30A1...0x30F6).contains(s.value), let h = Unicode.Scalar(s.value - 0x60) { out.append(h) } else { out.append(s) }
        }
        return String(out)
    }

    /// The kana-table row of a (folded, hiragana) kana.
    private static func kanaRow(_ s: Unicode.Scalar) -> String {
        let rows: [(ClosedRange<UInt32>, String)] = [
            (0x3041...0x304A, "あ"), (0x304B...0x3054, "か"), (0x3055...0x305E, "さ"), (0x305F...0x3069, "た"),
            (0x306A...0x306E, "な"), (0x306F...0x307D, "は"), (0x307E...0x3082, "ま"), (0x3083...0x3088, "や"),
            (0x3089...0x308D, "ら"), (0x308E...0x3093, "わ"), (0x3094...0x3094, "あ"), (0x3095...0x3096, "か"),
        ]
        return rows.first { $0.0.contains(s.value) }?.1 ?? "#"
    }

    /// The initial consonant of a Hangul syllable, doubled ones as single.
    private static func hangulInitial(_ s: Unicode.Scalar) -> String {
        let initials = ["ㄱ", "ㄱ", "ㄴ", "ㄷ", "ㄷ", "ㄹ", "ㅁ", "ㅂ", "ㅂ", "ㅅ", "ㅅ", "ㅇ", "ㅈ", "ㅈ", "ㅊ", "ㅋ", "ㅌ", "ㅍ", "ㅎ"]
        guard (0xAC00...0xD7A3).contains(s.value) else { return "#" }
        return initials[Int(s.value - 0xAC00) / 588]
    }
}
