// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// How a render source is being driven.
public enum RenderTiming: Sendable {
    /// A device clock drives rendering (PulseAudio, null): the source must never wait; when its
    /// data is late it renders silence and counts an underrun.
    case realtime
    /// Rendering runs as fast as possible (the file driver, offline rendering): the source may
    /// wait for its decoder, so that nothing is lost and the result is deterministic.
    case offline
}

/// What one render call produced.
public struct RenderResult: Sendable, Equatable {
    /// Frames of the buffer that hold real audio (the rest is silence).
    public var framesRendered: Int
    /// True once the source has nothing more to play (and will only render silence).
    public var ended: Bool

    public init(framesRendered: Int, ended: Bool) {
        self.framesRendered = framesRendered
        self.ended = ended
    }
}

/// The one thing an output driver pulls audio from: in Tonearm, the engine's render path.
///
/// Threading: `render` is called only on the driver's render thread, one call at a time. With
/// `.realtime` timing it must not allocate, lock a lock that another thread can hold, do I/O or
/// wait.
public protocol AudioRenderSource: AnyObject, Sendable {
    /// Fills `buffer` with `frameCount` frames of interleaved Float32 audio in the driver's
    /// format (`frameCount × channelCount` samples). Every sample must be written; silence where
    /// there is no audio.
    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult
}

/// Things an output driver reports to its owner (delivered on a non-realtime thread).
public enum AudioOutputEvent: Sendable, Equatable {
    /// The server asks the stream to pause because a more important stream started
    /// (PulseAudio's `request-cork`, e.g. a phone call with `module-role-cork`). Drivers do not
    /// cork by themselves: the owner must call ``AudioOutputDriver/pause()`` (PulseAudio mutes the
    /// stream meanwhile, and sends `request-uncork` only to a stream that really corked).
    case corkRequested
    /// The reason for `corkRequested` is gone (`request-uncork`).
    case uncorkRequested
    /// The device or server went away; the driver has stopped.
    case deviceLost(reason: String)
    /// Offline drivers: the source ended and everything was written.
    case drained
    /// The stream was moved to another device.
    case moved(deviceName: String)
    /// The output's buffer changed length (seconds queued ahead of what is heard): it grew to its
    /// steady length after a steady start, or went back to its start length at a flush
    /// (``OutputBuffering/steady``). For information (a player's clock reads ``AudioOutputDriver/latency``).
    case bufferChanged(length: Double)
    /// The device the stream played to went away (headphones unplugged, a USB or Bluetooth
    /// device gone) and the server moved the stream to `current`; or headphones were unplugged
    /// from the sink it plays to (its active port is no longer headphones), and then `previous`
    /// and `current` are both that sink. Players pause on it — the unplugged-headphones rule —
    /// rather than go on out of the speakers.
    case deviceRemoved(previous: String, current: String)
}

/// An output's latency and the instant it describes: at host time ``hostNanos`` (CLOCK_MONOTONIC
/// nanoseconds, the clock of `DispatchTime.now().uptimeNanoseconds`), ``latency`` seconds of
/// what the source rendered had not been heard yet. A driver whose timing is updated between
/// render calls (PulseAudio's timing updates) publishes the instant of each update: the sound
/// heard is then the position rendered less the latency, moved on by the time since *that*
/// instant — moved on from the last render instead, the time between the render and the update
/// would be counted twice (once by the smaller latency, once by the extrapolation).
public struct OutputClockReading: Sendable, Hashable {
    /// Seconds rendered and not yet heard at ``hostNanos``.
    public var latency: Double
    /// The instant the latency describes; 0 when the driver does not say — then it describes
    /// the end of the last render call (the latency changes only there).
    public var hostNanos: UInt64

    public init(latency: Double, hostNanos: UInt64) {
        self.latency = latency
        self.hostNanos = hostNanos
    }

    /// The position heard at `now` (seconds of the source's timeline): `rendered` seconds (the
    /// position after the last render call, which ended at `renderHost`) less the latency (times
    /// `latencyScale`: source seconds per output second, a time-stretch's rate), moved on at
    /// `rate` by the time since the reading's instant (since `renderHost` when it has none; not
    /// at all when neither is known). Not clamped: the caller keeps its clock within what was
    /// rendered and monotonic.
    public func heard(rendered: Double, renderHost: UInt64, latencyScale: Double = 1, rate: Double,
                      now: UInt64) -> Double {
        var t = rendered - latency * latencyScale
        let from = hostNanos != 0 ? hostNanos : renderHost
        if rate > 0, from > 0, now > from { t += Double(now - from) / 1e9 * rate }
        return t
    }
}

/// How much audio an output keeps queued ahead of what is heard: the trade between reacting at
/// once and riding out a render thread that wakes late. Asked for through
/// ``OutputDriverRequest/buffering``; drivers without a buffer of their own ignore it.
public enum OutputBuffering: Sendable, Hashable {
    /// A fixed short buffer (PulseAudio: 75 ms). For what must be heard at once and is never
    /// replaced by a seek: system sounds, an engine with live input, anything interactive.
    case short
    /// Starts short (the first sound comes as soon as with ``short``) and grows to a long steady
    /// buffer (PulseAudio: 250 ms) after about a second of uninterrupted play, so that a loaded
    /// machine's late wake-ups no longer starve the device. For media playback — a music queue, a
    /// file player, a stream — whose players drop the buffer whenever what is heard is replaced
    /// (a seek, a skip, a new item: ``AudioOutputDriver/flush(replacing:)``), so that the long
    /// buffer never delays what the listener asked for; after a flush it starts short again.
    case steady
}

