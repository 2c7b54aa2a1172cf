// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmRender

/// A compiled, immutable snapshot of an engine's graph: the kernels to run in dependency order,
/// each with its preallocated output buffer and the buffers of its inputs. The control plane
/// builds a new plan whenever the graph changes and hands it to the render thread, which swaps
/// it in between two render cycles; the render thread never sees a graph half-changed and never
/// takes a lock to read it.
///
/// The graph is a tree (each node feeds one destination), rooted at the output node. Most nodes
/// render N frames from N frames of input, so one list of steps runs once per cycle. A
/// ``VariableRateKernel`` (time-pitch with a rate, varispeed) reads its input at another speed:
/// the subtree feeding it becomes a nested ``StepList`` that the kernel runs on demand, as many
/// frames as it needs.
///
/// All memory is allocated when the plan is built; `run` allocates nothing.
///
/// `@unchecked Sendable`: immutable once built (every stored property is a `let`); the buffers
/// and input tables it points to are written only by the one render thread running it, and
/// freed in `deinit`, on the control plane, after the render thread has handed the plan back.
final class RenderPlan: @unchecked Sendable {
    let channels: Int
    let maximumFrames: Int
    private let root: StepList
    /// Every step of every list, for deallocation.
    private let allSteps: [StepList.Step]
    private let buffers: [UnsafeMutablePointer<Float>]
    /// Keeps every node (and so its kernel and mixing settings) alive while the plan exists.
    private let nodes: [AudioNode]
    /// The generation of the graph this plan was built from.
    let generation: UInt64
    /// Frames of tail to render after the primary source ends (the nodes' tail times, summed).
    let tailFrames: Int
    /// Whether the primary source (see `AudioEngine.endsWith`) is pulled by a variable-rate node,
    /// which reads ahead of what it outputs: the frame where the source ended then says nothing
    /// exact about the output, and the whole tail is rendered after the cycle in which it ended.
    let primaryIsPulled: Bool

    /// Builds the plan. `order` lists the nodes to render, each after its inputs; `inputsOf`
    /// gives, per node, the nodes feeding its input buses in bus order; `final` is the node whose
    /// output the engine plays.
    init(order: [AudioNode], inputsOf: [ObjectIdentifier: [AudioNode]], final: AudioNode?,
         channels: Int, maximumFrames: Int, generation: UInt64, tailFrames: Int = 0, primary: AudioNode? = nil) {
        self.tailFrames = tailFrames
        self.channels = channels
        self.maximumFrames = maximumFrames
        self.generation = generation
        var index: [ObjectIdentifier: Int] = [:]
        var buffers: [UnsafeMutablePointer<Float>] = []
        for n in order {
            let b = UnsafeMutablePointer<Float>.allocate(capacity: maximumFrames * channels)
            b.initialize(repeating: 0, count: maximumFrames * channels)
            index[ObjectIdentifier(n)] = buffers.count
            buffers.append(b)
        }
        // A node whose one destination is an in-place kernel with no other input renders into
        // that kernel's buffer (consumers first, so a chain of effects shares one buffer). The
        // graph is a tree: nothing else reads the node's output.
        for n in order.reversed() where n.kernel is any InPlaceKernel && !(n.kernel is any VariableRateKernel) {
            guard let ins = inputsOf[ObjectIdentifier(n)], ins.count == 1,
                  index[ObjectIdentifier(ins[0])] != nil, let own = index[ObjectIdentifier(n)] else { continue }
            index[ObjectIdentifier(ins[0])] = own
        }
        var all: [StepList.Step] = []
        var compiled: Set<ObjectIdentifier> = []
        var pulled = false

        func step(for n: AudioNode, upstream: StepList?) -> StepList.Step {
            let ins = inputsOf[ObjectIdentifier(n)] ?? []
            let table = UnsafeMutablePointer<NodeInput>.allocate(capacity: max(1, ins.count))
            let states = UnsafeMutablePointer<SIMD2<Float>>.allocate(capacity: max(1, ins.count))
            for (i, src) in ins.enumerated() {
                states[i] = MixerKernel.gains(volume: src.mix.volume, pan: src.mix.pan, channels: channels)
                (table + i).initialize(to: NodeInput(buffer: buffers[index[ObjectIdentifier(src)]!],
                                                     mix: Unmanaged.passUnretained(src.mix), state: states + i))
            }
            let s = StepList.Step(kernel: n.kernel, variable: n.kernel as? any VariableRateKernel, upstream: upstream,
                                  output: buffers[index[ObjectIdentifier(n)]!], inputs: table,
                                  inputCount: ins.count, states: states, tap: Unmanaged.passUnretained(n.tapSlot))
            all.append(s)
            return s
        }
        /// Appends the steps of `n`'s subtree to `steps`, each after its inputs.
        func compile(_ n: AudioNode, into steps: inout [StepList.Step], underVariable: Bool) {
            guard compiled.insert(ObjectIdentifier(n)).inserted, index[ObjectIdentifier(n)] != nil else { return }
            if underVariable, let primary, primary === n { pulled = true }
            let ins = inputsOf[ObjectIdentifier(n)] ?? []
            if n.kernel is any VariableRateKernel {
                var sub: [StepList.Step] = []
                for i in ins { compile(i, into: &sub, underVariable: true) }
                let source = ins.first.flatMap { index[ObjectIdentifier($0)] }.map { buffers[$0] }
                let list = StepList(steps: sub, source: source, channels: channels, maximumFrames: maximumFrames)
                steps.append(step(for: n, upstream: list))
            } else {
                for i in ins { compile(i, into: &steps, underVariable: underVariable) }
                steps.append(step(for: n, upstream: nil))
            }
        }
        var top: [StepList.Step] = []
        if let final { compile(final, into: &top, underVariable: false) }
        primaryIsPulled = pulled
        var rootSource = final.flatMap { index[ObjectIdentifier($0)] }.map { buffers[$0] }
        // The output node only passes its one input on: that input's buffer is what the plan
        // plays, without the copy (its step stays in `all`, to be freed with the others).
        if let last = top.last, last.kernel is PassThroughKernel, last.variable == nil, last.inputCount == 1 {
            rootSource = last.inputs[0].buffer
            top.removeLast()
        }
        root = StepList(steps: top, source: rootSource, channels: channels, maximumFrames: maximumFrames)
        allSteps = all
        self.nodes = order
        self.buffers = buffers
    }

