// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// The header of one block of audio in a ``PCMBlockRing``.
public struct PCMBlockInfo: Sendable, BitwiseCopyable {
    /// The schedule generation the block belongs to. The consumer drops blocks whose generation
    /// is older than the one it plays, so audio decoded before a seek or stop is never heard and
    /// never triggers a stale completion.
    public var generation: UInt64
    /// Where the block's first frame is in the source (in source frames, after trimming), so the
    /// consumer always knows the exact position it is playing.
    public var sourceFrame: AudioFramePosition
    /// Valid frames in the block (0...blockFrames). 0 is allowed for a pure end marker.
    public var frameCount: Int
    /// True on the last block of a generation's stream (or, for a player node, of one scheduled
    /// item): after it, that source has ended.
    public var endOfStream: Bool
    /// Which scheduled item the block belongs to (player nodes number their schedules; 0 otherwise).
    public var sequence: UInt64

    public init(generation: UInt64, sourceFrame: AudioFramePosition, frameCount: Int, endOfStream: Bool,
                sequence: UInt64 = 0) {
        self.generation = generation
        self.sourceFrame = sourceFrame
        self.frameCount = frameCount
        self.endOfStream = endOfStream
        self.sequence = sequence
    }
}

/// A preallocated, lock-free, single-producer single-consumer ring of fixed-size blocks of
/// interleaved Float32 audio, each with a ``PCMBlockInfo`` header. It is how a decoder thread
/// feeds the realtime render thread: the decoder (producer) fills and commits blocks ahead; the
/// render thread (consumer) reads frames out of the oldest block and releases it when drained.
///
/// Nothing here allocates, locks or waits after `init`.
///
/// Contract: one producer thread calls `writableBlock`/`commit`; one consumer thread calls
/// `readableBlock`/`consume`/`release`/`dropAll…`. `availableBlocks`/`freeBlocks` may be read
/// from anywhere as hints.
public final class PCMBlockRing: @unchecked Sendable {
    /// Frames each block holds.
    public let blockFrames: Int
    /// Interleaved channels per frame.
    public let channels: Int
    /// Number of blocks.
    public let blockCount: Int

    private let samples: UnsafeMutablePointer<Float>
    private let infos: UnsafeMutablePointer<PCMBlockInfo>
    private let head = Atomic<Int>(0) // blocks consumed (monotonic); consumer writes
    private let tail = Atomic<Int>(0) // blocks committed (monotonic); producer writes
    /// Frames of the head block already consumed. Consumer only.
    private var readOffset = 0

    /// Creates a ring of `blockCount` blocks of `blockFrames` frames × `channels`.
    public init(blockFrames: Int, channels: Int, blockCount: Int) {
        precondition(blockFrames > 0 && channels > 0 && blockCount > 1, "invalid ring geometry")
        self.blockFrames = blockFrames
        self.channels = channels
        self.blockCount = blockCount
        let n = blockFrames * channels * blockCount
        samples = .allocate(capacity: n)
        samples.initialize(repeating: 0, count: n)
        infos = .allocate(capacity: blockCount)
        infos.initialize(repeating: PCMBlockInfo(generation: 0, sourceFrame: 0, frameCount: 0, endOfStream: false),
                         count: blockCount)
    }

    deinit {
        samples.deallocate()
        infos.deallocate()
    }

    /// Blocks committed and not yet released (a hint from any thread).
    public var availableBlocks: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }
    /// Blocks the producer could fill now (a hint from any thread).
    public var freeBlocks: Int { blockCount - availableBlocks }

    // MARK: Producer

    /// The sample storage of the next free block (`blockFrames * channels` interleaved floats),
    /// or nil when the ring is full. Producer only.
    public func writableBlock() -> UnsafeMutablePointer<Float>? {
        let t = tail.load(ordering: .relaxed)
        if t - head.load(ordering: .acquiring) >= blockCount { return nil }
        return samples + (t % blockCount) * blockFrames * channels
    }

    /// Publishes the block returned by the last `writableBlock()` with its header. Producer only.
    public func commit(_ info: PCMBlockInfo) {
        let t = tail.load(ordering: .relaxed)
        infos[t % blockCount] = info
        tail.store(t + 1, ordering: .releasing)
    }

    // MARK: Consumer

    /// The oldest committed block: its header, its samples starting at the first unread frame, and
    /// how many frames are left in it. Nil when the ring is empty. Consumer only.
    public func readableBlock() -> (info: PCMBlockInfo, samples: UnsafePointer<Float>, remaining: Int, offset: Int)? {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return nil }
        let i = h % blockCount
        let info = infos[i]
        let base = samples + i * blockFrames * channels + readOffset * channels
        return (info, UnsafePointer(base), info.frameCount - readOffset, readOffset)
    }

    /// Marks `frames` frames of the oldest block as read; releases the block when it is drained.
    /// Consumer only.
    public func consume(_ frames: Int) {
        let h = head.load(ordering: .relaxed)
        let info = infos[h % blockCount]
        readOffset += frames
        if readOffset >= info.frameCount { release() }
    }

    /// Releases the oldest block whatever is left in it. Consumer only.
    public func release() {
        readOffset = 0
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return }
        head.store(h + 1, ordering: .releasing)
    }

    /// Releases every block whose generation is below `generation`; stops at the first current one.
    /// Returns how many blocks were dropped. Consumer only.
    @discardableResult
    public func dropBlocks(olderThan generation: UInt64) -> Int {
        var dropped = 0
        while let b = readableBlock(), b.info.generation < generation {
            release()
            dropped += 1
        }
        return dropped
    }
}
