// SPDX-License-Identifier: GPL-3.0-or-later

/// One command of the MPD protocol as a client sent it: its name and its arguments, read from a
/// request line the way MPD's own tokenizer reads it (checked against MPD 0.23 by
/// `MPDPeerParseTests`):
///
/// - the line's trailing white space (a CR of `\r\n` too) is not part of it;
/// - the command is a word: a letter, then letters, digits and `_`; anything else before the
///   first white space is "Invalid word character";
/// - arguments are separated by spaces or tabs; an argument is either quoted — `"…"`, where a
///   backslash takes the next character as it is (`\"`, `\\`), which must be followed by white
///   space or the end ("Space expected after closing '\"'"; "Missing closing '\"'") — or unquoted:
///   any bytes above 0x20 except `"` and `'` ("Invalid unquoted character").
///
/// A line that does not start with a lowercase letter is not read at all: MPD closes such a
/// connection (every command starts so; anything else is most likely not an MPD client — an
/// HTTP request sent to the port), see ``MPDRequestFramer``.
///
/// Arguments are bytes on the wire; they are kept as `String`s decoded as UTF-8, with any invalid
/// sequence replaced (MPD passes the bytes on; a tag or path in another encoding never matches).
public struct MPDRequest: Sendable, Hashable {
    public var command: String
    public var arguments: [String]

    public init(command: String, arguments: [String] = []) {
        self.command = command
        self.arguments = arguments
    }

    /// Most arguments one request may have (MPD's `COMMAND_ARGV_MAX`).
    public static let maxArguments = 4096

    /// Reads a request line (without its newline).
    /// - Throws: ``MPDAck`` with code ``MPDAckCode/unknown`` and no command name, MPD's message
    ///   for what is wrong.
    public init(line: some Collection<UInt8>) throws(MPDAck) {
        var bytes = Array(line)
        while let last = bytes.last, Self.isSpace(last) || last == 13 || last == 10 { bytes.removeLast() }
        var i = 0
        func fail(_ message: String) -> MPDAck { MPDAck(.unknown, message) }
        // The command word.
        guard i < bytes.count, Self.isLetter(bytes[i]) else { throw fail("Letter expected") }
        let start = i
        while i < bytes.count, !Self.isSpace(bytes[i]) {
            guard Self.isLetter(bytes[i]) || Self.isDigit(bytes[i]) || bytes[i] == UInt8(ascii: "_") else {
                throw fail("Invalid word character")
            }
            i += 1
        }
        command = String(decoding: bytes[start..<i], as: UTF8.self)
        arguments = []
        while true {
            while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
            guard i < bytes.count else { break }
            guard arguments.count < Self.maxArguments else { throw fail("Too many arguments") }
            var value: [UInt8] = []
            if bytes[i] == UInt8(ascii: "\"") {
                i += 1
                var closed = false
                while i < bytes.count {
                    let b = bytes[i]
                    if b == UInt8(ascii: "\\") {
                        i += 1
                        guard i < bytes.count else { break }
                        value.append(bytes[i])
                    } else if b == UInt8(ascii: "\"") {
                        closed = true
                        i += 1
                        break
                    } else {
                        value.append(b)
                    }
                    i += 1
                }
                guard closed else { throw fail("Missing closing '\"'") }
                guard i == bytes.count || Self.isSpace(bytes[i]) else { throw fail("Space expected after closing '\"'") }
            } else {
                while i < bytes.count, !Self.isSpace(bytes[i]) {
                    let b = bytes[i]
                    guard b > 0x20, b != UInt8(ascii: "\""), b != UInt8(ascii: "'") else { throw fail("Invalid unquoted character") }
                    value.append(b)
                    i += 1
                }
            }
            arguments.append(String(decoding: value, as: UTF8.self))
        }
    }

    /// `text` as an argument on a request line: quoted, with `"` and `\` escaped (what a client
    /// sends; the tokenizer reads it back as `text`).
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for c in text.unicodeScalars {
            if c == "\"" || c == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(c)
        }
        return out + "\""
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }
    static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}
