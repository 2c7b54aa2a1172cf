// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmRender

/// How an engine in manual rendering mode is driven (`AVAudioEngineManualRenderingMode`).
public enum ManualRenderingMode: Sendable {
    /// The caller pulls as fast as it likes; sources wait for their decoders (nothing is lost, and
    /// the result is the same on every run).
    case offline
    /// The caller's real-time thread pulls (for example an output driver the caller owns, calling
    /// the engine as its ``AudioRenderSource``). Stop that thread before stopping the engine.
    case realtime
}

/// What ``AudioEngine/renderOffline(_:to:)`` did.
public enum ManualRenderingStatus: Sendable, Equatable {
    case success
    /// The engine is not in manual rendering mode or not running.
    case cannotDoInCurrentContext
    case error
}

/// What an engine reports.
public enum AudioEngineEvent: Sendable, Equatable {
    /// The output device or its format changed; the engine goes on rendering.
    case configurationChange
    /// The output was lost; the engine has stopped.
    case outputLost(reason: String)
    /// The input node's source went away while the engine ran (a USB microphone unplugged): the
    /// engine stopped its input — the graph hears silence from it, a tap is called no more —
    /// and goes on playing; ``AudioInputNode/inputError`` holds the error too. `start()` after
    /// `stop()` opens the input again (the session's input now). Follows a `configurationChange`,
    /// as `AVAudioEngineConfigurationChange` comes when a device goes.
    case inputLost(AudioInputError)
}

/// A graph of audio nodes rendered in real time to an output, or offline on demand (the
/// counterpart of `AVAudioEngine`).
///
/// ```swift
/// let engine = AudioEngine()
/// let player = AudioPlayerNode()
/// engine.attach(player)
/// try engine.connect(player, to: engine.mainMixerNode, format: nil)
/// try engine.start()
/// try player.scheduleFile(AudioFile(path: "song.flac"), at: nil)
/// player.play()
/// ```
///
/// Threading: the graph methods (`attach`, `connect`, `start`, …) may be called from any thread;
/// they are serialised by the engine's lock, which the render thread never takes. Each change
/// compiles a new immutable ``RenderPlan`` that the render thread swaps in between two cycles
/// through a lock-free slot, so nodes can be attached, connected and disconnected while the
/// engine runs without a click and without the render thread waiting. Changes that come faster
/// than the render thread takes them coalesce: the newest plan replaces one not taken yet, so the
/// last change always takes effect. Nodes are built for the engine's format (`engineWillRender`)
/// once, before their first plan; a node that is rendering is never reconfigured.
///
/// `@unchecked Sendable`: the graph, format, driver and plan handoff are under `lock`; the render
/// thread reads only atomics (`runningFlag`, `pending`, `renderChannels`, the clock), its own
/// `current` and `tailLeft`, and `endingKernel`, which is set before `start`.
public final class AudioEngine: AudioRenderSource, @unchecked Sendable {
    /// The engine's own mixer, connected to the output (created with the engine).
    public let mainMixerNode: AudioMixerNode
    /// The end of the graph.
    public let outputNode: AudioOutputNode

    private struct Connection: Equatable {
        var source: ObjectIdentifier
        var destination: ObjectIdentifier
        var bus: Int
    }

    private struct Graph {
        var nodes: [ObjectIdentifier: AudioNode] = [:]
        var connections: [Connection] = []
        var generation: UInt64 = 0
    }

    private let lock = NSLock()
    private var graph = Graph()
    private var format: AudioFormat
    private var maximumFrames: Int
    private let makeOutput: @Sendable () throws -> any AudioOutputDriver
    private let makeInput: @Sendable () throws -> any AudioInputDriver
    /// The input node, once ``inputNode`` was read (lock held).
    private var inputNodeStorage: AudioInputNode?
    private var driver: (any AudioOutputDriver)?
    private var driverEvents: Task<Void, Never>?
    private var manualMode: ManualRenderingMode?
    private var manualScratch: UnsafeMutablePointer<Float>?
    private let runningFlag = Atomic<Bool>(false)
    private var prepared = false
    private let events = EventBroadcaster<AudioEngineEvent>()

