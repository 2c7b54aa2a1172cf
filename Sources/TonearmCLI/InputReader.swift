// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What turns a terminal's bytes into keys for an ``InputReader``: fed bytes as they arrive, in
/// any pieces; an Escape byte alone is told from the start of a sequence by a pause after it.
protocol TerminalInputDecoder: Sendable {
    associatedtype Output: Sendable
    init()
    /// Whether an Escape byte is waiting to be told from the start of a sequence.
    var isWaitingAfterEscape: Bool { get }
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [Output]
    /// The Escape key, when its byte is still waiting and nothing followed.
    mutating func flushEscape() -> [Output]
}


/// A thread that reads standard input and hands on what its `Decoder` makes of it, and the
/// signals it was given, until ``stop()``. The signals get a handler of their own for that time
/// (it writes the signal's number to a pipe the thread polls, the one async-signal-safe way),
/// installed by ``start()`` itself, and their previous actions back when it stops. The thread
/// waits in `poll` with a wake-up pipe, so that stopping it leaves no reader behind to take the
/// keys of what runs next (the play screen after the picker, and the other way round). One
/// reader runs at a time. Used by `tonearm pick` and by `tonearm play`'s screen.
final class InputReader<Decoder: TerminalInputDecoder>: @unchecked Sendable {
    enum Event: Sendable {
        case input(Decoder.Output)
        case signal(Int32)
        /// Standard input ended or failed (the terminal went away).
        case closed
    }

    private let deliver: @Sendable (Event) -> Void
    private let signals: [Int32]
    private var previous: [Int32: sigaction] = [:]
    private var wake: [Int32] = [-1, -1]
    private var signalPipe: [Int32] = [-1, -1]
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    /// How long a lone Escape waits for the rest of a sequence, in milliseconds.
    static var escapeDelay: Int32 { 40 }

    /// `readsInput` false: only the signals (standard input is not a terminal).
    private let readsInput: Bool

    init(signals: [Int32], readsInput: Bool = true, deliver: @escaping @Sendable (Event) -> Void) {
        self.signals = signals
        self.readsInput = readsInput
        self.deliver = deliver
    }

    func start() {
        guard !started, pipe(&wake) == 0 else { return }
        guard pipe(&signalPipe) == 0 else {
            close(wake[0]); close(wake[1])
            return
        }
        for fd in wake + signalPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(signalPipe[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(signalPipe[1], F_SETFL, O_NONBLOCK)  // a flood of signals never blocks the handler
        started = true
        signalWriteFD = signalPipe[1]
        for sig in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardSignal
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            var old = sigaction()
            sigaction(sig, &action, &old)
            previous[sig] = old
        }
        let wakeFD = wake[0], signalFD = signalPipe[0]
        let deliver = self.deliver
        let finished = self.finished
        let readsInput = self.readsInput
        let t = Thread {
            defer { finished.signal() }
            var decoder = Decoder()
            var buffer = [UInt8](repeating: 0, count: 512)
            var inputOpen = readsInput
            while true {
                // Only the terminal's foreground reads it (a read in the background would stop
                // the process); SIGCONT, among the signals, says when that may have changed.
                let reading = inputOpen && tcgetpgrp(0) == getpgrp()
                var fds = [pollfd(fd: reading ? 0 : -1, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 3, decoder.isWaitingAfterEscape ? Self.escapeDelay : -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    deliver(.closed)
                    return
                }
                if fds[1].revents != 0 { return }
                if fds[2].revents != 0 {
                    var sig: UInt8 = 0
                    while read(signalFD, &sig, 1) == 1 { deliver(.signal(Int32(sig))) }
                }
                if ready == 0 {
                    decoder.flushEscape().forEach { deliver(.input($0)) }
                    continue
                }
                guard reading, fds[0].revents != 0 else { continue }
                let n = read(0, &buffer, buffer.count)
                if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if n <= 0 {
                    inputOpen = false
                    deliver(.closed)
                    continue  // the signals still come
                }
                decoder.feed(buffer[0..<n]).forEach { deliver(.input($0)) }
            }
        }
        t.name = "tonearm.keys"
        t.start()
    }

    /// Ends the thread, waits for it, and gives the signals their previous actions back.
    func stop() {
        guard started else { return }
        started = false
        var byte: UInt8 = 1
        _ = write(wake[1], &byte, 1)
        finished.wait()
        for (sig, old) in previous {
            var old = old
            sigaction(sig, &old, nil)
        }
        previous.removeAll()
        signalWriteFD = -1
        for fd in wake + signalPipe { close(fd) }
    }
}

/// The pipe the signal handler writes to (-1: none), read by the handler.
nonisolated(unsafe) private var signalWriteFD: Int32 = -1

/// Writes the signal's number to the reader's pipe (async-signal-safe: `write` only, errno kept).
private let forwardSignal: @convention(c) (Int32) -> Void = { sig in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: sig)
    _ = write(signalWriteFD, &byte, 1)
    errno = saved
}
