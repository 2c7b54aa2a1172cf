// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore
import TonearmRender

/// An effect node whose parameters are described as data (the counterpart of
/// `AVAudioUnitEffect`): ``AudioUnitReverb``, ``AudioUnitDelay``, ``AudioUnitTimePitch``,
/// ``AudioUnitVarispeed``. One input, one output; N frames in, N frames out, except for the
/// time-pitch node's rate and the varispeed, which read their input at another speed.
///
/// Threading: the properties, ``setValue(_:forParameter:)`` and ``value(forParameter:)`` may be
/// called from any thread. A change is stored under a lock, then sent to the render thread through
/// a lock-free queue; the render thread applies queued changes at the start of each cycle, without
/// allocating or locking. The kernel is built for the engine's format on the control plane when
/// the engine starts (`engineWillRender`), which is where delay lines are allocated.
///
/// `@unchecked Sendable`: its values are under `values`; its kernel is a ``DSPSlot`` host.
public class AudioUnitEffect: AudioNode, @unchecked Sendable {
    /// The node's parameters: identifier, name, range, unit, default.
    public let parameterDescriptors: [ParameterDescriptor]
    private let values: Mutex<(values: [Double], bypass: Bool)>
    private let effectKernel: any EffectKernelProtocol

    package init(kernel: any EffectKernelProtocol, descriptors: [ParameterDescriptor]) {
        parameterDescriptors = descriptors
        values = Mutex((descriptors.map(\.defaultValue), false))
        effectKernel = kernel
        super.init(kernel: kernel, inputs: 1, outputs: 1)
    }

    /// When true, the input passes through untouched (the effect's state is kept).
    public var bypass: Bool {
        get { values.withLock { $0.bypass } }
        set {
            values.withLock { $0.bypass = newValue }
            effectKernel.post(ParameterMessage(index: -1, value: newValue ? 1 : 0))
        }
    }

    /// The current value of the parameter `identifier`, or nil when the node has no such parameter.
    public func value(forParameter identifier: String) -> Double? {
        guard let i = parameterDescriptors.firstIndex(where: { $0.identifier == identifier }) else { return nil }
        return self[parameter: i]
    }

    /// Sets the parameter `identifier`. Throws `invalidArgument` for an unknown identifier or a
    /// value outside the parameter's range (nothing changes then).
    public func setValue(_ value: Double, forParameter identifier: String) throws(TonearmError) {
        guard let i = parameterDescriptors.firstIndex(where: { $0.identifier == identifier }) else {
            throw .invalidArgument("\(type(of: self)) has no parameter '\(identifier)' (it has \(parameterDescriptors.map(\.identifier).joined(separator: ", ")))")
        }
        let d = parameterDescriptors[i]
        guard d.accepts(value) else {
            throw .invalidArgument("\(identifier) = \(value) is outside \(d.range.lowerBound)...\(d.range.upperBound) \(d.unit.rawValue)")
        }
        self[parameter: i] = value
    }

    /// Parameter `index` of ``parameterDescriptors``; setting clamps into its range and sends it.
    package subscript(parameter index: Int) -> Double {
        get { values.withLock { $0.values[index] } }
        set {
            let v = parameterDescriptors[index].clamped(newValue)
            values.withLock { $0.values[index] = v }
            effectKernel.post(ParameterMessage(index: Int32(index), value: v))
        }
    }

    override package func engineWillRender(format: AudioFormat, maximumFrames: Int) {
        effectKernel.configure(format: format, maximumFrames: maximumFrames) { values.withLock { ($0.values, $0.bypass) } }
    }
}

/// A parameter change on its way to the render thread (index −1: bypass).
package struct ParameterMessage: Sendable, BitwiseCopyable {
    var index: Int32
    var value: Double
}

/// A DSP with parameters: built on the control plane, then used by the render thread.
package protocol ParameterizedDSP: ~Copyable {
    /// Control plane: allocates everything the DSP will need (`values` in descriptor order).
    init(sampleRate: Double, channels: Int, maximumFrames: Int, values: [Double])
    /// Render thread: applies a parameter change without allocating.
    mutating func setParameter(_ index: Int, _ value: Double)
}