    // Plan handoff: control → render (the newest plan), render → control (plans to release).
    /// The plan waiting for the render thread (a retained `RenderPlan`), or nil. A newer plan
    /// replaces one the render thread has not taken yet — the control plane then releases the
    /// one replaced, which the render thread never saw — so the newest graph always arrives and
    /// nothing is dropped however many changes come between two render cycles.
    private let pending = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Plans the render thread swapped out, released by the control plane. At most one swap per
    /// plan published, and every publish drains it first: it cannot fill up.
    private let retired = SPSCQueue<UnsafeMutableRawPointer>(capacity: 64)
    /// The channel count of `format`, for the render thread (which takes no lock).
    private let renderChannels = Atomic<Int>(2)
    /// Nodes already built for the current format (`engineWillRender` called): a new plan
    /// configures only the others, so a node that is rendering is never reconfigured under the
    /// render thread. Cleared when the format changes (only while stopped). Lock held.
    private var configuredNodes: Set<ObjectIdentifier> = []
    /// The plan the render thread uses (render thread only while running; control plane otherwise).
    private var current: Unmanaged<RenderPlan>?
    /// Frames rendered since the engine started (the engine's sample clock).
    private let sampleTimeCounter = Atomic<Int64>(0)
    /// When set (before `start`), the engine reports the end of its output once this source has
    /// ended, so that an output driver can stop and drain (a player built on an engine: its
    /// stream node, or a queue's player node once its last scheduled item has played).
    package var endsWith: AudioNode? {
        didSet { endingKernel = endsWith?.kernel as? any EndingSource }
    }
    /// The kernel of `endsWith`, cast once (render thread reads it).
    private var endingKernel: (any EndingSource)?
    /// Render thread: frames of tail still to render after the primary source ended (-1: not ending).
    private var tailLeft = -1

    /// Creates an engine that renders `outputFormat` (channels and rate; samples are Float32) to
    /// the output `output` makes when it starts (by default ``automaticOutput``: the driver
    /// registry's automatic choice). Its ``inputNode`` captures through the driver `input` makes
    /// (by default the one registered in ``InputDriverRegistry/shared``), only when it is used.
    public convenience init(outputFormat: AudioFormat = .interleavedFloat(sampleRate: 48_000, channels: 2),
                            output: @escaping @Sendable () throws -> any AudioOutputDriver = AudioEngine.automaticOutput) {
        self.init(outputFormat: outputFormat, output: output, input: AudioEngine.automaticInput)
    }

    /// An engine as ``init(outputFormat:output:)`` makes, whose ``inputNode`` captures through
    /// the driver `input` makes.
    public init(outputFormat: AudioFormat = .interleavedFloat(sampleRate: 48_000, channels: 2),
                output: @escaping @Sendable () throws -> any AudioOutputDriver = AudioEngine.automaticOutput,
                input: @escaping @Sendable () throws -> any AudioInputDriver) {
        makeInput = input
        var f = outputFormat
        f.isInterleaved = true
        f.commonFormat = .pcmFormatFloat32
        format = f
        renderChannels.store(f.channelCount, ordering: .relaxed)
        maximumFrames = 4096
        makeOutput = output
        mainMixerNode = AudioMixerNode()
        outputNode = AudioOutputNode()
        attach(outputNode)
        attach(mainMixerNode)
        try! connect(mainMixerNode, to: outputNode, format: nil)  // both attached, no loop: cannot fail
    }

    deinit {
        stop()
        lock.lock()
        drainHandoff()
        current?.release()
        current = nil
        lock.unlock()
        manualScratch?.deallocate()
    }

    /// The automatic choice of ``OutputDriverRegistry/shared`` (``OutputSelection/automatic(server:timeout:registry:)``):
    /// PulseAudio when the program registered it (`PulseOutput.register()`) and a server answers,
    /// otherwise the real-time null output. The engine itself knows no driver. Its buffering is
    /// short (``OutputBuffering/short``, a fixed 75 ms through PulseAudio): an engine may play live
    /// input (its input node) or react to what its owner does at any moment (a node scheduled
    /// now, an effect changed now), which a long buffer would delay — and the engine knows of no
    /// seek at which to flush it.
    public static let automaticOutput: @Sendable () throws -> any AudioOutputDriver = {
        OutputSelection.automatic().selection.makeDriver(streamName: "Engine", buffering: .short)
    }

