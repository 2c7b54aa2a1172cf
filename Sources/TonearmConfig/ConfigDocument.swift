// SPDX-License-Identifier: GPL-3.0-or-later
import TOMLKit

/// A config file's text parsed as TOML (through TOMLKit), with the line each key is set on.
/// What the keys mean is the program's (the CLI's `ConfigFile`); this is the syntax and the
/// typed reading of values, with every problem named by its line and key.
package struct ConfigDocument {
    /// Where the file is (for the errors).
    package let path: String
    package let root: TOMLTable
    package let lines: ConfigLines

    /// Parses `text`, the file at `path`.
    /// - Throws: ``ConfigError`` with the parser's message, line and column when it is not TOML.
    package init(parsing text: String, path: String) throws(ConfigError) {
        // TOML allows no control character but tab and the line ends, anywhere. Found by fuzzing
        // (scripts/fuzz, FuzzConfig): toml++ 3 (in TOMLKit 0.6.0) fails an assertion, which
        // aborts the program, on one at the start of a table header's key (`[\u{13}l]`), so
        // none reaches it.
        var line = 1, column = 1
        for scalar in text.unicodeScalars {
            if scalar == "\n" {
                line += 1
                column = 1
                continue
            }
            if (scalar.value < 0x20 && scalar != "\t" && scalar != "\r") || scalar.value == 0x7F {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                let code = "U+" + String(repeating: "0", count: 4 - hex.count) + hex
                throw ConfigError(path: path, problems: [ConfigProblem(line: line, column: column,
                                                                       kind: .syntax("a control character (\(code)) is not allowed in TOML"))])
            }
            column += 1
        }
        let lines = ConfigLines(scanning: text)
        if let bad = lines.unparseable {
            throw ConfigError(path: path, problems: [ConfigProblem(line: bad.line, column: bad.column, kind: .syntax(bad.reason))])
        }
        do {
            root = try TOMLTable(string: text)
        } catch let e as TOMLParseError {
            throw ConfigError(path: path, problems: [ConfigProblem(line: e.source.begin.line, column: e.source.begin.column,
                                                                   kind: .syntax(e.description))])
        } catch {
            throw ConfigError(path: path, problems: [ConfigProblem(kind: .syntax("\(error)"))])
        }
        self.path = path
        self.lines = lines
    }
}

/// Reads values of a ``ConfigDocument`` as the types a setting takes, collecting a problem
/// (with the key's line) for each one that is of the wrong type or out of range.
package struct ConfigValues {
    package let lines: ConfigLines
    /// What was wrong, in the order found.
    package private(set) var problems: [ConfigProblem] = []

    package init(lines: ConfigLines) { self.lines = lines }

    /// The line a dotted key (`playback.volume`, `keys.quit`) was set on.
    package func line(of key: String) -> Int? { lines.line(of: key.split(separator: ".").map(String.init)) }

    package mutating func problem(_ key: String, _ kind: ConfigProblem.Kind) {
        problems.append(ConfigProblem(line: line(of: key), key: key, kind: kind))
    }

    package mutating func table(_ v: TOMLValueConvertible, key: String) -> TOMLTable? {
        if let t = v.table { return t }
        problem(key, .wrongType(expected: "a table ([\(key)])", found: Self.describe(v)))
        return nil
    }

    package mutating func string(_ v: TOMLValueConvertible, key: String) -> String? {
        if let s = v.string { return s }
        problem(key, .wrongType(expected: "a string", found: Self.describe(v)))
        return nil
    }

    package mutating func bool(_ v: TOMLValueConvertible, key: String) -> Bool? {
        if let b = v.bool { return b }
        problem(key, .wrongType(expected: "true or false", found: Self.describe(v)))
        return nil
    }

    package mutating func integer(_ v: TOMLValueConvertible, key: String, in range: ClosedRange<Int>, allowed: String) -> Int? {
        guard let i = v.int else {
            problem(key, .wrongType(expected: "an integer", found: Self.describe(v)))
            return nil
        }
        guard range.contains(i) else {
            problem(key, .outOfRange(value: "\(i)", allowed: allowed))
            return nil
        }
        return i
    }

    /// A float or an integer.
    package mutating func number(_ v: TOMLValueConvertible, key: String, in range: ClosedRange<Double>, allowed: String) -> Double? {
        guard let d = v.double ?? v.int.map(Double.init) else {
            problem(key, .wrongType(expected: "a number", found: Self.describe(v)))
            return nil
        }
        guard range.contains(d) else {
            problem(key, .outOfRange(value: d == d.rounded() && abs(d) < 1e15 ? "\(Int(d))" : "\(d)", allowed: allowed))
            return nil
        }
        return d
    }

    /// A string that is one of `choices`.
    package mutating func choice(_ v: TOMLValueConvertible, key: String, _ choices: [String]) -> String? {
        guard let s = string(v, key: key) else { return nil }
        guard choices.contains(s) else {
            let list = choices.dropLast().joined(separator: ", ") + " or " + (choices.last ?? "")
            problem(key, .invalidValue("must be \(list), not '\(s)'"))
            return nil
        }
        return s
    }

    /// A string or an array of strings, as an array.
    package mutating func strings(_ v: TOMLValueConvertible, key: String, allowEmptyStrings: Bool) -> [String]? {
        let expected = "a string or an array of strings"
        if let s = v.string {
            guard allowEmptyStrings || !s.isEmpty else {
                problem(key, .invalidValue("is an empty string"))
                return nil
            }
            return [s]
        }
        guard let a = v.array else {
            problem(key, .wrongType(expected: expected, found: Self.describe(v)))
            return nil
        }
        var out: [String] = []
        for (i, e) in a.enumerated() {
            guard let s = e.string else {
                problem(key, .wrongType(expected: expected, found: "an array holding \(Self.describe(e)) (item \(i + 1))"))
                return nil
            }
            guard allowEmptyStrings || !s.isEmpty else {
                problem(key, .invalidValue("item \(i + 1) is an empty string"))
                return nil
            }
            out.append(s)
        }
        return out
    }

    /// A value's type, and the value when it is short, for "must be X, not Y".
    package static func describe(_ v: TOMLValueConvertible) -> String {
        switch v.type {
        case .string: "a string (\"\(v.string ?? "")\")"
        case .int: "an integer (\(v.int ?? 0))"
        case .double: "a number (\(v.double ?? 0))"
        case .bool: "\(v.bool ?? false)"
        case .array: "an array"
        case .table: "a table"
        case .date, .time, .dateTime: "a date or time"
        }
    }
}