/// What every effect kernel keeps (the equaliser's too): their DSP (built by
/// ``configure(format:maximumFrames:current:)`` on the control plane while the graph does not
/// render), the bypass flag, and the parameter changes queued for the render thread.
/// ``post(_:)`` may be called from any control thread; ``applyPending()`` and the DSP belong to
/// the render thread (no lock, no allocation).
///
/// The configured / rendering split: the control plane decides from `configured`, its own
/// record of the format the DSP was built for, and never reads `dsp` — reading (or copying) the
/// DSP that the render thread mutates would race with it, and a copy of a DSP holding arrays
/// would make the render thread's next write copy them (an allocation).
///
/// `@unchecked Sendable`: `dsp` and `bypassed` are written by `configure` only while nothing
/// renders the node (the engine configures a node before its first plan and only again after a
/// format change, which needs a stopped engine), and otherwise only by the render thread;
/// `configured` is the control plane's (under the engine's lock); `messages` has one producer
/// (under `producer`) and one consumer (the render thread, or `configure` while not rendering).
package final class DSPSlot<DSP: ParameterizedDSP & ~Copyable>: @unchecked Sendable {
    package var dsp: DSP?                    // render thread (set by configure while not rendering)
    package private(set) var bypassed = false // render thread
    private var configured: (sampleRate: Double, channels: Int, maximumFrames: Int)?  // control plane
    private let messages = SPSCQueue<ParameterMessage>(capacity: 1024)
    private let producer = Mutex(())         // several control threads may post; one pushes at a time
    /// Changes that did not fit in the queue (a flood of them while the render thread was slow):
    /// the latest value of each parameter (slot `index + 1`; 0 is bypass) with a flag saying it
    /// changed, so that nothing posted is ever dropped. While `overflowed` is set every post
    /// goes here (the queue then holds only older changes, applied first).
    private let overflowValues: UnsafeMutablePointer<Atomic<UInt64>>
    private let overflowDirty: UnsafeMutablePointer<Atomic<Bool>>
    private let overflowed = Atomic<Bool>(false)
    /// Parameters the overflow table has room for (no node has as many).
    static var overflowSlots: Int { 256 }

    package init() {
        overflowValues = .allocate(capacity: Self.overflowSlots)
        overflowDirty = .allocate(capacity: Self.overflowSlots)
        for i in 0..<Self.overflowSlots {
            (overflowValues + i).initialize(to: Atomic(0))
            (overflowDirty + i).initialize(to: Atomic(false))
        }
    }

    deinit {
        overflowValues.deinitialize(count: Self.overflowSlots)
        overflowDirty.deinitialize(count: Self.overflowSlots)
        overflowValues.deallocate()
        overflowDirty.deallocate()
    }

    /// Control plane: builds the DSP for `format` unless the one built fits. `current` reads the
    /// node's parameter values and bypass; it is read after the queue is emptied, so a change
    /// posted meanwhile is either in the values read or still queued (never lost).
    package func configure(format: AudioFormat, maximumFrames: Int, current: () -> (values: [Double], bypass: Bool)) {
        if let c = configured, c.sampleRate == format.sampleRate, c.channels == format.channelCount,
           c.maximumFrames >= maximumFrames { return }
        while messages.pop() != nil {}
        if overflowed.exchange(false, ordering: .acquiring) {
            for i in 0..<Self.overflowSlots { overflowDirty[i].store(false, ordering: .relaxed) }
        }
        let (values, bypass) = current()
        dsp = DSP(sampleRate: format.sampleRate, channels: format.channelCount, maximumFrames: maximumFrames, values: values)
        bypassed = bypass
        configured = (format.sampleRate, format.channelCount, maximumFrames)
    }

    /// Any control thread: queues a parameter change (index −1: bypass).
    package func post(_ m: ParameterMessage) {
        producer.withLock { _ in
            guard overflowed.load(ordering: .acquiring) || !messages.push(m) else { return }
            let slot = Int(m.index) + 1
            guard slot >= 0, slot < Self.overflowSlots else { return }
            overflowValues[slot].store(m.value.bitPattern, ordering: .relaxed)
            overflowDirty[slot].store(true, ordering: .releasing)
            overflowed.store(true, ordering: .releasing)
        }
    }

    /// Render thread: applies the queued changes, then the latest of those that overflowed.
    package func applyPending() {
        while let m = messages.pop() { apply(m) }
        guard overflowed.exchange(false, ordering: .acquiring) else { return }
        for slot in 0..<Self.overflowSlots where overflowDirty[slot].exchange(false, ordering: .acquiring) {
            apply(ParameterMessage(index: Int32(slot - 1),
                                   value: Double(bitPattern: overflowValues[slot].load(ordering: .relaxed))))
        }
    }

    private func apply(_ m: ParameterMessage) {
        if m.index < 0 { bypassed = m.value != 0 } else { dsp?.setParameter(Int(m.index), m.value) }
    }
}

