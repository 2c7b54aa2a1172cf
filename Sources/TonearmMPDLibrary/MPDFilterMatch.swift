// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmMPDProtocol

/// A parsed filter made ready to test songs: values folded once, regular expressions compiled.
/// Made for one command and dropped after it (not Sendable: `Regex` is not).
struct MPDSongMatcher {
    indirect enum Node {
        case compare(MPDFilter.Field, MPDFilter.Operator, String, Regex<AnyRegexOutput>?)
        case base(String)
        case modifiedSince(Int64)
        case audioFormat(MPDAudioFormat, mask: Bool)
        case not(Node)
        case and([Node])
    }

    let root: Node
    /// `search`'s matching: case ignored.
    let foldCase: Bool

    init(_ filter: MPDFilter, foldCase: Bool, command: String) throws(MPDAck) {
        self.foldCase = foldCase
        root = try Self.node(filter, foldCase: foldCase, command: command)
    }

    static func node(_ f: MPDFilter, foldCase: Bool, command: String) throws(MPDAck) -> Node {
        switch f {
        case .compare(let field, let op, let value):
            var regex: Regex<AnyRegexOutput>?
            if op == .matches || op == .notMatches {
                do {
                    regex = try Regex(value)
                    if foldCase { regex = regex?.ignoresCase() }
                } catch {
                    throw MPDAck(.argument, "Failed to compile regular expression", command: command)
                }
            }
            return .compare(field, op, foldCase ? fold(value) : value, regex)
        case .base(let b): return .base(b)
        case .modifiedSince(let t): return .modifiedSince(t)
        case .audioFormat(let a, let mask): return .audioFormat(a, mask: mask)
        case .not(let inner): return .not(try node(inner, foldCase: foldCase, command: command))
        case .and(let items):
            var nodes: [Node] = []
            for i in items { nodes.append(try node(i, foldCase: foldCase, command: command)) }
            return .and(nodes)
        }
    }

    static func fold(_ s: String) -> String { s.lowercased() }

    func matches(_ song: MPDSong) -> Bool { matches(root, song) }

    private func matches(_ node: Node, _ song: MPDSong) -> Bool {
        switch node {
        case .and(let items): return items.allSatisfy { matches($0, song) }
        case .not(let inner): return !matches(inner, song)
        case .base(let b):
            let base = b.hasSuffix("/") ? String(b.dropLast()) : b
            return base.isEmpty || song.uri.hasPrefix(base + "/")
        case .modifiedSince(let t): return song.mtime >= t
        case .audioFormat(let f, _):
            if let r = f.sampleRate, r != song.sampleRate { return false }
            if let b = f.format, b != song.bits { return false }
            if let c = f.channels, c != song.channels { return false }
            return true
        case .compare(let field, let op, let value, let regex):
            let negated = op == .notEqual || op == .notMatches
            let positive: Bool
            switch field {
            case .file: positive = test(song.uri, op, value, regex)
            case .any: positive = song.tags.contains { test($0.1, op, value, regex) }
            case .tag(let tag):
                let own = song.values(tag)
                if !own.isEmpty {
                    positive = own.contains { test($0, op, value, regex) }
                } else {
                    let fallback = song.valuesWithFallback(tag)
                    // MPD: a tag the song lacks matches an empty value.
                    positive = fallback.contains { test($0, op, value, regex) } || value.isEmpty
                }
            }
            return positive != negated
        }
    }

    /// Whether `s` matches without negation (`!=` tests equality, `!~` the expression).
    private func test(_ s: String, _ op: MPDFilter.Operator, _ value: String, _ regex: Regex<AnyRegexOutput>?) -> Bool {
        let text = foldCase ? Self.fold(s) : s
        switch op {
        case .equal, .notEqual: return text == value
        case .contains: return value.isEmpty || text.contains(value)
        case .matches, .notMatches:
            guard let regex else { return false }
            return (try? regex.firstMatch(in: s)) != nil
        }
    }
}
