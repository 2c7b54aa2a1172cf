// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization
import TonearmCore
import TonearmRender

/// Peak and mean-square levels of one render call, first eight channels (for metering).
package struct MeterSnapshot: Sendable, BitwiseCopyable {
    package static let maxChannels = 8
    package var peak: (Float, Float, Float, Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0, 0, 0, 0)
    package var meanSquare: (Float, Float, Float, Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0, 0, 0, 0)
    package var frames: Int = 0
}

/// The realtime half of a player: it pulls blocks of decoded audio out of a ``PCMBlockRing``,
/// applies gain (with ramps for fades) and pan, and writes the output. It is the
/// ``AudioRenderSource`` an output driver calls.
///
/// Threading: `render` runs on the driver's render thread. It allocates nothing, takes no lock
/// and never waits when timing is `.realtime` (with `.offline` timing it waits for the decoder).
/// The control plane talks to it through `commands` (one producer: the owning player, under
/// its own lock) and reads `events`, `meters` and the atomic counters. The generation is not a
/// command: a player asks for one with ``requestGeneration(_:startFrame:)``, a node through
/// ``nodeState``, so that a full queue can never lose a switch. A player node does not
/// send its run state and generation as commands: it publishes them in ``nodeState`` (see there).
///
/// `@unchecked Sendable`: the `private var`s belong to the render thread; everything the other
/// threads touch is a `let` queue, semaphore or atomic.
package final class StreamRenderer: AudioRenderSource, @unchecked Sendable {
    package let ring: PCMBlockRing
    package let channels: Int
    package let commands = SPSCQueue<RenderCommand>(capacity: 128)
    package let events = SPSCQueue<RenderEvent>(capacity: 512)
    package let meters = SPSCQueue<MeterSnapshot>(capacity: 64)
    /// Signalled after events are posted (the player's event thread waits on it).
    package let eventSignal = DispatchSemaphore(value: 0)
    /// Signalled after a block is released (the decoder thread waits on it for space).
    package let spaceSignal: DispatchSemaphore
    /// Signalled by the decoder after a block is committed (offline rendering waits on it).
    package let dataSignal: DispatchSemaphore

    package let meteringEnabled = Atomic<Bool>(false)
    /// Source frame just after the last frame rendered, and the generation it belongs to.
    package let positionFrame = Atomic<Int64>(0)
    package let positionGeneration = Atomic<UInt64>(0)
    /// The host time (`DispatchTime` uptime nanoseconds) of the render call that last moved
    /// ``positionFrame``: a video clock extrapolates from it between render calls (the position
    /// moves once per output period, which may be a quarter of a second). Stored after the
    /// position, by the render thread, without a lock.
    package let positionHostNanos = Atomic<UInt64>(0)
    /// Frames written to the output since creation (audio and silence).
    package let framesRendered = Atomic<Int64>(0)
    package let underruns = Atomic<Int>(0)
    /// Player-node mode: set by the decoder while it has nothing scheduled (offline rendering then
    /// renders silence instead of waiting for data that will not come).
    package let idle = Atomic<Bool>(true)

    /// Player-node mode: the node's generation and run state in one word, `generation << 1 |
    /// running`, stored by the node under its producer lock and read at the start of every
    /// render call. A word instead of commands: the newest state replaces an older one, so
    /// nothing is dropped when the render thread has not run for a while (a full command queue)
    /// and the order of two callers can never invert (a stop's generation overtaken by an older
    /// one). Ignored unless `continuesAfterItems`.
    package let nodeState = Atomic<UInt64>(0)
    /// Player mode (not a node): the newest generation asked for, and the frame it starts at
    /// (stored before it). A word instead of a command, for the reason ``nodeState`` is one: a
    /// storm of seeks cannot overflow the command queue and lose a switch (the renderer would
    /// then wait for a generation that never comes). Set through ``requestGeneration(_:startFrame:)``.
    private let requestedGeneration = Atomic<UInt64>(0)
    private let requestedStart = Atomic<Int64>(0)

    /// Control plane (the owning player, one thread at a time): point the renderer at generation
    /// `g` (greater than any asked for before) starting at `startFrame`. The newest request wins.
    package func requestGeneration(_ g: UInt64, startFrame: AudioFramePosition) {
        requestedStart.store(startFrame, ordering: .releasing)
        requestedGeneration.store(g, ordering: .releasing)
    }

    /// Player-node mode: frames of silence to render before the next audio (`play(at:)`), taken
    /// by the render thread (stored before ``nodeState``, read after it).
    package let nodeDelay = Atomic<Int>(0)

    /// Player-node mode: the end of one item is not the end of the stream; the renderer reports
    /// it and goes on with the next item (silence, without counting underruns, while idle).
    package let continuesAfterItems: Bool
    /// Player-node mode, render thread: the last call played the end of the last item scheduled.
    package private(set) var allItemsEnded = false
    /// Render thread: an item ended and nothing followed it yet (the end of everything, once
    /// the decoder is idle).
    private var itemEndPending = false

    // Render-thread state.
    private var generation: UInt64 = 0
    private var running = false
    private var ended = false
    private var awaitingFirstBlock = true
    /// A starvation has been reported and no audio has flowed since.
    private var starvedReported = false
    private var gain: Float = 1
    private var gainTarget: Float = 1
    private var gainStep: Float = 0
    private var rampLeft = 0
    private var panLeft: Float = 1
    private var panRight: Float = 1
    private var delayLeft = 0

    package init(ring: PCMBlockRing, spaceSignal: DispatchSemaphore, dataSignal: DispatchSemaphore,
                 continuesAfterItems: Bool = false) {
        self.continuesAfterItems = continuesAfterItems
        self.ring = ring
        self.channels = ring.channels
        self.spaceSignal = spaceSignal
        self.dataSignal = dataSignal
    }

    private func post(_ e: RenderEvent) {
        events.push(e)
        eventSignal.signal()
    }

    private func switchGeneration(_ g: UInt64, start: AudioFramePosition) {
        generation = g
        ended = false
        awaitingFirstBlock = true
        starvedReported = false
        positionFrame.store(start, ordering: .relaxed)
        positionGeneration.store(g, ordering: .releasing)
    }

    private func applyCommands() {
        if continuesAfterItems {
            // The word first (acquiring), then the delay stored before it.
            let word = nodeState.load(ordering: .acquiring)
            if word >> 1 != generation { switchGeneration(word >> 1, start: 0) }
            running = word & 1 != 0
            let d = nodeDelay.exchange(0, ordering: .acquiring)
            if d > 0 { delayLeft = d }
        } else {
            // The generation first (acquiring), then its start, stored before it. A start read
            // here may already be a newer request's: the next call then sees that request's
            // generation and switches again, and nothing of the skipped one is played.
            let g = requestedGeneration.load(ordering: .acquiring)
            if g != generation { switchGeneration(g, start: requestedStart.load(ordering: .acquiring)) }
        }
        while let c = commands.pop() {
            switch c {
            case .gain(let target, let frames):
                gainTarget = target
                if frames <= 0 {
                    gain = target
                    rampLeft = 0
                } else {
                    rampLeft = frames
                    gainStep = (target - gain) / Float(frames)
                }
            case .pan(let p):
                let pan = max(-1, min(1, p))
                panLeft = pan > 0 ? 1 - pan : 1
                panRight = pan < 0 ? 1 + pan : 1
            case .delay(let frames):
                delayLeft = max(0, frames)
            case .running(let r):
                running = r
            }
        }
    }

    package func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        applyCommands()
        allItemsEnded = false
        let ch = channels
        var written = 0
        var audioFrames = 0
        if !running || ended {
            buffer.update(repeating: 0, count: frameCount * ch)
            framesRendered.add(Int64(frameCount), ordering: .relaxed)
            return RenderResult(framesRendered: 0, ended: ended)
        }
        if delayLeft > 0 {
            let n = min(delayLeft, frameCount)
            buffer.update(repeating: 0, count: n * ch)
            delayLeft -= n
            written = n
        }
        var snapshot = MeterSnapshot()
        let metering = meteringEnabled.load(ordering: .relaxed)
        while written < frameCount {
            if ring.dropBlocks(olderThan: generation) > 0 { spaceSignal.signal() }
            guard let block = ring.readableBlock() else {
                if timing == .offline && !(continuesAfterItems && idle.load(ordering: .acquiring)) {
                    _ = dataSignal.wait(timeout: .now() + .milliseconds(200))
                    continue
                }
                // Counted only (no event per underrun): the event queue must never fill up and
                // crowd out the end-of-stream event.
                if !awaitingFirstBlock {
                    underruns.add(1, ordering: .relaxed)
                    if !continuesAfterItems && !starvedReported {
                        starvedReported = true
                        post(.starved(generation: generation))
                    }
                }
                break
            }
            if block.info.generation > generation {
                // Data for a generation whose switch command has not arrived yet: wait for it.
                break
            }
            if block.info.generation < generation {
                // An old generation's block committed after the drop above (the decoder checks
                // that its item is current before it fills a block, and commits it after): never
                // played. Read, it wrote a block of audio from ahead of a restart (a queue's
                // ReplayGain restarts under ThreadSanitizer: 1,024 frames from 11,264 on).
                releaseBlock()
                continue
            }
            awaitingFirstBlock = false
            starvedReported = false
            itemEndPending = false
            let n = min(block.remaining, frameCount - written)
            if n > 0 {
                copy(from: block.samples, to: buffer + written * ch, frames: n,
                     metering: metering, snapshot: &snapshot)
                positionFrame.store(block.info.sourceFrame + Int64(block.offset + n), ordering: .relaxed)
                written += n
                audioFrames += n
            }
            let drained = n >= block.remaining
            if drained && block.info.endOfStream {
                releaseBlock()
                if continuesAfterItems {
                    awaitingFirstBlock = true
                    post(.itemEnded(generation: generation, sequence: block.info.sequence))
                    // Nothing more scheduled and nothing left in the ring: everything scheduled
                    // has played (reported once; a later schedule plays on). The decoder may
                    // not have marked itself idle yet: then this is checked again below and in
                    // the next calls.
                    itemEndPending = true
                    if idle.load(ordering: .acquiring) && ring.readableBlock() == nil {
                        allItemsEnded = true
                        itemEndPending = false
                        break
                    }
                    continue
                }
                ended = true
                post(.ended(generation: generation))
                break
            }
            if drained {
                releaseBlock()
            } else {
                ring.consume(n)
            }
        }
        if itemEndPending && !allItemsEnded && idle.load(ordering: .acquiring) && ring.readableBlock() == nil {
            allItemsEnded = true
            itemEndPending = false
        }
        if written < frameCount {
            (buffer + written * ch).update(repeating: 0, count: (frameCount - written) * ch)
        }
        if metering && snapshot.frames > 0 { meters.push(snapshot) }
        // clock_gettime through the vDSO: no lock, no allocation.
        if audioFrames > 0 { positionHostNanos.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing) }
        framesRendered.add(Int64(frameCount), ordering: .relaxed)
        return RenderResult(framesRendered: audioFrames, ended: ended || allItemsEnded)
    }

    /// Releases the oldest block and wakes the decoder when the ring has drained to half: the
    /// decoder then refills in one burst instead of waking for every block.
    private func releaseBlock() {
        ring.release()
        if ring.availableBlocks == ring.blockCount / 2 || ring.availableBlocks == 0 { spaceSignal.signal() }
    }

    /// Copies `frames` interleaved frames applying gain ramp and pan; accumulates meter values.
    private func copy(from src: UnsafePointer<Float>, to dst: UnsafeMutablePointer<Float>, frames: Int,
                      metering: Bool, snapshot: inout MeterSnapshot) {
        let ch = channels
        let stereo = ch == 2
        var i = 0
        while i < frames {
            // Constant-gain run: until the ramp ends or the block ends.
            let run: Int
            let g: Float
            if rampLeft > 0 {
                run = 1
                gain += gainStep
                rampLeft -= 1
                if rampLeft == 0 { gain = gainTarget }
                g = gain
            } else {
                run = frames - i
                g = gain
            }
            let base = i * ch
            if stereo {
                let gl = g * panLeft, gr = g * panRight
                if gl == 1 && gr == 1 {
                    // Unit gain (the usual case): a plain copy, bit for bit what the loop writes.
                    (dst + base).update(from: src + base, count: run * 2)
                    i += run
                    continue
                }
                for f in 0..<run {
                    let o = base + f * 2
                    dst[o] = src[o] * gl
                    dst[o + 1] = src[o + 1] * gr
                }
            } else if g == 1 {
                (dst + base).update(from: src + base, count: run * ch)
            } else {
                for s in base..<(base + run * ch) { dst[s] = src[s] * g }
            }
            i += run
        }
        if metering { accumulateMeters(dst, frames: frames, snapshot: &snapshot) }
    }

    private func accumulateMeters(_ p: UnsafePointer<Float>, frames: Int, snapshot: inout MeterSnapshot) {
        let ch = channels
        let metered = min(ch, MeterSnapshot.maxChannels)
        withUnsafeMutableBytes(of: &snapshot.peak) { peakRaw in
            withUnsafeMutableBytes(of: &snapshot.meanSquare) { msRaw in
                let peaks = peakRaw.bindMemory(to: Float.self)
                let ms = msRaw.bindMemory(to: Float.self)
                let total = Float(snapshot.frames + frames)
                for c in 0..<metered {
                    var pk = peaks[c]
                    var sum: Float = 0
                    var idx = c
                    for _ in 0..<frames {
                        let v = p[idx]
                        let a = abs(v)
                        if a > pk { pk = a }
                        sum += v * v
                        idx += ch
                    }
                    peaks[c] = pk
                    ms[c] = (ms[c] * Float(snapshot.frames) + sum) / total
                }
            }
        }
        snapshot.frames += frames
    }
}
