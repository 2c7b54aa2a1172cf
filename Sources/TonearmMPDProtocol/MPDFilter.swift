// SPDX-License-Identifier: GPL-3.0-or-later

/// A song filter of `find`, `search`, `findadd`, `searchadd`, `count`, `list`, `playlistfind`
/// and `playlistsearch`: MPD 0.21's filter expressions — `(artist == 'x')`,
/// `((album == "a") AND (!(title contains "live")))` — or the older pairs `artist x album y`,
/// parsed into a tree (what it means for a song is the library's business). Checked against
/// MPD 0.23's parser by `MPDPeerParseTests`; its messages are MPD's.
///
/// Grammar (MPD's `SongFilter::ParseExpression`; white space allowed between tokens):
/// ```
/// expr   := "(" ( expr ")"                         -- ((x)) is x
///               | expr ("AND" expr)+ ")"
///               | "!" expr ")"
///               | "base" quoted ")"
///               | "modified-since" quoted ")"
///               | "AudioFormat" ("==" | "=~") quoted ")"
///               | TYPE ("==" | "!=" | "=~" | "!~" | "contains") quoted ")" )
/// quoted := "'…'" | "\"…\""                          -- a backslash escapes the next character
/// TYPE   := a tag name (any case), "any" or "file"
/// ```
public indirect enum MPDFilter: Sendable, Hashable {
    /// How a value is compared.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case matches = "=~"
        case notMatches = "!~"
        case contains = "contains"
    }

    /// What a comparison looks at.
    public enum Field: Sendable, Hashable {
        case tag(MPDTag)
        /// Any tag (MPD's `any`).
        case any
        /// The song's URI.
        case file
    }

    case compare(Field, Operator, String)
    /// Songs in the folder (URI prefix) given.
    case base(String)
    /// Songs modified after the time given (seconds since 1970).
    case modifiedSince(Int64)
    /// Songs whose audio format is this one; `mask` when `=~` (`*` fields match anything).
    case audioFormat(MPDAudioFormat, mask: Bool)
    case not(MPDFilter)
    case and([MPDFilter])

    /// The filter of a command's filter arguments: each argument that starts with `(` is an
    /// expression, others come in (type, value) pairs; all of them must hold. `exact` is false
    /// for `search`-type commands (an old-style pair then means `contains`, ignoring case —
    /// matching decides the case; the tree says `contains`).
    /// - Throws: ``MPDFilterError`` with MPD's message.
    public static func parse(arguments: [String], exact: Bool = true) throws(MPDFilterError) -> MPDFilter {
        guard !arguments.isEmpty else { throw MPDFilterError("Incorrect number of filter arguments") }
        var items: [MPDFilter] = []
        var rest = arguments[...]
        while let first = rest.first {
            if first.utf8.first == UInt8(ascii: "(") {
                var parser = ExpressionParser(Array(first.utf8))
                let f = try parser.expression()
                guard parser.atEnd else { throw MPDFilterError("Unparsed garbage after expression") }
                items.append(f)
                rest = rest.dropFirst()
                continue
            }
            guard rest.count >= 2 else { throw MPDFilterError("Incorrect number of filter arguments") }
            let type = rest[rest.startIndex], value = rest[rest.startIndex + 1]
            rest = rest.dropFirst(2)
            items.append(try legacy(type: type, value: value, exact: exact))
        }
        return items.count == 1 ? items[0] : .and(items)
    }

    /// What a filter type's name (MPD's `locate_parse_type`) names: `file` (or the old
    /// `filename`), `any` and `AudioFormat` in any case, `base` and `modified-since` as written,
    /// or a tag name in any case.
    enum FilterType {
        case tag(MPDTag), any, file, base, modifiedSince, audioFormat
    }

    static func filterType(_ name: String) -> FilterType? {
        switch name.lowercased() {
        case "file", "filename": return .file
        case "any": return .any
        case "audioformat": return .audioFormat
        default: break
        }
        if name == "base" { return .base }
        if name == "modified-since" { return .modifiedSince }
        return MPDTag(name: name).map { .tag($0) }
    }

    /// One old-style pair.
    static func legacy(type: String, value: String, exact: Bool) throws(MPDFilterError) -> MPDFilter {
        let op: Operator = exact ? .equal : .contains
        switch filterType(type) {
        case nil: throw MPDFilterError("Unknown filter type")
        case .base: return .base(value)
        case .modifiedSince: return .modifiedSince(try MPDTimestamp.parse(value))
        case .audioFormat: return .audioFormat(try MPDAudioFormat.parse(value, mask: false), mask: false)
        case .any: return .compare(.any, op, value)
        case .file: return .compare(.file, op, value)
        case .tag(let tag): return .compare(.tag(tag), op, value)
        }
    }

    /// The expression's text as MPD writes filters (every value in double quotes, escaped).
    public var expression: String {
        func q(_ s: String) -> String { MPDRequest.quoted(s) }
        switch self {
        case .compare(let field, let op, let value):
            let name: String
            switch field {
            case .tag(let t): name = t.rawValue
            case .any: name = "any"
            case .file: name = "file"
            }
            return "(\(name) \(op.rawValue) \(q(value)))"
        case .base(let b): return "(base \(q(b)))"
        case .modifiedSince(let t): return "(modified-since \(q(String(t))))"
        case .audioFormat(let f, let mask): return "(AudioFormat \(mask ? "=~" : "==") \(q(f.text)))"
        case .not(let inner): return "(!\(inner.expression))"
        case .and(let items): return "(" + items.map(\.expression).joined(separator: " AND ") + ")"
        }
    }
}

