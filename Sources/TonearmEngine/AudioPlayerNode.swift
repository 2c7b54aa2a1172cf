// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmRender

/// A time on a node's or a player's sample clock (the counterpart of `AVAudioTime`).
public struct AudioTime: Sendable, Hashable {
    public var sampleTime: AudioFramePosition
    public var sampleRate: Double
    public init(sampleTime: AudioFramePosition, atRate sampleRate: Double) {
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
    }
    public var seconds: Double { Double(sampleTime) / sampleRate }
}

/// When a player node's completion handler is called (`AVAudioPlayerNodeCompletionCallbackType`).
public enum AudioPlayerNodeCompletionCallbackType: Sendable, Hashable {
    /// The data has been read from the file or buffer (it may not have been heard yet).
    case dataConsumed
    /// The last frame has been rendered by the engine.
    case dataRendered
    /// The last frame has been played by the output (rendered + the output's latency).
    case dataPlayedBack
    /// Not one of Apple's: the node stopped — ``AudioPlayerNode/stop()``, or a schedule with
    /// ``AudioPlayerNodeBufferOptions/interrupts`` — before this schedule completed. As
    /// `AVAudioPlayerNode` does, the handler of everything a stop discards is called (code that
    /// detects the end of playback relies on it), once, from that call, before it returns; Apple
    /// passes the type that was asked for, Tonearm says why, so a handler from before a seek is
    /// never mistaken for the end of the current schedule. Ported code that ignores the argument
    /// behaves as on iOS.
    case stopped
}

/// Options for ``AudioPlayerNode/scheduleBuffer(_:at:options:completionCallbackType:completionHandler:)``.
public struct AudioPlayerNodeBufferOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Play the buffer again and again until another schedule interrupts it or the node stops.
    public static let loops = AudioPlayerNodeBufferOptions(rawValue: 1)
    /// Replace whatever is playing or scheduled, at once.
    public static let interrupts = AudioPlayerNodeBufferOptions(rawValue: 2)
    /// Replace a looping buffer at the end of its current pass.
    public static let interruptsAtLoop = AudioPlayerNodeBufferOptions(rawValue: 4)
}

/// Plays scheduled files, file segments and buffers into an engine graph (the counterpart of
/// `AVAudioPlayerNode`). A thread of the node's own reads and converts what is scheduled — any
/// sample rate and channel count, into the engine's format — ahead of the render thread.
///
/// Completion handlers carry the schedule's generation: `stop()` (or an interrupting buffer)
/// starts a new generation, and each handler of what it discarded is called once with
/// ``AudioPlayerNodeCompletionCallbackType/stopped``, on the thread that stopped, before that call
/// returns — never with the type it asked for: no stale completion after a seek made of
/// `stop()` + `scheduleSegment` + `play()` (AudioKit #2683/#2996). Every handler is called
/// exactly once (unless the node is deallocated first): whoever takes it from the node's state —
/// the decoder thread, the event thread or a stop — does so under one lock. Completed handlers run
/// on the node's decoder thread (`dataConsumed`) or its event thread (the others), never on the
/// render thread; one whose schedule completed just before a stop may still be running when
/// `stop()` returns (the stop does not wait for the node's threads, so a handler that takes the
/// caller's lock cannot deadlock it) — its type says it completed.
///
/// `@unchecked Sendable`: its only state is its kernel (`let`), whose every field is behind its
/// locks, atomic, or owned by one thread (see ``PlayerNodeKernel``).
public final class AudioPlayerNode: AudioNode, @unchecked Sendable {
    public typealias CompletionHandler = @Sendable (AudioPlayerNodeCompletionCallbackType) -> Void

    private let playerKernel: PlayerNodeKernel

    public init() {
        let k = PlayerNodeKernel()
        playerKernel = k
        super.init(kernel: k, inputs: 0, outputs: 1)
    }

    deinit { playerKernel.shutdown() }

    override package func engineWillRender(format: AudioFormat, maximumFrames: Int) {
        playerKernel.configure(format: format)
    }

    /// Schedules a whole file after whatever is scheduled.
    /// - Throws: ``TonearmError/invalidState(_:)`` when the node is not attached to an engine.
    public func scheduleFile(_ file: some PlaybackSource, at when: AudioTime? = nil,
                             completionCallbackType: AudioPlayerNodeCompletionCallbackType = .dataRendered,
                             completionHandler: CompletionHandler? = nil) throws {
        try scheduleSegment(file, startingFrame: 0, frameCount: AudioFrameCount(file.frameLength), at: when,
                            completionCallbackType: completionCallbackType, completionHandler: completionHandler)
    }

