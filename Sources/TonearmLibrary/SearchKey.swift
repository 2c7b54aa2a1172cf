// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Text folded for matching: case, accents and width removed, so "Beyoncé", "BEYONCE" and
/// "beyonce" have one key. The library stores a key beside every searchable field and folds
/// each query the same way. Pure; any thread.
public enum SearchKey {
    /// `text` folded (case-, diacritic- and width-insensitive), with runs of white space made
    /// one space and the ends trimmed; "" for nil.
    public static func fold(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "" }
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        return folded.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}
