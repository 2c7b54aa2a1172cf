// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Glibc
import Synchronization
import TonearmCore
import TonearmRender

/// What a tap hands its block (`AVAudioNodeTapBlock`): a buffer of the size asked for
/// (non-interleaved Float32, a new one each call: the block may keep it) and the sample time of
/// its first frame.
public typealias AudioNodeTapBlock = @Sendable (AudioPCMBuffer, AudioTime) -> Void

/// The engine's input (the counterpart of `AVAudioInputNode`, ``AudioEngine/inputNode``): the
/// session's input — its preferred input, else the sound server's default source — as a source
/// node of the graph, and the node iOS code reads microphone buffers from with a tap.
///
/// Nothing is opened until the engine starts with the node in use: connected into the graph
/// (input → effects → main mixer → output: the microphone monitored through the effects), or
/// with a tap installed. An engine that only plays costs nothing more. Each use is one capture
/// stream of the input driver (``AudioInputDriver``, PulseAudio's `PulseInput`): the graph's in
/// the engine's format (the server converts rate and channels), a tap's in the tap's format
/// (nil: the source's own, ``outputFormat(forBus:)``).
///
/// The capture thread (the driver's) copies into a preallocated lock-free ``CaptureRing`` and
/// does nothing else. In the graph, the render thread reads that ring: it starts once 30 ms are
/// there, keeps at most 200 ms queued (more, when the source's clock runs ahead of the
/// output's, is dropped), and renders frames the source has not delivered in time as silence,
/// counting an underrun (``underrunCount``). A tap's frames are read by a thread of its own
/// (`tonearm-tap`), which calls the block — never on the capture or render thread.
///
/// Threading: `installTap`, `removeTap` and the formats may be called from any thread, the
/// block too (`removeTap` from the block makes its current call the last); the tap's block runs
/// on the tap's thread, one call at a time. `engine.stop()` waits for a block that is running:
/// a block must not wait for a thread that is stopping the engine.
///
/// `@unchecked Sendable`: the streams, the tap and the driver are under `state`.
public final class AudioInputNode: AudioNode, @unchecked Sendable {
    let inputKernel: InputKernel
    private let makeDriver: @Sendable () throws -> any AudioInputDriver

    private struct State {
        var driver: (any AudioInputDriver)?
        var tap: InputTap?
        var renderStream: (any AudioInputStream)?
        /// Set while the engine runs (between ``engineStarting`` and ``engineStopped``).
        var running = false
        /// Whether voice processing is enabled (``setVoiceProcessingEnabled(_:)``).
        var voiceProcessing = false
        /// The echo canceller of this run of the engine (voice processing enabled), whose streams
        /// the node opens instead of the driver's.
        var processor: (any VoiceProcessingInput)?
        /// Why the input stopped while the engine ran (its source went away); nil again at a start.
        var lost: AudioInputError?
    }
    private let state = Mutex(State())

    init(makeDriver: @escaping @Sendable () throws -> any AudioInputDriver) {
        let k = InputKernel()
        inputKernel = k
        self.makeDriver = makeDriver
        super.init(kernel: k, inputs: 0, outputs: 1)
    }

    deinit { engineStopped() }

    private func driverLocked(_ s: inout State) throws -> any AudioInputDriver {
        if let d = s.driver { return d }
        let d = try makeDriver()
        s.driver = d
        return d
    }

    /// The driver streams are opened from: the echo canceller while voice processing runs.
    private func streamDriverLocked(_ s: inout State) throws -> any AudioInputDriver {
        if let p = s.processor { return p }
        return try driverLocked(&s)
    }

    // MARK: Voice processing

    /// Whether voice processing is enabled (`AVAudioIONode.isVoiceProcessingEnabled`).
    public var isVoiceProcessingEnabled: Bool { state.withLock { $0.voiceProcessing } }