    /// Schedules `frameCount` frames of `file` from `startingFrame`, sample-exact.
    /// - Throws: ``TonearmError/invalidArgument(_:)`` for a range outside the file.
    public func scheduleSegment(_ file: some PlaybackSource, startingFrame: AudioFramePosition, frameCount: AudioFrameCount,
                                at when: AudioTime? = nil,
                                completionCallbackType: AudioPlayerNodeCompletionCallbackType = .dataRendered,
                                completionHandler: CompletionHandler? = nil) throws {
        guard startingFrame >= 0, frameCount >= 0, startingFrame + AudioFramePosition(frameCount) <= file.frameLength else {
            throw TonearmError.invalidArgument("scheduleSegment: frames \(startingFrame)..<\(startingFrame + AudioFramePosition(frameCount)) are outside the file's 0..<\(file.frameLength)")
        }
        playerKernel.enqueue(.file(file, start: startingFrame, count: AudioFramePosition(frameCount)), options: [],
                             delay: delayFrames(when), type: completionCallbackType, handler: completionHandler)
    }

    /// Schedules a segment for a queue: played at a fixed linear `gain` (applied on the node's
    /// decoder thread, sample-exact from the segment's first frame to its last: ReplayGain), with
    /// two handlers — `consumed` on the decoder thread as soon as the segment has been read (the
    /// moment to schedule what follows, so that it follows without a gap), `rendered` on the event
    /// thread once its last frame has been rendered. Neither is called after `stop()` (the queue
    /// keeps its own epochs; unlike the public schedules, no ``AudioPlayerNodeCompletionCallbackType/stopped``). `warnings`
    /// is called on the decoder thread with what reading the segment met (the file's
    /// ``PlaybackSource/takeWarnings()``, and ``AudioWarning/readFailed(path:framePosition:reason:)``
    /// when a read throws: the segment then ends there).
    /// - Throws: ``TonearmError/invalidArgument(_:)`` for a range outside the file.
    package func scheduleSegment(_ file: some PlaybackSource, startingFrame: AudioFramePosition, frameCount: AudioFrameCount,
                                 gain: Float, consumed: CompletionHandler?, rendered: CompletionHandler?,
                                 warnings: (@Sendable ([AudioWarning]) -> Void)? = nil) throws {
        guard startingFrame >= 0, frameCount >= 0, startingFrame + AudioFramePosition(frameCount) <= file.frameLength else {
            throw TonearmError.invalidArgument("scheduleSegment: frames \(startingFrame)..<\(startingFrame + AudioFramePosition(frameCount)) are outside the file's 0..<\(file.frameLength)")
        }
        playerKernel.enqueue(.file(file, start: startingFrame, count: AudioFramePosition(frameCount)), options: [],
                             delay: 0, type: .dataRendered, handler: rendered, gain: gain, consumed: consumed,
                             warnings: warnings, callsOnStop: false)
    }

    /// Sets the output latency used for `dataPlayedBack` completions (the owner of the output).
    package func setOutputLatency(_ seconds: Double) {
        playerKernel.latencySeconds.store(max(0, seconds).bitPattern, ordering: .relaxed)
    }