    /// The input driver registered in ``InputDriverRegistry/shared`` (`PulseInput.register()`);
    /// throws ``AudioInputError/noInputDriver`` when none is.
    public static let automaticInput: @Sendable () throws -> any AudioInputDriver = {
        try InputDriverRegistry.shared.makeDriver()
    }

    /// The engine's input (`AVAudioEngine.inputNode`): made and attached on first use, one per
    /// engine. Reading it opens nothing; the input is opened when the engine starts with the node
    /// connected into the graph or tapped (see ``AudioInputNode``), and `start()` then throws
    /// what stops it: ``AudioInputError/categoryDoesNotAllowInput(category:)`` when the audio
    /// session's category is not `record` or `playAndRecord`, a missing source or driver.
    public var inputNode: AudioInputNode {
        lock.withLock {
            if let n = inputNodeStorage { return n }
            let n = AudioInputNode(makeDriver: makeInput)
            inputNodeStorage = n
            graph.nodes[ObjectIdentifier(n)] = n
            n.engine = self
            // Made while the engine runs: a tap installed now opens at once. Unused, it opens
            // nothing (and so cannot fail).
            if runningFlag.load(ordering: .acquiring), manualMode == nil { try? n.engineStarting(renderFormat: nil) }
            return n
        }
    }

    /// Whether the output node pulls from `node` through the connections (lock held).
    private func feedsOutputLocked(_ node: AudioNode) -> Bool {
        var id = ObjectIdentifier(node)
        var seen: Set<ObjectIdentifier> = []
        while seen.insert(id).inserted {
            if id == ObjectIdentifier(outputNode) { return true }
            guard let next = graph.connections.first(where: { $0.source == id }) else { return false }
            id = next.destination
        }
        return false
    }

    // MARK: Graph

    /// The format every node renders in (interleaved Float32).
    public var outputFormat: AudioFormat { lock.withLock { format } }

    /// Events: configuration changes, a lost output. A new stream per call.
    public var eventStream: AsyncStream<AudioEngineEvent> { events.stream() }

    /// Adds `node` to the graph (not yet connected). Attaching an attached node does nothing.
    public func attach(_ node: AudioNode) {
        lock.withLock {
            graph.nodes[ObjectIdentifier(node)] = node
            node.engine = self
        }
    }

    /// Removes `node` and every connection to and from it.
    public func detach(_ node: AudioNode) {
        lock.withLock {
            let id = ObjectIdentifier(node)
            graph.connections.removeAll { $0.source == id || $0.destination == id }
            graph.nodes[id] = nil
            configuredNodes.remove(id)
            node.engine = nil
            publishLocked()
        }
    }

    /// The nodes attached, in no particular order.
    public var attachedNodes: [AudioNode] { lock.withLock { Array(graph.nodes.values) } }

    /// Connects `source`'s output to `destination`'s next free input bus (a mixer takes any number;
    /// other nodes one). A source connects to one destination: an earlier connection from it is
    /// replaced. `format` may be nil; when given, its channel count and rate must be the engine's
    /// (sources convert their own audio to the engine's format).
    /// - Throws: ``TonearmError/invalidArgument(_:)`` when a node is not attached to this engine,
    ///   the source is the output node, `format` differs from the engine's, or the connection
    ///   would make a loop.
    public func connect(_ source: AudioNode, to destination: AudioNode, format: AudioFormat?) throws {
        try lock.withLock {
            let s = ObjectIdentifier(source), d = ObjectIdentifier(destination)
            guard graph.nodes[s] != nil, graph.nodes[d] != nil else {
                throw TonearmError.invalidArgument("connect: attach both nodes to this engine first")
            }
            guard source.numberOfOutputs > 0 else {
                throw TonearmError.invalidArgument("connect: the output node has no output to connect")
            }
            guard destination.numberOfInputs > 0 else {
                throw TonearmError.invalidArgument("connect: the destination has no input")
            }
            if let f = format, f.sampleRate != self.format.sampleRate || f.channelCount != self.format.channelCount {
                throw TonearmError.invalidArgument("connect: format \(f) differs from the engine's \(self.format)")
            }
            guard !makesCycle(source: s, destination: d) else {
                throw TonearmError.invalidArgument("connect: this connection would make a loop in the graph")
            }
            graph.connections.removeAll { $0.source == s }
            if destination.numberOfInputs == 1 { graph.connections.removeAll { $0.destination == d } }
            let used = Set(graph.connections.filter { $0.destination == d }.map(\.bus))
            let bus = (0...).first { !used.contains($0) }!
            graph.connections.append(Connection(source: s, destination: d, bus: bus))
            publishLocked()
            if let input = inputNodeStorage, manualMode == nil, runningFlag.load(ordering: .acquiring),
               feedsOutputLocked(input) {
                try input.engineConnected(renderFormat: self.format)
            }
        }
    }