/// A filter that could not be read: MPD's message (sent as `ACK [2@…]`).
public struct MPDFilterError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    /// As the command's error answer.
    public func ack(command: String) -> MPDAck { MPDAck(.argument, message, command: command) }
}

/// The recursive-descent reader of one expression, over its UTF-8 bytes.
struct ExpressionParser {
    let s: [UInt8]
    var i = 0
    /// Nesting deeper than this is refused (a stack overflow is not an answer).
    static let maxDepth = 64
    var depth = 0

    init(_ bytes: [UInt8]) { s = bytes }

    var atEnd: Bool { i >= s.count }
    var current: UInt8? { i < s.count ? s[i] : nil }

    mutating func skipSpace() {
        while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { i += 1 }
    }

    func peek(_ text: String) -> Bool {
        let t = Array(text.utf8)
        return i + t.count <= s.count && Array(s[i..<(i + t.count)]) == t
    }

    /// At `(`: one parenthesised expression, and the white space after it.
    mutating func expression() throws(MPDFilterError) -> MPDFilter {
        guard current == UInt8(ascii: "(") else { throw MPDFilterError("'(' expected") }
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw MPDFilterError("Filter expression nested too deeply") }
        i += 1
        skipSpace()
        if current == UInt8(ascii: "(") {
            let first = try expression()
            if current == UInt8(ascii: ")") {
                i += 1
                skipSpace()
                return first
            }
            var items = [first]
            while true {
                guard try word() == "AND" else { throw MPDFilterError("'AND' expected") }
                items.append(try expression())
                if current == UInt8(ascii: ")") {
                    i += 1
                    skipSpace()
                    return .and(items)
                }
            }
        }
        if current == UInt8(ascii: "!") {
            i += 1
            skipSpace()
            guard current == UInt8(ascii: "(") else { throw MPDFilterError("'(' expected") }
            let inner = try expression()
            try close()
            return .not(inner)
        }
        let type = try word()
        guard let kind = MPDFilter.filterType(type) else { throw MPDFilterError("Unknown filter type: \(type)") }
        let field: MPDFilter.Field
        switch kind {
        case .base:
            let value = try quoted()
            try close()
            return .base(value)
        case .modifiedSince:
            let value = try quoted()
            try close()
            return .modifiedSince(try MPDTimestamp.parse(value))
        case .audioFormat:
            let mask: Bool
            if peek("==") { mask = false } else if peek("=~") { mask = true } else { throw MPDFilterError("'==' or '=~' expected") }
            i += 2
            skipSpace()
            let value = try quoted()
            try close()
            return .audioFormat(try MPDAudioFormat.parse(value, mask: mask), mask: mask)
        case .any: field = .any
        case .file: field = .file
        case .tag(let tag): field = .tag(tag)
        }
        let op: MPDFilter.Operator
        if peek("==") { op = .equal; i += 2 }
        else if peek("!=") { op = .notEqual; i += 2 }
        else if peek("=~") { op = .matches; i += 2 }
        else if peek("!~") { op = .notMatches; i += 2 }
        else if peek("contains ") { op = .contains; i += 8 }
        else if peek("contains\t") { op = .contains; i += 8 }
        else { throw MPDFilterError("'==' or '!=' expected") }
        skipSpace()
        let value = try quoted()
        try close()
        return .compare(field, op, value)
    }

    /// `)` and the white space after it.
    mutating func close() throws(MPDFilterError) {
        guard current == UInt8(ascii: ")") else { throw MPDFilterError("')' expected") }
        i += 1
        skipSpace()
    }

    /// A word of letters, digits, `_` and `-`, and the white space after it.
    mutating func word() throws(MPDFilterError) -> String {
        let start = i
        while let c = current, MPDRequest.isLetter(c) || MPDRequest.isDigit(c) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") {
            i += 1
        }
        guard i > start else { throw MPDFilterError("Word expected") }
        let w = String(decoding: s[start..<i], as: UTF8.self)
        skipSpace()
        return w
    }

    /// A string in `'` or `"` (a backslash escapes the next character), and the white space after it.
    mutating func quoted() throws(MPDFilterError) -> String {
        guard let q = current, q == UInt8(ascii: "'") || q == UInt8(ascii: "\"") else {
            throw MPDFilterError("Quoted string expected")
        }
        i += 1
        var value: [UInt8] = []
        while let c = current {
            if c == UInt8(ascii: "\\") {
                i += 1
                guard let escaped = current else { break }
                value.append(escaped)
            } else if c == q {
                i += 1
                skipSpace()
                return String(decoding: value, as: UTF8.self)
            } else {
                value.append(c)
            }
            i += 1
        }
        throw MPDFilterError("Closing quote not found")
    }
}
