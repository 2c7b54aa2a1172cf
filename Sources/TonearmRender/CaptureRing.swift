// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// A preallocated, lock-free, single-producer single-consumer ring of interleaved Float32 frames
/// of any channel count: how a capture stream's read callback (producer, the PulseAudio
/// mainloop thread) hands what it reads to its one consumer — the recorder's writer thread, an
/// input node's tap thread, or the engine's render thread (an input node in the graph). Nothing
/// here allocates, locks or waits after `init`.
///
/// Contract: one producer calls `write`, one consumer calls `read` and `discard`.
public final class CaptureRing: @unchecked Sendable {
    // @unchecked: `storage` is written by the producer only between its `tail` load and the
    // releasing store, and read by the consumer only below the acquired `tail`.
    public let capacityFrames: Int
    public let channels: Int
    private let storage: UnsafeMutablePointer<Float>
    private let head = Atomic<Int>(0)  // frames read (monotonic); consumer writes
    private let tail = Atomic<Int>(0)  // frames written (monotonic); producer writes

    public init(capacityFrames: Int, channels: Int) {
        precondition(capacityFrames > 0 && channels > 0, "invalid ring geometry")
        self.capacityFrames = capacityFrames
        self.channels = channels
        storage = .allocate(capacity: capacityFrames * channels)
        storage.initialize(repeating: 0, count: capacityFrames * channels)
    }

    deinit { storage.deallocate() }

    /// Frames waiting to be read (a hint from any thread).
    public var availableFrames: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }

    /// Copies up to `frames` frames from `bytes` (interleaved Float32, unaligned allowed), or
    /// writes that many frames of silence when `bytes` is nil. Returns how many fit. Producer only;
    /// real-time safe.
    public func write(_ bytes: UnsafeRawPointer?, frames: Int) -> Int {
        let t = tail.load(ordering: .relaxed)
        let n = min(frames, capacityFrames - (t - head.load(ordering: .acquiring)))
        guard n > 0 else { return 0 }
        let start = t % capacityFrames
        let first = min(n, capacityFrames - start)
        let frameBytes = channels * MemoryLayout<Float>.size
        let dst = UnsafeMutableRawPointer(storage)
        if let bytes {
            (dst + start * frameBytes).copyMemory(from: bytes, byteCount: first * frameBytes)
            if n > first { dst.copyMemory(from: bytes + first * frameBytes, byteCount: (n - first) * frameBytes) }
        } else {
            (storage + start * channels).update(repeating: 0, count: first * channels)
            if n > first { storage.update(repeating: 0, count: (n - first) * channels) }
        }
        tail.store(t + n, ordering: .releasing)
        return n
    }

    /// Copies up to `maxFrames` frames into `buffer`; returns how many. Consumer only.
    public func read(into buffer: UnsafeMutablePointer<Float>, maxFrames: Int) -> Int {
        let h = head.load(ordering: .relaxed)
        let n = min(maxFrames, tail.load(ordering: .acquiring) - h)
        guard n > 0 else { return 0 }
        let start = h % capacityFrames
        let first = min(n, capacityFrames - start)
        buffer.update(from: storage + start * channels, count: first * channels)
        if n > first { (buffer + first * channels).update(from: storage, count: (n - first) * channels) }
        head.store(h + n, ordering: .releasing)
        return n
    }

    /// Drops up to `frames` of the oldest frames; returns how many. Consumer only; real-time safe.
    public func discard(frames: Int) -> Int {
        let h = head.load(ordering: .relaxed)
        let n = min(frames, tail.load(ordering: .acquiring) - h)
        guard n > 0 else { return 0 }
        head.store(h + n, ordering: .releasing)
        return n
    }
}