    /// Schedules a buffer (with `.loops`, `.interrupts`, `.interruptsAtLoop`). With `.interrupts`
    /// the handlers of what it replaces are called with ``AudioPlayerNodeCompletionCallbackType/stopped``
    /// on this thread before it returns.
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, at when: AudioTime? = nil,
                               options: AudioPlayerNodeBufferOptions = [],
                               completionCallbackType: AudioPlayerNodeCompletionCallbackType = .dataRendered,
                               completionHandler: CompletionHandler? = nil) {
        playerKernel.enqueue(.buffer(buffer, loops: options.contains(.loops)), options: options,
                             delay: delayFrames(when), type: completionCallbackType, handler: completionHandler)
    }

    private func delayFrames(_ when: AudioTime?) -> Int {
        guard let when, let t = playerTime else { return 0 }
        return max(0, Int(when.sampleTime - t.sampleTime))
    }

    /// Starts (or resumes) playing what is scheduled.
    public func play() { playerKernel.setPlaying(true) }

    /// Starts at `when` on the player's timeline (frames of silence first).
    public func play(at when: AudioTime?) {
        var delay = 0
        if let when, let now = playerTime { delay = Int(max(0, when.sampleTime - now.sampleTime)) }
        playerKernel.setPlaying(true, delayFrames: delay)
    }

    /// Pauses; `play()` resumes exactly where it stopped.
    public func pause() { playerKernel.setPlaying(false) }

    /// Stops, discards everything scheduled and resets the player's timeline to 0. The
    /// completion handlers of what it discarded are called with
    /// ``AudioPlayerNodeCompletionCallbackType/stopped`` on this thread before it returns (as
    /// `AVAudioPlayerNode.stop()` calls them); a handler may schedule again or stop again.
    public func stop() { _ = playerKernel.stop() }

    /// ``stop()``, returning the player time it ended (the frames played since `play()` after the
    /// last stop, as ``playerTime`` said then): read as the timeline is reset, so that a render
    /// that begins between a reading of ``playerTime`` and the stop is counted too (a queue's
    /// restart goes on exactly from there).
    package func stopReturningPlayerTime() -> AudioFramePosition { playerKernel.stop() }

    /// Runs `body` with the node's offline rendering (an untimed output: file, `null:untimed`)
    /// held between two render calls, so that a restart made of ``playerTime``, a stop, schedules
    /// and `play()` inside it is sample-exact: the time read is what was rendered, and nothing
    /// (no silence) is rendered between the stop and the play. Realtime rendering is never held
    /// (`body` just runs). Control plane, one caller at a time per node; the caller must hold no
    /// lock that the node's handlers take (the render call under way may wait for the decoder,
    /// whose `consumed` handler a queue answers under its lock).
    package func withRenderHeld<T>(_ body: () throws -> T) rethrows -> T { try playerKernel.withRenderHeld(body) }

    /// Whether the node is playing.
    public var isPlaying: Bool { playerKernel.playing.load(ordering: .acquiring) }

    /// Times the render thread wanted the node's audio and none was decoded yet (silence was
    /// rendered instead), since the node was configured. Any thread.
    public var underrunCount: Int { playerKernel.underrunCount }

    /// The node's render time: frames rendered by the node since it was configured.
    public var lastRenderTime: AudioTime? {
        guard let f = playerKernel.format else { return nil }
        return AudioTime(sampleTime: playerKernel.nodeFrames.load(ordering: .relaxed), atRate: f.sampleRate)
    }

    /// The host time (`DispatchTime` uptime nanoseconds) at the end of the last render call that
    /// moved ``playerTime`` (0 before one): the instant the player's time describes, for a clock
    /// that moves on between render calls. Lock-free, any thread.
    public var playerTimeHostNanos: UInt64 { playerKernel.playerHostNanos.load(ordering: .acquiring) }

    /// The player's timeline: frames played since `play()` after the last `stop()`.
    public var playerTime: AudioTime? {
        guard let f = playerKernel.format else { return nil }
        return AudioTime(sampleTime: playerKernel.playerFrames.load(ordering: .relaxed), atRate: f.sampleRate)
    }

    /// Converts a node time to the player's timeline (nil when the node has not played).
    public func playerTime(forNodeTime nodeTime: AudioTime) -> AudioTime? {
        guard let f = playerKernel.format, isPlaying || playerKernel.playerFrames.load(ordering: .relaxed) > 0 else { return nil }
        let node = playerKernel.nodeFrames.load(ordering: .relaxed)
        let player = playerKernel.playerFrames.load(ordering: .relaxed)
        return AudioTime(sampleTime: player + (nodeTime.sampleTime - node), atRate: f.sampleRate)
    }
}

/// What a player node can have scheduled.
///
/// `@unchecked Sendable`: the source or buffer is handed to the node's decoder thread, the only
/// one that reads it from then on (as with `AVAudioPlayerNode`, the caller does not read a
/// scheduled file or write a scheduled buffer while it is scheduled).
enum ScheduledContent: @unchecked Sendable {
    case file(any PlaybackSource, start: AudioFramePosition, count: AudioFramePosition)
    case buffer(AudioPCMBuffer, loops: Bool)
}

/// The player node's machinery: a decoder thread that turns scheduled items into blocks of the
/// engine's format in a lock-free ring, the ``StreamRenderer`` that plays them, and an event thread
/// that calls completion handlers.
///
/// `@unchecked Sendable`: the queue and generations are under `shared`, the renderer's controls
/// under `producer`, the clocks and flags are atomics, `format` is under its own lock; `renderer`,
/// `ring` and the threads are written by `configure` only while the node is not rendered; the `…InLastCall`
/// fields belong to the render thread.
final class PlayerNodeKernel: EndingSource, @unchecked Sendable {
    struct Item {
        var content: ScheduledContent
        var sequence: UInt64
        var generation: UInt64
        var delay: Int
        var type: AudioPlayerNodeCompletionCallbackType
        var handler: AudioPlayerNode.CompletionHandler?
        var interruptsAtLoop: Bool
        var gain: Float = 1
        var consumed: AudioPlayerNode.CompletionHandler?
        /// Whether a stop calls `handler` with `.stopped` (the public schedules; not a queue's).
        var callsOnStop = true
        /// Called on the decoder thread with the warnings the file's reads met (corrupt packets
        /// skipped, a read that failed and ended the segment early).
        var warnings: (@Sendable ([AudioWarning]) -> Void)?
    }

