// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Dispatch
import Glibc
import Synchronization
import TonearmCore

/// Plays through PulseAudio (or PipeWire's PulseAudio server) with libpulse's asynchronous API:
/// one ``PulseConnection`` (a `pa_threaded_mainloop` and its context) per `open`, and one playback
/// stream per `start`, whose write callback pulls from the ``AudioRenderSource`` with `.realtime`
/// timing.
///
/// Format: the stream is `FLOAT32LE`, interleaved, at the rate and channel count given to
/// ``open(format:)`` (up to 32 channels), with the channel map of the format's layout
/// (`PulseChannelMap`: the file's own, else FFmpeg's default for the count).
///
/// Threading:
/// - `open`, `start`, `pause`, `resume`, `stop`, `close`, `flush`, `setVolume` are control-plane calls
///   (one thread at a time; the owner serialises them). They take the mainloop lock, so they may
///   also be called from an event handler, but not from inside the source's `render`.
/// - The source's `render` runs on the PulseAudio mainloop thread, inside the write callback, with
///   the mainloop lock held. The callback writes straight into libpulse's buffer
///   (`pa_stream_begin_write`): it allocates nothing and takes no lock of ours.
/// - `latency`, `framesPlayed`, `underrunCount`, `format` may be read from any thread, without a
///   lock: the callbacks publish timing through atomics (``TimingSnapshot``), so a reader — a
///   video clock 60 times a second — never delays the realtime write callback.
/// - `stop()` returns only when the write callback will not call the source again.
///
/// Interruptions: when another stream (e.g. `media.role=phone` with `module-role-cork`) asks
/// this one to pause, the driver publishes ``AudioOutputEvent/corkRequested``; when the reason is
/// gone, ``AudioOutputEvent/uncorkRequested``. The driver does not cork by itself: **the owner
/// (the player) must call ``pause()`` on `corkRequested`** (and may call ``resume()`` on
/// `uncorkRequested`). PulseAudio mutes a stream that asked to be corked and sends
/// `request-uncork` only to a stream that really corked, so an owner that ignores the request is
/// silenced and never hears that the interruption ended.
///
/// Buffering: a stream starts with ``startLatency`` and, when that is shorter than
/// ``targetLatency``, grows to it after ``growAfter`` seconds of uncorked play (a time event of the
/// main loop, armed at the start, re-armed by an uncork or a flush, disarmed by a cork, a stop,
/// or once grown — no timer runs while playing steadily). ``flush(replacing:)`` drops what the
/// server holds (`pa_stream_flush`) and shrinks a grown buffer back to ``startLatency`` first, so
/// that the first request after it asks for the short buffer only (a long one would be filled with
/// the silence a source renders while its decoder seeks, and the new audio heard that much later).
/// ``OutputBuffering/steady`` (the registry's `pulse` driver for media players) is 75 ms growing to
/// 250 ms; ``OutputBuffering/short`` a fixed 75 ms.
///
/// Failures: a context or stream failure, or the removal of the sink with nowhere to move the
/// stream, publishes ``AudioOutputEvent/deviceLost(reason:)``; the driver then pulls no more.
///
/// `@unchecked Sendable`: every `var` is guarded by the mainloop lock (callbacks run with it
/// held; control calls take it); what other threads read without it is atomic
/// (`timing`, `underruns`) or under `formatBox`.
public final class PulseOutput: AudioOutputDriver, @unchecked Sendable {
    // MARK: Configuration

    /// The server to connect to (`unix:/path`, `tcp:host`, …); nil for libpulse's default
    /// (`PULSE_SERVER`, then the usual socket). The server is never autospawned.
    public let server: String?
    /// `application.name` of the client.
    public let applicationName: String
    /// `media.name` of the playback stream.
    public let streamName: String
    /// `media.role` of the stream (`music`, `video`, `game`, `phone`, …).
    public let role: String
    /// The sink to play to; nil for the server's default.
    public let device: String?
    /// The server-side buffering asked for, in seconds (`tlength`).
    public let targetLatency: Double
    /// The buffering a new stream starts with (`tlength`, at most `targetLatency`; by default
    /// `targetLatency` itself): a small first buffer lets the first sample be heard sooner (the
    /// sink's latency follows it); it grows to `targetLatency` after ``growAfter`` seconds of
    /// uncorked play (see ``growBuffer()``), and a flush makes it short again. With 25 ms on a
    /// loaded machine the first refills came late (GaplessPulseTests counted an underrun at the
    /// start), for about 2 ms less to the first sound, within the noise of `scripts/bench start`:
    /// the steady buffering starts at 75 ms.
    public let startLatency: Double
    /// Seconds of uncorked play after a start or a flush when the buffer grows from
    /// ``startLatency`` to ``targetLatency``.
    public let growAfter: Double
    /// The fixed buffer of ``OutputBuffering/short``, and where ``OutputBuffering/steady`` starts (seconds).
    public static let shortLatency = 0.075
    /// The buffer ``OutputBuffering/steady`` grows to (seconds): at a load of 8 to 10 on two cores
    /// the 75 ms stream ran dry 32 times in 10 minutes (scripts/bench longrun); a seek is still heard
    /// at once, because the players flush.
    public static let steadyLatency = 0.25
    /// How long `open` and `start` wait for the server before failing, in seconds.
    public let connectTimeout: Double

    public var name: String { device.map { "pulse:\($0)" } ?? "pulse" }
    /// The sink named at creation (nil: the server's default).
    public var ownDevice: String? { device }
    /// The sink ``playThrough(device:)`` set, played to instead of ``device`` from the next open.
    private let throughDevice = Mutex<String?>(nil)
    /// The sink the next stream plays to.
    private var targetDevice: String? { throughDevice.withLock { $0 } ?? device }

