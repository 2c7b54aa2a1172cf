// SPDX-License-Identifier: GPL-3.0-or-later

/// Why a config file was refused: every problem found in it, each with its line and key.
/// Printed as one `PATH:LINE: …` line per problem, like a compiler's.
package struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// The config file.
    package var path: String
    /// What is wrong, in the order of the file's lines.
    package var problems: [ConfigProblem]

    package init(path: String, problems: [ConfigProblem]) {
        self.path = path
        self.problems = problems.sorted { ($0.line ?? 0, $0.key ?? "") < ($1.line ?? 0, $1.key ?? "") }
    }

    package var description: String {
        problems.map { p in
            var place = path
            if let l = p.line { place += ":\(l)" }
            if let c = p.column { place += ":\(c)" }
            return "\(place): \(p.message)"
        }.joined(separator: "\n")
    }
}

/// One thing wrong in a config file.
package struct ConfigProblem: Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        /// Not TOML: the parser's message.
        case syntax(String)
        /// The file cannot be read.
        case unreadable(String)
        /// A key the settings do not have; `suggestion` is the nearest known key, dotted.
        case unknownKey(suggestion: String?)
        /// A table the settings do not have (`[playbak]`).
        case unknownTable(suggestion: String?)
        /// A value of the wrong TOML type.
        case wrongType(expected: String, found: String)
        /// A number outside what the setting allows.
        case outOfRange(value: String, allowed: String)
        /// A value of the right type that the setting does not accept.
        case invalidValue(String)
    }

    /// 1-based; nil when the problem is with the whole file.
    package var line: Int?
    package var column: Int?
    /// The dotted key (`playback.volume`), nil for the whole file.
    package var key: String?
    package var kind: Kind

    package init(line: Int? = nil, column: Int? = nil, key: String? = nil, kind: Kind) {
        self.line = line
        self.column = column
        self.key = key
        self.kind = kind
    }

    package var message: String {
        let name = key.map { "'\($0)'" } ?? ""
        switch kind {
        case .syntax(let m): return "not valid TOML: \(m)"
        case .unreadable(let m): return "cannot be read: \(m)"
        case .unknownKey(let suggestion):
            return "unknown key \(name)" + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
        case .unknownTable(let suggestion):
            return "unknown table [\(key ?? "")]" + (suggestion.map { "; did you mean [\($0)]?" } ?? "")
        case .wrongType(let expected, let found): return "\(name) must be \(expected), not \(found)"
        case .outOfRange(let value, let allowed): return "\(name) must be \(allowed), not \(value)"
        case .invalidValue(let m): return "\(name): \(m)"
        }
    }
}