/// The DSP an ``EffectKernel`` runs: built on the control plane, then used by the render thread.
/// N frames in, N frames out; a DSP that reads its input at another speed than it writes its
/// output is a ``VariableRateDSP`` as well, and its kernel pulls its input.
package protocol EffectDSP: ParameterizedDSP, ~Copyable {
    /// Render thread: processes interleaved frames in place without allocating.
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int)
}

/// The capability of an ``EffectDSP`` that reads its input at another speed than it writes its
/// output (time-pitch with a rate, varispeed): its ``EffectKernel`` is then a
/// ``VariableRateKernel``, which a plan renders in the pulling form.
package protocol VariableRateDSP: EffectDSP, ~Copyable {
    /// Render thread: writes `frames` interleaved frames into `output`, reading input with
    /// `pull(buffer, count)`, which always delivers `count` frames (at most `maximumFrames`).
    mutating func render(into output: UnsafeMutablePointer<Float>, frames: Int,
                         pull: (UnsafeMutablePointer<Float>, Int) -> Void)
}

extension VariableRateDSP where Self: ~Copyable {
    /// Not used: a plan always renders a variable-rate kernel in the pulling form. Should it
    /// render it frame for frame, the input passes through untouched.
    package mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {}
}

package protocol EffectKernelProtocol: NodeKernel {
    func post(_ m: ParameterMessage)
    func configure(format: AudioFormat, maximumFrames: Int, current: () -> (values: [Double], bypass: Bool))
}

/// The render half of every effect node (the equaliser's too): the one host of an
/// ``EffectDSP``. Frame for frame, it applies the queued parameter changes, then runs its DSP on
/// a copy of the input. When its DSP is a ``VariableRateDSP``, the kernel is a
/// ``VariableRateKernel`` too and lets its DSP pull as much input as it needs; bypassed, it
/// passes its input through frame for frame.
///
/// `@unchecked Sendable`: its one field is its ``DSPSlot`` (see there for why that holds).
package final class EffectKernel<DSP: EffectDSP & ~Copyable>: EffectKernelProtocol, InPlaceKernel, @unchecked Sendable {
    fileprivate let slot = DSPSlot<DSP>()

    package init() {}

    package func configure(format: AudioFormat, maximumFrames: Int, current: () -> (values: [Double], bypass: Bool)) {
        slot.configure(format: format, maximumFrames: maximumFrames, current: current)
    }

    package func post(_ m: ParameterMessage) { slot.post(m) }

    package func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                        frames: Int, channels: Int, timing: RenderTiming) {
        if let first = inputs.firstInput {
            // A plan renders the input into this node's own buffer (``InPlaceKernel``): no copy.
            if first.buffer != output { output.update(from: first.buffer, count: frames * channels) }
        } else {
            output.update(repeating: 0, count: frames * channels)
        }
        guard slot.dsp != nil else { return }
        slot.applyPending()
        if !slot.bypassed { slot.dsp!.process(output, frames: frames, channels: channels) }
    }
}

extension EffectKernel: VariableRateKernel where DSP: VariableRateDSP & ~Copyable {
    package func render(input: InputPuller, output: UnsafeMutablePointer<Float>, frames: Int, channels: Int,
                        timing: RenderTiming) {
        slot.applyPending()
        guard slot.dsp != nil, !slot.bypassed else {
            input.pull(into: output, frames: frames)
            return
        }
        slot.dsp!.render(into: output, frames: frames) { buffer, count in input.pull(into: buffer, frames: count) }
    }
}
