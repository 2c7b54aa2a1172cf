// SPDX-License-Identifier: GPL-3.0-or-later

/// One `key: value` line of an MPD answer.
public struct MPDPair: Sendable, Hashable, CustomStringConvertible {
    public var key: String
    public var value: String

    public init(_ key: String, _ value: String) {
        self.key = key
        self.value = value
    }

    public var description: String { "\(key): \(value)" }
}

/// A server's whole answer to one request (or command list) that ended in `OK`: its
/// `key: value` lines in order, where each `list_OK` fell (for `command_list_ok_begin`), and the
/// bytes of a `binary: N` chunk (`albumart`, `readpicture`).
public struct MPDReply: Sendable, Hashable {
    public var pairs: [MPDPair] = []
    /// For each `list_OK`, how many pairs came before it: the answers of a command list's
    /// commands are `pairs[0..<listEnds[0]]`, `pairs[listEnds[0]..<listEnds[1]]`, …
    public var listEnds: [Int] = []
    /// The bytes after a `binary: N` line (nil when there was none).
    public var binary: [UInt8]?

    public init(pairs: [MPDPair] = [], listEnds: [Int] = [], binary: [UInt8]? = nil) {
        self.pairs = pairs
        self.listEnds = listEnds
        self.binary = binary
    }

    /// The first value of `key` (keys compared as MPD's clients do: without case).
    public subscript(key: String) -> String? {
        pairs.first { $0.key.isSameKey(key) }?.value
    }

    /// Every value of `key`, in order.
    public func values(of key: String) -> [String] {
        pairs.filter { $0.key.isSameKey(key) }.map(\.value)
    }

    /// The pairs split into records, each starting at a pair whose key is one of `starts`
    /// (`file`, `directory`, `playlist` for songs; `outputid` for outputs). Pairs before the
    /// first start are dropped.
    public func records(startingWith starts: Set<String>) -> [[MPDPair]] {
        var out: [[MPDPair]] = []
        for p in pairs {
            if starts.contains(p.key.lowercased()) { out.append([p]) } else if !out.isEmpty { out[out.count - 1].append(p) }
        }
        return out
    }

    /// The answers of a `command_list_ok_begin` list, one reply per command (the pairs after the
    /// last `list_OK` make a last one only when there are any).
    public var listReplies: [MPDReply] {
        var out: [MPDReply] = []
        var start = 0
        for end in listEnds {
            out.append(MPDReply(pairs: Array(pairs[start..<end])))
            start = end
        }
        if start < pairs.count { out.append(MPDReply(pairs: Array(pairs[start...]))) }
        return out
    }
}

/// An `ACK [code@index] {command} message` line as a client reads it. The code is kept as a
/// number (``ack`` is nil for a code MPD's `Ack.hxx` does not have).
public struct MPDServerError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var listIndex: Int
    public var command: String
    public var message: String

    public init(code: Int, listIndex: Int, command: String, message: String) {
        self.code = code
        self.listIndex = listIndex
        self.command = command
        self.message = message
    }

    /// The known code, if it is one.
    public var ack: MPDAckCode? { MPDAckCode(rawValue: code) }

    /// The line as the server sent it.
    public var description: String { "ACK [\(code)@\(listIndex)] {\(command)} \(message)" }

    /// Reads an ACK line (without its newline); nil when it is not one.
    public init?(line: some StringProtocol) {
        let s = Substring(line)
        guard s.hasPrefix("ACK [") else { return nil }
        var rest = s.dropFirst(5)
        guard let at = rest.firstIndex(of: "@"), let code = Int(rest[..<at]), code >= 0 else { return nil }
        rest = rest[rest.index(after: at)...]
        guard let close = rest.firstIndex(of: "]"), let index = Int(rest[..<close]), index >= 0 else { return nil }
        rest = rest[rest.index(after: close)...]
        guard rest.hasPrefix(" {") else { return nil }
        rest = rest.dropFirst(2)
        guard let brace = rest.firstIndex(of: "}") else { return nil }
        let command = String(rest[..<brace])
        rest = rest[rest.index(after: brace)...]
        if rest.hasPrefix(" ") { rest = rest.dropFirst() }
        self.init(code: code, listIndex: index, command: command, message: String(rest))
    }
}

/// What a server sent that is not the MPD protocol.
public struct MPDResponseError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Reads a server's answers from the bytes as they arrive (any split): the greeting
/// (`OK MPD 0.23.5`), then for each request `key: value` lines (a `binary: N` line followed by
/// N bytes and a newline), `list_OK`s, and `OK` or an `ACK` line.
///
/// Pure (no I/O): a client feeds it what `read` returned and takes what is complete. Limits
/// keep a broken or hostile server from making it hold unbounded memory: a line longer than
/// ``maxLineBytes`` and a binary chunk larger than ``maxBinaryBytes`` are errors, as is a line
/// that is neither a pair nor an end. Value-type, not shared: one per connection.
public struct MPDResponseParser: Sendable {
    /// The result of one request.
    public enum Answer: Sendable, Hashable {
        case ok(MPDReply)
        /// The server's error; `partial` holds what came before it (the answers of a command
        /// list's commands that succeeded).
        case failure(MPDServerError, partial: MPDReply)
    }

