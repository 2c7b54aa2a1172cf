// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization
import TonearmCore
import TonearmRender

/// What a node does on the render thread. Every node of a graph has one; the engine calls it
/// once per render cycle, after the kernels of the node's inputs.
///
/// Threading: `render` runs on the engine's render thread only and must not allocate, lock a lock
/// another thread holds, or wait (except that with `.offline` timing a source may wait for its
/// decoder). `prepare` runs on the control plane while the node is not being rendered.
package protocol NodeKernel: AnyObject, Sendable {
    /// Renders `frames` interleaved frames of `channels` channels into `output`, from `inputs`
    /// (one per connected input bus, each already rendered this cycle, same layout).
    func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                frames: Int, channels: Int, timing: RenderTiming)
}

/// A kernel that works in place: it renders correctly when its one input was rendered into its
/// own output buffer (it copies its input only when the two differ, then processes the output).
/// A ``RenderPlan`` gives the node feeding such a kernel the kernel's buffer, so a chain of
/// effects costs no copies.
package protocol InPlaceKernel: NodeKernel {}

/// One input of a kernel in a render plan: the buffer the source rendered into, the source's
/// mixing settings, and a small per-connection state slot (the mixer keeps its gain ramps there).
/// All of it belongs to the plan, which keeps the source nodes alive.
package struct NodeInput {
    package let buffer: UnsafeMutablePointer<Float>
    package let mix: Unmanaged<MixSettings>
    package let state: UnsafeMutablePointer<SIMD2<Float>>
}

extension UnsafeBufferPointer where Element == NodeInput {
    /// The first input (bus 0), or nil when nothing is connected. Render thread: read by index,
    /// because `Collection.first` is not specialised in a debug build and its read accessor
    /// allocates a coroutine frame on every call.
    package var firstInput: NodeInput? { count > 0 ? self[0] : nil }
}

/// The mixing settings a node carries into the mixer it is connected to (`AVAudioMixing`):
/// written by the control plane, read by the mixer's kernel.
package final class MixSettings: Sendable {
    private let volumeBits = Atomic<UInt32>(Float(1).bitPattern)
    private let panBits = Atomic<UInt32>(Float(0).bitPattern)
    package init() {}
    package var volume: Float {
        get { Float(bitPattern: volumeBits.load(ordering: .relaxed)) }
        set { volumeBits.store(newValue.bitPattern, ordering: .relaxed) }
    }
    package var pan: Float {
        get { Float(bitPattern: panBits.load(ordering: .relaxed)) }
        set { panBits.store(newValue.bitPattern, ordering: .relaxed) }
    }
}

/// A node of an ``AudioEngine`` graph (the counterpart of `AVAudioNode`): a source (a player), an
/// effect (an equalizer), a mixer, or the output. Nodes are attached to one engine at a time and
/// connected output → input.
///
/// Every node also has the `AVAudioMixing` settings ``volume`` and ``pan``, which apply where the
/// node feeds a mixer.
///
/// `@unchecked Sendable`: `kernel`, the bus counts and `mix` are `let`s (``MixSettings`` is
/// atomic); `engine` is kept under a lock. Subclasses say why theirs holds.
public class AudioNode: @unchecked Sendable {
    package let kernel: any NodeKernel
    /// How many input buses the node has (`Int.max` for a mixer).
    public let numberOfInputs: Int
    /// How many output buses the node has (0 for the output node).
    public let numberOfOutputs: Int
    package let mix = MixSettings()
    /// Where the render thread finds the node's tap (see ``installTap(onBus:bufferSize:format:block:)``).
    package let tapSlot = NodeTapSlot()
    private let tapState = Mutex<InputTap?>(nil)
    private struct WeakEngine { weak var value: AudioEngine? }
    private let engineBox = Mutex(WeakEngine())
    /// The engine the node is attached to (held weakly). Set by `attach` / `detach` (under the
    /// engine's lock), read from any thread.
    public internal(set) var engine: AudioEngine? {
        get { engineBox.withLock { $0.value } }
        set { engineBox.withLock { $0.value = newValue } }
    }

    package init(kernel: any NodeKernel, inputs: Int, outputs: Int) {
        self.kernel = kernel
        numberOfInputs = inputs
        numberOfOutputs = outputs
    }