    /// Removes whatever feeds `node`'s input `bus` (every input when `bus` is nil).
    public func disconnectNodeInput(_ node: AudioNode, bus: Int? = nil) {
        lock.withLock {
            let d = ObjectIdentifier(node)
            graph.connections.removeAll { $0.destination == d && (bus == nil || $0.bus == bus) }
            publishLocked()
        }
    }

    /// Removes the connection from `node`'s output.
    public func disconnectNodeOutput(_ node: AudioNode) {
        lock.withLock {
            let s = ObjectIdentifier(node)
            graph.connections.removeAll { $0.source == s }
            publishLocked()
        }
    }

    /// The nodes feeding `node`, in bus order.
    public func inputs(of node: AudioNode) -> [AudioNode] {
        lock.withLock { inputsLocked(of: ObjectIdentifier(node)) }
    }

    private func inputsLocked(of id: ObjectIdentifier) -> [AudioNode] {
        graph.connections.filter { $0.destination == id }.sorted { $0.bus < $1.bus }
            .compactMap { graph.nodes[$0.source] }
    }

    /// Whether connecting `source` → `destination` would close a loop: true when `destination`
    /// already feeds `source` (directly or through other nodes), or they are the same node.
    private func makesCycle(source: ObjectIdentifier, destination: ObjectIdentifier) -> Bool {
        var stack = [source]
        var seen: Set<ObjectIdentifier> = []
        while let n = stack.popLast() {
            if n == destination { return true }
            guard seen.insert(n).inserted else { continue }
            stack += graph.connections.filter { $0.destination == n }.map(\.source)
        }
        return false
    }

    // MARK: Plans

    /// Builds a plan from the graph and hands it to the render thread. Lock held.
    private func publishLocked() {
        graph.generation += 1
        guard prepared else { return }
        drainRetired()
        // Render order: each node after its inputs, starting from the output node.
        var order: [AudioNode] = []
        var state: [ObjectIdentifier: Int] = [:]  // 1 visiting, 2 done
        var inputsOf: [ObjectIdentifier: [AudioNode]] = [:]
        func visit(_ id: ObjectIdentifier) {
            if state[id] != nil { return }
            state[id] = 1
            let ins = inputsLocked(of: id)
            inputsOf[id] = ins
            for i in ins { visit(ObjectIdentifier(i)) }
            state[id] = 2
            if let n = graph.nodes[id] { order.append(n) }
        }
        visit(ObjectIdentifier(outputNode))
        for n in order where configuredNodes.insert(ObjectIdentifier(n)).inserted {
            n.engineWillRender(format: format, maximumFrames: maximumFrames)
        }
        let tail = order.reduce(0.0) { $0 + max(0, $1.tailTime) }
        let plan = RenderPlan(order: order, inputsOf: inputsOf, final: outputNode, channels: format.channelCount,
                              maximumFrames: maximumFrames, generation: graph.generation,
                              tailFrames: Int((tail * format.sampleRate).rounded(.up)), primary: endsWith)
        let p = Unmanaged.passRetained(plan)
        if runningFlag.load(ordering: .acquiring) {
            // The newest plan replaces one not taken yet (released here, off the render thread).
            if let replaced = pending.exchange(p.toOpaque(), ordering: .acquiringAndReleasing) {
                Unmanaged<RenderPlan>.fromOpaque(replaced).release()
            }
        } else {
            // Nobody renders now: install directly.
            drainHandoff()
            current?.release()
            current = p
        }
    }

