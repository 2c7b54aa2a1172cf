// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The controlling terminal in "cbreak" mode for the live screen: keys arrive one at a time
/// without echo; Ctrl-C still raises SIGINT. The original settings are restored by `restore()`,
/// and also if the process dies from a fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE),
/// so the user's shell is never left broken. Keys are read from standard input; the screen is
/// drawn on standard output, or on another descriptor of the terminal (`tonearm pick` draws on
/// /dev/tty when its output is captured).
final class Terminal: @unchecked Sendable {
    /// Whether standard input and output are both terminals.
    static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    /// Columns of the terminal (80 when unknown).
    static var width: Int { size(of: 1).columns }

    /// Columns and rows of the terminal open on `fd` (80 × 24 when unknown).
    static func size(of fd: Int32) -> (columns: Int, rows: Int) {
        var ws = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &ws) == 0 else { return (80, 24) }
        return (ws.ws_col > 0 ? Int(ws.ws_col) : 80, ws.ws_row > 0 ? Int(ws.ws_row) : 24)
    }

    /// Where the screen is drawn: standard output unless given another terminal's descriptor.
    let output: Int32
    /// Whether pasted text is marked (bracketed paste), so that a newline in it is not Enter.
    private let bracketedPaste: Bool
    /// Whether a screen is drawn (the alternate screen, the cursor hidden), or only keys are
    /// read (`tonearm play --plain` in a terminal: its lines stay in the scrollback).
    let drawsScreen: Bool
    private var active = false

    init(output: Int32 = 1, bracketedPaste: Bool = false, drawsScreen: Bool = true) {
        self.output = output
        self.bracketedPaste = bracketedPaste
        self.drawsScreen = drawsScreen
    }

    /// Whether the terminal is taken (between ``enter()`` and ``restore()``).
    var isActive: Bool { active }

    /// Enters cbreak mode and (when it draws a screen) the alternate screen, hides the cursor.
    func enter() {
        lastFrame = nil
        guard !active, tcgetattr(0, savedTermios) == 0 else { return }
        savedOutput.pointee = drawsScreen ? output : -1
        savedValid.pointee = 1
        var raw = savedTermios.pointee
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSANOW, &raw)
        for s in [SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE] { signal(s, fatalSignalHandler) }
        if drawsScreen { Terminal.write("\u{1B}[?1049h\u{1B}[?25l" + (bracketedPaste ? "\u{1B}[?2004h" : ""), to: output) }
        active = true
    }

    /// Leaves the alternate screen, shows the cursor and restores the terminal settings.
    func restore() {
        lastFrame = nil
        guard active else { return }
        active = false
        if drawsScreen { Terminal.write((bracketedPaste ? "\u{1B}[?2004l" : "") + "\u{1B}[?25h\u{1B}[?1049l", to: output) }
        tcsetattr(0, TCSANOW, savedTermios)
        savedValid.pointee = 0
    }

    /// Ctrl-Z (SIGTSTP, caught): gives the terminal back, stops the process until `fg` (or any
    /// SIGCONT) and takes the terminal again, when the process is in the foreground (after
    /// `bg` it is not: ``resumeIfForeground()`` takes it on a later `fg`); the caller draws its
    /// screen anew. A terminal not taken stays as it is. True when it was taken again.
    @discardableResult
    func suspend() -> Bool {
        let wasActive = active
        restore()
        raise(SIGSTOP)  // this thread and the process stop here until continued
        suspended = suspended || wasActive
        return resumeIfForeground()
    }

    /// Takes the terminal again after ``suspend()`` when the process is (now) in the
    /// terminal's foreground (on SIGCONT); true when it did.
    @discardableResult
    func resumeIfForeground() -> Bool {
        guard suspended, !active, Terminal.isForeground else { return false }
        suspended = false
        enter()
        return true
    }

    /// Whether the terminal was given back by ``suspend()`` and not taken again yet.
    private var suspended = false

    /// Whether standard input is a terminal whose foreground is this process's group (a
    /// background job that read it or changed its settings would be stopped).
    static var isForeground: Bool { isatty(0) == 1 && tcgetpgrp(0) == getpgrp() }

    /// Draws on the screen (to ``output``).
    func draw(_ s: String) { Terminal.write(s, to: output) }

    /// Draws a whole frame of the screen, unless it is the frame drawn last: a screen redrawn
    /// five times a second that shows the same (paused, or the same second) writes nothing. The
    /// next frame is drawn whatever it is after ``invalidate()``, and once the terminal is taken
    /// again (after Ctrl-Z and `fg`, after the picker had it). True when it was written.
    @discardableResult
    func drawFrame(_ frame: String) -> Bool {
        guard frame != lastFrame else { return false }
        draw(frame)
        lastFrame = frame
        return true
    }

    /// The next ``drawFrame(_:)`` writes its frame (the screen's size changed, or what is on it
    /// is not the last frame any more).
    func invalidate() { lastFrame = nil }

    /// The frame ``drawFrame(_:)`` wrote last (nil: none since the terminal was taken).
    private var lastFrame: String?

    /// Writes text to standard output (or `fd`), unbuffered.
    static func write(_ s: String, to fd: Int32 = 1) {
        var bytes = Array(s.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            off += n
        }
    }

    /// Writes a line to standard error.
    static func writeError(_ s: String) {
        let bytes = Array((s + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress!, $0.count) }
    }
}

/// The settings to restore, readable from a signal handler (an immutable pointer to storage that
/// only `Terminal` writes).
nonisolated(unsafe) private let savedTermios: UnsafeMutablePointer<termios> = {
    let p = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    p.initialize(to: termios())
    return p
}()
nonisolated(unsafe) private let savedValid: UnsafeMutablePointer<sig_atomic_t> = {
    let p = UnsafeMutablePointer<sig_atomic_t>.allocate(capacity: 1)
    p.initialize(to: 0)
    return p
}()
/// The descriptor the screen is drawn on.
nonisolated(unsafe) private let savedOutput: UnsafeMutablePointer<Int32> = {
    let p = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    p.initialize(to: 1)
    return p
}()

/// Restores the terminal, then dies of the same signal (async-signal-safe calls only).
private let fatalSignalHandler: @convention(c) (Int32) -> Void = { sig in
    if savedValid.pointee != 0 {
        let seq: StaticString = "\u{1B}[?2004l\u{1B}[?25h\u{1B}[?1049l"
        if savedOutput.pointee >= 0 { _ = Glibc.write(savedOutput.pointee, seq.utf8Start, seq.utf8CodeUnitCount) }
        tcsetattr(0, TCSANOW, savedTermios)
    }
    signal(sig, SIG_DFL)
    raise(sig)
}

extension Terminal {
    /// Writes `value` as `--json` prints it: pretty, keys sorted, slashes unescaped, a newline
    /// after. Throws what encoding throws.
    static func writeJSON<T: Encodable>(_ value: T) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        write(String(decoding: try enc.encode(value), as: UTF8.self) + "\n")
    }
}