/// The contract between the engine and an output (the counterpart of mpv's `ao_driver` or MPD's
/// `AudioOutput`). Drivers are pull-based: once started, the driver's own render thread calls
/// ``AudioRenderSource/render(into:frameCount:timing:)`` whenever the device wants audio.
///
/// Threading: `open`, `start`, `pause`, `resume`, `stop`, `close`, `flush` and `setVolume` are
/// called from the control plane (any one thread at a time — the owner serialises them). `stop()` returns only
/// when the render thread will not call the source again. `latency`, `framesPlayed` and
/// `underrunCount` may be read from any thread. Events arrive on `events` from a non-realtime
/// thread.
public protocol AudioOutputDriver: AnyObject, Sendable {
    /// A short name for messages: `pulse`, `null`, `file:/path.wav`.
    var name: String { get }
    /// The interleaved Float32 format the driver was opened with (valid after `open`).
    var format: AudioFormat { get }
    /// Whether audio pulled by this driver is heard (false for null and file).
    var isAudible: Bool { get }

    /// Prepares the device for `format` (interleaved Float32). Throws
    /// ``TonearmError/outputUnavailable(driver:reason:)`` when it cannot.
    func open(format: AudioFormat) throws
    /// Begins pulling from `source` on the driver's render thread.
    func start(source: any AudioRenderSource) throws
    /// Stops pulling without losing the device (PulseAudio: cork).
    func pause()
    /// Resumes pulling after `pause()` (PulseAudio: uncork).
    func resume()
    /// Stops pulling and discards buffered audio; returns once the render thread is done with the source.
    func stop()
    /// Releases the device. The driver may be opened again.
    func close()

    /// After the source reported its end: waits until everything rendered has been played (so a
    /// natural end is not cut short by `stop()`), or `timeout` seconds. Control plane.
    func drain(timeout: Double)

    /// Drops the audio the output holds that has not been played yet — what a seek, a skip or a new
    /// item replaces — so that the old audio is not heard for the length of the output's buffer.
    /// `replace` runs first, at a moment when no render call is under way (under the driver's own
    /// lock): what the source rendered before it is dropped, what it renders after it is kept. The
    /// player switches its source there (a new generation, a node re-scheduled), so that no frame
    /// of the new audio is lost and none of the old is heard — beyond what the device itself has
    /// already taken (PulseAudio: the sink's own latency), which no client can recall.
    ///
    /// Timing stays right across it: `framesPlayed` goes on from where it was (the dropped frames
    /// were never played: it neither goes back nor runs on over them), and `latency` describes what
    /// is queued after the flush — until the driver knows that, it reports no less than before,
    /// so that a position computed as "rendered − latency" never runs ahead of what is heard. A
    /// buffer that grew in steady play (``OutputBuffering/steady``) starts short again.
    ///
    /// Control plane, never from inside the source's `render`; `replace` must not call the driver.
    /// A driver that is not started only runs `replace`. Not for a gapless join or a crossfade:
    /// those continue what is heard.
    func flush(replacing replace: () -> Void)

    /// Volume of this stream on the device (0...1, linear), where the device supports it.
    func setVolume(_ volume: Float)

    /// Seconds between a frame being rendered and it being heard (device + server buffering).
    var latency: Double { get }
    /// The latency together with the instant it describes (see ``OutputClockReading``): what a
    /// clock that extrapolates between readings — a video's, 60 times a second — must move on
    /// from. Lock-free; any thread.
    var clockReading: OutputClockReading { get }
    /// Frames the device has consumed since `start` (for a clock-accurate `deviceCurrentTime`).
    var framesPlayed: Int64 { get }
    /// Times the device wanted audio and the source had none ready (counted by the driver for
    /// device-side underruns, and by the source for late data).
    var underrunCount: Int { get }

    /// Events from the device. One stream per driver; finishes when the driver is closed. A driver
    /// opened again after `close()` publishes on a fresh stream: read `events` again after `open`.
    var events: AsyncStream<AudioOutputEvent> { get }

    /// After ``AudioOutputEvent/deviceLost(reason:)``: watches for the device or server to answer
    /// again (a restarted sound server) and calls `onReturn` once, on the watch's own thread,
    /// when it does. Nil when this driver's device cannot come back by itself (the file output;
    /// the null output never goes away). Control plane. The watch does not hold the driver and
    /// outlives `close()`; it stops when it has reported, when cancelled, or when released.
    func watchForReturn(_ onReturn: @escaping @Sendable () -> Void) -> OutputReturnWatch?

    /// The device the driver plays to by its own choice (nil: the server's default, or a driver
    /// without devices): the sink an echo canceller plays through.
    var ownDevice: String? { get }
    /// Plays to `device` instead of its own from the next ``open(format:)`` (nil: its own again):
    /// an engine with voice processing plays through the echo canceller's sink. Returns false
    /// when the driver cannot (it has no devices: null, file). Control plane.
    func playThrough(device: String?) -> Bool
}

extension AudioOutputDriver {
    /// Drivers without devices: none of their own, and none to play through.
    public var ownDevice: String? { nil }
    public func playThrough(device: String?) -> Bool { false }

    /// Drivers whose latency changes only at a render call: it describes the instant of the last
    /// one (no instant of its own).
    public var clockReading: OutputClockReading { OutputClockReading(latency: latency, hostNanos: 0) }

    /// Drivers that buffer nothing after a render call have nothing to wait for.
    public func drain(timeout: Double) {}

    /// Drivers that keep nothing after a render call have nothing to drop: `replace` runs, that is all.
    public func flush(replacing replace: () -> Void) { replace() }

    /// ``flush(replacing:)`` with nothing to switch: drops what is queued now.
    public func flush() { flush(replacing: {}) }

    /// Drivers whose device does not come back by itself watch for nothing.
    public func watchForReturn(_ onReturn: @escaping @Sendable () -> Void) -> OutputReturnWatch? { nil }
}
