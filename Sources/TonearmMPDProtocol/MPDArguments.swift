// SPDX-License-Identifier: GPL-3.0-or-later

/// Reading command arguments as MPD does (`protocol/ArgParser.cxx`), with its messages — what
/// clients show their users and what scripts match. Checked against MPD 0.23 by
/// `MPDPeerParseTests`. Each throws ``MPDArgumentError`` (sent as `ACK [2@…]`).
public enum MPDArguments {
    /// An integer the way C's `strtol` reads it (leading white space, a sign, decimal digits;
    /// saturating at the 64-bit bounds) and how much of `s` it read: nil when no digit.
    static func strtol(_ s: Substring.UTF8View) -> (value: Int64, rest: Substring.UTF8View)? {
        var i = s.startIndex
        while i < s.endIndex, [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D].contains(s[i]) { i = s.index(after: i) }
        var negative = false
        if i < s.endIndex, s[i] == UInt8(ascii: "-") || s[i] == UInt8(ascii: "+") {
            negative = s[i] == UInt8(ascii: "-")
            i = s.index(after: i)
        }
        var value: Int64 = 0, digits = 0, saturated = false
        while i < s.endIndex, s[i] >= UInt8(ascii: "0"), s[i] <= UInt8(ascii: "9") {
            let d = Int64(s[i] - UInt8(ascii: "0"))
            if !saturated {
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(d)
                if o1 || o2 { saturated = true } else { value = a }
            }
            digits += 1
            i = s.index(after: i)
        }
        guard digits > 0 else { return nil }
        if saturated { return (negative ? .min : .max, s[i...]) }
        return (negative ? -value : value, s[i...])
    }

    /// A whole integer argument (nothing after the digits), or nil.
    static func wholeInteger(_ s: String) -> Int64? {
        guard let (v, rest) = strtol(Substring(s).utf8), rest.isEmpty else { return nil }
        return v
    }

    /// A count or level from 0 to `max` (`setvol`, `crossfade`, `prio`): "Integer expected: …",
    /// "Number too large: …" (also for a negative number, as MPD says it).
    public static func unsigned(_ s: String, max: Int64 = Int64(UInt32.max)) throws(MPDArgumentError) -> Int64 {
        guard let v = wholeInteger(s) else { throw MPDArgumentError("Integer expected: \(s)") }
        guard v >= 0, v <= max else { throw MPDArgumentError("Number too large: \(s)") }
        return v
    }

    /// An integer in `min...max` (`play`, `playid`, `volume`): "Integer expected: …", "Number too
    /// large: …" outside the bounds (below them too: MPD says so, `volume -200`).
    public static func integer(_ s: String, min: Int64 = Int64(Int32.min), max: Int64 = Int64(Int32.max)) throws(MPDArgumentError) -> Int64 {
        guard let v = wholeInteger(s) else { throw MPDArgumentError("Integer expected: \(s)") }
        guard v <= max, v >= min else { throw MPDArgumentError("Number too large: \(s)") }
        return v
    }

    /// A range of queue positions: `N` (just N), `START:END` (END not included), `START:` (to the
    /// end), or `-1` (everything).
    public enum Range: Sendable, Hashable {
        case all
        case span(start: Int64, end: Int64?)
    }

    /// ``Range`` from `s`, with MPD's messages: "Integer or range expected: …", "Number is
    /// negative: …", "Number too large: …", "Malformed range: …" (an end before the start).
    public static func range(_ s: String, max: Int64 = Int64(Int32.max)) throws(MPDArgumentError) -> Range {
        guard let (start, rest) = strtol(Substring(s).utf8), rest.isEmpty || rest.first == UInt8(ascii: ":") else {
            throw MPDArgumentError("Integer or range expected: \(s)")
        }
        if start == -1, rest.isEmpty { return .all }
        guard start >= 0 else { throw MPDArgumentError("Number is negative: \(s)") }
        guard start <= max else { throw MPDArgumentError("Number too large: \(s)") }
        guard !rest.isEmpty else { return .span(start: start, end: start + 1) }
        let tail = rest.dropFirst()
        if tail.isEmpty { return .span(start: start, end: nil) }
        guard let (end, after) = strtol(tail), after.isEmpty else {
            throw MPDArgumentError("Integer or range expected: \(s)")
        }
        guard end >= 0 else { throw MPDArgumentError("Number is negative: \(s)") }
        guard end <= max else { throw MPDArgumentError("Number too large: \(s)") }
        guard end >= start else { throw MPDArgumentError("Malformed range: \(s)") }
        return .span(start: start, end: end)
    }

    /// `0` or `1` (as an integer: `01` is 1): "Boolean (0/1) expected: …".
    public static func bool(_ s: String) throws(MPDArgumentError) -> Bool {
        guard let v = wholeInteger(s), v == 0 || v == 1 else { throw MPDArgumentError("Boolean (0/1) expected: \(s)") }
        return v == 1
    }

    /// A number of seconds or decibels: "Float expected: …".
    public static func float(_ s: String) throws(MPDArgumentError) -> Double {
        guard let v = Double(s) else { throw MPDArgumentError("Float expected: \(s)") }
        return v
    }

    /// Where `addid`/`add`/`move` put songs since MPD 0.23: a position, or relative to the
    /// current song (`+N` after it, `-N` before it).
    public enum Position: Sendable, Hashable {
        case absolute(Int64)
        /// `+N`: N places after the current song (`+0`: just after it).
        case afterCurrent(Int64)
        /// `-N`: N places before the current song (`-0`: just before it).
        case beforeCurrent(Int64)
    }

    public static func position(_ s: String) throws(MPDArgumentError) -> Position {
        let first = s.utf8.first
        if first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            let n = try unsigned(String(s.dropFirst()), max: Int64(Int32.max))
            return first == UInt8(ascii: "+") ? .afterCurrent(n) : .beforeCurrent(n)
        }
        return .absolute(try unsigned(s, max: Int64(Int32.max)))
    }

    /// `single`'s mode: "0", "1" or "oneshot".
    public enum SingleMode: String, Sendable, Hashable { case off = "0", on = "1", oneshot }

    public static func singleMode(_ s: String) throws(MPDArgumentError) -> SingleMode {
        guard let m = SingleMode(rawValue: s) else { throw MPDArgumentError("Unrecognized single mode, expected 0, 1, or oneshot") }
        return m
    }

    /// `replay_gain_mode`'s mode.
    public enum ReplayGainMode: String, Sendable, Hashable, CaseIterable { case off, track, album, auto }

    public static func replayGainMode(_ s: String) throws(MPDArgumentError) -> ReplayGainMode {
        guard let m = ReplayGainMode(rawValue: s) else { throw MPDArgumentError("Unrecognized replay gain mode") }
        return m
    }
}

/// An argument that could not be read: MPD's message.
public struct MPDArgumentError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    /// As the command's error answer (`ACK [2@0] {command} message`).
    public func ack(command: String) -> MPDAck { MPDAck(.argument, message, command: command) }
}
