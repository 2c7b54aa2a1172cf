// SPDX-License-Identifier: GPL-3.0-or-later

/// The sound heard at an instant (``QueuePlayer/clockReading``): what a clock that moves on
/// between readings — the picture of a video, read 60 times a second — extrapolates from, instead
/// of keeping a wall clock of its own beside the audio's.
public struct PlaybackClockReading: Sendable, Hashable {
    /// Seconds into the current item heard at ``hostNanos``. Before the item's start while the
    /// output still plays what came before it.
    public var time: Double
    /// The instant ``time`` describes (CLOCK_MONOTONIC nanoseconds, as
    /// `DispatchTime.now().uptimeNanoseconds`); 0 when there is none (nothing rendered yet, a
    /// restart under way): the time then stands.
    public var hostNanos: UInt64
    /// Seconds into the current item rendered so far: the sound heard never passes it.
    public var rendered: Double

    public init(time: Double, hostNanos: UInt64, rendered: Double) {
        self.time = time
        self.hostNanos = hostNanos
        self.rendered = rendered
    }

    /// The time heard at host time `now`, moving at `rate` (the playing speed; 0 when paused)
    /// from the reading, never past ``rendered``.
    public func time(at now: UInt64, rate: Double) -> Double {
        var t = time
        if rate > 0, hostNanos > 0, now > hostNanos { t += Double(now - hostNanos) / 1e9 * rate }
        return min(t, rendered)
    }
}
