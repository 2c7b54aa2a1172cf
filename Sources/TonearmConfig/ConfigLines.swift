// SPDX-License-Identifier: GPL-3.0-or-later

/// The line on which each key of a TOML document is set, for error messages and for
/// `tonearm config`'s "where it came from" (TOMLKit parses the values but does not say where
/// they were).
///
/// A light scan of the text, run after TOMLKit has accepted it: it follows `[table]` and
/// `[[array]]` headers, `key = …` assignments (bare, quoted and dotted keys) and the keys of
/// one-line inline tables, and skips what is inside strings (also multi-line ones), comments
/// and multi-line arrays. Keys are dotted paths from the root: `playback.volume`, `keys.quit`.
package struct ConfigLines: Sendable, Equatable {
    /// Line (1-based) of each key path set in the document; a table's path maps to its header.
    package private(set) var lines: [String: Int] = [:]
    /// The first thing the scan found that is not TOML and that toml++ 3 (TOMLKit 0.6.0) fails
    /// an assertion on, aborting the program, rather than reporting it (found by fuzzing): a
    /// table header without a name after its `[` or `[[`; a `}` closing a `[` (and, for one
    /// rule, a `]` closing a `{`, which toml++ reports); a line or paragraph separator (U+0085,
    /// U+2028, U+2029) outside a string; a date's `T` not followed by a time's digit; a date, a
    /// space and one digit; a date-shaped value that is not a date before a space and a digit. Line,
    /// column (1-based) and what it is. Such a document must not reach toml++.
    package private(set) var unparseable: (line: Int, column: Int, reason: String)?

    package static func == (a: ConfigLines, b: ConfigLines) -> Bool {
        a.lines == b.lines && a.unparseable?.line == b.unparseable?.line && a.unparseable?.column == b.unparseable?.column
            && a.unparseable?.reason == b.unparseable?.reason
    }

    /// A character of a bare key: ASCII letters and digits, `_` and `-`.
    static func isASCIIBareKeyCharacter(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
    }

    package init(scanning text: String) {
        var table: [String] = []
        var inMultiline: String?  // the closing delimiter of a multi-line string being read
        var open: [Unicode.Scalar] = []  // brackets and braces open across lines (multi-line arrays)
        // Read as Unicode scalars, as TOML is, not Characters: "\r\n" is one Character (a CRLF
        // file was one line), and a combining mark after `[` or `"` made one with it (found by
        // fuzzing: `[` + U+035F was no header).
        // A byte-order mark (Windows editors write one) is not part of the first line's key.
        var scalars = Substring(text).unicodeScalars
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        for (i, raw) in scalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = i + 1
            var line = raw
            if let close = inMultiline {
                guard let end = line.firstRange(of: close.unicodeScalars) else { continue }
                inMultiline = nil
                line = line[end.upperBound...]
            } else if open.isEmpty {
                var scanner = Scanner(line)
                scanner.skipSpaces()
                if scanner.peek == "[" {
                    // A table header: [a.b] or [[a.b]].
                    scanner.advance()
                    if scanner.peek == "[" { scanner.advance() }
                    scanner.skipSpaces()
                    if !(scanner.peek.map { $0 == "\"" || $0 == "'" || Self.isASCIIBareKeyCharacter($0) } ?? false) {
                        flag(number, raw.distance(from: raw.startIndex, to: scanner.position) + 1,
                             "a table header needs a name: [name] or [[name]]")
                    }
                    if let path = scanner.keyPath() {
                        table = path
                        record(path, line: number)
                    }
                    continue
                }
                if let key = scanner.keyPath() {
                    scanner.skipSpaces()
                    if scanner.peek == "=" {
                        record(table + key, line: number)
                        scanner.advance()
                        scanner.skipSpaces()
                        if scanner.peek == "{" { recordInline(&scanner, prefix: table + key, line: number) }
                    }
                }
            }
            // toml++ 3 takes any ten characters with dashes 5th and 8th, after a space and before a
            // space and one digit, for a date followed by a time, whatever the characters (quotes
            // too), and fails an assertion reading the time (found by fuzzing: `1?79-05-"3 1`).
            if unparseable == nil, let m = String(String.UnicodeScalarView(raw)).firstMatch(of: Self.dateLikeBeforeOneDigit) {
                flag(number, m.output.1.unicodeScalars.count + 1, "a value that starts like a date and time is not YYYY-MM-DD HH:MM:SS")
            }
            // What the rest of the line leaves open: brackets, or a multi-line string.
            var s = Scanner(line)
            var recent: [Unicode.Scalar] = []  // the characters just before, outside strings
            while let c = s.peek {
                if c == "#" { break }
                if c == "\"" || c == "'" {
                    recent = []
                    if s.startsWith(String(repeating: String(c), count: 3)) {
                        let delimiter = String(repeating: String(c), count: 3)
                        s.advance(by: 3)
                        if !s.skip(past: delimiter) { inMultiline = delimiter; break }
                    } else {
                        s.skipString()
                    }
                    continue
                }
                if c == "[" || c == "{" { open.append(c) }
                if c == "]" || c == "}", let top = open.popLast(), (top == "[") != (c == "]") {
                    flag(number, raw.distance(from: raw.startIndex, to: s.position) + 1, "a '\(c)' closes a '\(top)'")
                }
                if c == "T" || c == "t", Self.endsWithDate(recent), !(s.next.map { ("0"..."9").contains($0) } ?? false) {
                    flag(number, raw.distance(from: raw.startIndex, to: s.position) + 2, "a date's '\(c)' is followed by a time (HH:MM:SS)")
                }
                if c == " ", s.next.map({ ("0"..."9").contains($0) }) ?? false {
                    if Self.endsWithDateLikeToken(recent) {
                        flag(number, raw.distance(from: raw.startIndex, to: s.position) - 9, "a value that starts like a date (YYYY-MM-DD) is not one")
                    } else if Self.endsWithDate(recent), !(s.scalar(at: 2).map { ("0"..."9").contains($0) } ?? false) {
                        // `1979-05-27 1`: toml++ 3 fails its value-scan assertion (found by fuzzing).
                        flag(number, raw.distance(from: raw.startIndex, to: s.position) + 2, "a date and time is YYYY-MM-DD HH:MM:SS")
                    }
                }
                recent.append(c)
                if c == "\u{85}" || c == "\u{2028}" || c == "\u{2029}" {
                    let hex = String(c.value, radix: 16, uppercase: true)
                    flag(number, raw.distance(from: raw.startIndex, to: s.position) + 1,
                         "a line separator (U+\(String(repeating: "0", count: 4 - hex.count) + hex)) outside a string")
                }
                s.advance()
            }
        }
    }

    /// The line of `path`, else of the nearest enclosing key or table that has one.
    package func line(of path: [String]) -> Int? {
        var p = path
        while !p.isEmpty {
            if let l = lines[p.joined(separator: ".")] { return l }
            p.removeLast()
        }
        return nil
    }

    /// A date-shaped value, a space and a single digit: group 1 is what is before the value.
    nonisolated(unsafe) private static let dateLikeBeforeOneDigit = /^(.*?(?:^|[ \t=\[{,]))[0-9][^ \t\]},#]{3}-[^ \t\]},#]{2}-[^ \t\]},#]{2} [0-9](?:[ \t\]},#]|$)/.matchingSemantics(.unicodeScalar)

    /// Whether `chars` ends with a date, `YYYY-MM-DD`.
    private static func endsWithDate(_ chars: [Unicode.Scalar]) -> Bool {
        guard chars.count >= 10 else { return false }
        let d = chars.suffix(10)
        return d.enumerated().allSatisfy { i, c in i == 4 || i == 7 ? c == "-" : ("0"..."9").contains(c) }
    }

    /// Whether `chars` ends with a value of ten characters (`_` aside) that toml++ takes for a
    /// date because of its digit and dashes (`1978-[2-a=`) without its being one: toml++ 3
    /// then reads on past a space for a time and fails an assertion (found by fuzzing).
    private static func endsWithDateLikeToken(_ chars: [Unicode.Scalar]) -> Bool {
        // toml++'s value terminators; a value starts after one, or after `=`, `[` or `{`.
        let terminators: Set<Unicode.Scalar> = [" ", "\t", "]", "}", ",", "#"]
        let run = Array(chars.reversed().prefix { !terminators.contains($0) }.reversed())
        let starts = [0] + run.indices.filter { ["=", "[", "{"].contains(run[$0]) }.map { $0 + 1 }
        return starts.contains { start in
            let t = run[start...].filter { $0 != "_" }
            guard t.count == 10, ("0"..."9").contains(t[0]), t[4] == "-", t[7] == "-" else { return false }
            return !t.enumerated().allSatisfy { i, c in i == 4 || i == 7 || ("0"..."9").contains(c) }
        }
    }

    private mutating func flag(_ line: Int, _ column: Int, _ reason: String) {
        if unparseable == nil { unparseable = (line, column, reason) }
    }

    private mutating func record(_ path: [String], line: Int) {
        // Every prefix of a dotted key is defined where it first appears.
        for n in 1...path.count {
            let key = path[..<n].joined(separator: ".")
            if lines[key] == nil { lines[key] = line }
        }
    }

    /// `{ a = 1, b.c = "x", d = { e = 2 } }`: the keys of a one-line inline table.
    private mutating func recordInline(_ s: inout Scanner, prefix: [String], line: Int) {
        s.advance()  // {
        while true {
            s.skipSpaces()
            guard s.peek != nil, s.peek != "}" else { return }
            guard let key = s.keyPath() else { return }
            record(prefix + key, line: line)
            s.skipSpaces()
            guard s.peek == "=" else { return }
            s.advance()
            s.skipSpaces()
            if s.peek == "{" {
                recordInline(&s, prefix: prefix + key, line: line)
                s.skipSpaces()
                if s.peek == "}" { s.advance() }
            } else {
                s.skipValue()
            }
            s.skipSpaces()
            if s.peek == "," { s.advance() } else { return }
        }
    }
}

