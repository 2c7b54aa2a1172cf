// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Synchronization
import TonearmCore

/// A silent output that consumes audio in real time: a stand-in for a device clock on machines
/// without a sound device (the counterpart of mpv's `--ao=null`).
///
/// Its own thread pulls one period at a time with `.realtime` timing and paces the periods
/// against absolute deadlines on the monotonic clock (`start + frames / rate`), so the rate does
/// not drift however long the source takes (as long as it is faster than real time). After a
/// stall of more than half a second the schedule restarts from "now" instead of bursting.
/// With `untimed: true` it pulls as fast as the source can deliver, with `.offline` timing: the
/// source may wait for its decoder, so nothing is replaced by silence (with `.realtime` timing a
/// decoder that is merely slower than the pulls would yield silence and underruns instead of the
/// audio). This measures decoding speed without writing anything. A period without audio (the
/// source ended, is not running or is switching) is paced as in real time, so an idle untimed
/// output does not spin.
///
/// Growing periods: with a `steadyPeriodDuration` longer than `periodDuration`, playback starts
/// with short periods (the first audio is pulled as soon as it is there) and, once it has run
/// for `growAfter` seconds without a pause or restart, pulls the longer ones: fewer wake-ups while
/// nothing needs a short latency (nobody hears a null output; a pause, resume, start or flush makes
/// the periods short again). ``latency`` reports the period in use.
///
/// Flushing (``flush(replacing:)``) drops the period pulled but not yet due — what a device would
/// still hold — and pulls the next one at once: `framesPlayed` counts of the dropped period only
/// the part whose time had passed.
///
/// Threading: control-plane calls from one thread at a time; `stop()` joins the render thread
/// (from inside the source's `render` it only asks it to end). `framesPlayed`, `latency`,
/// `underrunCount` and `format` may be read from any thread (all but `format` without a lock). The
/// render thread takes the driver's own lock between periods (never while the source renders).
///
/// Lifetime: the running thread keeps the driver alive; call `stop()` or `close()` to release it.
///
/// `@unchecked Sendable`: `_format` and `isOpen` are guarded by `cond`; `scratch` and
/// `periodFrames` belong to the control plane (the render thread gets the buffer at `start`,
/// and `stop` joins it before they change); the counter is atomic.
public final class NullOutput: AudioOutputDriver, @unchecked Sendable {
    /// The length of one period (one pull) in seconds.
    public let periodDuration: Double
    /// The period once playback has run steadily for ``growAfter`` seconds (≥ `periodDuration`).
    public let steadyPeriodDuration: Double
    /// Seconds of uninterrupted playback before the periods grow to ``steadyPeriodDuration``.
    public let growAfter: Double
    /// Whether periods are pulled back to back with `.offline` timing, without waiting for the clock.
    public let untimed: Bool

    public var name: String { "null" }
    public var isAudible: Bool { false }
    public var format: AudioFormat { cond.withLock { _format } }
    public var events: AsyncStream<AudioOutputEvent> { eventChannel.stream }


