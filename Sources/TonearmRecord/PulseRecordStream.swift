// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Dispatch
import Synchronization
import TonearmCore
import TonearmOutput

/// One PulseAudio record stream (a source output) on a ``PulseConnection`` of its own: FLOAT32LE,
/// interleaved, at the recording's rate and channel count (the server converts from the source's
/// format), connected corked; ``setCorked(_:)`` starts and pauses it.
///
/// The read callback (the mainloop thread, lock held) copies what the server sends into a
/// preallocated ``CaptureRing`` and wakes the writer (``wakeWriter()``, once per wait), nothing
/// else: no allocation of ours, no I/O, no lock of ours.
/// A hole the server reports (`pa_stream_peek` with no data) is written as that many frames of
/// silence and counted (``holeFrames``); frames that do not fit because the writer fell behind
/// are counted (``droppedFrames``); the server's overflows (it dropped data we did not read in
/// time) are counted (``overflowCount``). With a frame limit (``setLimit(frames:)``) the callback
/// takes exactly that many frames in all, then sets ``limitReached`` and discards the rest.
///
/// Threading: `init`, `setCorked`, `setLimit` and `close` are control-plane calls (one thread
/// at a time, never the mainloop thread); the counters are atomics any thread may read.
final class PulseRecordStream: @unchecked Sendable {
    // @unchecked: `stream` is set in `init` and cleared by `close()`, both with the mainloop lock
    // held; the callbacks run with it held.
    let ring: CaptureRing
    let sampleRate: Int
    let channels: Int
    private let frameBytes: Int
    private let accepted = Atomic<Int64>(0)
    private let limit = Atomic<Int64>(.max)
    private let reached = Atomic<Bool>(false)
    private let holes = Atomic<Int64>(0)
    private let dropped = Atomic<Int64>(0)
    private let overflows = Atomic<Int>(0)
    private let lost = Atomic<Bool>(false)
    private let startNanos = Atomic<UInt64>(0)
    /// While set, the read callback drops what comes (counted in ``droppedFrames``): between a
    /// move to another source and the answer whether the old one is gone.
    private let holding = Atomic<Bool>(false)
    private let inputLost = Atomic<Bool>(false)
    /// The source recorded from now, and the one that went away (mainloop thread writes, any
    /// thread reads).
    private let sources = Mutex<(current: String, lost: String?)>(("", nil))
    /// Why the stream captures no more (the first loss reported), and who to tell (``onLoss(_:)``).
    private let loss = Mutex<(reason: String?, handler: (@Sendable (String) -> Void)?)>((nil, nil))
    private let wakeup = DispatchSemaphore(value: 0)
    private let wakePending = Atomic<Bool>(false)
    private let connection: PulseConnection
    private let closed = Atomic<Bool>(false)
    /// Runs each read callback's work (tests: counts what the capture thread does in it).
    private let readProbe: (@Sendable (() -> Void) -> Void)?
    private var stream: OpaquePointer?

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    private static func from(_ p: UnsafeMutableRawPointer?) -> PulseRecordStream {
        Unmanaged<PulseRecordStream>.fromOpaque(p!).takeUnretainedValue()
    }