/// A cursor over one line of TOML, by Unicode scalars.
private struct Scanner {
    private let text: Substring.UnicodeScalarView
    private var index: Substring.UnicodeScalarView.Index

    init(_ text: Substring.UnicodeScalarView) {
        self.text = text
        index = text.startIndex
    }

    var peek: Unicode.Scalar? { index < text.endIndex ? text[index] : nil }

    /// Where the cursor is (an index of the line the scanner was made from).
    var position: Substring.UnicodeScalarView.Index { index }

    /// The character `offset` places after the cursor's, if the line has it.
    func scalar(at offset: Int) -> Unicode.Scalar? {
        var i = index
        for _ in 0..<offset {
            guard i < text.endIndex else { return nil }
            i = text.index(after: i)
        }
        return i < text.endIndex ? text[i] : nil
    }

    /// The character after the cursor's.
    var next: Unicode.Scalar? {
        guard index < text.endIndex else { return nil }
        let n = text.index(after: index)
        return n < text.endIndex ? text[n] : nil
    }

    mutating func advance(by n: Int = 1) {
        for _ in 0..<n where index < text.endIndex { index = text.index(after: index) }
    }

    func startsWith(_ prefix: String) -> Bool { text[index...].starts(with: prefix.unicodeScalars) }

    mutating func skipSpaces() { while let c = peek, c == " " || c == "\t" { advance() } }