    deinit {
        for s in allSteps {
            s.inputs.deallocate()
            s.states.deallocate()
        }
        for b in buffers { b.deallocate() }
    }

    /// Renders up to `maximumFrames` frames into `output` (interleaved). Render thread.
    func run(into output: UnsafeMutablePointer<Float>, frames: Int, timing: RenderTiming) {
        root.render(into: output, frames: frames, timing: timing)
    }
}

/// Steps run in order to render one subtree of a plan: the whole graph (the plan's root list),
/// or what feeds a variable-rate node. Immutable; owned by its plan. Render thread.
///
/// `@unchecked Sendable`: immutable (`let`s only); the memory it points to belongs to its plan
/// and is touched by the render thread alone.
final class StepList: @unchecked Sendable {
    struct Step {
        let kernel: any NodeKernel
        /// Set when the kernel pulls its input itself (its subtree is `upstream`).
        let variable: (any VariableRateKernel)?
        let upstream: StepList?
        let output: UnsafeMutablePointer<Float>
        /// The inputs (preallocated), and how many.
        let inputs: UnsafeMutablePointer<NodeInput>
        let inputCount: Int
        let states: UnsafeMutablePointer<SIMD2<Float>>
        /// The node's tap slot (the node, and so the slot, is kept alive by the plan).
        let tap: Unmanaged<NodeTapSlot>
    }

    /// The steps in order, in memory of the list's own: the render thread walks them with an
    /// index. (Iterating an `Array` of a struct through its generic iterator is not specialised in
    /// a debug build, and its read coroutine allocates its frame on every element.)
    private let steps: UnsafeMutableBufferPointer<Step>
    /// The buffer the subtree's top node renders into (nil: nothing connected, silence).
    private let source: UnsafeMutablePointer<Float>?
    private let channels: Int
    private let maximumFrames: Int

    /// Whether the last step is a mixer writing `source`: it then writes straight into the
    /// caller's buffer instead (a mixer overwrites every sample of its output, and nothing else in
    /// the list reads `source`), which saves a copy of every frame.
    private let lastWritesDestination: Bool

    init(steps: [Step], source: UnsafeMutablePointer<Float>?, channels: Int, maximumFrames: Int) {
        let stored = UnsafeMutableBufferPointer<Step>.allocate(capacity: steps.count)
        _ = stored.initialize(from: steps)
        self.steps = stored
        self.source = source
        if let last = steps.last, let source, last.output == source, last.variable == nil, last.kernel is MixerKernel {
            lastWritesDestination = true
        } else {
            lastWritesDestination = false
        }
        self.channels = channels
        self.maximumFrames = maximumFrames
    }

    deinit {
        steps.deinitialize()
        steps.deallocate()
    }

    /// Renders `frames` frames (any count, in chunks of at most the plan's maximum) into `output`.
    func render(into output: UnsafeMutablePointer<Float>, frames: Int, timing: RenderTiming) {
        guard let source else {
            output.update(repeating: 0, count: frames * channels)
            return
        }
        var done = 0
        let count = steps.count
        while done < frames {
            let n = min(maximumFrames, frames - done)
            let destination = output + done * channels
            var i = 0
            while i < count {
                let s = steps[i]
                i += 1
                if let v = s.variable {
                    let puller = InputPuller(list: s.upstream.map { Unmanaged.passUnretained($0) },
                                             channels: channels, timing: timing)
                    v.render(input: puller, output: s.output, frames: n, channels: channels, timing: timing)
                    s.tap.takeUnretainedValue().feed(s.output, frames: n, channels: channels)
                } else {
                    let target = lastWritesDestination && i == count ? destination : s.output
                    s.kernel.render(inputs: UnsafeBufferPointer(start: s.inputs, count: s.inputCount),
                                    output: target, frames: n, channels: channels, timing: timing)
                    s.tap.takeUnretainedValue().feed(target, frames: n, channels: channels)
                }
            }
            if !lastWritesDestination { destination.update(from: source, count: n * channels) }
            done += n
        }
    }
}
