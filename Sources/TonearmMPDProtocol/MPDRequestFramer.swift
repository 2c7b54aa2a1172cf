// SPDX-License-Identifier: GPL-3.0-or-later

/// What one client connection has sent, turned into work: single commands, command lists and the
/// `idle`/`noidle` rule — the part of MPD's protocol that is about lines, not about what the
/// commands do. A state machine in swift-nio's style: lines in, an ``Output`` out; no I/O, no
/// threads; the connection's handler carries out what it says.
///
/// The rules (MPD 0.23's `client/Process.cxx`):
/// - a line that does not start with a lowercase ASCII letter (an empty line, `GET / HTTP/1.1`)
///   closes the connection;
/// - `command_list_begin` / `command_list_ok_begin` start collecting lines, `command_list_end`
///   hands them over as one ``Batch`` (with `list_OK` after each for the `ok` form); a list whose
///   lines add up to more than `maxCommandListBytes` closes the connection;
/// - while the client idles (the handler said so with ``enterIdle()``), `noidle` ends it and any
///   other line closes the connection.
///
/// Thread-safety: a value; one connection's handler owns it.
public struct MPDRequestFramer: Sendable {
    /// How a batch of lines is answered.
    public enum Mode: Sendable, Hashable {
        /// One command: `OK` or its `ACK`.
        case single
        /// A command list: `OK` at the end (`list_OK` after each command when `ok`), or the first
        /// `ACK` with the failing command's index, and nothing after it.
        case list(ok: Bool)
    }

    /// Lines to carry out in order, each still to be read as a request
    /// (``MPDRequest/init(line:)``; a line that cannot be read is that command's `ACK`).
    public struct Batch: Sendable, Hashable {
        public var lines: [[UInt8]]
        public var mode: Mode

        public init(lines: [[UInt8]], mode: Mode) {
            self.lines = lines
            self.mode = mode
        }
    }

    /// Why the connection is to be closed.
    public enum CloseReason: Sendable, Hashable {
        /// The line does not start as a command can (not an MPD client).
        case notACommand
        /// A command list grew past the limit.
        case commandListTooLarge(limit: Int)
        /// A line other than `noidle` came while idling.
        case commandWhileIdle
    }

    public enum Output: Sendable, Hashable {
        /// Nothing to do yet (a line was added to a command list).
        case none
        case execute(Batch)
        /// The client ended its idle: the handler answers the pending `idle` (with what changed
        /// so far, if anything) and `OK`.
        case endIdle
        /// Close the connection without an answer.
        case close(CloseReason)
    }

    private enum State: Sendable, Hashable {
        case ready
        case collecting(ok: Bool, lines: [[UInt8]], bytes: Int)
        case idling
        case closed
    }

    private var state = State.ready
    /// The most a command list's lines may add up to (MPD's `max_command_list_size`: 2 MiB).
    public let maxCommandListBytes: Int

    public init(maxCommandListBytes: Int = 2 << 20) {
        self.maxCommandListBytes = maxCommandListBytes
    }

    /// Whether the client idles.
    public var isIdle: Bool { state == .idling }
    /// Whether a command list is being collected.
    public var isCollecting: Bool { if case .collecting = state { true } else { false } }

    /// The handler carried out `idle` and waits for events or `noidle`.
    public mutating func enterIdle() {
        if state == .ready { state = .idling }
    }

    /// The handler answered the pending `idle` by itself (a subsystem changed): the client is
    /// ready again.
    public mutating func leaveIdle() {
        if state == .idling { state = .ready }
    }

    /// One line as received, without its newline (a trailing CR is allowed).
    public mutating func receive(line: some Collection<UInt8>) -> Output {
        var bytes = Array(line)
        while let last = bytes.last, last == 13 || last == 10 || last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard state != .closed else { return .close(.notACommand) }
        guard let first = bytes.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") else {
            state = .closed
            return .close(.notACommand)
        }
        switch state {
        case .closed:
            return .close(.notACommand)
        case .idling:
            guard bytes.elementsEqual("noidle".utf8) else {
                state = .closed
                return .close(.commandWhileIdle)
            }
            state = .ready
            return .endIdle
        case .collecting(let ok, var lines, let size):
            if bytes.elementsEqual("command_list_end".utf8) {
                state = .ready
                return .execute(Batch(lines: lines, mode: .list(ok: ok)))
            }
            let grown = size + bytes.count
            guard grown <= maxCommandListBytes else {
                state = .closed
                return .close(.commandListTooLarge(limit: maxCommandListBytes))
            }
            state = .ready  // release `lines` before appending (no copy)
            lines.append(bytes)
            state = .collecting(ok: ok, lines: lines, bytes: grown)
            return .none
        case .ready:
            if bytes.elementsEqual("command_list_begin".utf8) {
                state = .collecting(ok: false, lines: [], bytes: 0)
                return .none
            }
            if bytes.elementsEqual("command_list_ok_begin".utf8) {
                state = .collecting(ok: true, lines: [], bytes: 0)
                return .none
            }
            // `noidle` without `idle` is ignored (MPD answers nothing).
            if bytes.elementsEqual("noidle".utf8) { return .none }
            return .execute(Batch(lines: [bytes], mode: .single))
        }
    }
}