    private struct Shared {
        var queue: [Item] = []
        var generation: UInt64 = 1
        var nextSequence: UInt64 = 1
        var shutdown = false
        /// Handlers waiting for the render thread (dataRendered / dataPlayedBack), by sequence.
        var pending: [UInt64: Pending] = [:]
        /// `dataPlayedBack` handlers whose item has been rendered, waiting for the output's
        /// latency (event thread), in deadline order.
        var due: [(deadline: DispatchTime, sequence: UInt64, pending: Pending)] = []

        /// Takes every handler of the current generation out of the state (its queue, pending
        /// and due lists) for a stop to call, in schedule order, and empties them.
        mutating func takeForStop() -> [AudioPlayerNode.CompletionHandler] {
            var bySequence: [UInt64: AudioPlayerNode.CompletionHandler] = [:]
            for item in queue where item.callsOnStop { if let h = item.handler { bySequence[item.sequence] = h } }
            for (sequence, p) in pending where p.callsOnStop { bySequence[sequence] = p.handler }
            for d in due where d.pending.callsOnStop { bySequence[d.sequence] = d.pending.handler }
            queue.removeAll()
            pending.removeAll()
            due.removeAll()
            return bySequence.sorted { $0.key < $1.key }.map(\.value)
        }
    }

    struct Pending {
        var generation: UInt64
        var type: AudioPlayerNodeCompletionCallbackType
        var handler: AudioPlayerNode.CompletionHandler
        var callsOnStop: Bool
    }

    private let shared = Mutex(Shared())
    /// The one producer lock of the renderer's controls: held while the generation changes and
    /// while ``StreamRenderer/nodeState`` and ``StreamRenderer/nodeDelay`` are stored, so that
    /// `play()`, `pause()`, `stop()` and the schedules, called from any threads at once, publish
    /// one consistent state (the last one wins, whole). Taken before `shared`; never by the
    /// render thread.
    private let producer = Mutex(())

    /// The renderer's count of late data (``AudioPlayerNode/underrunCount``).
    var underrunCount: Int { producer.withLock { _ in renderer?.underruns.load(ordering: .relaxed) ?? 0 } }
    /// The engine's format the node was configured for (nil before). Written by `configure` on
    /// the control plane; read from any thread (a player's time, asked while an engine starts —
    /// ThreadSanitizer saw `QueuePlayer.currentTime` read it during `configure`), so kept under
    /// its own lock; the render and decoder threads never read it (the decoder is given it).
    var format: AudioFormat? { configuredFormat.withLock { $0 } }
    private let configuredFormat = Mutex<AudioFormat?>(nil)
    /// Written by `configure` under `producer` while the node is not rendered; read by the
    /// render thread and, under `producer`, by the control plane.
    private var renderer: StreamRenderer?
    private var ring: PCMBlockRing?
    private let wake = DispatchSemaphore(value: 0)
    private let dataSignal = DispatchSemaphore(value: 0)
    private var decoderThread: Thread?
    private var eventThread: Thread?
    private let decoderExited = DispatchSemaphore(value: 0)
    let playing = Atomic<Bool>(false)
    /// ``withRenderHeld(_:)``: how many control threads hold offline rendering, and whether an
    /// offline render call is under way (both sequentially consistent: a holder that sees no
    /// call under way knows that the next call sees it).
    private let holders = Atomic<Int>(0)
    private let inRender = Atomic<Bool>(false)
    /// Render thread → holder: a call ended (or stopped at its start) while held. Holder →
    /// render thread: the hold is over. Extra signals are harmless: both sides check the atomics.
    private let heldSignal = DispatchSemaphore(value: 0)
    private let releaseSignal = DispatchSemaphore(value: 0)
    /// Frames rendered by the node (node time) and frames played since the last stop (player time).
    let nodeFrames = Atomic<Int64>(0)
    let playerFrames = Atomic<Int64>(0)
    /// The host time at the end of the last render call that moved `playerFrames` (render thread).
    let playerHostNanos = Atomic<UInt64>(0)
    /// Render thread: whether everything scheduled has played (see ``EndingSource``).
    private(set) var endedInLastCall = false
    private(set) var framesInLastCall = 0
    /// The output latency, for `dataPlayedBack` (set by the engine's owner when known).
    let latencySeconds = Atomic<UInt64>(0)

