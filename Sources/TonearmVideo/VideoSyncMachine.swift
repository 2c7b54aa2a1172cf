// SPDX-License-Identifier: GPL-3.0-or-later

/// Decides which decoded frame to show and when, with a master clock — the audio at the speaker
/// when the item has sound, ``SystemVideoClock`` when it has none.
///
/// The rules are ffplay's, compared against the clock directly rather than through a frame
/// timer that accumulates (the audio clock is read lock-free at every decision, so nothing
/// drifts):
/// - A frame is **due** when the clock has reached its time (less ``Thresholds/earlyTolerance``,
///   which covers the wake-up's own jitter). An early frame waits: the machine says how long, in
///   host seconds at the current rate.
/// - A due frame is **dropped** when the frame after it is due as well: showing it would put the
///   picture behind the sound. Dropped frames are counted (``droppedFrames``), as mpv's status
///   line does.
/// - A frame more than ``Thresholds/noSync`` from the clock (broken timestamps, a stream whose
///   times jump) is shown at once, without waiting or dropping — ffplay's `AV_NOSYNC_THRESHOLD`.
/// - After a start or a seek (``reset()``) the first frame is shown at once, whatever the clock
///   says, even when paused: it is the picture of the place sought (scrubbing shows it).
/// - Paused (rate 0) nothing becomes due: the machine asks to wait for an event, not for a time.
///
/// A pure value: events in, actions out; no threads, no clock of its own, no pixels (frames are
/// named by id and time). The presenting thread feeds it and carries out its actions.
public struct VideoSyncMachine: Sendable {
    /// The limits the rules use.
    public struct Thresholds: Sendable, Hashable {
        /// How early a frame may be shown (seconds of item time): a timed wake-up is never exact.
        public var earlyTolerance: Double = 0.002
        /// Beyond this distance from the clock (seconds), a frame is shown without sync.
        public var noSync: Double = 10
        /// The longest wait the machine asks for at once (host seconds), so that a clock that
        /// moves differently from the host's (the sound server's) is read again soon.
        public var longestWait: Double = 0.1

        public init() {}
    }

    /// A frame waiting in the decoder's queue, as the machine sees it.
    public struct Frame: Sendable, Hashable {
        public var id: UInt64
        /// When it is due, in seconds on the item's timeline.
        public var time: Double

        public init(id: UInt64, time: Double) {
            self.id = id
            self.time = time
        }
    }

    /// What the presenting thread does next.
    public enum Action: Sendable, Hashable {
        /// Show this frame now and take it from the queue; `lateness` is the clock minus the
        /// frame's time (the A−V difference at this moment: positive when the picture is late).
        case present(id: UInt64, lateness: Double)
        /// Take this frame from the queue without showing it.
        case drop(id: UInt64)
        /// Decide again after this many host seconds, or sooner on an event (a new frame, a
        /// seek, a rate change).
        case wait(seconds: Double)
        /// Decide again on the next event only: nothing queued, or paused.
        case waitForEvent
    }

    public let thresholds: Thresholds
    /// Frames taken from the queue without being shown since the machine was made.
    public private(set) var droppedFrames = 0
    /// Frames shown since the machine was made.
    public private(set) var presentedFrames = 0
    /// The A−V difference when the last frame was shown (seconds; positive: picture late).
    public private(set) var lastLateness: Double?
    /// Whether the next frame is shown at once (after ``init`` and ``reset()``).
    public private(set) var showsNextAtOnce = true

    public init(thresholds: Thresholds = Thresholds()) {
        self.thresholds = thresholds
    }

    /// A start or a seek: the next frame is the picture of the new place and is shown at once.
    public mutating func reset() {
        showsNextAtOnce = true
        lastLateness = nil
    }

    /// Decides what to do with the frames at the head of the queue (in presentation order; the
    /// first two are enough), given the clock's reading now and the playback rate (0 when paused).
    /// Returns the actions to carry out in order: any drops, then at most one present, then how
    /// long to wait before asking again.
    public mutating func decide(queue: some Collection<Frame>, clock: Double, rate: Double) -> [Action] {
        var actions: [Action] = []
        var rest = queue[...]
        while let frame = rest.first {
            let distance = frame.time - clock
            if showsNextAtOnce || abs(distance) > thresholds.noSync {
                actions.append(present(frame, clock: clock))
                rest = rest.dropFirst()
                break
            }
            guard rate > 0 else {
                actions.append(.waitForEvent)
                return actions
            }
            if distance > thresholds.earlyTolerance {
                actions.append(.wait(seconds: min(distance / rate, thresholds.longestWait)))
                return actions
            }
            // Due. A next frame that is due as well is the better picture: drop this one.
            if let next = rest.dropFirst().first, next.time - clock <= thresholds.earlyTolerance,
               abs(next.time - clock) <= thresholds.noSync {
                actions.append(.drop(id: frame.id))
                droppedFrames += 1
                rest = rest.dropFirst()
                continue
            }
            actions.append(present(frame, clock: clock))
            rest = rest.dropFirst()
            break
        }
        // After a present (or with nothing queued): when the next frame is due.
        guard let next = rest.first else {
            actions.append(.waitForEvent)
            return actions
        }
        guard rate > 0 else {
            actions.append(.waitForEvent)
            return actions
        }
        let distance = next.time - clock
        actions.append(.wait(seconds: distance > thresholds.noSync || distance < 0
                             ? 0 : min(distance / rate, thresholds.longestWait)))
        return actions
    }

    private mutating func present(_ frame: Frame, clock: Double) -> Action {
        showsNextAtOnce = false
        presentedFrames += 1
        let lateness = clock - frame.time
        lastLateness = lateness
        return .present(id: frame.id, lateness: lateness)
    }
}

/// The master clock of a video without sound: item time that runs with the host's monotonic
/// clock at the playback rate, from where it was started, paused or sought.
///
/// A value; the presenting thread owns it. Host times are in seconds of a monotonic clock.
public struct SystemVideoClock: Sendable, Hashable {
    private var anchorItemTime: Double
    private var anchorHostTime: Double
    /// The playback rate: 0 when paused.
    public private(set) var rate: Double

    /// A clock standing at `itemTime` at host time `hostTime`, running at `rate` (0: paused).
    public init(itemTime: Double = 0, hostTime: Double, rate: Double = 0) {
        anchorItemTime = itemTime
        anchorHostTime = hostTime
        self.rate = max(0, rate)
    }

    /// The item time at host time `hostTime`.
    public func time(atHostTime hostTime: Double) -> Double {
        anchorItemTime + (hostTime - anchorHostTime) * rate
    }

    /// Changes the rate at host time `hostTime` (0 pauses) without moving the item time.
    public mutating func setRate(_ newRate: Double, atHostTime hostTime: Double) {
        anchorItemTime = time(atHostTime: hostTime)
        anchorHostTime = hostTime
        rate = max(0, newRate)
    }

    /// Moves to `itemTime` at host time `hostTime` (a seek), keeping the rate.
    public mutating func move(to itemTime: Double, atHostTime hostTime: Double) {
        anchorItemTime = itemTime
        anchorHostTime = hostTime
    }
}