    /// Plays to the sink `device` from the next ``open(format:)`` (nil: ``device`` again); an
    /// engine with voice processing plays through the echo canceller's sink. Control plane.
    public func playThrough(device sink: String?) -> Bool {
        throughDevice.withLock { $0 = sink }
        return true
    }
    public var isAudible: Bool { true }
    public var format: AudioFormat { formatBox.withLock { $0 } }
    public var events: AsyncStream<AudioOutputEvent> { eventChannel.stream }

    // MARK: State

    private let formatBox = Mutex(AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2))
    private let eventChannel = OutputEventChannel()
    private let underruns = Atomic<Int>(0)
    /// Whether the last loss was the server's (the connection failed), not only the stream's:
    /// only then is there a server to wait for (``watchForReturn(_:)``). Set by the mainloop
    /// thread, read by the control plane.
    private let serverLost = Atomic<Bool>(false)
    /// Timing published by the mainloop thread (or a control call holding the mainloop lock)
    /// for readers on any thread.
    private let timing = TimingSnapshot()
    /// Frames handed to the server since `start` (mainloop lock).
    private var framesWritten: Int64 = 0
    /// Whether the stream is corked (mainloop lock).
    private var corked = false
    /// What the frames heard are moved on from (mainloop lock): the count at an instant — the
    /// server's last answer, a start, a cork or uncork, the stream running dry — and whether it
    /// moves from there.
    private var anchor: (frames: Int64, instant: UInt64, moving: Bool) = (0, 0, false)

    /// The connection to the server, from `open` to `close` (set and cleared by control-plane
    /// calls, outside the mainloop thread's callbacks).
    private var connection: PulseConnection?
    private var context: OpaquePointer? { connection?.context }
    /// The connection's main loop (nil when not open).
    private var mainloop: OpaquePointer? { connection?.mainloop }
    // Guarded by the mainloop lock (written only by control-plane calls with the lock held, or by
    // callbacks, which libpulse runs with the lock held).
    /// The device the stream plays to (mainloop thread, or under the mainloop lock).
    private var currentDevice: String?
    /// Whether the sink the stream plays to is headphones (nil: not known yet). Mainloop lock.
    private var onHeadphones: Bool?
    /// Whether the context is subscribed to sink changes. Mainloop lock.
    private var watchingSinks = false
    private var stream: OpaquePointer?
    private var source: (any AudioRenderSource)?
    private var sampleSpec = pa_sample_spec()
    private var channelMap = pa_channel_map()
    private var frameBytes = 8
    private var volume: Float = 1
    private var volumeWasSet = false
    private var lostReported = false
    private var sinkFound = false
    private var closing = false
    private var starting = false
    /// The time event that grows the buffer (from `start` to `detachStream`; nil when the stream
    /// starts at its target), with the main loop's API that frees it. Mainloop lock.
    private var growthTimer: (event: OpaquePointer, api: UnsafeMutablePointer<pa_mainloop_api>)?
    /// Whether the buffer has grown to ``targetLatency`` (asked for; true from the start when it
    /// starts there). Mainloop lock.
    private var grown = true
    /// Set by the write callback once the source reported its end: nothing more is written, so
    /// that the server's buffer can empty and `drain` completes. Mainloop thread only.
    private var sourceEnded = false

    /// Creates a driver; nothing is connected until ``open(format:)``.
    public init(server: String? = nil, applicationName: String = "Tonearm", streamName: String = "Playback",
                role: String = "music", device: String? = nil, targetLatency: Double = PulseOutput.shortLatency,
                startLatency: Double? = nil, growAfter: Double = 1, connectTimeout: Double = 2) {
        self.server = server
        self.applicationName = applicationName
        self.streamName = streamName
        self.role = role
        self.device = device
        let target = min(max(targetLatency, 0.005), 2)
        self.targetLatency = target
        self.startLatency = min(max(startLatency ?? target, 0.005), target)
        self.growAfter = max(0, growAfter)
        self.connectTimeout = max(connectTimeout, 0.05)
    }

    deinit {
        teardown()
        eventChannel.finish()
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ p: UnsafeMutableRawPointer?) -> PulseOutput {
        Unmanaged<PulseOutput>.fromOpaque(p!).takeUnretainedValue()
    }

    private func unavailable(_ reason: String) -> TonearmError {
        .outputUnavailable(driver: name, reason: reason)
    }

    private func contextError() -> String { connection?.errorText ?? "no connection" }

    /// Runs `body` with the mainloop lock held (or directly on the mainloop thread, which holds it).
    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        guard let connection else { return try body() }
        return try connection.withLock(body)
    }

    /// Wakes the control call waiting on the connection (callbacks, lock held).
    private func signal() { connection?.signal() }

    /// Waits for an operation to finish (or the connection to fail), then releases it. Lock held,
    /// never on the mainloop thread; the operation's callback must ``signal()``.
    private func waitFor(_ op: OpaquePointer) {
        guard let connection else { pa_operation_unref(op); return }
        connection.finish(op)
    }

    // MARK: Opening

    /// Connects to the server and checks the format (and the sink, when one was named).
    /// Throws ``TonearmError/outputUnavailable(driver:reason:)`` when the server does not answer
    /// within `connectTimeout`, refuses the connection, or the sink does not exist. Opening an
    /// open driver closes it first.
    public func open(format requested: AudioFormat) throws {
        if connection != nil { close() }
        guard requested.isValid, requested.channelCount <= Int(PA_CHANNELS_MAX),
              requested.sampleRate == requested.sampleRate.rounded(), requested.sampleRate <= Double(PA_RATE_MAX) else {
            throw unavailable("unsupported format \(requested)")
        }
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(requested.sampleRate),
                                  channels: UInt8(requested.channelCount))
        guard pa_sample_spec_valid(&spec) != 0 else { throw unavailable("unsupported format \(requested)") }
        guard let map = PulseChannelMap.make(for: requested) else {
            throw unavailable("no channel map for \(requested.channelCount) channels")
        }

        sampleSpec = spec
        channelMap = map
        frameBytes = 4 * requested.channelCount
        lostReported = false
        serverLost.store(false, ordering: .relaxed)
        watchingSinks = false
        closing = false
        var f = requested
        f.commonFormat = .pcmFormatFloat32
        f.isInterleaved = true
        formatBox.withLock { $0 = f }

        let c = try PulseConnection(server: server, serverText: server ?? "the default server",
                                    clientName: applicationName, timeout: connectTimeout, driver: name,
                                    renders: true) { [unowned self] reason in
            self.source = nil
            self.serverLost.store(true, ordering: .releasing)
            self.reportLost("the connection to the server was lost: \(reason)")
        }
        connection = c
        guard let device = targetDevice else { return }
        let found: Bool = c.withLock {
            sinkFound = false
            if let ctx = c.context, let op = pa_context_get_sink_info_by_name(ctx, device, { _, info, eol, ud in
                let me = PulseOutput.from(ud)
                if eol == 0, info != nil { me.sinkFound = true }
                me.signal()
            }, userdata) {
                waitFor(op)
            }
            return sinkFound
        }
        if !found {
            teardown()
            throw unavailable("no sink named '\(device)'")
        }
    }

    // MARK: Running

    /// Creates the playback stream and begins pulling from `source` on the mainloop thread.
    /// Restarts (after an implicit ``stop()``) when already started. Throws
    /// ``TonearmError/outputUnavailable(driver:reason:)`` when the driver is not open or the
    /// server refuses the stream.
    public func start(source newSource: any AudioRenderSource) throws {
        guard let connection, let ctx = context else { throw TonearmError.invalidState("\(name): start before open") }
        stop()
        var failure: String?
        connection.lock()
        defer { connection.unlock() }
        sourceEnded = false
        guard pa_context_get_state(ctx) == PA_CONTEXT_READY else {
            throw unavailable("the connection to the server is gone (\(contextError()))")
        }
        let props = pa_proplist_new()
        pa_proplist_sets(props, tonearm_pa_prop_media_role(), role)
        pa_proplist_sets(props, tonearm_pa_prop_media_name(), streamName)
        let s = pa_stream_new_with_proplist(ctx, streamName, &sampleSpec, &channelMap, props)
        pa_proplist_free(props)
        guard let s else { throw unavailable("cannot create a stream: \(contextError())") }
        stream = s
        source = newSource
        underruns.store(0, ordering: .relaxed)
        framesWritten = 0
        corked = false
        let startInstant = monotonicNanoseconds()
        anchor = (0, startInstant, false)
        timing.publish(frames: 0, at: startInstant, latencyMicros: 0, advancing: false, limit: 0, rate: Double(sampleSpec.rate),
                       newStream: true)
        installCallbacks(on: s)

        var attr = bufferAttributes(tlength: startLatency)
        // No PA_STREAM_INTERPOLATE_TIMING: the driver moves the server's answers on by itself
        // (``refreshTiming(_:advancing:serverUpdate:)``).
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue
                                      | PA_STREAM_AUTO_TIMING_UPDATE.rawValue)
        var cv = pa_cvolume()
        pa_cvolume_set(&cv, UInt32(sampleSpec.channels), pa_sw_volume_from_linear(Double(volume)))
        let device = targetDevice
        let rc = volumeWasSet
            ? pa_stream_connect_playback(s, device, &attr, flags, &cv, nil)
            : pa_stream_connect_playback(s, device, &attr, flags, nil, nil)
        if rc < 0 {
            failure = "cannot connect the stream: \(contextError())"
        } else {
            starting = true
            defer { starting = false }
            let timedOut = connection.wait(atMost: connectTimeout) {
                let state = pa_stream_get_state(s)
                return state == PA_STREAM_READY || tonearm_pa_stream_is_good(state) == 0
            }
            if pa_stream_get_state(s) == PA_STREAM_READY {
                currentDevice = pa_stream_get_device_name(s).map { String(cString: $0) }
                watchSinks(ctx)
                onHeadphones = nil
                checkSink(of: s)
            } else if timedOut && tonearm_pa_stream_is_good(pa_stream_get_state(s)) != 0 {
                failure = "the stream did not start within \(connectTimeout) s"
            } else {
                failure = "the server refused the stream: \(contextError())"
            }
        }
        if let failure {
            detachStream()
            throw unavailable(failure)
        }
        grown = startLatency >= targetLatency
        if !grown, let api = pa_threaded_mainloop_get_api(connection.mainloop) {
            // A time event of the main loop: it fires on the mainloop thread (outside the write
            // callback) with the lock held, and dies with the stream (`detachStream`).
            let event = pa_context_rttime_new(ctx, pa_rtclock_now() + Self.micros(growAfter), { _, _, _, ud in
                PulseOutput.from(ud).growthDue()
            }, userdata)
            if let event { growthTimer = (event, api) }
        }
    }

    private static func micros(_ seconds: Double) -> pa_usec_t { pa_usec_t(max(0, seconds) * 1e6) }

    /// Buffer attributes asking for `tlength` seconds (the server's defaults for the rest).
    private func bufferAttributes(tlength seconds: Double) -> pa_buffer_attr {
        pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(pa_usec_to_bytes(pa_usec_t(seconds * 1e6), &sampleSpec)),
                       prebuf: UInt32.max, minreq: UInt32.max, fragsize: UInt32.max)
    }

    /// Grows the playing stream's buffer from ``startLatency`` to ``targetLatency`` now (a start
    /// arms this for ``growAfter`` seconds of play on); returns once the server has answered.
    /// Nothing happens without a ready stream, or when it has grown already. Control plane.
    public func growBuffer() {
        guard let connection, !connection.onMainloopThread else { return }
        connection.withLock {
            guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY, !grown else { return }
            grown = true
            armGrowth()
            if let op = requestBuffer(s, tlength: targetLatency) { waitFor(op) }
        }
    }

    /// The growth timer fired (mainloop thread, lock held; the event is disabled until re-armed):
    /// asks for the long buffer, without waiting for the answer.
    private func growthDue() {
        guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY, !grown, !corked else { return }
        grown = true
        if let op = requestBuffer(s, tlength: targetLatency) { pa_operation_unref(op) }
    }

    /// Asks the server for a `tlength` of `seconds` (lock held); the answer publishes
    /// ``AudioOutputEvent/bufferChanged(length:)`` and wakes a waiting control call. The caller
    /// waits for or releases the operation.
    private func requestBuffer(_ s: OpaquePointer, tlength seconds: Double) -> OpaquePointer? {
        var attr = bufferAttributes(tlength: seconds)
        return pa_stream_set_buffer_attr(s, &attr, { s, success, ud in
            PulseOutput.from(ud).bufferSet(s, success: success != 0)
        }, userdata)
    }

    /// The server answered a change of the buffer (mainloop thread, lock held).
    private func bufferSet(_ s: OpaquePointer?, success: Bool) {
        if success, let s, s == stream, let attr = pa_stream_get_buffer_attr(s) {
            var spec = sampleSpec
            eventChannel.yield(.bufferChanged(length: Double(pa_bytes_to_usec(UInt64(attr.pointee.tlength), &spec)) / 1e6))
        }
        signal()
    }

    /// Arms the growth timer for ``growAfter`` seconds from now, or disarms it once grown or
    /// while corked (lock held).
    private func armGrowth() {
        guard let t = growthTimer, let ctx = context else { return }
        pa_context_rttime_restart(ctx, t.event, grown || corked ? pa_usec_t.max : pa_rtclock_now() + Self.micros(growAfter))
    }

    /// Runs `replace` with the mainloop lock held — the write callback, which renders with it held,
    /// is not under way — then drops what the server holds and has not played (`pa_stream_flush`,
    /// after shrinking a grown buffer back to ``startLatency``; the growth is armed again). Every
    /// write after `replace` reaches the server after the flush, so it is kept.
    ///
    /// Timing: the flush moves the server's write index back to its read index; the stream time
    /// (`framesPlayed`) goes on from the read index, and the frames written are set to the server's
    /// write index by a timing update right after the flush. Until that update the latency stays
    /// as published (libpulse cannot say it meanwhile) and grows with each write: never less than
    /// what is queued. Control plane; does not wait for the server.
    public func flush(replacing replace: () -> Void) {
        guard let connection, !connection.onMainloopThread else {
            replace()
            return
        }
        connection.withLock {
            replace()
            guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY else { return }
            // A source that had ended is asked again: the player replaced what it plays.
            sourceEnded = false
            // A grown buffer goes back to the start buffer (one that never grows stays as it is).
            if grown, growthTimer != nil, let op = requestBuffer(s, tlength: startLatency) {
                grown = false
                pa_operation_unref(op)
            }
            if let op = pa_stream_flush(s, nil, nil) { pa_operation_unref(op) }
            if let op = pa_stream_update_timing_info(s, { s, _, ud in PulseOutput.from(ud).timingAfterFlush(s) }, userdata) {
                pa_operation_unref(op)
            }
            armGrowth()
        }
    }

    /// The first timing update after a flush (mainloop thread, lock held): the frames written are
    /// what the server's write index says now (the flushed ones are gone from it).
    private func timingAfterFlush(_ s: OpaquePointer?) {
        guard let s, s == stream else { return }
        if let info = pa_stream_get_timing_info(s), info.pointee.write_index_corrupt == 0, frameBytes > 0 {
            framesWritten = max(0, info.pointee.write_index) / Int64(frameBytes)
        }
        refreshTiming(s, serverUpdate: true)
    }

    /// The stream's buffer length (`tlength`) as the server set it, in seconds; 0 without a stream.
    public var bufferLength: Double {
        locked {
            guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY,
                  let attr = pa_stream_get_buffer_attr(s) else { return 0 }
            var spec = sampleSpec
            return Double(pa_bytes_to_usec(UInt64(attr.pointee.tlength), &spec)) / 1e6
        }
    }

    private func installCallbacks(on s: OpaquePointer) {
        pa_stream_set_state_callback(s, { s, ud in PulseOutput.from(ud).streamStateChanged(s) }, userdata)
        pa_stream_set_write_callback(s, { s, nbytes, ud in PulseOutput.from(ud).write(to: s, bytes: nbytes) }, userdata)
        pa_stream_set_underflow_callback(s, { _, ud in
            let me = PulseOutput.from(ud)
            if !me.sourceEnded { me.underruns.add(1, ordering: .relaxed) }
        }, userdata)
        pa_stream_set_event_callback(s, { _, name, _, ud in
            guard let name else { return }
            let me = PulseOutput.from(ud)
            if strcmp(name, tonearm_pa_stream_event_request_cork()) == 0 {
                me.eventChannel.yield(.corkRequested)
            } else if strcmp(name, tonearm_pa_stream_event_request_uncork()) == 0 {
                me.eventChannel.yield(.uncorkRequested)
            }
        }, userdata)
        pa_stream_set_moved_callback(s, { s, ud in PulseOutput.from(ud).streamMoved(s) }, userdata)
        pa_stream_set_latency_update_callback(s, { s, ud in PulseOutput.from(ud).refreshTiming(s, serverUpdate: true) }, userdata)
    }

    private func clearCallbacks(on s: OpaquePointer) {
        pa_stream_set_state_callback(s, nil, nil)
        pa_stream_set_write_callback(s, nil, nil)
        pa_stream_set_underflow_callback(s, nil, nil)
        pa_stream_set_event_callback(s, nil, nil)
        pa_stream_set_moved_callback(s, nil, nil)
        pa_stream_set_latency_update_callback(s, nil, nil)
    }

    /// The moved callback (mainloop thread): reports the move, then asks the server whether the
    /// previous device still exists — when it does not, the server rescued the stream from a
    /// device that went away (`deviceRemoved`); otherwise someone moved it (only `moved`).
    private func streamMoved(_ s: OpaquePointer?) {
        let new = pa_stream_get_device_name(s).map { String(cString: $0) } ?? "?"
        let old = currentDevice
        currentDevice = new
        eventChannel.yield(.moved(deviceName: new))
        onHeadphones = nil
        checkSink(of: s)
        guard let old, old != new, let ctx = context else { return }
        let check = Unmanaged.passRetained(RemovalCheck(owner: self, previous: old, current: new)).toOpaque()
        let op = pa_context_get_sink_info_by_name(ctx, old, { _, info, eol, ud in
            guard let ud else { return }
            if info != nil {
                Unmanaged<RemovalCheck>.fromOpaque(ud).takeUnretainedValue().found = true
                return
            }
            guard eol != 0 else { return }
            let c = Unmanaged<RemovalCheck>.fromOpaque(ud).takeRetainedValue()  // the last call
            if !c.found { c.owner.deviceWentAway(previous: c.previous, current: c.current) }
        }, check)
        if let op { pa_operation_unref(op) } else { Unmanaged<RemovalCheck>.fromOpaque(check).release() }
    }

    /// Subscribes the context to sink changes, once (lock held). A change of the sink the stream
    /// plays to is looked at by ``checkSink(of:)``.
    private func watchSinks(_ ctx: OpaquePointer) {
        guard !watchingSinks else { return }
        watchingSinks = true
        connection?.onEvent = { [unowned self] facility, kind, index in
            guard facility == PA_SUBSCRIPTION_EVENT_SINK, kind == PA_SUBSCRIPTION_EVENT_CHANGE,
                  let s = self.stream, pa_stream_get_device_index(s) == index else { return }
            self.checkSink(of: s)
        }
        if let op = pa_context_subscribe(ctx, PA_SUBSCRIPTION_MASK_SINK, nil, nil) { pa_operation_unref(op) }
    }

    /// Reads the sink the stream plays to and notes whether it is headphones; when it was and is
    /// no more — headphones unplugged from the sink's jack, its port switched to the speakers —
    /// reports `deviceRemoved` with the sink as both previous and current device. Lock held,
    /// mainloop thread or the caller of `start`; the answer comes on the mainloop thread.
    private func checkSink(of s: OpaquePointer?) {
        guard let s, let ctx = context else { return }
        let index = pa_stream_get_device_index(s)
        guard index != UInt32.max else { return }  // PA_INVALID_INDEX
        let check = Unmanaged.passRetained(SinkCheck(owner: self, index: index)).toOpaque()
        let op = pa_context_get_sink_info_by_index(ctx, index, { _, info, eol, ud in
            guard let ud else { return }
            if let info {
                let c = Unmanaged<SinkCheck>.fromOpaque(ud).takeUnretainedValue()
                let name = info.pointee.name.map { String(cString: $0) } ?? "?"
                c.owner?.sinkSeen(index: c.index, name: name, headphones: AudioOutputPortType.classify(info.pointee) == .headphones)
                return
            }
            guard eol != 0 else { return }
            Unmanaged<SinkCheck>.fromOpaque(ud).release()  // the last call
        }, check)
        if let op { pa_operation_unref(op) } else { Unmanaged<SinkCheck>.fromOpaque(check).release() }
    }

    /// A sink's state, read by ``checkSink(of:)`` (mainloop thread, lock held).
    fileprivate func sinkSeen(index: UInt32, name: String, headphones: Bool) {
        guard let s = stream, pa_stream_get_device_index(s) == index else { return }
        let was = onHeadphones
        onHeadphones = headphones
        if was == true && !headphones {
            eventChannel.yield(.deviceRemoved(previous: name, current: name))
        }
    }

    fileprivate func deviceWentAway(previous: String, current: String) {
        eventChannel.yield(.deviceRemoved(previous: previous, current: current))
    }

    /// The write callback (mainloop thread, lock held): renders straight into libpulse's buffer.
    /// Allocates nothing and takes no lock.
    private func write(to s: OpaquePointer?, bytes: Int) {
        guard let s, let source, !sourceEnded else { return }
        var remaining = bytes - bytes % frameBytes
        let channels = Int(sampleSpec.channels)
        while remaining > 0 {
            var data: UnsafeMutableRawPointer?
            var n = remaining
            guard pa_stream_begin_write(s, &data, &n) == 0, let data else { return }
            n = min(n, remaining)
            n -= n % frameBytes
            if n == 0 {
                pa_stream_cancel_write(s)
                return
            }
            let frames = n / frameBytes
            let samples = data.bindMemory(to: Float.self, capacity: frames * channels)
            // Queued before they are rendered: a reader that sees the source's position past these
            // frames sees the latency that holds them too (a clock never runs ahead of the ear).
            timing.raiseLatency(byMicros: Int64(Double(frames) * 1e6 / Double(sampleSpec.rate)))
            let result = source.render(into: samples, frameCount: frames, timing: .realtime)
            if result.ended {
                // Write the last real frames only; from now on the stream is left to drain.
                sourceEnded = true
                let last = max(0, min(result.framesRendered, frames)) * frameBytes
                if last == 0 {
                    pa_stream_cancel_write(s)
                    return
                }
                if pa_stream_write(s, data, last, nil, 0, PA_SEEK_RELATIVE) == 0 { framesWritten += Int64(last / frameBytes) }
                refreshTiming(s)
                return
            }
            if pa_stream_write(s, data, n, nil, 0, PA_SEEK_RELATIVE) < 0 { return }
            framesWritten += Int64(frames)
            remaining -= n
        }
        refreshTiming(s)
    }

    /// Publishes the stream's timing for readers on other threads (mainloop thread, or a control
    /// call with the mainloop lock held): after every write and every timing update from the
    /// server. Reads libpulse's cached timing info only (no round trip); allocates nothing.
    ///
    /// The frames heard come from the server's answers only (`serverUpdate`: called as one
    /// arrives): its read index less the sink's latency, plus the answer's age (from the
    /// server's stamp to now: the transport, and a busy moment of this thread) — the sample
    /// leaving the sink now — and negative when the sink will play what it read only later: an
    /// idle null sink has rendered up to 2 s of silence ahead when a stream starts, and reads
    /// nothing of it before that has passed. libpulse's interpolated stream time (`PA_STREAM_INTERPOLATE_TIMING`, the smoother)
    /// is not used: it starts running at the monotonic clock's speed when the stream starts,
    /// whatever the sink says, and never goes back — after such a start it said that everything
    /// written was played for the two seconds in which nothing was, and then stood ahead of the
    /// ear by the sink's latency (the known issue of AVSyncPulseTests). Between two answers
    /// (`PA_STREAM_AUTO_TIMING_UPDATE`: at doubling intervals from 10 ms to 1.5 s, started over
    /// by a flush or a change of the buffer) the count is moved on by the monotonic clock while
    /// the stream is not corked, never past what was written. The latency is what was written
    /// less that count (`written − latency` is the frames played itself): several seconds before
    /// an idle sink plays the first write.
    private func refreshTiming(_ s: OpaquePointer?, advancing: Bool? = nil, serverUpdate: Bool = false) {
        guard let s else { return }
        let rate = Double(sampleSpec.rate)
        let now = monotonicNanoseconds()
        let moving = advancing ?? (!corked && pa_stream_get_state(s) == PA_STREAM_READY)
        // The frames heard now, from the anchor (computed afresh each time, with the instant it
        // is published for: a count moved on from the last publish would lose the moment between
        // each reading of the clock and the next — at 50 writes a second, milliseconds a second).
        var frames = anchor.frames
        if anchor.moving && now > anchor.instant { frames += Int64(Double(now - anchor.instant) * rate / 1e9) }
        // Never past what was written before (the stream ran dry), then on from there.
        let before = max(anchor.frames, timing.limit)
        if frames >= before && anchor.moving {
            frames = before
            anchor = (frames, now, moving)
        }
        // Corked or uncorked: on from here at the new pace.
        if moving != anchor.moving { anchor = (frames, now, moving) }
        if serverUpdate, let info = pa_stream_get_timing_info(s), info.pointee.read_index_corrupt == 0, frameBytes > 0 {
            let i = info.pointee
            let read = max(0, i.read_index) / Int64(frameBytes)
            // The answer's age: the server stamped it (`timestamp`, the realtime clock: the same
            // machine's) before it reached this thread, which may have been busy; the sink has
            // played on meanwhile. At most a second (a clock set meanwhile).
            var tv = timeval()
            gettimeofday(&tv, nil)
            let age = min(max(0, Double(tv.tv_sec - i.timestamp.tv_sec) * 1e6 + Double(tv.tv_usec - i.timestamp.tv_usec)), 1e6)
            // As libpulse's `calc_time`: the sink's part counts only while the stream runs (a
            // corked stream's audio is taken back from the sink).
            let live = !corked && pa_stream_is_suspended(s) != 1
            let ahead = live ? Double(i.sink_usec) - age : 0
            // Never more than was written: right after a start the server's read index can run
            // ahead of the data (an idle sink rendering one long block first).
            let server = min(read - Int64(ahead * rate / 1e6), framesWritten)
            // Taken as it is, also when it is ahead of the count moved on since the last answer:
            // the server's own read index and sink latency do not jump when the buffer grows or
            // after a flush (PulseStreamClockTests) — libpulse's smoother did, and a slow catch-up
            // held the clock behind the ear for minutes after a start (70 ms in a run of
            // AVSyncPulseTests).
            frames = server
            anchor = (frames, now, moving)
        }
        let latencyMicros = Int64(Double(max(0, framesWritten - frames)) * 1e6 / rate)
        timing.publish(frames: frames, at: now, latencyMicros: latencyMicros, advancing: moving, limit: framesWritten, rate: rate)
    }

    private func streamStateChanged(_ s: OpaquePointer?) {
        guard let s else { return }
        let state = pa_stream_get_state(s)
        if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED, s == stream {
            // The write callback is not called on a dead stream; forget the source anyway.
            source = nil
            reportLost("the stream ended: \(contextError())")
        }
        signal()
    }

    /// Publishes `.deviceLost` once per open, unless the stream is in use by a start still waiting
    /// (start reports that failure by throwing). Lock held.
    private func reportLost(_ reason: String) {
        guard !lostReported, !closing, !starting else { return }
        lostReported = true
        eventChannel.yield(.deviceLost(reason: reason))
    }

    /// Waits until the server has played everything written so far (after the source reported
    /// its end), or `timeout` seconds. Control plane; never on the mainloop thread.
    public func drain(timeout: Double) {
        guard let connection, !connection.onMainloopThread else { return }
        connection.withLock {
            guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY else { return }
            guard let op = pa_stream_drain(s, { _, _, ud in PulseOutput.from(ud).signal() }, userdata) else { return }
            connection.finish(op, atMost: timeout)
            // Fetch fresh timing, so framesPlayed and latency describe the drained stream.
            if let t = pa_stream_update_timing_info(s, { _, _, ud in PulseOutput.from(ud).signal() }, userdata) {
                waitFor(t)
            }
            refreshTiming(s, serverUpdate: true)
        }
    }

    /// Corks the stream: the server stops asking for audio and the clock stops.
    public func pause() { cork(true) }

    /// Uncorks the stream after ``pause()``.
    public func resume() { cork(false) }

    private func cork(_ on: Bool) {
        locked {
            guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY else { return }
            corked = on
            // The buffer grows after steady play: a cork holds the growth, an uncork starts it over.
            armGrowth()
            if let op = pa_stream_cork(s, on ? 1 : 0, nil, nil) { pa_operation_unref(op) }
            refreshTiming(s)
        }
    }

    /// Stops pulling and drops what the server has buffered (the stream is disconnected). When it
    /// returns, the write callback will not call the source again.
    public func stop() {
        locked { detachStream() }
    }

    /// Disconnects and releases the stream. Lock held.
    private func detachStream() {
        source = nil
        if let t = growthTimer {
            t.api.pointee.time_free(t.event)
            growthTimer = nil
        }
        guard let s = stream else { return }
        refreshTiming(s, advancing: false)
        clearCallbacks(on: s)
        if tonearm_pa_stream_is_good(pa_stream_get_state(s)) != 0 { pa_stream_disconnect(s) }
        pa_stream_unref(s)
        stream = nil
    }

    /// Stops, disconnects from the server and finishes the current `events` stream (a new one is
    /// ready for the next `open`).
    public func close() {
        teardown()
        eventChannel.finish()
    }

    private func teardown() {
        guard let c = connection else { return }
        c.close { [self] in
            closing = true
            detachStream()
        }
        connection = nil
    }

    /// Sets the stream's volume on the server (`pa_context_set_sink_input_volume`, linear
    /// amplitude 0...1). Before `start` the value is remembered and given to the new stream.
    public func setVolume(_ newVolume: Float) {
        let v = newVolume.isFinite ? min(max(newVolume, 0), 1) : 1
        locked {
            volume = v
            volumeWasSet = true
            guard let ctx = context, let s = stream, pa_stream_get_state(s) == PA_STREAM_READY else { return }
            var cv = pa_cvolume()
            pa_cvolume_set(&cv, UInt32(sampleSpec.channels), pa_sw_volume_from_linear(Double(v)))
            if let op = pa_context_set_sink_input_volume(ctx, pa_stream_get_index(s), &cv, nil, nil) {
                pa_operation_unref(op)
            }
        }
    }

    // MARK: Measurements

    /// The stream's latency (server and device buffering) in seconds, as of the last write or
    /// timing update: the frames written less ``framesPlayed`` as then published (see
    /// `refreshTiming`), so that `written − latency` is the played count itself and a growing
    /// buffer raises the latency by what it queued; seconds when an idle sink will play the
    /// first write only after the silence it rendered ahead. Raised by what a write is about to
    /// queue before the source renders it. The last known value without a stream. Lock-free.
    public var latency: Double { Double(timing.latencyMicros) / 1e6 }

    /// ``latency`` with the instant it describes: that of the write or the server's timing update
    /// it was published at (a timing update of the server's may land between two writes, with a
    /// latency smaller by the time since the write). Raised before a write renders, at the
    /// instant of the reading before it. One consistent pair, lock-free.
    public var clockReading: OutputClockReading {
        let r = timing.reading()
        return OutputClockReading(latency: Double(r.latencyMicros) / 1e6, hostNanos: r.instant)
    }

    /// Frames heard since `start`: the server's read index less the sink's latency as of its last
    /// timing answer, moved on by the monotonic clock since (never past what was written, never
    /// below 0 — before an idle sink reaches the first write —, never backwards); it stands
    /// still while corked. Keeps its last value after `stop`. Lock-free.
    public var framesPlayed: Int64 { timing.framesNow() }

    /// Underflows the server reported for the current stream since `start`.
    public var underrunCount: Int { underruns.load(ordering: .relaxed) }

    // MARK: Probing

    /// Watches for a server at ``server`` to answer again after the connection was lost (a
    /// restarted PulseAudio, PipeWire's server after an update): probes with
    /// ``isServerAvailable(server:timeout:)`` at once and then at growing, jittered intervals
    /// (0.1 s doubling to 2 s), woken early by inotify when the server's unix socket appears.
    /// `onReturn` runs once on the watch's thread. Control plane.
    ///
    /// Nil when the server did not go away — only the stream did (killed with `pactl
    /// kill-sink-input`, its sink removed with nowhere to move it): a server that answers all
    /// along would "return" at once, and the player would play on against what was done to it.
    public func watchForReturn(_ onReturn: @escaping @Sendable () -> Void) -> OutputReturnWatch? {
        guard serverLost.load(ordering: .acquiring) else { return nil }
        let server = self.server
        return OutputReturnWatch(probe: { Self.isServerAvailable(server: server, timeout: 1) },
                                 wakePath: Self.socketPath(server: server, environment: Self.pulseEnvironment()),
                                 onReturn: onReturn)
    }

    /// The variables ``socketPath(server:environment:)`` reads, from the process's environment.
    static func pulseEnvironment() -> [String: String] {
        var env: [String: String] = [:]
        for key in ["PULSE_SERVER", "PULSE_RUNTIME_PATH", "XDG_RUNTIME_DIR"] {
            if let v = getenv(key) { env[key] = String(cString: v) }
        }
        return env
    }

    /// The unix socket a server string names, as libpulse finds it: the first `unix:PATH` of
    /// `server` (entries are separated by spaces; a `{machine-id}` prefix is ignored); without a
    /// server, the same of `PULSE_SERVER`, else `native` in `PULSE_RUNTIME_PATH` or
    /// `XDG_RUNTIME_DIR/pulse`. Nil for a server reached over TCP only.
    static func socketPath(server: String?, environment: [String: String]) -> String? {
        func unixEntry(_ list: String) -> String? {
            for entry in list.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                var e = Substring(entry)
                if e.hasPrefix("{"), let close = e.firstIndex(of: "}") { e = e[e.index(after: close)...] }
                if e.hasPrefix("unix:") { return String(e.dropFirst(5)) }
                if e.hasPrefix("/") { return String(e) }
            }
            return nil
        }
        if let server, !server.isEmpty { return unixEntry(server) }
        if let env = environment["PULSE_SERVER"], !env.isEmpty { return unixEntry(env) }
        if let runtime = environment["PULSE_RUNTIME_PATH"], !runtime.isEmpty { return runtime + "/native" }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty { return xdg + "/pulse/native" }
        return nil
    }

    /// Whether a PulseAudio-compatible server answers at `server` (nil: the default server) within
    /// `timeout` seconds. Never autospawns a server and never blocks longer than `timeout`
    /// (plus a few milliseconds). Thread-safe; blocks the caller.
    public static func isServerAvailable(server: String? = nil, timeout: Double = 1.5) -> Bool {
        guard let ml = pa_mainloop_new() else { return false }
        defer { pa_mainloop_free(ml) }
        guard let ctx = pa_context_new(pa_mainloop_get_api(ml), "Tonearm probe") else { return false }
        defer { pa_context_unref(ctx) }
        guard pa_context_connect(ctx, server, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else { return false }
        defer { pa_context_disconnect(ctx) }
        let deadline = monotonicNanoseconds() + UInt64(max(timeout, 0) * 1e9)
        while true {
            let state = pa_context_get_state(ctx)
            if state == PA_CONTEXT_READY { return true }
            if tonearm_pa_context_is_good(state) == 0 { return false }
            let now = monotonicNanoseconds()
            if now >= deadline { return false }
            let waitMicros = Int32(min((deadline - now) / 1000, 50_000))
            if pa_mainloop_prepare(ml, waitMicros) < 0 || pa_mainloop_poll(ml) < 0 || pa_mainloop_dispatch(ml) < 0 {
                return false
            }
        }
    }
}

