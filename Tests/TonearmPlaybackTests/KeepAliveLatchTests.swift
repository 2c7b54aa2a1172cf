// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmPlayback

/// The keep-alive rule both player machines share (``KeepAliveLatch``).
@Suite struct KeepAliveLatchTests {
    @Test func itRetainsOnceAndReleasesOnlyWhatItRetained() {
        var latch = KeepAliveLatch()
        #expect(latch.release("release").isEmpty)  // never retained: nothing to let go of
        #expect(latch.retain("retain") == ["retain"])
        #expect(latch.retain("retain").isEmpty)  // already held: not twice
        #expect(latch.held)
        #expect(latch.release("release") == ["release"])
        #expect(latch.release("release").isEmpty)
        #expect(!latch.held)
    }
}