    /// Enables or disables voice processing (`AVAudioIONode.setVoiceProcessingEnabled(_:)`): an
    /// echo canceller — PulseAudio's `module-echo-cancel` through `PulseInput` — between the
    /// input and the engine's output, so that an engine in the `playAndRecord` category plays
    /// and records at once without recording what it plays. Enabled, each start of the engine
    /// loads the canceller for the input's source and the output's sink, captures from the
    /// canceller's source and plays to its sink; `stop()` unloads it. As on Apple's platforms it
    /// is changed only while the engine is stopped, and not in manual rendering mode. Control
    /// plane; blocks while the driver checks the session.
    /// - Throws: ``AudioInputError/voiceProcessingWhileRunning`` (running or paused: stop first),
    ///   ``AudioInputError/voiceProcessingInManualRenderingMode``, and to enable,
    ///   ``AudioInputError/voiceProcessingNeedsPlayAndRecord(category:)``,
    ///   ``AudioInputError/noInputDriver`` or ``AudioInputError/voiceProcessingUnavailable(reason:)``
    ///   (a driver without a canceller). Loading the canceller fails at `start()`, with
    ///   ``AudioInputError/voiceProcessingUnavailable(reason:)``.
    public func setVoiceProcessingEnabled(_ enabled: Bool) throws {
        try engine?.checkVoiceProcessingChange()
        try state.withLock { s in
            if enabled { try driverLocked(&s).checkVoiceProcessing() }
            s.voiceProcessing = enabled
        }
    }

    /// The engine starts with voice processing enabled and a new output `output` (not opened
    /// yet): loads the canceller for the input's source and the output's own device and points
    /// the output at its sink. Nothing when voice processing is off or already runs. Control plane.
    func startVoiceProcessing(output: any AudioOutputDriver) throws {
        try state.withLock { s in
            guard s.voiceProcessing, s.processor == nil else { return }
            let p = try driverLocked(&s).startVoiceProcessing(outputDevice: output.ownDevice)
            guard output.playThrough(device: p.outputDevice) else {
                p.close()
                throw AudioInputError.voiceProcessingUnavailable(
                    reason: "the output driver '\(output.name)' cannot play through the echo canceller's sink")
            }
            s.processor = p
        }
    }

    /// Whether the engine must start voice processing (enabled, not running yet).
    var needsVoiceProcessing: Bool { state.withLock { $0.voiceProcessing && $0.processor == nil } }

    // MARK: A source that goes away

    /// Why the input stopped while the engine ran — ``AudioInputError/inputLost(source:reason:)``
    /// when its source went away (the engine also reported it: ``AudioEngineEvent/inputLost(_:)``);
    /// nil while it captures, and again at each start.
    public var inputError: AudioInputError? { state.withLock { $0.lost } }

    /// Watches `stream`: when it captures no more, ``inputWentAway(source:reason:)`` runs on a
    /// dispatch queue (the driver's thread only hands the news on).
    private func watch(_ stream: any AudioInputStream) {
        let source = stream.sourceName
        stream.onLoss { [weak self] reason in
            guard let node = self else { return }
            DispatchQueue.global().async { node.inputWentAway(source: source, reason: reason) }
        }
    }

    /// A stream's source went away while the engine ran: the input stops — the graph's ring is
    /// taken from the render thread (it renders silence; the stream is closed at `stop()`), the
    /// tap's thread stops (the tap stays installed, for the next start) — and the engine reports
    /// a configuration change and ``AudioEngineEvent/inputLost(_:)``. Once per run.
    func inputWentAway(source: String, reason: String) {
        let error = AudioInputError.inputLost(source: source.isEmpty ? "the input" : "'\(source)'", reason: reason)
        let (first, tap) = state.withLock { s -> (Bool, InputTap?) in
            guard s.running, s.lost == nil else { return (false, nil) }
            s.lost = error
            // The stream object stays (in `renderStream`) until the render thread runs no more.
            inputKernel.ringSlot.store(nil, ordering: .releasing)
            inputKernel.ringGeneration.add(1, ordering: .releasing)
            return (true, s.tap)
        }
        guard first else { return }
        tap?.halt()
        engine?.inputWentAway(error)
    }

    /// The format of the input: the source's own rate and channel count (interleaved Float32).
    /// When input is not available — the session's category does not allow it, there is no
    /// input driver or no source — a format of 0 Hz and 0 channels (not valid), as
    /// `AVAudioInputNode` reports; ``inputAvailability`` says why. Blocks while it asks the server.
    public func outputFormat(forBus bus: Int) -> AudioFormat {
        (try? inputAvailability.get()) ?? AudioFormat(sampleRate: 0, channelCount: 0, isInterleaved: true)
    }

