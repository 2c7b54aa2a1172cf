// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmOutput

/// A compiled, immutable snapshot of an engine's graph: the kernels to run in dependency order,
/// each with its preallocated output buffer and the buffers of its inputs. The control plane
/// builds a new plan whenever the graph changes and hands it to the render thread, which swaps
/// it in between two render cycles; the render thread never sees a graph half-changed and never
/// takes a lock to read it.
///
/// All memory is allocated when the plan is built; `run` allocates nothing.
final class RenderPlan: @unchecked Sendable {
    struct Step {
        let kernel: any NodeKernel
        /// Index of this step's output buffer.
        let output: Int
        /// The inputs (preallocated), and how many.
        let inputs: UnsafeMutablePointer<NodeInput>
        let inputCount: Int
        let states: UnsafeMutablePointer<SIMD2<Float>>
    }

    let channels: Int
    let maximumFrames: Int
    private let steps: [Step]
    private let buffers: [UnsafeMutablePointer<Float>]
    /// Keeps every node (and so its kernel and mixing settings) alive while the plan exists.
    private let nodes: [AudioNode]
    /// The buffer the output node reads, or nil when nothing feeds it.
    private let finalBuffer: UnsafeMutablePointer<Float>?
    /// The generation of the graph this plan was built from.
    let generation: UInt64
    /// Frames of tail to render after the primary source ends (the nodes' tail times, summed).
    let tailFrames: Int

    /// Builds the plan. `order` lists the nodes to render, each after its inputs; `inputsOf`
    /// gives, per node, the nodes feeding its input buses in bus order; `final` is the node whose
    /// output the engine plays.
    init(order: [AudioNode], inputsOf: [ObjectIdentifier: [AudioNode]], final: AudioNode?,
         channels: Int, maximumFrames: Int, generation: UInt64, tailFrames: Int = 0) {
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
        var steps: [Step] = []
        for n in order {
            let ins = inputsOf[ObjectIdentifier(n)] ?? []
            let table = UnsafeMutablePointer<NodeInput>.allocate(capacity: max(1, ins.count))
            let states = UnsafeMutablePointer<SIMD2<Float>>.allocate(capacity: max(1, ins.count))
            for (i, src) in ins.enumerated() {
                states[i] = MixerKernel.gains(volume: src.mix.volume, pan: src.mix.pan, channels: channels)
                (table + i).initialize(to: NodeInput(buffer: buffers[index[ObjectIdentifier(src)]!],
                                                     mix: Unmanaged.passUnretained(src.mix), state: states + i))
            }
            steps.append(Step(kernel: n.kernel, output: index[ObjectIdentifier(n)]!, inputs: table,
                              inputCount: ins.count, states: states))
        }
        self.steps = steps
        self.nodes = order
        self.buffers = buffers
        finalBuffer = final.flatMap { index[ObjectIdentifier($0)] }.map { buffers[$0] }
    }

    deinit {
        for s in steps {
            s.inputs.deallocate()
            s.states.deallocate()
        }
        for b in buffers { b.deallocate() }
    }

    /// Renders up to `maximumFrames` frames into `output` (interleaved). Render thread.
    func run(into output: UnsafeMutablePointer<Float>, frames: Int, timing: RenderTiming) {
        for s in steps {
            s.kernel.render(inputs: UnsafeBufferPointer(start: s.inputs, count: s.inputCount),
                            output: buffers[s.output], frames: frames, channels: channels, timing: timing)
        }
        if let f = finalBuffer {
            output.update(from: f, count: frames * channels)
        } else {
            output.update(repeating: 0, count: frames * channels)
        }
    }
}