/// One question "does the sink the stream was on still exist?" in flight (see
/// `PulseOutput.streamMoved`); retained by the request until its last callback.
/// One pending read of the stream's sink (``PulseOutput/checkSink(of:)``); holds its owner weakly.
///
/// `@unchecked Sendable`: immutable but for the weak `owner`, and used on the mainloop thread only.
private final class SinkCheck: @unchecked Sendable {
    weak var owner: PulseOutput?
    let index: UInt32
    init(owner: PulseOutput, index: UInt32) {
        self.owner = owner
        self.index = index
    }
}

/// `@unchecked Sendable`: created with the mainloop lock held and then used by the mainloop
/// thread's callbacks alone (`found` included).
private final class RemovalCheck: @unchecked Sendable {
    let owner: PulseOutput
    let previous: String
    let current: String
    var found = false
    init(owner: PulseOutput, previous: String, current: String) {
        self.owner = owner
        self.previous = previous
        self.current = current
    }
}

/// The timing a ``PulseOutput`` publishes for readers on any thread: frames played and latency
/// as of an instant on the monotonic clock, and whether the clock is moving (playing, not corked).
/// One writer at a time (the mainloop thread, or a control call holding the mainloop lock), any
/// number of readers; a sequence lock over atomics, so that a reader never blocks the writer —
/// it retries the rare read that overlapped a write.
final class TimingSnapshot: Sendable {
    private let sequence = Atomic<UInt64>(0)
    private let framesAt = Atomic<Int64>(0)
    private let instant = Atomic<UInt64>(0)
    private let latency = Atomic<Int64>(0)
    private let moving = Atomic<Bool>(false)
    private let limitFrames = Atomic<Int64>(0)
    private let rateBits = Atomic<UInt64>(Double(48_000).bitPattern)
    /// The largest value `framesNow` returned since the last publish that went backwards (keeps
    /// the reported clock monotonic across readers).
    private let reported = Atomic<Int64>(0)