    /// Connects to `server` (nil: the default) and opens a corked record stream on `source` (nil:
    /// the server's default source), waiting at most `timeout` seconds for each. Throws
    /// ``AudioRecorderError/sourceUnavailable(source:reason:)`` naming what failed: no server, no
    /// such source, a refused stream.
    /// `readProbe`, when given, runs the work of each read callback (a test's allocation probe).
    init(server: String?, source: String?, sampleRate: Int, channels: Int, ringSeconds: Double = 4,
         timeout: Double = 3, clientName: String = "Tonearm", streamName: String = "Recording",
         readProbe: (@Sendable (() -> Void) -> Void)? = nil) throws {
        self.readProbe = readProbe
        self.sampleRate = sampleRate
        self.channels = channels
        frameBytes = 4 * channels
        ring = CaptureRing(capacityFrames: max(8192, Int(ringSeconds * Double(sampleRate))), channels: channels)
        let what = source.map { "'\($0)'" } ?? "the default source"
        func failure(_ reason: String) -> AudioRecorderError { .sourceUnavailable(source: what, reason: reason) }
        let c: PulseConnection
        do {
            c = try PulseConnection(server: server, serverText: server ?? "the default server", clientName: clientName,
                                    timeout: timeout, driver: "pulse")
        } catch TonearmError.outputUnavailable(_, let reason) {
            throw failure(reason)
        }
        connection = c
        var problem: String?
        c.withLock {
            c.onLost = { [unowned self] reason in
                lost.store(true, ordering: .releasing)
                wakeWriter()
                reportLoss("the connection to the server was lost: \(reason)")
            }
            guard let ctx = c.context else { problem = "no connection"; return }
            var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: UInt8(channels))
            var map = pa_channel_map()
            guard pa_sample_spec_valid(&spec) != 0, pa_channel_map_init_extend(&map, UInt32(channels), PA_CHANNEL_MAP_DEFAULT) != nil else {
                problem = "cannot record \(sampleRate) Hz, \(channels) channels"
                return
            }
            let props = pa_proplist_new()
            pa_proplist_sets(props, tonearm_pa_prop_media_role(), "production")
            pa_proplist_sets(props, tonearm_pa_prop_media_name(), streamName)
            let s = pa_stream_new_with_proplist(ctx, streamName, &spec, &map, props)
            pa_proplist_free(props)
            guard let s else { problem = "cannot create a record stream: \(c.errorText)"; return }
            stream = s
            pa_stream_set_state_callback(s, { s, ud in
                let me = PulseRecordStream.from(ud)
                if let s, tonearm_pa_stream_is_good(pa_stream_get_state(s)) == 0 {
                    me.lost.store(true, ordering: .releasing)
                    me.wakeWriter()
                    me.reportLoss("the server ended the record stream (its source went away)")
                }
                me.connection.signal()
            }, userdata)
            pa_stream_set_read_callback(s, { s, _, ud in
                let me = PulseRecordStream.from(ud)
                if let probe = me.readProbe { probe { me.readAvailable(s) } } else { me.readAvailable(s) }
            }, userdata)
            pa_stream_set_overflow_callback(s, { _, ud in PulseRecordStream.from(ud).overflows.add(1, ordering: .relaxed) }, userdata)
            pa_stream_set_moved_callback(s, { s, ud in PulseRecordStream.from(ud).moved(s) }, userdata)
            // 20 ms fragments: the server sends what the source gives at that pace (and runs a
            // monitored null sink with blocks that small), the writer is never far behind.
            var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
                                      fragsize: UInt32(pa_usec_to_bytes(20_000, &spec)))
            let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_START_CORKED.rawValue)
            if pa_stream_connect_record(s, source, &attr, flags) < 0 {
                problem = "cannot connect the record stream: \(c.errorText)"
                return
            }
            let timedOut = c.wait(atMost: timeout) {
                let state = pa_stream_get_state(s)
                return state == PA_STREAM_READY || tonearm_pa_stream_is_good(state) == 0
            }
            if pa_stream_get_state(s) == PA_STREAM_READY {
                let name = pa_stream_get_device_name(s).map { String(cString: $0) } ?? source ?? ""
                sources.withLock { $0.current = name }
                lost.store(false, ordering: .releasing)
            } else if timedOut && tonearm_pa_stream_is_good(pa_stream_get_state(s)) != 0 {
                problem = "the record stream did not start within \(timeout) s"
            } else if source != nil, pa_context_errno(ctx) == Int32(PA_ERR_NOENTITY.rawValue) {
                problem = "the server has no such source (see `pactl list short sources`)"
            } else {
                problem = "the server refused the record stream: \(c.errorText)"
            }
        }
        if let problem {
            close()
            throw failure(problem)
        }
    }

    deinit { close() }

    /// The read callback (mainloop thread, lock held): everything readable goes into the ring.
    private func readAvailable(_ s: OpaquePointer?) {
        guard let s else { return }
        while true {
            var data: UnsafeRawPointer?
            var bytes = 0
            guard pa_stream_peek(s, &data, &bytes) == 0, bytes > 0 else { return }
            var frames = bytes / frameBytes
            if holding.load(ordering: .acquiring) {
                dropped.add(Int64(frames), ordering: .relaxed)
                pa_stream_drop(s)
                continue
            }
            // A start time (record(atTime:)): the frames captured before it are dropped.
            let start = startNanos.load(ordering: .acquiring)
            if start != 0 {
                let keep = Self.framesCaptured(since: start, of: frames, now: DispatchTime.now().uptimeNanoseconds, rate: sampleRate)
                if keep > 0 { startNanos.store(0, ordering: .releasing) }
                if keep < frames {
                    if let d = data { data = d + (frames - keep) * frameBytes }
                    frames = keep
                }
                if frames == 0 {
                    pa_stream_drop(s)
                    continue
                }
            }
            let done = accepted.load(ordering: .relaxed)
            let end = limit.load(ordering: .relaxed)
            if done + Int64(frames) >= end { frames = Int(max(0, end - done)) }
            if frames > 0 {
                let written = ring.write(data, frames: frames)
                if data == nil { holes.add(Int64(written), ordering: .relaxed) }
                if written < frames { dropped.add(Int64(frames - written), ordering: .relaxed) }
                accepted.add(Int64(written), ordering: .releasing)
            }
            if done + Int64(frames) >= end { reached.store(true, ordering: .releasing) }
            pa_stream_drop(s)
            wakeWriter()
        }
    }

    /// The server moved the stream to another source (mainloop thread, lock held): when it did so
    /// because the source went away (a USB microphone unplugged; the server rescues the stream
    /// to its default source), recording from a microphone nobody chose must not go on: what
    /// comes is dropped until the server answers whether the old source is still there; if it is
    /// gone the stream is corked and ``takeInputLost()`` says so; if not (a user moved it) the
    /// recording goes on from the new source.
    private func moved(_ s: OpaquePointer?) {
        guard let s, let ctx = connection.context else { return }
        let new = pa_stream_get_device_name(s).map { String(cString: $0) } ?? ""
        let old = sources.withLock { state in
            let old = state.current
            state.current = new
            return old
        }
        guard !old.isEmpty, old != new else { return }
        holding.store(true, ordering: .releasing)
        pendingLost = old
        let op = pa_context_get_source_info_by_name(ctx, old, { _, info, eol, ud in
            let me = PulseRecordStream.from(ud)
            if info != nil {
                // Still there: a user moved the stream; record on from the new source.
                me.pendingLost = nil
                me.holding.store(false, ordering: .releasing)
            } else if eol != 0, let lost = me.pendingLost {
                // No such source (the server's error), or the answer ended without it: gone.
                me.pendingLost = nil
                me.sources.withLock { $0.lost = lost }
                if let s = me.stream, let op = pa_stream_cork(s, 1, nil, nil) { pa_operation_unref(op) }
                me.inputLost.store(true, ordering: .releasing)
                me.wakeWriter()
                me.reportLoss("the source '\(lost)' went away (the server moved the stream to another source, which nobody chose)")
            }
        }, userdata)
        if let op { pa_operation_unref(op) }
    }

    /// Notes the first loss and tells the handler (mainloop thread; a loss, not the steady
    /// capture: the handler may allocate, it must not block).
    private func reportLoss(_ reason: String) {
        let handler = loss.withLock { state -> (@Sendable (String) -> Void)? in
            guard state.reason == nil else { return nil }
            state.reason = reason
            return state.handler
        }
        handler?(reason)
    }

    /// Why the stream captures no more (its source went away, the stream or the connection
    /// failed); nil while it captures. Any thread.
    var lossReason: String? { loss.withLock { $0.reason } }

    /// Calls `handler` once with the reason when the stream captures no more — on the mainloop
    /// thread, which it must not block —, at once (on the caller's thread) when it already does not.
    func onLoss(_ handler: @escaping @Sendable (String) -> Void) {
        let already = loss.withLock { state -> String? in
            if state.reason == nil { state.handler = handler }
            return state.reason
        }
        if let already { handler(already) }
    }

    /// The source whose removal is being checked (mainloop thread only).
    private var pendingLost: String?

    /// Whether the source recorded from went away since the last call (the stream is corked
    /// then; ``setCorked(_:)`` with false records on from the server's choice), and its name.
    func takeInputLost() -> String? {
        guard inputLost.exchange(false, ordering: .acquiringAndReleasing) else { return nil }
        return sources.withLock { $0.lost }
    }

    /// The source the stream records from (the server's name for it), once connected; after a
    /// move, the new one.
    var currentSourceName: String { sources.withLock { $0.current } }

    /// How many of the last `frames` frames a read brings were captured at or after `start`
    /// (nanoseconds on the `DispatchTime` uptime clock), taking the last one as captured `now`
    /// and the others a frame period apart before it. Pure; real-time safe.
    static func framesCaptured(since start: UInt64, of frames: Int, now: UInt64, rate: Int) -> Int {
        guard now >= start else { return 0 }
        let elapsed = Double(now - start) * Double(rate) / 1e9
        return elapsed >= Double(frames - 1) ? frames : Int(elapsed.rounded(.down)) + 1
    }

    /// Keeps only what is captured from `uptimeNanoseconds` on (the `DispatchTime` uptime clock:
    /// ``AudioRecorder/deviceCurrentTime``'s) until that time comes; 0 keeps everything.
    /// Control plane.
    func setStart(uptimeNanoseconds: UInt64) {
        startNanos.store(uptimeNanoseconds, ordering: .releasing)
    }

    /// Wakes the writer (``waitForData(timeout:)``): one signal for any number of calls until it
    /// wakes. Real-time safe (an atomic exchange and, when it sleeps, a futex wake); any thread.
    func wakeWriter() {
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) { wakeup.signal() }
    }

    /// The writer's wait: returns when the read callback put frames in the ring, the stream was
    /// lost or ``wakeWriter()`` was called since the last return, or after `timeout` seconds.
    /// Writer thread only.
    func waitForData(timeout: Double) {
        _ = wakeup.wait(timeout: .now() + timeout)
        wakePending.store(false, ordering: .releasing)
    }

    /// Frames put in the ring since the stream opened (silence for holes included).
    var acceptedFrames: Int64 { accepted.load(ordering: .acquiring) }
    /// Frames of silence written for holes the server reported.
    var holeFrames: Int64 { holes.load(ordering: .relaxed) }
    /// Frames lost because the ring was full (the writer fell behind).
    var droppedFrames: Int64 { dropped.load(ordering: .relaxed) }
    /// Times the server reported that it dropped data we had not read.
    var overflowCount: Int { overflows.load(ordering: .relaxed) }
    /// Whether the frame limit has been taken in full.
    var limitReached: Bool { reached.load(ordering: .acquiring) }
    /// Whether the stream or the connection failed (the source went away, the server too).
    var isLost: Bool { lost.load(ordering: .acquiring) }

    /// Takes `frames` frames in all since the stream opened, then no more (nil: no limit).
    /// Control plane.
    func setLimit(frames: Int64?) {
        limit.store(frames ?? .max, ordering: .relaxed)
        reached.store(accepted.load(ordering: .relaxed) >= (frames ?? .max), ordering: .releasing)
    }

    /// Corks or uncorks the stream and waits (at most 2 s) for the server's answer: once corked,
    /// every frame the server sent before is in the ring. Control plane. Throws when the stream
    /// is gone.
    func setCorked(_ corked: Bool) throws {
        let c = connection
        guard !closed.load(ordering: .acquiring) else { throw TonearmError.invalidState("the record stream is closed") }
        try c.withLock {
            guard let s = stream, pa_stream_get_state(s) == PA_STREAM_READY else {
                throw TonearmError.outputUnavailable(driver: "pulse", reason: "the record stream is gone: \(c.errorText)")
            }
            guard let op = pa_stream_cork(s, corked ? 1 : 0, { _, _, ud in PulseRecordStream.from(ud).connection.signal() },
                                          userdata) else {
                throw TonearmError.outputUnavailable(driver: "pulse", reason: "cannot \(corked ? "pause" : "start") the record stream: \(c.errorText)")
            }
            c.finish(op, atMost: 2)
            if !corked { holding.store(false, ordering: .releasing) }
        }
    }

    /// Disconnects the stream and the connection; no callback runs once it returns. Idempotent.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection.close { [self] in
            if let s = stream {
                pa_stream_set_state_callback(s, nil, nil)
                pa_stream_set_read_callback(s, nil, nil)
                pa_stream_set_overflow_callback(s, nil, nil)
                pa_stream_set_moved_callback(s, nil, nil)
                if tonearm_pa_stream_is_good(pa_stream_get_state(s)) != 0 { pa_stream_disconnect(s) }
                pa_stream_unref(s)
                stream = nil
            }
        }
    }
}