    /// Gain applied where this node feeds a mixer, 0…1 (linear). Changes are ramped.
    public var volume: Float {
        get { mix.volume }
        set { mix.volume = max(0, min(1, newValue.isFinite ? newValue : 0)) }
    }

    /// Stereo position where this node feeds a mixer, -1 … +1.
    public var pan: Float {
        get { mix.pan }
        set { mix.pan = max(-1, min(1, newValue.isFinite ? newValue : 0)) }
    }

    /// Seconds of sound the node goes on producing after its input falls silent (a reverb's decay,
    /// a delay's repeats). An engine that ends with its source (a player's) renders this long
    /// after the source's last frame, so the tail is heard. Read on the control plane.
    public var tailTime: Double { 0 }

    /// Called by the engine on the control plane when it starts or its format changes.
    package func engineWillRender(format: AudioFormat, maximumFrames: Int) {}

    /// Calls `block` with each `bufferSize` frames the node renders (`AVAudioNode.installTap`):
    /// the render thread copies the node's output into a preallocated lock-free ring (4 s) after
    /// the node renders, and a thread of the tap's own (`tonearm-tap`) cuts it into buffers and
    /// calls the block — never on the render thread. `format` must be nil or the engine's (a
    /// node renders in the engine's format). The buffers' ``AudioTime``s count the frames the
    /// node rendered since the tap was installed (frames lost because the block fell 4 s behind
    /// move it on). The ``AudioInputNode`` taps the input itself (see its own method).
    /// - Throws: ``AudioInputError/noSuchBus(node:bus:)`` for a bus other than 0 or a node
    ///   without output, ``AudioInputError/tapAlreadyInstalled(node:bus:)``,
    ///   ``AudioInputError/invalidTap(node:reason:)`` for a node not attached to an engine, a size
    ///   outside 1…1048576 or another format than the engine's.
    public func installTap(onBus bus: Int, bufferSize: Int, format: AudioFormat?,
                           block: @escaping AudioNodeTapBlock) throws {
        let name = "\(type(of: self))"
        guard bus == 0, numberOfOutputs > 0 else { throw AudioInputError.noSuchBus(node: name, bus: bus) }
        guard (1...1_048_576).contains(bufferSize) else {
            throw AudioInputError.invalidTap(node: name, reason: "bufferSize \(bufferSize) is outside 1…1048576")
        }
        guard let engine else { throw AudioInputError.invalidTap(node: name, reason: "attach the node to an engine first") }
        let f = engine.outputFormat
        if let format, format.sampleRate != f.sampleRate || format.channelCount != f.channelCount {
            throw AudioInputError.invalidTap(node: name, reason: "format \(format) is not the engine's \(f)")
        }
        try tapState.withLock { t in
            guard t == nil else { throw AudioInputError.tapAlreadyInstalled(node: name, bus: bus) }
            let stream = tapSlot.stream(for: .interleavedFloat(sampleRate: f.sampleRate, channels: f.channelCount))
            _ = stream.ring.discard(frames: .max)  // an earlier tap's leftovers (no consumer runs now)
            let tap = InputTap(bufferSize: bufferSize, format: nil, block: block)
            try tap.start(stream: stream)
            tapSlot.enable(stream)
            t = tap
        }
    }

    /// Whether a tap is installed on bus 0.
    public var hasTap: Bool { tapState.withLock { $0 != nil } }

    /// Removes the tap on `bus` (`AVAudioNode.removeTap`). Once it returns the block is not
    /// called again (called from inside the block, the block's current call is the last).
    public func removeTap(onBus bus: Int) {
        guard bus == 0 else { return }
        let tap = tapState.withLock { t in
            let r = t
            t = nil
            return r
        }
        tapSlot.enable(nil)
        tap?.halt()
    }
}

