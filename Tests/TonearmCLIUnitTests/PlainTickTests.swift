// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import Tonearm
@testable import TonearmCLI

/// `tonearm play --plain` prints a progress line at every 5 s of playback; its ticker wakes up just
/// after each one instead of once a second.
@Suite struct PlainTickTests {
    @Test func theTickerWaitsForTheNextFiveSecondStep() {
        #expect(PlaySession.untilNextPlainLine(elapsed: 0) == .milliseconds(5_020))
        #expect(PlaySession.untilNextPlainLine(elapsed: 7.5) == .milliseconds(2_520))
        #expect(PlaySession.untilNextPlainLine(elapsed: 12) == .milliseconds(3_020))
        // Right before a step: at least 0.2 s (the line for it is printed by that tick).
        #expect(PlaySession.untilNextPlainLine(elapsed: 9.99) == .milliseconds(200))
        // Paused or not started: the time stands still, so at most 5 s and a little.
        #expect(PlaySession.untilNextPlainLine(elapsed: -1) == .milliseconds(5_020))
        #expect(PlaySession.untilNextPlainLine(elapsed: .nan) == .milliseconds(5_020))
    }
}
