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
        let (events, continuation) = AsyncStream<InputReader<PickerKeyDecoder>.Event>.makeStream()
        // The signals' handlers are in place before the first frame: a key that raises one is
        // never lost (nor, for Ctrl-Z, left to stop the process with the terminal unrestored).
        let reader = InputReader<PickerKeyDecoder>(signals: [SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP]) { continuation.yield($0) }
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
                terminal.suspend()
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
