// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmOutput
import TonearmTestSupport

/// A sine on every channel, optionally ending after `totalFrames`. Counts what it rendered and
/// notes any render that arrives after `markStopped()` (a driver breaking its stop contract).
/// Tests wait on its ``progress`` (``waitFor(renderCallsAbove:timeout:)`` and the like), which
/// every render updates: a signal, not a poll.
final class SineSource: AudioRenderSource, @unchecked Sendable {
    /// What the source has rendered so far.
    struct Progress: Sendable {
        var renderCalls = 0
        var renderedFrames = 0
        var ended = false
    }

    let frequency: Double
    let amplitude: Float
    let channels: Int
    let sampleRate: Double
    let totalFrames: Int?
    private var frame = 0 // render thread only
    /// Updated at the end of every render. Its lock is taken in `render`, which the product's
    /// realtime contract forbids; this is test code, where waking the test matters more, and
    /// the lock is only ever held for a few instructions.
    let progress = Watched(Progress())
    let offlineCalls = Atomic<Int>(0)
    let callsAfterStop = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    /// When set, the render that reaches this many frames blocks until ``release()``: an offline
    /// driver pulling a never-ending source then cannot run ahead (to gigabytes) while a test on a
    /// busy machine waits to be scheduled.
    let holdAfterFrames: Int?
    private let gate = DispatchSemaphore(value: 0)
    private let held = Atomic<Bool>(false)

    init(frequency: Double = 440, amplitude: Float = 0.5, channels: Int = 2, sampleRate: Double = 48_000,
         seconds: Double? = nil, holdAfterFrames: Int? = nil) {
        self.holdAfterFrames = holdAfterFrames
        self.frequency = frequency
        self.amplitude = amplitude
        self.channels = channels
        self.sampleRate = sampleRate
        totalFrames = seconds.map { Int($0 * sampleRate) }
    }

    /// Lets a render held by `holdAfterFrames` return (at most once).
    func release() { gate.signal() }

    func markStopped() { stopped.store(true, ordering: .sequentiallyConsistent) }
    var renderCalls: Int { progress.value.renderCalls }
    var renderedFrames: Int { progress.value.renderedFrames }
    var hasEnded: Bool { progress.value.ended }

    /// Waits until more than `calls` renders have completed; false after `timeout` seconds.
    func waitFor(renderCallsAbove calls: Int, timeout: Double = 5) async -> Bool {
        await progress.wait(timeout: timeout) { $0.renderCalls > calls }
    }

    /// Waits until at least `frames` frames of audio have been rendered; false after `timeout` seconds.
    func waitFor(renderedFramesAtLeast frames: Int, timeout: Double = 5) async -> Bool {
        await progress.wait(timeout: timeout) { $0.renderedFrames >= frames }
    }

    /// Waits until the source has rendered its last frame; false after `timeout` seconds.
    func waitUntilEnded(timeout: Double = 5) async -> Bool {
        await progress.wait(timeout: timeout) { $0.ended }
    }

    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        if stopped.load(ordering: .sequentiallyConsistent) { callsAfterStop.add(1, ordering: .relaxed) }
        if timing == .offline { offlineCalls.add(1, ordering: .relaxed) }
        let n = totalFrames.map { max(0, min(frameCount, $0 - frame)) } ?? frameCount
        let w = 2 * Double.pi * frequency / sampleRate
        for i in 0..<frameCount {
            let v: Float = i < n ? amplitude * Float(sin(w * Double(frame + i))) : 0
            for c in 0..<channels { buffer[i * channels + c] = v }
        }
        frame += n
        let ended = totalFrames.map { frame >= $0 } ?? false
        progress.update {
            $0.renderCalls += 1
            $0.renderedFrames += n
            $0.ended = ended
        }
        if let hold = holdAfterFrames, frame >= hold, !held.load(ordering: .relaxed) {
            held.store(true, ordering: .relaxed)
            gate.wait()
        }
        return RenderResult(framesRendered: n, ended: ended)
    }
}

/// Waits until `out.framesPlayed` reaches `frames`, for at most `timeout` seconds. A device's
/// play position has no callback, but a device asks for audio as it plays: every render of
/// `source` (which the driver must be pulling from) is the signal to read the position again.
/// No sleeping between looks; the timeout is only a deadline.
///
/// The position is therefore seen up to one request interval late. Right after a stream starts
/// on the private server's idle null sink, that interval is about 2 s (the sink renders one long
/// block before it adopts the stream's latency), hence the default timeout of 10 s.
func waitUntilPlayed(_ out: some AudioOutputDriver, atLeast frames: Int64, pulling source: SineSource,
                     timeout: Double = 10) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    while true {
        let calls = source.renderCalls // before the look, so a render in between is not missed
        if out.framesPlayed >= frames { return true }
        let left = (deadline - ContinuousClock.now) / .seconds(1)
        if left <= 0 { return false }
        _ = await source.waitFor(renderCallsAbove: calls, timeout: left)
    }
}

/// Deterministic pseudo-random samples in -1..<1 (a 32-bit LCG), ending after `totalFrames`.
final class NoiseSource: AudioRenderSource, @unchecked Sendable {
    let channels: Int
    let totalFrames: Int
    private var state: UInt32 = 12345
    private var frame = 0
    let offlineCalls = Atomic<Int>(0)
    let realtimeCalls = Atomic<Int>(0)

    init(channels: Int, totalFrames: Int) {
        self.channels = channels
        self.totalFrames = totalFrames
    }

    /// The samples the source produces, interleaved.
    static func expected(channels: Int, totalFrames: Int) -> [Float] {
        var state: UInt32 = 12345
        return (0..<(channels * totalFrames)).map { _ in next(&state) }
    }

    static func next(_ s: inout UInt32) -> Float {
        s = s &* 1_664_525 &+ 1_013_904_223
        return Float(Int32(bitPattern: s)) / 2_147_483_648
    }

    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        if timing == .offline { offlineCalls.add(1, ordering: .relaxed) } else { realtimeCalls.add(1, ordering: .relaxed) }
        let n = max(0, min(frameCount, totalFrames - frame))
        for i in 0..<(n * channels) { buffer[i] = Self.next(&state) }
        for i in (n * channels)..<(frameCount * channels) { buffer[i] = 0 }
        frame += n
        return RenderResult(framesRendered: n, ended: frame >= totalFrames)
    }
}

/// Collects a driver's events; `wait(for:)` returns true as soon as a matching event has arrived
/// (before or after the call), false after the timeout.
final class EventRecorder: Sendable {
    private let received = Watched<[AudioOutputEvent]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<AudioOutputEvent>) {
        let r = received
        task = Task { for await e in stream { r.update { $0.append(e) } } }
    }

    deinit { task.cancel() }

    var events: [AudioOutputEvent] { received.value }

    func wait(timeout: Double = 5, for match: @escaping @Sendable (AudioOutputEvent) -> Bool) async -> Bool {
        await received.wait(timeout: timeout) { $0.contains(where: match) }
    }

    /// Waits until the events received so far satisfy `condition`; false after `timeout` seconds.
    func waitForAll(timeout: Double = 5, until condition: @escaping @Sendable ([AudioOutputEvent]) -> Bool) async -> Bool {
        await received.wait(timeout: timeout, until: condition)
    }
}