    private func drainRetired() {
        while let r = retired.pop() { Unmanaged<RenderPlan>.fromOpaque(r).release() }
    }

    /// Control plane, when no render thread runs: takes over both queues.
    private func drainHandoff() {
        if let m = pending.exchange(nil, ordering: .acquiringAndReleasing) {
            current?.release()
            current = Unmanaged<RenderPlan>.fromOpaque(m)
        }
        drainRetired()
    }

    // MARK: Running

    /// Builds the first plan and prepares the nodes, so that `start()` is quick.
    public func prepare() {
        lock.withLock {
            if prepared { return }
            prepared = true
            publishLocked()
        }
    }

    /// Whether the engine is rendering.
    public var isRunning: Bool { runningFlag.load(ordering: .acquiring) }

    /// Starts rendering: with voice processing enabled (``AudioInputNode/setVoiceProcessingEnabled(_:)``)
    /// makes the output and loads the echo canceller for it first; opens the input when the
    /// ``inputNode`` is connected or tapped, then the output (unless in manual rendering mode),
    /// and pulls the graph.
    /// - Throws: ``AudioInputError`` when the input is used and cannot be opened (the session's
    ///   category does not allow input, no source, no input driver, an echo canceller that cannot
    ///   be loaded: ``AudioInputError/voiceProcessingUnavailable(reason:)``), before the output is opened;
    ///   ``TonearmError/outputUnavailable(driver:reason:)`` when the output cannot be opened.
    public func start() throws {
        prepare()
        try lock.withLock {
            if runningFlag.load(ordering: .acquiring) { return }
            if manualMode != nil {
                runningFlag.store(true, ordering: .releasing)
                return
            }
            // The input first: a session that does not allow it fails the start before the
            // output opens. With voice processing, the output is made first (not opened), for
            // the canceller to be loaded on its device and the output pointed at the canceller.
            var made = driver
            if let input = inputNodeStorage {
                do {
                    if made == nil, input.needsVoiceProcessing {
                        let d = try makeOutput()
                        made = d
                        try input.startVoiceProcessing(output: d)
                    }
                    try input.engineStarting(renderFormat: feedsOutputLocked(input) ? format : nil)
                } catch {
                    input.engineStopped()
                    throw error
                }
            }
            let d: any AudioOutputDriver
            do { d = try made ?? makeOutput() } catch {
                inputNodeStorage?.engineStopped()
                throw error
            }
            if driver == nil {
                do { try d.open(format: format) } catch {
                    inputNodeStorage?.engineStopped()
                    throw error
                }
                driver = d
                let stream = d.events
                let box = events
                driverEvents = Task.detached { [weak self] in
                    for await e in stream {
                        switch e {
                        case .moved, .deviceRemoved: box.yield(.configurationChange)
                        case .deviceLost(let r):
                            box.yield(.outputLost(reason: r))
                            self?.stop()
                        default: break
                        }
                    }
                }
            }
            runningFlag.store(true, ordering: .releasing)
            do { try d.start(source: self) } catch {
                runningFlag.store(false, ordering: .releasing)
                inputNodeStorage?.engineStopped()
                throw error
            }
        }
    }

    /// Pauses rendering; the output stays open and `start()` resumes.
    public func pause() {
        lock.withLock {
            runningFlag.store(false, ordering: .releasing)
            driver?.stop()
            drainHandoff()
        }
    }

    /// Stops rendering and closes the output.
    public func stop() {
        lock.withLock {
            runningFlag.store(false, ordering: .releasing)
            if let d = driver {
                d.stop()
                d.close()
            }
            driver = nil
            driverEvents?.cancel()
            driverEvents = nil
            drainHandoff()
            // The render thread no longer runs: the input's rings may go.
            inputNodeStorage?.engineStopped()
        }
    }