    /// The same as ``outputFormat(forBus:)``: the input's hardware format.
    public func inputFormat(forBus bus: Int) -> AudioFormat { outputFormat(forBus: bus) }

    /// The source's format, or why input cannot be used (``AudioInputError``). Blocks while it
    /// asks the server.
    public var inputAvailability: Result<AudioFormat, AudioInputError> {
        do {
            let d = try state.withLock { s in try driverLocked(&s) }
            return .success(try d.sourceFormat())
        } catch let e as AudioInputError {
            return .failure(e)
        } catch {
            return .failure(.inputUnavailable(source: "the input", reason: "\(error)"))
        }
    }

    /// Times the graph wanted input frames the source had not delivered yet (rendered as silence).
    public var underrunCount: Int { inputKernel.underruns.load(ordering: .relaxed) }
    /// Frames dropped because more than 200 ms of input were waiting (the source's clock ran
    /// ahead of the output's, or the engine was paused).
    public var droppedFrameCount: Int64 { inputKernel.dropped.load(ordering: .relaxed) }

    /// Whether a tap is installed on bus 0.
    override public var hasTap: Bool { state.withLock { $0.tap != nil } }

    /// Calls `block` with each `bufferSize` frames the input captures (`AVAudioNode.installTap`),
    /// on a thread of the tap's own, from when the engine runs (at once when it runs now) until
    /// ``removeTap(onBus:)``. `format` nil takes the source's format; another rate or channel
    /// count is converted by the server. The buffers follow each other without a gap: the
    /// ``AudioTime`` of each is the previous one's plus its length (holes the server reports are
    /// silence in the buffers; frames lost because the block fell 4 s behind move the time on
    /// by as many), from 0 at each start of the engine. The tap stays installed across `stop()`
    /// and `start()` (its stream is closed and opened again).
    /// - Throws: ``AudioInputError/noSuchBus(node:bus:)`` for a bus other than 0,
    ///   ``AudioInputError/tapAlreadyInstalled(node:bus:)`` when bus 0 has a tap,
    ///   ``AudioInputError/invalidTap(node:reason:)`` for a size outside 1…1048576 or an invalid
    ///   format, and when the engine runs, what opening the input throws (the category, the source).
    override public func installTap(onBus bus: Int, bufferSize: Int, format: AudioFormat?,
                                    block: @escaping AudioNodeTapBlock) throws {
        guard bus == 0 else { throw AudioInputError.noSuchBus(node: "the input node", bus: bus) }
        guard (1...1_048_576).contains(bufferSize) else {
            throw AudioInputError.invalidTap(node: "the input node", reason: "bufferSize \(bufferSize) is outside 1…1048576")
        }
        if let format, !format.isValid {
            throw AudioInputError.invalidTap(node: "the input node", reason: "format \(format) is not valid")
        }
        try state.withLock { s in
            guard s.tap == nil else { throw AudioInputError.tapAlreadyInstalled(node: "the input node", bus: bus) }
            let tap = InputTap(bufferSize: bufferSize, format: format, block: block) { [weak self] in self?.watch($0) }
            if s.running, s.lost == nil { try tap.start(driver: try streamDriverLocked(&s)) }
            s.tap = tap
        }
    }

    /// Removes the tap on `bus` (`AVAudioNode.removeTap`). Once it returns the block is not called
    /// again (called from inside the block, the block's current call is the last). No tap: nothing.
    override public func removeTap(onBus bus: Int) {
        guard bus == 0 else { return }
        let tap = state.withLock { s in
            let t = s.tap
            s.tap = nil
            return t
        }
        tap?.halt()
    }

    // MARK: The engine's calls (control plane, under the engine's lock)

    /// The engine starts: opens the graph's stream when the node is in the graph (`renderFormat`:
    /// the engine's format) and the tap's. On failure nothing stays open.
    func engineStarting(renderFormat: AudioFormat?) throws {
        try state.withLock { s in
            guard !s.running else { return }
            s.lost = nil
            do {
                if let renderFormat { try openRenderLocked(&s, format: renderFormat) }
                if let tap = s.tap { try tap.start(driver: try streamDriverLocked(&s)) }
                s.running = true
            } catch {
                // Nothing of the tap's runs yet (its start failed, or came not): closed here.
                let (stream, tap) = takeLocked(&s)
                stream?.close()
                tap?.halt()
                throw error
            }
        }
    }

