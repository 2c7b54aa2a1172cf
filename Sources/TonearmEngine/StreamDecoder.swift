// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCore
import TonearmDSP

/// The decoding half of a player: a thread of its own that reads a ``PlaybackSource`` ahead of
/// playback and commits blocks to a ``PCMBlockRing`` for the render thread.
///
/// Threading: `schedule`, `shutdown` are called from the control plane (the owning player, under
/// its lock). The decoder thread itself calls only the source and the ring's producer side. It
/// sleeps on `wake` when the ring is full or the stream has ended; the render thread signals
/// `wake` when it frees a block and the control plane when it schedules.
///
/// `@unchecked Sendable`: requests are under its lock; the source, the converter and the
/// stretcher are used by the decoder thread alone once it runs; `start`/`shutdown` come from
/// the one owning control thread.
package final class StreamDecoder: @unchecked Sendable {
    /// What the control plane asks the decoder to produce.
    package struct Request: Sendable {
        package var generation: UInt64
        package var startFrame: AudioFramePosition
        /// Further passes after this one: 0 = play once, N, or -1 = forever.
        package var loops: Int
        /// Optional end frame (exclusive) of the stream for this request.
        package var endFrame: AudioFramePosition?
        /// Playback rate with pitch kept (1 = as recorded). Other rates go through a ``TimeStretcher``.
        package var rate: Double = 1

        package init(generation: UInt64, startFrame: AudioFramePosition, loops: Int,
                     endFrame: AudioFramePosition?, rate: Double = 1) {
            self.generation = generation
            self.startFrame = startFrame
            self.loops = loops
            self.endFrame = endFrame
            self.rate = rate
        }
    }

    private struct Shared {
        var request: Request?
        /// A new count of further passes for the request being decoded (set while playing).
        var loopsUpdate: Int?
        var shutdown = false
    }

    private let source: any PlaybackSource
    private let ring: PCMBlockRing
    package let wake: DispatchSemaphore
    private let dataSignal: DispatchSemaphore
    private let shared = Mutex(Shared())
    private let onWarnings: @Sendable ([AudioWarning]) -> Void
    private let onError: @Sendable (any Error) -> Void
    private let onPositioned: (@Sendable (UInt64) -> Void)?
    private var thread: Thread?
    private let exited = DispatchSemaphore(value: 0)

    /// `onPositioned` is called on the decoder thread when a request's generation has been
    /// positioned in the source (where a seek has landed; its audio follows), or has failed to be
    /// (its end follows). Not when its first block is committed: while the renderer is paused
    /// the ring may still be full of the previous generation's blocks.
    package init(source: any PlaybackSource, ring: PCMBlockRing, wake: DispatchSemaphore, dataSignal: DispatchSemaphore,
         onWarnings: @escaping @Sendable ([AudioWarning]) -> Void,
         onError: @escaping @Sendable (any Error) -> Void,
         onPositioned: (@Sendable (UInt64) -> Void)? = nil) {
        self.onPositioned = onPositioned
        self.source = source
        self.ring = ring
        self.wake = wake
        self.dataSignal = dataSignal
        self.onWarnings = onWarnings
        self.onError = onError
    }

    /// Starts the decoder thread, named `name` (at most 15 bytes are kept). Control plane, once.
    package func start(name: String) {
        let t = Thread { [self] in
            nameCurrentThread(name)
            raiseCurrentThreadPriority(.decoder, name: name)
            self.loop()
        }
        t.name = name
        t.qualityOfService = .userInitiated
        thread = t
        t.start()
    }

    /// Asks for `request` to be decoded from now on (replacing any earlier one). Control plane.
    package func schedule(_ request: Request) {
        shared.withLock { $0.request = request }
        wake.signal()
    }

    /// Changes how many further passes follow the current one, for the request being decoded.
    /// Control plane.
    package func updateLoops(_ loops: Int) {
        shared.withLock {
            $0.loopsUpdate = loops
            $0.request?.loops = loops  // for a request the thread has not picked up yet
        }
        wake.signal()
    }

    /// Stops the thread and waits for it to exit. Control plane. Idempotent.
    package func shutdown() {
        let wasRunning = shared.withLock { s -> Bool in
            let r = !s.shutdown
            s.shutdown = true
            return r
        }
        guard wasRunning, thread != nil else { return }
        wake.signal()
        exited.wait()
    }

    // MARK: Decoder thread

    private func loop() {
        var producing: UInt64 = .max
        var position: AudioFramePosition = 0
        var loopsLeft = 0
        var endFrame: AudioFramePosition? = nil
        var startFrame: AudioFramePosition = 0
        var finished = true
        var rate = 1.0
        var stretcher: TimeStretcher?
        let length = source.frameLength
        let blockFrames = ring.blockFrames
        let ch = ring.channels
        while true {
            let (request, stop, loopsUpdate) = shared.withLock { s in
                let u = s.loopsUpdate
                s.loopsUpdate = nil
                return (s.request, s.shutdown, u)
            }
            if stop { break }
            if let l = loopsUpdate, request?.generation == producing {
                loopsLeft = l
                // A stream that had ended may go on: only when its end has not been committed yet.
            }
            if let r = request, r.generation != producing {
                producing = r.generation
                startFrame = min(max(0, r.startFrame), length)
                position = startFrame
                loopsLeft = r.loops
                endFrame = r.endFrame
                rate = r.rate
                finished = false
                if rate != 1 {
                    if stretcher == nil {
                        stretcher = TimeStretcher(sampleRate: source.sourceFormat.sampleRate,
                                                  channels: ch, maxFrames: blockFrames)
                    }
                    stretcher?.reset(rate: rate)
                }
                do { try source.seek(toFrame: position) } catch {
                    onError(error)
                    finished = true
                    onPositioned?(producing)
                    commitEnd(generation: producing, at: position)
                    continue
                }
                onPositioned?(producing)
            }
            if finished {
                wake.wait()
                continue
            }
            guard let block = ring.writableBlock() else {
                _ = wake.wait(timeout: .now() + .milliseconds(500))
                continue
            }
            if rate != 1, let st = stretcher {
                // Time-stretched: positions are mapped back to the source through the rate.
                let before = st.framesProduced
                let produced = st.render(into: block, frameCount: blockFrames) { buf, want in
                    var n = want
                    if let e = endFrame { n = Int(min(AudioFramePosition(n), max(0, e - position))) }
                    var got = n > 0 ? ((try? source.readInterleaved(into: buf, frameCount: n)) ?? 0) : 0
                    if got == 0 && loopsLeft != 0 && length > 0 {
                        if loopsLeft > 0 { loopsLeft -= 1 }
                        try? source.seek(toFrame: 0)
                        position = 0
                        got = (try? source.readInterleaved(into: buf, frameCount: want)) ?? 0
                    }
                    position += AudioFramePosition(got)
                    return got
                }
                let mapped = startFrame + AudioFramePosition((Double(before) * rate).rounded())
                let blockStart = length > 0 ? mapped % length : 0
                let ended = produced < blockFrames
                ring.commit(PCMBlockInfo(generation: producing, sourceFrame: blockStart, frameCount: produced,
                                         endOfStream: ended))
                dataSignal.signal()
                if ended { finished = true }
                let warnings = source.takeWarnings()
                if !warnings.isEmpty { onWarnings(warnings) }
                continue
            }
            // Fill one block, looping back to the start as many times as asked.
            var filled = 0
            var reachedEnd = false
            var blockStart = position
            while filled < blockFrames {
                var want = blockFrames - filled
                if let e = endFrame { want = Int(min(AudioFramePosition(want), max(0, e - position))) }
                var got = 0
                if want > 0 {
                    do { got = try source.readInterleaved(into: block + filled * ch, frameCount: want) } catch {
                        onError(error)
                        got = 0
                    }
                }
                filled += got
                position += AudioFramePosition(got)
                if got > 0 { continue }
                // End of this pass.
                if loopsLeft != 0 {
                    if loopsLeft > 0 { loopsLeft -= 1 }
                    if filled > 0 {
                        // Publish what we have; the next block starts at the loop point.
                        break
                    }
                    do { try source.seek(toFrame: 0) } catch { onError(error) }
                    position = 0
                    blockStart = 0
                    if length == 0 { reachedEnd = true; break }
                    continue
                }
                reachedEnd = true
                break
            }
            let reachedLoopPoint = !reachedEnd && filled < blockFrames
            ring.commit(PCMBlockInfo(generation: producing, sourceFrame: blockStart, frameCount: filled,
                                     endOfStream: reachedEnd))
            dataSignal.signal()
            if reachedLoopPoint {
                do { try source.seek(toFrame: 0) } catch { onError(error) }
                position = 0
            }
            if reachedEnd { finished = true }
            let warnings = source.takeWarnings()
            if !warnings.isEmpty { onWarnings(warnings) }
        }
        exited.signal()
    }

    private func commitEnd(generation: UInt64, at position: AudioFramePosition) {
        while ring.writableBlock() == nil {
            if shared.withLock({ $0.shutdown }) { return }
            _ = wake.wait(timeout: .now() + .milliseconds(100))
        }
        ring.commit(PCMBlockInfo(generation: generation, sourceFrame: position, frameCount: 0, endOfStream: true))
        dataSignal.signal()
    }
}
