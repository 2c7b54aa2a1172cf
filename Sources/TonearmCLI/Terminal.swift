// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The controlling terminal in "cbreak" mode for the live screen: keys arrive one at a time
/// without echo; Ctrl-C still raises SIGINT. The original settings are restored by `restore()`,
/// and also if the process dies from a fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE),
/// so the user's shell is never left broken.
final class Terminal: @unchecked Sendable {
    /// Whether standard input and output are both terminals.
    static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    /// Columns of the terminal (80 when unknown).
    static var width: Int {
        var ws = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0 { return Int(ws.ws_col) }
        return 80
    }

    private var active = false

    /// Enters cbreak mode and the alternate screen, hides the cursor.
    func enter() {
        guard !active, tcgetattr(0, savedTermios) == 0 else { return }
        savedValid.pointee = 1
        var raw = savedTermios.pointee
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSANOW, &raw)
        for s in [SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE] { signal(s, fatalSignalHandler) }
        Terminal.write("\u{1B}[?1049h\u{1B}[?25l")
        active = true
    }

    /// Leaves the alternate screen, shows the cursor and restores the terminal settings.
    func restore() {
        guard active else { return }
        active = false
        Terminal.write("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(0, TCSANOW, savedTermios)
        savedValid.pointee = 0
    }

    /// Writes text to standard output, unbuffered.
    static func write(_ s: String) {
        var bytes = Array(s.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(1, $0.baseAddress! + off, $0.count - off) }
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

/// Restores the terminal, then dies of the same signal (async-signal-safe calls only).
private let fatalSignalHandler: @convention(c) (Int32) -> Void = { sig in
    if savedValid.pointee != 0 {
        let seq: StaticString = "\u{1B}[?25h\u{1B}[?1049l"
        _ = Glibc.write(1, seq.utf8Start, seq.utf8CodeUnitCount)
        tcsetattr(0, TCSANOW, savedTermios)
    }
    signal(sig, SIG_DFL)
    raise(sig)
}

/// A key the live screen understands.
enum Key: Equatable, Sendable {
    case space, left, right, up, down, char(Character), other
}

/// Turns terminal input bytes into keys (escape sequences for the arrows included).
struct KeyDecoder {
    private var pending: [UInt8] = []

    mutating func feed(_ byte: UInt8) -> Key? {
        pending.append(byte)
        if pending[0] == 0x1B {
            if pending.count == 1 { return nil }
            if pending.count == 2 { return pending[1] == UInt8(ascii: "[") || pending[1] == UInt8(ascii: "O") ? nil : flush(.other) }
            let k: Key
            switch pending[2] {
            case UInt8(ascii: "A"): k = .up
            case UInt8(ascii: "B"): k = .down
            case UInt8(ascii: "C"): k = .right
            case UInt8(ascii: "D"): k = .left
            default:
                // Longer sequences (e.g. ESC [ 1 ; 5 C): wait for the final byte.
                if (0x40...0x7E).contains(pending.last!) { return flush(.other) }
                return pending.count > 8 ? flush(.other) : nil
            }
            return flush(k)
        }
        if byte == 0x20 { return flush(.space) }
        if byte < 0x80 { return flush(.char(Character(UnicodeScalar(byte)))) }
        return flush(.other)
    }

    private mutating func flush(_ k: Key) -> Key {
        pending.removeAll(keepingCapacity: true)
        return k
    }
}