    /// Writer: frames played at this instant, the latency, whether frames advance, how far they
    /// can advance (the frames written), the sample rate.
    func publish(frames: Int64, at instant: UInt64, latencyMicros: Int64, advancing: Bool, limit: Int64, rate: Double,
                 newStream: Bool = false) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        framesAt.store(frames, ordering: .relaxed)
        self.instant.store(instant, ordering: .relaxed)
        latency.store(latencyMicros, ordering: .relaxed)
        moving.store(advancing, ordering: .relaxed)
        limitFrames.store(limit, ordering: .relaxed)
        rateBits.store(rate.bitPattern, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
        if newStream { reported.store(0, ordering: .relaxed) }  // a new stream starts from 0
    }

    /// Writer: adds `extra` microseconds to the published latency (frames about to be queued),
    /// leaving the rest as it is.
    func raiseLatency(byMicros extra: Int64) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        latency.store(latency.load(ordering: .relaxed) &+ extra, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    private struct Values {
        var frames: Int64
        var instant: UInt64
        var latency: Int64
        var moving: Bool
        var limit: Int64
        var rate: Double
    }

    /// A consistent set of the published values (retries while a write overlaps).
    private func read() -> Values {
        while true {
            let s1 = sequence.load(ordering: .acquiring)
            let v = Values(frames: framesAt.load(ordering: .relaxed), instant: instant.load(ordering: .relaxed),
                           latency: latency.load(ordering: .relaxed), moving: moving.load(ordering: .relaxed),
                           limit: limitFrames.load(ordering: .relaxed),
                           rate: Double(bitPattern: rateBits.load(ordering: .relaxed)))
            atomicMemoryFence(ordering: .acquiring)
            let s2 = sequence.load(ordering: .relaxed)
            if s1 == s2 && s1 & 1 == 0 { return v }
        }
    }

    /// The latency (microseconds) and the instant (CLOCK_MONOTONIC ns) it was published for, as
    /// one consistent pair.
    func reading() -> (latencyMicros: Int64, instant: UInt64) {
        let v = read()
        return (v.latency, v.instant)
    }

    /// The frames written as last published (how far the count may move).
    var limit: Int64 { read().limit }

    /// Frames played as last published.
    var frames: Int64 { read().frames }
    /// The latency as last published, in microseconds.
    var latencyMicros: Int64 { read().latency }

    /// Frames played now: the published count moved on by the time since it was published.
    func framesNow() -> Int64 {
        let v = read()
        var f = v.frames
        if v.moving && v.frames < v.limit {
            let now = monotonicNanoseconds()
            let elapsed = now > v.instant ? now - v.instant : 0
            f += Int64(Double(elapsed) * v.rate / 1e9)
            f = min(f, v.limit)
        }
        // Never backwards, whichever reader asks (a newer publish may be a little behind an
        // earlier reading's extrapolation).
        var current = reported.load(ordering: .relaxed)
        while f > current {
            let (exchanged, original) = reported.compareExchange(expected: current, desired: f, ordering: .relaxed)
            if exchanged { return f }
            current = original
        }
        return current
    }
}