    public let maxLineBytes: Int
    public let maxBinaryBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var reply = MPDReply()
    /// Set after a `binary: N` line: the N bytes (and a newline) come next.
    private var binaryPending: Int?
    public private(set) var greeting: String?

    public init(maxLineBytes: Int = 1 << 20, maxBinaryBytes: Int = 1 << 26) {
        self.maxLineBytes = maxLineBytes
        self.maxBinaryBytes = maxBinaryBytes
    }

    /// Takes more bytes from the connection.
    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes fed and not yet read.
    public var bufferedCount: Int { buffer.count - start }

    /// Reads the greeting line once it is complete: the protocol version the server announces.
    /// - Throws: ``MPDResponseError`` when the first line is not `OK MPD <version>`.
    public mutating func readGreeting() throws(MPDResponseError) -> String? {
        if let greeting { return greeting }
        guard let line = try nextLine() else { return nil }
        guard line.hasPrefix("OK MPD ") else { throw MPDResponseError("not an MPD server (it said \(Self.shown(line)))") }
        greeting = String(line.dropFirst(7))
        return greeting
    }

    /// The next complete answer, or nil when more bytes are needed.
    /// - Throws: ``MPDResponseError`` for a line that is not the protocol, a line or chunk over
    ///   the limits; the connection is then unusable.
    public mutating func nextAnswer() throws(MPDResponseError) -> Answer? {
        while true {
            if let n = binaryPending {
                guard buffer.count - start >= n + 1 else { return nil }
                guard buffer[start + n] == 10 else { throw MPDResponseError("a binary chunk of \(n) bytes is not followed by a newline") }
                reply.binary = Array(buffer[start..<(start + n)])
                start += n + 1
                binaryPending = nil
                continue
            }
            guard let line = try nextLine() else { return nil }
            if line == "OK" {
                defer { reply = MPDReply() }
                return .ok(reply)
            }
            if line == "list_OK" {
                reply.listEnds.append(reply.pairs.count)
                continue
            }
            if line.hasPrefix("ACK ") {
                guard let error = MPDServerError(line: line) else { throw MPDResponseError("a malformed error line: \(Self.shown(line))") }
                defer { reply = MPDReply() }
                return .failure(error, partial: reply)
            }
            guard let colon = line.firstIndex(of: ":"), line[line.index(after: colon)...].hasPrefix(" ") || line.index(after: colon) == line.endIndex else {
                throw MPDResponseError("a line that is neither `key: value` nor an end: \(Self.shown(line))")
            }
            let key = String(line[..<colon])
            var value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
            guard !key.isEmpty else { throw MPDResponseError("a line with an empty key: \(Self.shown(line))") }
            reply.pairs.append(MPDPair(key, String(value)))
            if key == "binary" {
                guard let n = Int(value), n >= 0 else { throw MPDResponseError("a binary chunk of no size: \(Self.shown(line))") }
                guard n <= maxBinaryBytes else { throw MPDResponseError("a binary chunk of \(n) bytes (more than \(maxBinaryBytes))") }
                guard reply.binary == nil else { throw MPDResponseError("a second binary chunk in one answer") }
                binaryPending = n
            }
        }
    }

    /// The next line (without `\n`; a `\r` before it is dropped), decoded as UTF-8 with invalid
    /// sequences replaced.
    private mutating func nextLine() throws(MPDResponseError) -> String? {
        guard let nl = buffer[start...].firstIndex(of: 10) else {
            if buffer.count - start > maxLineBytes { throw MPDResponseError("a line longer than \(maxLineBytes) bytes") }
            return nil
        }
        guard nl - start <= maxLineBytes else { throw MPDResponseError("a line longer than \(maxLineBytes) bytes") }
        var end = nl
        if end > start && buffer[end - 1] == 13 { end -= 1 }
        let line = String(decoding: buffer[start..<end], as: UTF8.self)
        start = nl + 1
        return line
    }

    /// A line as an error message shows it: at most 80 characters.
    static func shown(_ line: String) -> String {
        line.count > 80 ? "\"" + line.prefix(80) + "…\"" : "\"" + line + "\""
    }
}

extension String {
    fileprivate func isSameKey(_ other: String) -> Bool {
        self == other || lowercased() == other.lowercased()
    }
}
