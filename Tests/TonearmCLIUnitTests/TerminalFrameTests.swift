// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
@testable import TonearmCLI

/// The play screen writes a frame only when it differs from the last one written (issue 18: a
/// screen redrawn five times a second while paused, or within the same second, wrote the same
/// frame each time); after ``Terminal/invalidate()`` (a resize, `fg`, once a second) and once
/// the terminal is taken again, the next frame is written whatever it is. What reaches the
/// terminal is read from a pipe in its place.
@Suite struct TerminalFrameTests {
    /// Everything written to the pipe so far (it is not blocked on: the writes are done).
    static func drain(_ fd: Int32) -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func anUnchangedFrameIsNotWrittenAgainUntilInvalidated() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        let terminal = Terminal(output: fds[1])
        let a = "\u{1B}[H Tonearm  ⏸ Paused\u{1B}[K\u{1B}[J", b = "\u{1B}[H Tonearm  ▶ Playing\u{1B}[K\u{1B}[J"

        #expect(terminal.drawFrame(a))
        #expect(!terminal.drawFrame(a))
        #expect(!terminal.drawFrame(a))
        #expect(Self.drain(fds[0]) == a, "the same frame three times is written once")

        #expect(terminal.drawFrame(b))
        #expect(terminal.drawFrame(a))
        #expect(Self.drain(fds[0]) == b + a, "each change is written")

        terminal.invalidate()
        #expect(terminal.drawFrame(a))
        #expect(Self.drain(fds[0]) == a, "after invalidate() the frame is written again")

        // The terminal given back (Ctrl-Z, the picker) forgets the frame: taken again, the
        // screen is drawn anew. (Not entered here: the test's own terminal stays as it is.)
        #expect(!terminal.drawFrame(a))
        terminal.restore()
        #expect(terminal.drawFrame(a))
        #expect(Self.drain(fds[0]) == a)
    }
}
