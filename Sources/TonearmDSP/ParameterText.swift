// SPDX-License-Identifier: GPL-3.0-or-later

/// The text forms of effect and equaliser settings, read in one place: a head `NAME[:REST]`
/// (`reverb:wet=30`, `large-hall:40`), comma-separated lists of fields (`ID=VALUE,…`,
/// `FREQ:GAIN,…`), numbers with an optional `+` and unit, and names compared loosely
/// (`medium-hall-2`, `mediumHall2` and `Medium Hall 2` are one name). What each field means,
/// and the errors, stay with the setting that reads it (``EQBand/parse(spec:)``, the CLI's
/// `--effect`, `--eq`, `--reverb`).
public enum ParameterText {
    /// One entry of a list: as written (spaces around it removed), and split into fields.
    public struct Entry: Sendable, Hashable {
        public var text: String
        /// The entry split at the separator, each field with the spaces around it removed.
        public var fields: [String]
        public init(text: String, fields: [String]) {
            self.text = text
            self.fields = fields
        }
    }

    /// Splits `NAME[:REST]` at the first colon: the name (spaces around it removed) and what
    /// follows (nil without a colon).
    public static func head(_ text: String) -> (name: String, rest: String?) {
        guard let colon = text.firstIndex(of: ":") else { return (text.trimmingSpaces, nil) }
        return (String(text[..<colon]).trimmingSpaces, String(text[text.index(after: colon)...]))
    }

    /// The comma-separated entries of `list`, each split into fields at `separator` (at most
    /// `maxSplits` times; empty fields kept). Empty entries (a doubled or trailing comma) are
    /// kept, with empty text, unless `omittingEmpty`.
    public static func entries(_ list: String, separator: Character, maxSplits: Int = .max,
                               omittingEmpty: Bool = false) -> [Entry] {
        list.split(separator: ",", omittingEmptySubsequences: false).compactMap { raw in
            let text = String(raw).trimmingSpaces
            if text.isEmpty && omittingEmpty { return nil }
            let fields = text.split(separator: separator, maxSplits: maxSplits, omittingEmptySubsequences: false)
            return Entry(text: text, fields: fields.map { String($0).trimmingSpaces })
        }
    }

    /// A number written with an optional leading `+` and an optional `unit` suffix (any case:
    /// `+3`, `-2.5dB`, `30%`); nil when it is not a finite number.
    public static func number(_ text: String, unit: String? = nil) -> Double? {
        var t = Substring(text.trimmingSpaces)
        if let unit, t.lowercased().hasSuffix(unit.lowercased()) { t = t.dropLast(unit.count) }
        if t.hasPrefix("+") { t = t.dropFirst() }
        guard let v = Double(t), v.isFinite else { return nil }
        return v
    }

    /// The form in which names are compared: lower case, without `-`, `_` and spaces.
    public static func nameKey(_ name: String) -> String {
        String(name.lowercased().filter { $0 != "-" && $0 != "_" && $0 != " " })
    }
}

extension String {
    /// The string without the white space at its ends.
    var trimmingSpaces: String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