    /// Moves past the next `delimiter` on the line; false (at the end) when there is none.
    mutating func skip(past delimiter: String) -> Bool {
        guard let r = text[index...].firstRange(of: delimiter.unicodeScalars) else {
            index = text.endIndex
            return false
        }
        index = r.upperBound
        return true
    }

    /// Moves past a one-line string starting at the cursor ("…" with escapes, or '…').
    mutating func skipString() {
        guard let quote = peek else { return }
        advance()
        while let c = peek {
            advance()
            if c == "\\" && quote == "\"" { advance(); continue }
            if c == quote { return }
        }
    }

    /// Moves past a value inside an inline table: up to the next `,` or `}` at this level.
    mutating func skipValue() {
        var depth = 0
        while let c = peek {
            if c == "\"" || c == "'" { skipString(); continue }
            if c == "[" || c == "{" { depth += 1 }
            if c == "]" || c == "}" {
                if depth == 0 { return }
                depth -= 1
            }
            if c == "," && depth == 0 { return }
            advance()
        }
    }

    /// A bare, quoted or dotted key (`a`, `"a b"`, `a.'b'.c`), or nil when there is none here.
    mutating func keyPath() -> [String]? {
        var parts: [String] = []
        while true {
            skipSpaces()
            guard let part = keyPart() else { return parts.isEmpty ? nil : parts }
            parts.append(part)
            skipSpaces()
            guard peek == "." else { return parts }
            advance()
        }
    }

    /// The character a basic string's escape `\\e` stands for (`\\t`, `\\u00E9`, `\\U0001F600`; the
    /// hex digits are read here), as TOML reads it, so that a quoted key is found under its name.
    private mutating func unescaped(_ e: Unicode.Scalar) -> Unicode.Scalar {
        switch e {
        case "b": return "\u{8}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{C}"
        case "r": return "\r"
        case "e": return "\u{1B}"
        case "u", "U":
            var hex = ""
            while hex.unicodeScalars.count < (e == "u" ? 4 : 8), let h = peek, h.properties.isASCIIHexDigit {
                hex.unicodeScalars.append(h)
                advance()
            }
            return UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init) ?? "\u{FFFD}"
        default: return e
        }
    }

    private mutating func keyPart() -> String? {
        guard let c = peek else { return nil }
        if c == "\"" || c == "'" {
            advance()
            var part = ""
            while let d = peek {
                advance()
                if d == c { return part }
                if d == "\\" && c == "\"", let e = peek {
                    advance()
                    part.unicodeScalars.append(unescaped(e))
                    continue
                }
                part.unicodeScalars.append(d)
            }
            return part
        }
        var part = ""
        while let d = peek, ConfigLines.isASCIIBareKeyCharacter(d) {
            part.unicodeScalars.append(d)
            advance()
        }
        return part.isEmpty ? nil : part
    }
}
