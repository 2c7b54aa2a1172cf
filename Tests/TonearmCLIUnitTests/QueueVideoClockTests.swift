// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import Tonearm
@testable import TonearmCLI

/// The clock of a video item's picture in a `tonearm play` queue: the queue's own clock reading
/// (``QueuePlayer/clockReading``) moved on from the reading's instant — not a second clock that
/// starts extrapolating when it first sees a new time.
struct QueueVideoClockTests {
    let ms: UInt64 = 1_000_000

    @Test func theReadingIsMovedOnFromItsOwnInstant() {
        let clock = QueueVideo.ClockState()
        clock.reset(to: 9.5, until: 20)
        let host: UInt64 = 1_000 * ms
        let reading = PlaybackClockReading(time: 10, hostNanos: host, rendered: 10.3)
        // First seen 100 ms after its instant: the sound heard has moved on by those 100 ms.
        let first = clock.read(reading: reading, playing: true, now: host + 100 * ms)
        #expect(abs(first.time - 10.1) < 1e-9)
        #expect(first.rate == 1)
        // Never past what was rendered.
        #expect(abs(clock.read(reading: reading, playing: true, now: host + 900 * ms).time - 10.3) < 1e-9)
        // Never backwards: a newer reading a little behind keeps the time reported.
        let behind = PlaybackClockReading(time: 10.25, hostNanos: host + 905 * ms, rendered: 10.5)
        #expect(abs(clock.read(reading: behind, playing: true, now: host + 910 * ms).time - 10.3) < 1e-9)
        #expect(abs(clock.read(reading: behind, playing: true, now: host + 1_005 * ms).time - 10.35) < 1e-9)
    }

    @Test func pausedItStandsAndTheSpeedMovesIt() {
        let clock = QueueVideo.ClockState()
        clock.reset(to: 0, until: 20)
        let host: UInt64 = 5_000 * ms
        let reading = PlaybackClockReading(time: 2, hostNanos: host, rendered: 3)
        let paused = clock.read(reading: reading, playing: false, now: host + 200 * ms)
        #expect(paused.time == 2 && paused.rate == 0)
        clock.track.withLock { $0.speed = 2 }
        let fast = clock.read(reading: reading, playing: true, now: host + 200 * ms)
        #expect(abs(fast.time - 2.4) < 1e-9 && fast.rate == 2)
    }

    @Test func withoutAnInstantTheTimeStands() {
        let clock = QueueVideo.ClockState()
        clock.reset(to: 0, until: 20)
        let reading = PlaybackClockReading(time: 4, hostNanos: 0, rendered: 4)
        #expect(clock.read(reading: reading, playing: true, now: 9_000 * ms).time == 4)
    }

    @Test func afterTheItemTheDrainRunsToItsEnd() {
        let clock = QueueVideo.ClockState()
        clock.reset(to: 0, until: 10.2)
        let host: UInt64 = 2_000 * ms
        _ = clock.read(reading: PlaybackClockReading(time: 10, hostNanos: host, rendered: 10.2), playing: true, now: host)
        let on = clock.read(reading: nil, playing: true, now: host + 100 * ms)
        #expect(abs(on.time - 10.1) < 1e-9)
        #expect(abs(clock.read(reading: nil, playing: true, now: host + 900 * ms).time - 10.2) < 1e-9)
    }
}
