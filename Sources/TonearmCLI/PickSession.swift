// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Tonearm
#if canImport(Glibc)
import Glibc
#endif

/// Runs the picker of `tonearm pick` in the terminal: the alternate screen in cbreak mode (keys
/// read from standard input, the screen drawn on `terminal.output`), until the user picks or
/// cancels. The terminal is given back on every way out: a pick, Escape, Ctrl-C and the other
/// quit signals (SIGINT, SIGTERM, SIGHUP), and a crash (``Terminal``'s fatal-signal handler).
/// Ctrl-Z gives it back while the process is stopped and takes it again on `fg`; a resized
/// window is drawn again at its new size.
final class PickSession: @unchecked Sendable {
    enum Outcome: Equatable {
        case picked([MediaItem])
        case cancelled
        /// A signal asked to quit.
        case signalled(Int32)
    }

    private var picker: MediaPicker
    private let terminal: Terminal
    private let verb: String
    private let libraryPath: String

    init(picker: MediaPicker, terminal: Terminal, verb: String, libraryPath: String) {
        self.picker = picker
        self.terminal = terminal
        self.verb = verb
        self.libraryPath = libraryPath
    }

    func run() async -> Outcome {
        let (events, continuation) = AsyncStream<InputReader.Event>.makeStream()
        // The signals' handlers are in place before the first frame: a key that raises one is
        // never lost (nor, for Ctrl-Z, left to stop the process with the terminal unrestored).
        let reader = InputReader(signals: [SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP]) { continuation.yield($0) }
        reader.start()
        terminal.enter()
        defer {
            terminal.restore()  // first: a signal after reader.stop() has its default action again
            reader.stop()
        }
        draw()
        for await event in events {
            switch event {
            case .input(.redraw), .signal(SIGWINCH):
                draw()
            case .input(.key(let key)):
                switch picker.handle(key) {
                case .none: break
                case .redraw: draw()
                case .picked(let items): return .picked(items)
                case .cancelled: return .cancelled
                }
            case .signal(SIGTSTP):
                terminal.restore()
                raise(SIGSTOP)  // this thread and the process stop here until `fg`
                terminal.enter()
                draw()
            case .signal(let sig):
                return .signalled(sig)
            case .closed:
                return .signalled(SIGHUP)
            }
        }
        return .cancelled
    }

    private func draw() {
        let size = Terminal.size(of: terminal.output)
        picker.pageSize = PickerScreen.pageSize(height: size.rows)
        let lines = PickerScreen.render(picker, width: size.columns, height: size.rows, verb: verb, libraryPath: libraryPath)
        terminal.draw("\u{1B}[H" + lines.joined(separator: "\u{1B}[K\n") + "\u{1B}[K\u{1B}[J")
    }
}

/// A thread that reads standard input and hands on what ``PickerKeyDecoder`` makes of it, and
/// the signals it was given, until ``stop()``. The signals get a handler of their own for that
/// time (it writes the signal's number to a pipe the thread polls, the one async-signal-safe
/// way), installed by ``start()`` itself, and their previous actions back when it stops. The
/// thread waits in `poll` with a wake-up pipe, so that stopping it leaves no reader behind to
/// take the keys of what runs next (the play screen).
final class InputReader: @unchecked Sendable {
    enum Event: Sendable {
        case input(PickerInput)
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
    static let escapeDelay: Int32 = 40

    init(signals: [Int32], deliver: @escaping @Sendable (Event) -> Void) {
        self.signals = signals
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
        let t = Thread {
            defer { finished.signal() }
            var decoder = PickerKeyDecoder()
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
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
                guard fds[0].revents != 0 else { continue }
                let n = read(0, &buffer, buffer.count)
                if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if n <= 0 {
                    deliver(.closed)
                    return
                }
                decoder.feed(buffer[0..<n]).forEach { deliver(.input($0)) }
            }
        }
        t.name = "tonearm.pick.keys"
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