    /// Voice processing may change only while the engine is stopped (not running, not paused)
    /// and not in manual rendering mode. Control plane.
    package func checkVoiceProcessingChange() throws {
        try lock.withLock {
            if manualMode != nil { throw AudioInputError.voiceProcessingInManualRenderingMode }
            if runningFlag.load(ordering: .acquiring) || driver != nil { throw AudioInputError.voiceProcessingWhileRunning }
        }
    }

    /// The input node's source went away and the node stopped its input: reports it. Any thread.
    package func inputWentAway(_ error: AudioInputError) {
        events.yield(.configurationChange)
        events.yield(.inputLost(error))
    }

    /// Resets the engine's sample clock (nodes keep their schedules).
    public func reset() { sampleTimeCounter.store(0, ordering: .relaxed) }

    /// The engine's sample clock: frames rendered since it started. A chunk is counted as its
    /// rendering begins, so a completion signalled while it renders (`dataRendered`) never finds
    /// the clock behind the frames it reports.
    public var sampleTime: AudioFramePosition { sampleTimeCounter.load(ordering: .acquiring) }

    /// Seconds between rendering and hearing (the output's latency; 0 offline).
    public var outputLatency: Double { lock.withLock { driver?.latency ?? 0 } }

    // MARK: Manual rendering

    /// Switches to manual rendering: no device; the caller pulls audio with
    /// ``renderOffline(_:to:)``. The engine must be stopped.
    /// - Throws: ``TonearmError/invalidState(_:)`` while running, ``TonearmError/invalidArgument(_:)``
    ///   for an invalid format or frame count.
    public func enableManualRenderingMode(_ mode: ManualRenderingMode, format newFormat: AudioFormat,
                                          maximumFrameCount: Int) throws {
        guard newFormat.isValid else { throw TonearmError.invalidArgument("manual rendering format \(newFormat) is not valid") }
        guard (1...1_048_576).contains(maximumFrameCount) else {
            throw TonearmError.invalidArgument("maximumFrameCount \(maximumFrameCount) is outside 1…1048576")
        }
        try lock.withLock {
            guard !runningFlag.load(ordering: .acquiring) else {
                throw TonearmError.invalidState("enableManualRenderingMode: stop the engine first")
            }
            var f = newFormat
            f.isInterleaved = true
            f.commonFormat = .pcmFormatFloat32
            if f != format || maximumFrameCount != maximumFrames { configuredNodes.removeAll() }
            format = f
            renderChannels.store(f.channelCount, ordering: .relaxed)
            maximumFrames = maximumFrameCount
            manualMode = mode
            manualScratch?.deallocate()
            manualScratch = .allocate(capacity: maximumFrameCount * f.channelCount)
            publishLocked()
        }
    }

    /// Whether the engine is in manual rendering mode.
    public var isInManualRenderingMode: Bool { lock.withLock { manualMode != nil } }

    /// Renders `frameCount` frames of the graph into `buffer` (manual rendering mode, running).
    /// As fast as the CPU allows; sources wait for their decoders, so the result is identical run
    /// after run.
    /// - Throws: ``TonearmError/invalidArgument(_:)`` when `frameCount` exceeds the maximum or
    ///   the buffer's capacity, or the buffer's channel count is not the engine's.
    public func renderOffline(_ frameCount: Int, to buffer: AudioPCMBuffer) throws -> ManualRenderingStatus {
        let (scratch, channels, maxFrames) = lock.withLock { (manualScratch, format.channelCount, maximumFrames) }
        guard let scratch, isRunning else { return .cannotDoInCurrentContext }
        guard frameCount >= 0, frameCount <= maxFrames, frameCount <= buffer.frameCapacity else {
            throw TonearmError.invalidArgument("renderOffline: \(frameCount) frames exceeds the maximum (\(maxFrames)) or the buffer's capacity (\(buffer.frameCapacity))")
        }
        guard buffer.channelCount == channels else {
            throw TonearmError.invalidArgument("renderOffline: the buffer has \(buffer.channelCount) channels, the engine renders \(channels)")
        }
        _ = render(into: scratch, frameCount: frameCount, timing: .offline)
        buffer.frameLength = frameCount
        for c in 0..<channels {
            let dst = buffer.floatChannelData[c]
            for f in 0..<frameCount { dst[f] = scratch[f * channels + c] }
        }
        return .success
    }