    private let pull = PullThreadControl()
    private var cond: DriverCondition { pull.cond }
    private let eventChannel = OutputEventChannel()
    private let played = Atomic<Int64>(0)
    /// The period in use, in frames (for `latency`; written by the render thread).
    private let currentPeriodFrames = Atomic<Int>(0)
    /// The sample rate opened with (for `latency`, read without the lock).
    private let rateBits = Atomic<UInt64>(Double(48_000).bitPattern)
    // Guarded by `cond`.
    private var _format = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2)
    private var isOpen = false
    /// Whether the render thread is inside the source's `render` (a flush waits for it to leave).
    private var rendering = false
    /// Counts the flushes: a period pulled before the last flush is dropped, not played.
    private var flushes: UInt64 = 0
    // Control plane only.
    private var scratch: UnsafeMutablePointer<Float>?
    private var periodFrames = 960
    private var steadyPeriodFrames = 960

    /// Creates a null output pulling `periodDuration` seconds at a time (clamped to 1 ms…1 s),
    /// and `steadyPeriodDuration` seconds (default: the same; clamped to `periodDuration`…1 s) once
    /// it has played for `growAfter` seconds without a pause (real time only; an untimed output
    /// keeps `periodDuration`).
    public init(periodDuration: Double = 0.05, steadyPeriodDuration: Double? = nil, growAfter: Double = 1,
                untimed: Bool = false) {
        self.periodDuration = min(max(periodDuration, 0.001), 1)
        self.steadyPeriodDuration = untimed ? self.periodDuration
            : min(max(steadyPeriodDuration ?? self.periodDuration, self.periodDuration), 1)
        self.growAfter = max(0, growAfter)
        self.untimed = untimed
    }

    deinit {
        stop()
        scratch?.deallocate()
        eventChannel.finish()
    }

    /// Accepts any valid format and allocates the period buffer.
    public func open(format requested: AudioFormat) throws {
        guard requested.isValid else {
            throw TonearmError.outputUnavailable(driver: name, reason: "unsupported format \(requested)")
        }
        stop()
        var f = requested
        f.commonFormat = .pcmFormatFloat32
        f.isInterleaved = true
        periodFrames = max(1, Int((periodDuration * f.sampleRate).rounded()))
        steadyPeriodFrames = max(periodFrames, Int((steadyPeriodDuration * f.sampleRate).rounded()))
        currentPeriodFrames.store(periodFrames, ordering: .relaxed)
        rateBits.store(f.sampleRate.bitPattern, ordering: .relaxed)
        scratch?.deallocate()
        let count = steadyPeriodFrames * f.channelCount
        scratch = .allocate(capacity: count)
        scratch!.initialize(repeating: 0, count: count)
        cond.withLock {
            _format = f
            isOpen = true
        }
    }

    /// Starts the render thread pulling from `source` (restarting when already started).
    public func start(source: any AudioRenderSource) throws {
        guard cond.withLock({ isOpen }), let buffer = scratch else {
            throw TonearmError.invalidState("\(name): start before open")
        }
        stop()
        played.store(0, ordering: .relaxed)
        cond.withLock { pull.state = .running }
        let frames = (short: periodFrames, steady: steadyPeriodFrames)
        let rate = format.sampleRate
        let box = UncheckedBuffer(pointer: buffer)
        do {
            pull.thread = try DriverThread(name: "tonearm-null") { [self] in
                renderLoop(source: source, buffer: box.pointer, periods: frames, rate: rate)
            }
        } catch {
            cond.withLock { pull.state = .idle }
            throw error
        }
    }

    private func renderLoop(source: any AudioRenderSource, buffer: UnsafeMutablePointer<Float>,
                            periods: (short: Int, steady: Int), rate: Double) {
        var origin = monotonicNanoseconds()
        var framesSinceOrigin: Int64 = 0
        var pacing = !untimed
        // Short periods until this many frames have been paced without a pause, then steady ones.
        let growAt = Int64((growAfter * rate).rounded())
        var frames = periods.short
        currentPeriodFrames.store(frames, ordering: .relaxed)
        while true {
            cond.lock()
            if pull.state == .paused {
                while pull.state == .paused { cond.wait() }
                origin = monotonicNanoseconds()
                framesSinceOrigin = 0
                frames = periods.short
                currentPeriodFrames.store(frames, ordering: .relaxed)
            }
            let stopping = pull.state != .running
            // What a flush from now on replaces (it waits for `rendering` to clear).
            let pulledAfter = flushes
            if !stopping { rendering = true }
            cond.unlock()
            if stopping { return }

            if untimed {
                let result = source.render(into: buffer, frameCount: frames, timing: .offline)
                if result.framesRendered > 0 {
                    pacing = false
                    played.add(Int64(frames), ordering: .relaxed)
                    cond.withLock {
                        rendering = false
                        cond.broadcast()
                    }
                    continue
                }
                if !pacing {
                    // Nothing to play: wait for the clock from now on instead of spinning.
                    pacing = true
                    origin = monotonicNanoseconds()
                    framesSinceOrigin = 0
                }
            } else {
                _ = source.render(into: buffer, frameCount: frames, timing: .realtime)
            }
            framesSinceOrigin += Int64(frames)
            let deadline = origin + UInt64(Double(framesSinceOrigin) * 1e9 / rate)
            let now = monotonicNanoseconds()
            if now > deadline + 500_000_000 {
                origin = now
                framesSinceOrigin = 0
            }
            cond.lock()
            rendering = false
            cond.broadcast()
            while pull.state == .running, flushes == pulledAfter, monotonicNanoseconds() < deadline {
                cond.wait(untilNanoseconds: deadline)
            }
            let dropped = flushes != pulledAfter
            cond.unlock()
            if dropped {
                // Flushed before it was due: only the part of the period whose time has passed was
                // played; the next period is pulled now, short, as after a start.
                let end = monotonicNanoseconds()
                let periodNanos = UInt64(Double(frames) * 1e9 / rate)
                let begun = deadline > periodNanos ? deadline - periodNanos : 0
                let elapsed = end > begun ? Double(end - begun) * rate / 1e9 : 0
                played.add(min(Int64(frames), Int64(elapsed)), ordering: .relaxed)
                origin = end
                framesSinceOrigin = 0
                frames = periods.short
                currentPeriodFrames.store(frames, ordering: .relaxed)
                continue
            }
            played.add(Int64(frames), ordering: .relaxed)
            if frames != periods.steady && !untimed && framesSinceOrigin >= growAt {
                frames = periods.steady
                currentPeriodFrames.store(frames, ordering: .relaxed)
            }
        }
    }

    /// Stops pulling until ``resume()``; the render thread waits without spinning.
    public func pause() {
        pull.pause()
    }

    /// Resumes pulling after ``pause()``; the clock restarts from now.
    public func resume() {
        pull.resume()
    }

    /// Runs `replace` while the render thread is not inside the source's `render` (waiting for it
    /// to leave a render under way), then drops the period pulled before it that is not due yet:
    /// the render thread pulls the next period at once, a short one. `framesPlayed` counts only the
    /// part of the dropped period whose time had passed. Control plane.
    public func flush(replacing replace: () -> Void) {
        cond.lock()
        defer { cond.unlock() }
        while rendering { cond.wait() }
        replace()
        flushes &+= 1
        cond.broadcast()
    }

    /// Ends the render thread and waits for it: on return the source is not called again.
    public func stop() {
        pull.stop()
    }

    /// Stops and finishes the current `events` stream (a new one is ready for the next `open`).
    public func close() {
        stop()
        cond.withLock { isOpen = false }
        eventChannel.finish()
    }

    /// Ignored: nothing is heard.
    public func setVolume(_ volume: Float) {}

    /// One period (the one in use: short at the start, steady once grown).
    public var latency: Double {
        if untimed { return 0 }
        let frames = currentPeriodFrames.load(ordering: .relaxed)
        return frames > 0 ? Double(frames) / Double(bitPattern: rateBits.load(ordering: .relaxed)) : periodDuration
    }
    /// Frames whose period has elapsed since `start`.
    public var framesPlayed: Int64 { played.load(ordering: .relaxed) }
    /// Always 0: a null device never starves (late data is counted by the source).
    public var underrunCount: Int { 0 }
}

/// Hands a preallocated buffer to the render thread (which alone uses it while it runs).
///
/// `@unchecked Sendable`: the pointer is handed over, not shared: the receiving thread is its
/// only user until it is joined.
struct UncheckedBuffer<T>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>
}