/// The render thread's end of a node's tap: the ring it copies the node's output into, or
/// nothing. Real-time safe: one atomic load per render of the node without a tap.
///
/// `@unchecked Sendable`: the slot is atomic; the streams it may point to are kept by `held`
/// for the node's life (a render under way may still hold one): one per engine format the node
/// was tapped in, reused by every tap in that format.
package final class NodeTapSlot: @unchecked Sendable {
    private let slot = Atomic<UnsafeMutableRawPointer?>(nil)
    private let held = Mutex<[RenderTapStream]>([])

    package init() {}

    /// Control plane: the node's stream for `format`, made the first time.
    func stream(for format: AudioFormat) -> RenderTapStream {
        held.withLock { h in
            if let s = h.first(where: { $0.format == format }) { return s }
            let s = RenderTapStream(format: format)
            h.append(s)
            return s
        }
    }

    /// Control plane: the stream the render thread feeds from now on (nil: none).
    func enable(_ stream: RenderTapStream?) {
        slot.store(stream.map { Unmanaged.passUnretained($0).toOpaque() }, ordering: .releasing)
    }

    /// Render thread: copies `frames` frames of the node's output into the tap's ring, if any.
    @inline(__always)
    func feed(_ samples: UnsafePointer<Float>, frames: Int, channels: Int) {
        guard let p = slot.load(ordering: .acquiring) else { return }
        Unmanaged<RenderTapStream>.fromOpaque(p).takeUnretainedValue().feed(samples, frames: frames, channels: channels)
    }
}

/// A tap's stream fed by the render thread (``AudioInputStream`` for the tap's thread).
///
/// `@unchecked Sendable`: the ring is single-producer (the render thread) single-consumer (the
/// tap thread); the counters and the wake flag are atomic.
final class RenderTapStream: AudioInputStream, @unchecked Sendable {
    let ring: CaptureRing
    let format: AudioFormat
    private let dropped = Atomic<Int64>(0)
    private let wakeup = DispatchSemaphore(value: 0)
    private let wakePending = Atomic<Bool>(false)

    init(format: AudioFormat) {
        self.format = format
        ring = CaptureRing(capacityFrames: max(8192, Int(format.sampleRate * 4)), channels: format.channelCount)
    }

    var sourceName: String { "the render thread" }
    func start() throws {}
    func close() {}
    var holeFrames: Int64 { 0 }
    var droppedFrames: Int64 { dropped.load(ordering: .relaxed) }
    var isLost: Bool { false }
    /// The render thread does not go away.
    var lossReason: String? { nil }
    func onLoss(_ handler: @escaping @Sendable (String) -> Void) {}

    /// Render thread: real-time safe (a copy, atomics, and a futex wake when the tap sleeps).
    func feed(_ samples: UnsafePointer<Float>, frames: Int, channels: Int) {
        guard channels == ring.channels else { return }
        let n = ring.write(UnsafeRawPointer(samples), frames: frames)
        if n < frames { dropped.add(Int64(frames - n), ordering: .relaxed) }
        wakeConsumer()
    }

    func wakeConsumer() {
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) { wakeup.signal() }
    }

    func waitForData(timeout: Double) {
        _ = wakeup.wait(timeout: .now() + timeout)
        wakePending.store(false, ordering: .releasing)
    }
}

/// A kernel that consumes its input at another speed than it produces output (a time-pitch node
/// with a rate, a varispeed): instead of receiving its input already rendered, it pulls as many
/// input frames as it needs through ``InputPuller``, which renders the subtree feeding it on
/// demand. Every node has one destination, so the subtree is the node's alone.
///
/// Threading: the render thread only, under the same rules as ``NodeKernel``.
package protocol VariableRateKernel: NodeKernel {
    /// Renders `frames` interleaved frames into `output`, pulling input through `input`.
    func render(input: InputPuller, output: UnsafeMutablePointer<Float>, frames: Int, channels: Int,
                timing: RenderTiming)
}

/// What a ``VariableRateKernel`` pulls its input through: renders the subtree that feeds the
/// node, in chunks of at most the plan's maximum, into a buffer the kernel owns. Render thread
/// only; allocates nothing.
package struct InputPuller {
    let list: Unmanaged<StepList>?
    let channels: Int
    let timing: RenderTiming

    /// Fills `buffer` with the next `frames` interleaved frames of the node's input (silence when
    /// nothing is connected). Any count.
    package func pull(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        guard let list else {
            buffer.update(repeating: 0, count: frames * channels)
            return
        }
        list.takeUnretainedValue().render(into: buffer, frames: frames, timing: timing)
    }
}