    /// Control plane, while the node is not rendered: (re)creates the ring for `format`.
    func configure(format f: AudioFormat) {
        if let old = format, old.sampleRate == f.sampleRate, old.channelCount == f.channelCount,
           old.effectiveChannelLayout == f.effectiveChannelLayout { return }
        shutdownThreads()
        configuredFormat.withLock { $0 = f }
        let r = PCMBlockRing(blockFrames: 1024, channels: f.channelCount, blockCount: max(8, Int(f.sampleRate) / 1024))
        ring = r
        let rr = StreamRenderer(ring: r, spaceSignal: wake, dataSignal: dataSignal, continuesAfterItems: true)
        producer.withLock { _ in
            renderer = rr
            publishState()
        }
        shared.withLock { s in
            s.shutdown = false
            // Scheduled before the node rendered (before the engine started): the new renderer
            // waits for it, instead of taking the decoder, which has not looked yet, for idle —
            // an offline render right after `start()` and `play()` rendered silence (NodeTapTests
            // under load, 3 runs in 20).
            if !s.queue.isEmpty { rr.idle.store(false, ordering: .releasing) }
        }
        // Named for ps, top and /proc/PID/task/*/comm (15 bytes at most, or the name is refused).
        let t = Thread { [self] in
            nameCurrentThread("tonearm-decoder")
            raiseCurrentThreadPriority(.decoder, name: "tonearm-decoder")
            decodeLoop(ring: r, renderer: rr, format: f)
        }
        t.name = "tonearm-decoder"
        decoderThread = t
        t.start()
        let e = Thread { [self] in
            nameCurrentThread("tonearm-events")
            eventLoop(renderer: rr)
        }
        e.name = "tonearm-events"
        eventThread = e
        e.start()
    }

