// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Text folded for matching: case, accents and width removed, so "Beyoncé", "BEYONCE" and
/// "beyonce" have one key. The library stores a key beside every searchable field and folds
/// each query the same way. Pure; any thread.
///
/// Besides Foundation's case, diacritic and width folding (which already makes "ß" "ss" and
/// "ﬁ" "fi"), letters that are not a base letter with a mark are spelt the way an English
/// keyboard types them: "æ" → "ae", "œ" → "oe", "ø" → "o", "ł" → "l", "đ"/"ð" → "d",
/// "þ" → "th", "ı" → "i", "ĳ" → "ij", "ŋ" → "n", "ǆ" → "dz"…, so "agaetis" finds "Ágætis
/// byrjun" and "lodz" finds "Łódź".
///
/// Changing the fold changes the stored keys: a schema migration recomputes them (see
/// ``Schema``), and ``version`` names the fold the keys were made with.
public enum SearchKey {
    /// Bumped whenever ``fold(_:)`` changes; recorded by the migration that recomputes keys.
    public static let version = 2

    /// `text` folded (case-, diacritic- and width-insensitive, the letters above spelt out),
    /// with runs of white space made one space and the ends trimmed; "" for nil.
    public static func fold(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "" }
        return foldASCII(text) ?? foldUnicode(text)
    }

    /// ``fold(_:)`` of text that is all ASCII (most tags): lower case, white space collapsed,
    /// the same result as ``foldUnicode(_:)`` at a tenth of the cost; nil for other text.
    static func foldASCII(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            for b in bytes where b >= 0x80 { return nil }
            // Written straight into the string's storage (no array first, no copy; a key of up
            // to 15 bytes is a small string, not allocated at all): at most as long as the text.
            return String(unsafeUninitializedCapacity: bytes.count) { out in
                var count = 0
                var pendingSpace = false
                for b in bytes {
                    if b == 0x20 || (0x09...0x0D).contains(b) {  // Unicode's white space within ASCII
                        pendingSpace = count > 0
                        continue
                    }
                    if pendingSpace { out[count] = 0x20; count += 1; pendingSpace = false }
                    out[count] = (0x41...0x5A).contains(b) ? b + 0x20 : b
                    count += 1
                }
                return count
            }
        }
    }

    /// ``fold(_:)`` through Foundation's folding, for any text.
    static func foldUnicode(_ text: String) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in folded.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.append(" "); pendingSpace = false }
            if let spelt = spelling[scalar] { out.append(contentsOf: spelt.unicodeScalars) } else { out.append(scalar) }
        }
        return String(out)
    }

    /// Letters Foundation's diacritic folding keeps (they are letters of their own, not a base
    /// letter with a combining mark), as lower case after case folding.
    private static let spelling: [Unicode.Scalar: String] = [
        "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
        "ĳ": "ij", "ŋ": "n", "ħ": "h", "ŧ": "t", "ƒ": "f", "ĸ": "k", "ŀ": "l",
        "ǆ": "dz", "ǉ": "lj", "ǌ": "nj", "ǳ": "dz", "ß": "ss", "ẞ": "ss",
    ]
}
