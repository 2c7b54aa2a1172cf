// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmOutput

/// A sine on every channel, optionally ending after `totalFrames`. Counts what it rendered and
/// notes any render that arrives after `markStopped()` (a driver breaking its stop contract).
final class SineSource: AudioRenderSource, @unchecked Sendable {
    let frequency: Double
    let amplitude: Float
    let channels: Int
    let sampleRate: Double
    let totalFrames: Int?
    private var frame = 0 // render thread only
    let renderedFrames = Atomic<Int>(0)
    let renderCalls = Atomic<Int>(0)
    let offlineCalls = Atomic<Int>(0)
    let callsAfterStop = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    init(frequency: Double = 440, amplitude: Float = 0.5, channels: Int = 2, sampleRate: Double = 48_000,
         seconds: Double? = nil) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.channels = channels
        self.sampleRate = sampleRate
        totalFrames = seconds.map { Int($0 * sampleRate) }
    }

    func markStopped() { stopped.store(true, ordering: .sequentiallyConsistent) }
    var hasEnded: Bool { totalFrames.map { renderedFrames.load(ordering: .relaxed) >= $0 } ?? false }

    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        if stopped.load(ordering: .sequentiallyConsistent) { callsAfterStop.add(1, ordering: .relaxed) }
        renderCalls.add(1, ordering: .relaxed)
        if timing == .offline { offlineCalls.add(1, ordering: .relaxed) }
        let n = totalFrames.map { max(0, min(frameCount, $0 - frame)) } ?? frameCount
        let w = 2 * Double.pi * frequency / sampleRate
        for i in 0..<frameCount {
            let v: Float = i < n ? amplitude * Float(sin(w * Double(frame + i))) : 0
            for c in 0..<channels { buffer[i * channels + c] = v }
        }
        frame += n
        renderedFrames.add(n, ordering: .relaxed)
        return RenderResult(framesRendered: n, ended: totalFrames.map { frame >= $0 } ?? false)
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
    private final class Box: Sendable {
        struct Waiter {
            let id: Int
            let match: @Sendable (AudioOutputEvent) -> Bool
            let continuation: CheckedContinuation<Bool, Never>
        }
        struct State {
            var events: [AudioOutputEvent] = []
            var waiters: [Waiter] = []
            var nextID = 0
        }
        let state = Mutex(State())

        func add(_ e: AudioOutputEvent) {
            let ready = state.withLock { s -> [Waiter] in
                s.events.append(e)
                let r = s.waiters.filter { $0.match(e) }
                s.waiters.removeAll { $0.match(e) }
                return r
            }
            for w in ready { w.continuation.resume(returning: true) }
        }

        func expire(_ id: Int) {
            let w = state.withLock { s -> Waiter? in
                guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: i)
            }
            w?.continuation.resume(returning: false)
        }
    }

    private let box = Box()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<AudioOutputEvent>) {
        let b = box
        task = Task { for await e in stream { b.add(e) } }
    }

    deinit { task.cancel() }

    var events: [AudioOutputEvent] { box.state.withLock { $0.events } }

    func wait(timeout: Double = 5, for match: @escaping @Sendable (AudioOutputEvent) -> Bool) async -> Bool {
        let b = box
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let id = b.state.withLock { s -> Int? in
                if s.events.contains(where: match) { return nil }
                s.nextID += 1
                s.waiters.append(.init(id: s.nextID, match: match, continuation: c))
                return s.nextID
            }
            guard let id else { c.resume(returning: true); return }
            Task {
                try? await Task.sleep(for: .seconds(timeout))
                b.expire(id)
            }
        }
    }
}

/// Waits until `condition` holds, checking every few milliseconds, for at most `timeout` seconds.
/// Returns whether it held.
func waitUntil(timeout: Double = 5, _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try condition()
}