    func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                frames: Int, channels: Int, timing: RenderTiming) {
        guard let renderer else {
            output.update(repeating: 0, count: frames * channels)
            return
        }
        // Offline (an untimed output's own thread, which may wait): held between two calls while
        // a control thread re-schedules (``withRenderHeld(_:)``). Never with `.realtime` timing.
        if timing == .offline {
            inRender.store(true, ordering: .sequentiallyConsistent)
            while holders.load(ordering: .sequentiallyConsistent) > 0 {
                inRender.store(false, ordering: .sequentiallyConsistent)
                heldSignal.signal()
                releaseSignal.wait()
                inRender.store(true, ordering: .sequentiallyConsistent)
            }
        }
        defer {
            if timing == .offline {
                inRender.store(false, ordering: .sequentiallyConsistent)
                if holders.load(ordering: .sequentiallyConsistent) > 0 { heldSignal.signal() }
            }
        }
        // The clocks move before the render: its end-of-item event may be handled on the event
        // thread before this call returns, and a handler must see the frames it waited for.
        nodeFrames.add(Int64(frames), ordering: .relaxed)
        let moved = playing.load(ordering: .relaxed)
        if moved { playerFrames.add(Int64(frames), ordering: .relaxed) }
        let r = renderer.render(into: output, frameCount: frames, timing: timing)
        // clock_gettime through the vDSO: no lock, no allocation.
        if moved { playerHostNanos.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing) }
        // The end of everything scheduled, for an engine that ends with this node (a queue).
        if r.ended { endedInLastCall = true; framesInLastCall = r.framesRendered } else if endedInLastCall {
            framesInLastCall = 0
            if r.framesRendered > 0 { endedInLastCall = false; framesInLastCall = r.framesRendered }
        } else {
            framesInLastCall = r.framesRendered
        }
    }

    // MARK: Control plane

    func enqueue(_ content: ScheduledContent, options: AudioPlayerNodeBufferOptions, delay: Int,
                 type: AudioPlayerNodeCompletionCallbackType, handler: AudioPlayerNode.CompletionHandler?,
                 gain: Float = 1, consumed: AudioPlayerNode.CompletionHandler? = nil,
                 warnings: (@Sendable ([AudioWarning]) -> Void)? = nil, callsOnStop: Bool = true) {
        let replaced = producer.withLock { _ in
            enqueueLocked(content, options: options, delay: delay, type: type, handler: handler,
                          gain: gain, consumed: consumed, warnings: warnings, callsOnStop: callsOnStop)
        }
        wake.signal()
        for h in replaced { h(.stopped) }
    }

    /// Producer lock held. Returns the handlers an `.interrupts` discarded, for the caller to
    /// call with `.stopped` once the locks are released.
    private func enqueueLocked(_ content: ScheduledContent, options: AudioPlayerNodeBufferOptions, delay: Int,
                               type: AudioPlayerNodeCompletionCallbackType, handler: AudioPlayerNode.CompletionHandler?,
                               gain: Float, consumed: AudioPlayerNode.CompletionHandler?,
                               warnings: (@Sendable ([AudioWarning]) -> Void)?, callsOnStop: Bool) -> [AudioPlayerNode.CompletionHandler] {
        let (bumped, replaced) = shared.withLock { s -> (Bool, [AudioPlayerNode.CompletionHandler]) in
            var replaced: [AudioPlayerNode.CompletionHandler] = []
            let bumped = options.contains(.interrupts)
            if bumped {
                s.generation += 1
                replaced = s.takeForStop()
            }
            var item = Item(content: content, sequence: s.nextSequence, generation: s.generation, delay: delay,
                            type: type, handler: handler, interruptsAtLoop: options.contains(.interruptsAtLoop), gain: gain,
                            consumed: consumed, warnings: warnings)
            item.callsOnStop = callsOnStop
            s.nextSequence += 1
            s.queue.append(item)
            // Registered now, before any of its audio can be rendered, so the render thread's
            // end-of-item event always finds it.
            if let h = handler, type != .dataConsumed {
                s.pending[item.sequence] = Pending(generation: item.generation, type: type, handler: h, callsOnStop: callsOnStop)
            }
            renderer?.idle.store(false, ordering: .releasing)
            return (bumped, replaced)
        }
        if bumped { publishState() }
        return replaced
    }

    /// Stores the generation and run state for the render thread. Producer lock held.
    private func publishState() {
        let g = shared.withLock { $0.generation }
        renderer?.nodeState.store(g << 1 | (playing.load(ordering: .relaxed) ? 1 : 0), ordering: .releasing)
    }

    /// Plays (after `delayFrames` of silence) or pauses.
    func setPlaying(_ on: Bool, delayFrames: Int = 0) {
        producer.withLock { _ in
            playing.store(on, ordering: .releasing)
            if delayFrames > 0 { renderer?.nodeDelay.store(delayFrames, ordering: .releasing) }
            publishState()
        }
    }

    /// Returns the player frames it reset.
    @discardableResult
    func stop() -> Int64 {
        let (discarded, played) = producer.withLock { _ in
            playing.store(false, ordering: .releasing)
            let taken = shared.withLock { s in
                s.generation += 1
                return s.takeForStop()
            }
            publishState()
            return (taken, playerFrames.exchange(0, ordering: .relaxed))
        }
        wake.signal()
        // Called with no lock held: a handler may schedule or stop again.
        for h in discarded { h(.stopped) }
        return played
    }

    /// Runs `body` with the node's offline rendering held between two render calls: the call
    /// under way (if any) ends first, and none begins until `body` returns. What `body` reads of
    /// the player's time is then exactly what was rendered, and what it stops, schedules and
    /// plays again takes effect at one frame, with nothing rendered in between (no silence
    /// written while the node is stopped) — also before the first call (an output just
    /// started). A `.realtime` render never waits: it is not held (and never waited for).
    /// Control plane; the caller holds no lock that the node's decoder thread or handlers take
    /// (the call under way may wait for the decoder).
    func withRenderHeld<T>(_ body: () throws -> T) rethrows -> T {
        holders.add(1, ordering: .sequentiallyConsistent)
        defer {
            holders.subtract(1, ordering: .sequentiallyConsistent)
            releaseSignal.signal()
        }
        while inRender.load(ordering: .sequentiallyConsistent) {
            // Signalled when the call ends; the timeout only re-checks (a stale signal is possible).
            _ = heldSignal.wait(timeout: .now() + .milliseconds(50))
        }
        return try body()
    }

    func shutdown() { shutdownThreads() }

    private func shutdownThreads() {
        guard decoderThread != nil else { return }
        shared.withLock { $0.shutdown = true }
        wake.signal()
        decoderExited.wait()
        renderer?.eventSignal.signal()
        decoderThread = nil
        eventThread = nil
    }

    // MARK: Decoder thread

    private func decodeLoop(ring: PCMBlockRing, renderer: StreamRenderer, format: AudioFormat) {
        let ch = format.channelCount
        let scratchFrames = 8192
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: scratchFrames * 64)
        // A source's frames put onto the engine's layout (when the layouts differ: ChannelMix).
        let mixed = UnsafeMutablePointer<Float>.allocate(capacity: scratchFrames * ch)
        defer {
            scratch.deallocate()
            mixed.deallocate()
            decoderExited.signal()
        }
        var converter: FormatConverter?
        while true {
            let (item, stop) = shared.withLock { s -> (Item?, Bool) in
                s.queue.removeAll { $0.generation != s.generation }
                // Idle is set and cleared under the lock that guards the queue, so an enqueue can
                // never be overtaken by a stale "idle".
                if s.queue.isEmpty { renderer.idle.store(true, ordering: .releasing) }
                return (s.queue.first, s.shutdown)
            }
            if stop { return }
            guard let item else {
                dataSignal.signal()
                wake.wait()
                continue
            }
            let stillCurrent = { self.shared.withLock { $0.generation == item.generation && !$0.shutdown } }
            // Produce the item's blocks.
            var produced: AudioFramePosition = 0
            var pendingDelay = item.delay
            var finishedNormally = true
            let srcFormat: AudioFormat
            switch item.content {
            case .file(let src, let start, _):
                srcFormat = src.sourceFormat
                try? src.seek(toFrame: start)
            case .buffer(let b, _):
                srcFormat = b.format
            }
            // Channels placed by position when the layouts differ, before any resampling (which
            // then keeps the engine's channels); else copied by the channel-count rules of `remap`.
            let mix = ChannelMix(from: srcFormat, to: format)
            let inChannels = mix == nil ? srcFormat.channelCount : ch
            let needsConversion = srcFormat.sampleRate != format.sampleRate
            // Mono is resampled as mono and mapped by `remap` (on every channel at full level), as
            // at the engine's rate, so that it sounds the same at any rate (libswresample's
            // matrix plays it on two channels at -3 dB); other channel counts are converted by
            // libswresample with the rate (its downmix), or put on the engine's layout by the mix first.
            let sc = mix == nil && srcFormat.channelCount == 1 ? 1 : ch
            if needsConversion {
                if converter == nil || converter!.input.sampleRate != srcFormat.sampleRate
                    || converter!.input.channelCount != inChannels || converter!.output.channelCount != sc {
                    converter = try? FormatConverter(from: .interleavedFloat(sampleRate: srcFormat.sampleRate, channels: inChannels),
                                                     to: .interleavedFloat(sampleRate: format.sampleRate, channels: sc))
                } else {
                    converter?.reset()
                }
            }
            var bufferPosition = 0
            var sourceDone = false
            var flushed = false
            // Pending converted frames (`sc` channels: 1 for mono, else the engine's) not yet placed into a block.
            var carry = 0
            let carryBuffer = UnsafeMutablePointer<Float>.allocate(capacity: (scratchFrames * 8 + 64) * ch)
            defer { carryBuffer.deallocate() }
            blocks: while true {
                if !stillCurrent() { finishedNormally = false; break }
                guard let block = ring.writableBlock() else {
                    _ = wake.wait(timeout: .now() + .milliseconds(200))
                    continue
                }
                var filled = 0
                // Leading silence for a delayed start.
                if pendingDelay > 0 {
                    let n = min(pendingDelay, ring.blockFrames)
                    block.update(repeating: 0, count: n * ch)
                    filled = n
                    pendingDelay -= n
                }
                while filled < ring.blockFrames {
                    if carry > 0 {
                        let n = min(carry, ring.blockFrames - filled)
                        Self.remap(carryBuffer, channels: sc, into: block + filled * ch, channels: ch, frames: n)
                        carryBuffer.update(from: carryBuffer + n * sc, count: (carry - n) * sc)
                        carry -= n
                        filled += n
                        continue
                    }
                    if sourceDone {
                        if needsConversion && !flushed, let conv = converter {
                            flushed = true
                            carry = conv.convert(nil, frames: 0, into: carryBuffer, capacity: scratchFrames * 8)
                            continue
                        }
                        break
                    }
                    // Read source frames (source channels) into scratch.
                    let want = needsConversion ? 1024 : ring.blockFrames - filled
                    var got = 0
                    switch item.content {
                    case .file(let src, let start, let count):
                        let left = Int(min(AudioFramePosition(want), count - produced))
                        if left > 0 {
                            do {
                                got = try src.readInterleaved(into: scratch, frameCount: left)
                            } catch {
                                // The rest of the segment is lost: said, not hidden.
                                let path = (src as? AudioFile)?.path ?? ""
                                item.warnings?([.readFailed(path: path, framePosition: start + produced, reason: "\(error)")])
                                got = 0
                            }
                            if let report = item.warnings {
                                let met = src.takeWarnings()
                                if !met.isEmpty { report(met) }
                            }
                        }
                    case .buffer(let b, let loops):
                        if bufferPosition >= b.frameLength {
                            let interrupted = shared.withLock { s in
                                s.queue.count > 1 && s.queue[1].interruptsAtLoop && s.queue[1].generation == s.generation
                            }
                            if loops && b.frameLength > 0 && !interrupted { bufferPosition = 0 }
                        }
                        let n = min(want, b.frameLength - bufferPosition)
                        let bc = b.channelCount
                        for f in 0..<max(0, n) {
                            for c in 0..<bc { scratch[f * bc + c] = b.floatChannelData[c][bufferPosition + f] }
                        }
                        bufferPosition += max(0, n)
                        got = max(0, n)
                    }
                    if got == 0 {
                        sourceDone = true
                        continue
                    }
                    produced += AudioFramePosition(got)
                    var input = UnsafePointer(scratch)
                    if let mix {
                        mix.apply(scratch, into: mixed, frames: got)
                        input = UnsafePointer(mixed)
                    }
                    if needsConversion, let conv = converter {
                        carry = conv.convert(input, frames: got, into: carryBuffer, capacity: scratchFrames * 8)
                    } else {
                        Self.remap(input, channels: inChannels, into: block + filled * ch, channels: ch, frames: got)
                        filled += got
                    }
                }
                let last = sourceDone && carry == 0 && (!needsConversion || flushed)
                if item.gain != 1 {
                    let g = item.gain
                    for i in 0..<(filled * ch) { block[i] *= g }
                }
                if last, let consumed = item.consumed, stillCurrent() {
                    // A queue's handler schedules what follows before this item's last frame can
                    // be rendered: the render thread never sees a moment with nothing scheduled.
                    consumed(.dataConsumed)
                }
                ring.commit(PCMBlockInfo(generation: item.generation, sourceFrame: produced, frameCount: filled,
                                         endOfStream: last, sequence: item.sequence))
                dataSignal.signal()
                if last { break blocks }
            }
            // The item is done (or discarded).
            let handlerNow: (AudioPlayerNode.CompletionHandler, AudioPlayerNodeCompletionCallbackType)? = shared.withLock { s in
                if let i = s.queue.firstIndex(where: { $0.sequence == item.sequence }) { s.queue.remove(at: i) }
                if !finishedNormally { s.pending[item.sequence] = nil }
                guard finishedNormally, item.generation == s.generation, let h = item.handler,
                      item.type == .dataConsumed else { return nil }
                return (h, .dataConsumed)
            }
            if let (h, t) = handlerNow { h(t) }
        }
    }

    /// Copies `frames` frames converting the channel count (``remapChannels(_:channels:into:channels:frames:)``).
    /// (Sources whose known layout differs from the engine's are first put onto it by a ``ChannelMix``.)
    static func remap(_ src: UnsafePointer<Float>, channels sc: Int, into dst: UnsafeMutablePointer<Float>,
                      channels dc: Int, frames: Int) {
        remapChannels(src, channels: sc, into: dst, channels: dc, frames: frames)
    }

    // MARK: Event thread

    /// Calls the handlers of items whose end the render thread reported: `dataRendered` at once,
    /// `dataPlayedBack` once the output's latency has passed since — kept in a list with their
    /// deadlines and waited for with the wait's timeout, so that a played-back handler never
    /// holds up the ones behind it and the thread never sleeps.
    private func eventLoop(renderer: StreamRenderer) {
        while true {
            if let next = shared.withLock({ $0.due.first?.deadline }) {
                _ = renderer.eventSignal.wait(timeout: next)
            } else {
                renderer.eventSignal.wait()
            }
            if shared.withLock({ $0.shutdown }) { return }
            while let e = renderer.events.pop() {
                guard case .itemEnded(let generation, let sequence) = e else { continue }
                // Taken under the lock that a stop takes them under: called by one of the two.
                let h = shared.withLock { s -> (AudioPlayerNodeCompletionCallbackType, AudioPlayerNode.CompletionHandler)? in
                    guard let p = s.pending[sequence], p.generation == generation, generation == s.generation else { return nil }
                    s.pending[sequence] = nil
                    if p.type == .dataPlayedBack {
                        // Until the output has played it.
                        let latency = Double(bitPattern: latencySeconds.load(ordering: .relaxed))
                        s.due.append((DispatchTime.now() + latency, sequence, p))
                        return nil
                    }
                    return (p.type, p.handler)
                }
                if let (type, handler) = h { handler(type) }
            }
            let now = DispatchTime.now()
            while let handler = shared.withLock({ s -> AudioPlayerNode.CompletionHandler? in
                guard let first = s.due.first, first.deadline <= now else { return nil }
                s.due.removeFirst()
                return first.pending.handler
            }) {
                handler(.dataPlayedBack)
            }
        }
    }
}

/// Copies `frames` frames converting the channel count: equal → copy; mono → all channels;
/// many → mono by averaging; otherwise the common channels, silence in the rest. (Also what
/// a crossfade's incoming item is mapped with, so that it sounds the same in the overlap.)
package func remapChannels(_ src: UnsafePointer<Float>, channels sc: Int, into dst: UnsafeMutablePointer<Float>,
                           channels dc: Int, frames: Int) {
    if sc == dc {
        dst.update(from: src, count: frames * dc)
    } else if sc == 1 {
        for f in 0..<frames { for c in 0..<dc { dst[f * dc + c] = src[f] } }
    } else if dc == 1 {
        let inv = 1 / Float(sc)
        for f in 0..<frames {
            var sum: Float = 0
            for c in 0..<sc { sum += src[f * sc + c] }
            dst[f] = sum * inv
        }
    } else {
        for f in 0..<frames {
            for c in 0..<dc { dst[f * dc + c] = c < sc ? src[f * sc + c] : 0 }
        }
    }
}