    /// The node was connected into the graph of a running engine: opens its stream if not open.
    func engineConnected(renderFormat: AudioFormat) throws {
        try state.withLock { s in
            guard s.running, s.renderStream == nil, s.lost == nil else { return }
            try openRenderLocked(&s, format: renderFormat)
        }
    }

    /// The engine stopped (its render thread will not run the kernel again): closes everything.
    /// The tap's thread is waited for outside the node's lock, so that a block calling
    /// `removeTap` meanwhile does not wait for it.
    func engineStopped() {
        let (stream, tap, processor) = state.withLock { s in
            s.running = false
            let (stream, tap) = takeLocked(&s)
            let p = s.processor
            s.processor = nil
            return (stream, tap, p)
        }
        stream?.close()
        tap?.halt()
        // The canceller goes once nothing captures from it.
        processor?.close()
    }

    private func openRenderLocked(_ s: inout State, format: AudioFormat) throws {
        let stream = try streamDriverLocked(&s).openStream(format: format, streamName: "Engine input")
        watch(stream)
        do { try stream.start() } catch {
            stream.close()
            throw error
        }
        s.renderStream = stream
        inputKernel.ringGeneration.add(1, ordering: .releasing)
        inputKernel.ringSlot.store(Unmanaged.passUnretained(stream.ring).toOpaque(), ordering: .releasing)
    }

    /// Takes the graph's stream out of the kernel and the node, and the tap to halt (it stays
    /// installed, to start again with the engine); the caller closes and halts them unlocked.
    private func takeLocked(_ s: inout State) -> ((any AudioInputStream)?, InputTap?) {
        inputKernel.ringSlot.store(nil, ordering: .releasing)
        inputKernel.ringGeneration.add(1, ordering: .releasing)
        let stream = s.renderStream
        s.renderStream = nil
        return (stream, s.tap)
    }

    override package func engineWillRender(format: AudioFormat, maximumFrames: Int) {
        inputKernel.prime = Int(format.sampleRate * 0.03)
        inputKernel.maximumQueued = Int(format.sampleRate * 0.2)
    }
}

/// The input node's kernel: copies what the graph's capture stream put in its ring (already in
/// the engine's format), silence while there is none.
///
/// `@unchecked Sendable`: `ringSlot` and the counters are atomic; `prime` and `maximumQueued`
/// are set on the control plane before the node's first plan (published to the render thread
/// with it); `primed` and `lastGeneration` belong to the render thread.
final class InputKernel: NodeKernel, @unchecked Sendable {
    /// The ring the render thread reads (a `CaptureRing`, unretained: its stream is kept open by
    /// the node until the render thread no longer runs), or nil.
    let ringSlot = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Counts the rings given: a new one (a restart) starts unprimed.
    let ringGeneration = Atomic<Int>(0)
    let underruns = Atomic<Int>(0)
    let dropped = Atomic<Int64>(0)
    var prime = 1440
    var maximumQueued = 9600
    private var primed = false
    private var lastGeneration = 0

    func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                frames: Int, channels: Int, timing: RenderTiming) {
        guard let p = ringSlot.load(ordering: .acquiring) else {
            output.update(repeating: 0, count: frames * channels)
            return
        }
        let generation = ringGeneration.load(ordering: .relaxed)
        if generation != lastGeneration {
            lastGeneration = generation
            primed = false
        }
        let ring = Unmanaged<CaptureRing>.fromOpaque(p).takeUnretainedValue()
        guard ring.channels == channels else {
            output.update(repeating: 0, count: frames * channels)
            return
        }
        var available = ring.availableFrames
        if !primed {
            guard available >= frames + prime else {
                output.update(repeating: 0, count: frames * channels)
                return
            }
            primed = true
        }
        if available > maximumQueued + frames {
            // The source runs ahead (its clock, or a pause): back to the starting margin.
            let n = ring.discard(frames: available - (prime + frames))
            dropped.add(Int64(n), ordering: .relaxed)
            available -= n
        }
        let n = ring.read(into: output, maxFrames: frames)
        if n < frames {
            (output + n * channels).update(repeating: 0, count: (frames - n) * channels)
            underruns.add(1, ordering: .relaxed)
            primed = false
        }
    }
}

