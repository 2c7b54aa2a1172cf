// SPDX-License-Identifier: GPL-3.0-or-later

/// MPD's error codes (`enum ack` in MPD's `Ack.hxx`), sent in every `ACK` line.
public enum MPDAckCode: Int, Sendable, Hashable, CaseIterable {
    case notList = 1
    /// A malformed or out-of-range argument.
    case argument = 2
    case password = 3
    case permission = 4
    /// An unknown command, or a request line that cannot be read.
    case unknown = 5
    case noExist = 50
    case playlistMax = 51
    case system = 52
    case playlistLoad = 53
    case updateAlready = 54
    case playerSync = 55
    case exist = 56
}

/// An MPD error answer: `ACK [code@index] {command} message`, where `index` is the failing
/// command's place in a command list (0 outside one) and `command` its name (empty when the line
/// could not be read as a command).
public struct MPDAck: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: MPDAckCode
    public var listIndex: Int
    public var command: String
    public var message: String

    public init(_ code: MPDAckCode, _ message: String, command: String = "", listIndex: Int = 0) {
        self.code = code
        self.message = message
        self.command = command
        self.listIndex = listIndex
    }

    /// The line as sent (without its newline). A message is one line: line breaks in it are
    /// sent as spaces, so a client never reads part of an error as the next answer.
    public var line: String {
        "ACK [\(code.rawValue)@\(listIndex)] {\(command)} " + MPDResponse.oneLine(message)
    }

    public var description: String { line }

    /// The same error, said of `command` at `index` of a command list.
    public func at(_ index: Int, command: String) -> MPDAck {
        MPDAck(code, message, command: self.command.isEmpty && code != .unknown ? command : self.command, listIndex: index)
    }
}

/// Writing answers: `key: value` lines, `OK`, `list_OK`, binary chunks.
public enum MPDResponse {
    /// `text` with every line break (CR, LF) replaced by a space.
    public static func oneLine(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 10 || $0 == 13 }) else { return text }
        return String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }

    /// One `key: value` line with its newline (the value on one line).
    public static func pair(_ key: String, _ value: String) -> String {
        "\(key): \(oneLine(value))\n"
    }

    public static let ok = "OK\n"
    public static let listOK = "list_OK\n"

    /// A time as MPD writes it (`Last-Modified`): ISO 8601 in UTC, to the second
    /// (`2026-11-28T10:14:35Z`), from seconds since 1970.
    public static func time(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (proleptic Gregorian).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
    }
}