    // MARK: Render thread

    /// The output driver's render callback (or `renderOffline`'s): installs the newest plan, runs
    /// it in chunks of at most the plan's maximum, and advances the sample clock.
    public func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        // While stopped the control plane owns the plan handoff; touch nothing.
        guard runningFlag.load(ordering: .acquiring) else {
            buffer.update(repeating: 0, count: frameCount * renderChannels.load(ordering: .relaxed))
            return RenderResult(framesRendered: 0, ended: false)
        }
        if let next = pending.exchange(nil, ordering: .acquiringAndReleasing) {
            if let old = current, !retired.push(old.toOpaque()) {
                _ = old  // cannot happen (see `retired`); keeping the plan beats freeing it here
            }
            current = Unmanaged<RenderPlan>.fromOpaque(next)
        }
        guard let plan = current?.takeUnretainedValue() else {
            buffer.update(repeating: 0, count: frameCount * renderChannels.load(ordering: .relaxed))
            return RenderResult(framesRendered: 0, ended: false)
        }
        var done = 0
        let ch = plan.channels
        let primary = endingKernel
        while done < frameCount {
            let n = min(plan.maximumFrames, frameCount - done)
            sampleTimeCounter.add(Int64(n), ordering: .releasing)  // before the completions it may signal
            plan.run(into: buffer + done * ch, frames: n, timing: timing)
            if let primary, primary.endedInLastCall {
                // The primary source has ended: render the effects' tail, then report the end.
                if tailLeft < 0 {
                    if plan.primaryIsPulled {
                        // Read ahead by a variable-rate node: what it holds still has to come out.
                        tailLeft = max(1, plan.tailFrames)
                    } else {
                        tailLeft = plan.tailFrames - (n - primary.framesInLastCall)
                        if plan.tailFrames == 0 { tailLeft = -(n - primary.framesInLastCall) }
                    }
                } else {
                    tailLeft -= n
                }
                if tailLeft <= 0 {
                    let real = done + n + tailLeft
                    (buffer + real * ch).update(repeating: 0, count: (frameCount - real) * ch)
                    sampleTimeCounter.subtract(Int64(done + n - real), ordering: .relaxed)  // counted, not rendered
                    return RenderResult(framesRendered: real, ended: true)
                }
            } else {
                // The primary plays again (more was scheduled after an end): an end reported
                // before says nothing about the next one. Kept, a count that had reached exactly
                // 0 made the next end drop the audio of its last chunk, and a tail still under
                // way when the audio came back cut the next end short.
                tailLeft = -1
            }
            done += n
        }
        return RenderResult(framesRendered: frameCount, ended: false)
    }

    // MARK: Hosting (a player that owns its output driver)

    /// Replaces the effect chain between `source` and the main mixer: detaches the nodes of
    /// `old` that are not in `chain`, attaches and connects `source → chain… → mainMixerNode`.
    /// Returns the chain now in place: `chain`, or `[]` when a node could not be connected (the
    /// graph then plays `source` straight into the mixer, and the error is thrown). Control
    /// plane; live (the render thread swaps in the new plan between two cycles).
    package func replaceChain(after source: AudioNode, old: [AudioNode], with chain: [AudioNode]) throws -> [AudioNode] {
        for n in old where !chain.contains(where: { $0 === n }) { detach(n) }
        for n in chain { attach(n) }
        var previous = source
        do {
            for n in chain {
                try connect(previous, to: n, format: nil)
                previous = n
            }
            try connect(previous, to: mainMixerNode, format: nil)
            return chain
        } catch {
            for n in chain { detach(n) }
            try? connect(source, to: mainMixerNode, format: nil)
            throw error
        }
    }

    /// Seconds of tail the attached nodes produce after their input ends (see ``AudioNode/tailTime``).
    package var tailTime: Double { lock.withLock { graph.nodes.values.reduce(0) { $0 + max(0, $1.tailTime) } } }

    /// The output driver, for owners that cork, drain or watch it (the engine's own driver).
    package var outputDriver: (any AudioOutputDriver)? { lock.withLock { driver } }
}