/// One tap: a capture stream in the tap's format and the thread (`tonearm-tap`) that cuts what
/// it captures into buffers of the tap's size and calls the block.
///
/// `@unchecked Sendable`: `stream` and `done` are under `lock` (control plane); the thread owns
/// its scratch buffer; `stopFlag` and `threadID` are atomic.
final class InputTap: @unchecked Sendable {
    let bufferSize: Int
    let format: AudioFormat?
    let block: AudioNodeTapBlock
    /// Called with each stream the tap opens, before it starts (the node watches it for a loss).
    let watch: @Sendable (any AudioInputStream) -> Void
    private let lock = NSLock()
    private var stream: (any AudioInputStream)?
    private var done: DispatchSemaphore?
    private let stopFlag = Atomic<Bool>(false)
    /// The tap thread's pthread id (0 when none runs).
    private let threadID = Atomic<UInt>(0)

    init(bufferSize: Int, format: AudioFormat?, block: @escaping AudioNodeTapBlock,
         watch: @escaping @Sendable (any AudioInputStream) -> Void = { _ in }) {
        self.bufferSize = bufferSize
        self.format = format
        self.block = block
        self.watch = watch
    }

    /// Opens the tap's stream and starts its thread. Control plane.
    func start(driver: any AudioInputDriver) throws {
        guard lock.withLock({ stream == nil }) else { return }
        try start(stream: try driver.openStream(format: format, streamName: "Engine input tap"))
    }

    /// Starts `s` and the thread reading it. Control plane.
    func start(stream s: any AudioInputStream) throws {
        try lock.withLock {
            guard stream == nil else {
                s.close()
                return
            }
            watch(s)
            do { try s.start() } catch {
                s.close()
                throw error
            }
            stream = s
            stopFlag.store(false, ordering: .releasing)
            let finished = DispatchSemaphore(value: 0)
            done = finished
            let thread = Thread { [self] in
                threadID.store(UInt(pthread_self()), ordering: .releasing)
                nameCurrentThread("tonearm-tap")
                loop(s)
                threadID.store(0, ordering: .releasing)
                finished.signal()
            }
            thread.name = "tonearm-tap"
            thread.start()
        }
    }

    /// Stops the thread — waits for it, unless called on it (from the block) — and closes the
    /// stream. Once it returns (off the tap thread) the block is not called again. Idempotent.
    func halt() {
        let (s, finished) = lock.withLock { () -> ((any AudioInputStream)?, DispatchSemaphore?) in
            let r = (stream, done)
            stream = nil
            done = nil
            return r
        }
        guard let s else { return }
        stopFlag.store(true, ordering: .releasing)
        s.wakeConsumer()
        if threadID.load(ordering: .acquiring) != UInt(pthread_self()) { finished?.wait() }
        s.close()
    }

    private func loop(_ s: any AudioInputStream) {
        let f = s.format
        let channels = f.channelCount
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: bufferSize * channels)
        defer { scratch.deallocate() }
        var filled = 0
        var sampleTime: Int64 = 0
        var droppedSeen: Int64 = 0
        while !stopFlag.load(ordering: .acquiring) {
            let n = s.ring.read(into: scratch + filled * channels, maxFrames: bufferSize - filled)
            if n == 0 {
                if s.isLost || s.lossReason != nil { break }
                s.waitForData(timeout: 0.5)
                continue
            }
            filled += n
            guard filled == bufferSize else { continue }
            filled = 0
            guard let buffer = AudioPCMBuffer(format: AudioFormat(sampleRate: f.sampleRate, channelCount: channels),
                                              frameCapacity: bufferSize) else { break }
            buffer.frameLength = bufferSize
            for c in 0..<channels {
                let dst = buffer.floatChannelData[c]
                for i in 0..<bufferSize { dst[i] = scratch[i * channels + c] }
            }
            // Frames the ring could not take since the last buffer: the timeline moves on by them.
            let dropped = s.droppedFrames
            sampleTime += dropped - droppedSeen
            droppedSeen = dropped
            guard !stopFlag.load(ordering: .acquiring) else { break }
            block(buffer, AudioTime(sampleTime: sampleTime, atRate: f.sampleRate))
            sampleTime += Int64(bufferSize)
        }
    }
}
