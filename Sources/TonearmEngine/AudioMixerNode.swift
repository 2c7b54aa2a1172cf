// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore
import TonearmRender

/// Sums any number of inputs, each with the volume and pan of the node feeding it, and applies
/// an output volume (the counterpart of `AVAudioMixerNode`). Inputs arrive in the engine's format;
/// sources convert their own sample rate and channel count on their decoder threads.
///
/// `@unchecked Sendable`: only a `let` kernel, whose settings are atomic.
public final class AudioMixerNode: AudioNode, @unchecked Sendable {
    let mixKernel: MixerKernel

    public init() {
        let k = MixerKernel()
        mixKernel = k
        super.init(kernel: k, inputs: Int.max, outputs: 1)
    }

    /// The mixer's own output gain, 0…1 (ramped).
    public var outputVolume: Float {
        get { mixKernel.outputVolume.volume }
        set { mixKernel.outputVolume.volume = max(0, min(1, newValue.isFinite ? newValue : 0)) }
    }
}

/// The mixer's render-thread half. It reads each input's mixing settings through the plan and
/// ramps gains across a cycle when they change (the ramp state lives in the plan), so volume and
/// pan moves never click.
///
/// `@unchecked Sendable`: `outputVolume` is atomic; `lastOutput` belongs to the render thread.
final class MixerKernel: NodeKernel, @unchecked Sendable {
    let outputVolume = MixSettings()
    private var lastOutput: Float = 1  // render thread only

    static func gains(volume: Float, pan: Float, channels: Int) -> SIMD2<Float> {
        guard channels == 2 else { return SIMD2(volume, volume) }
        let p = max(-1, min(1, pan))
        return SIMD2(volume * (p > 0 ? 1 - p : 1), volume * (p < 0 ? 1 + p : 1))
    }

    func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                frames: Int, channels: Int, timing: RenderTiming) {
        let n = frames * channels
        let inv = 1 / Float(max(1, frames))
        // The first input at a steady gain is written, not added to zeros: one pass over the
        // output instead of two, and a plain copy at unit gain (the usual one-source graph).
        var written = false
        for input in inputs {
            let src = input.buffer
            let settings = input.mix.takeUnretainedValue()
            let target = Self.gains(volume: settings.volume, pan: settings.pan, channels: channels)
            let start = input.state.pointee
            input.state.pointee = target
            if start == target {
                if !written {
                    written = true
                    if target == SIMD2(1, 1) {
                        output.update(from: src, count: n)
                    } else if channels == 2 {
                        var f = 0
                        while f < n {
                            output[f] = src[f] * target.x
                            output[f + 1] = src[f + 1] * target.y
                            f += 2
                        }
                    } else {
                        for s in 0..<n { output[s] = src[s] * target.x }
                    }
                } else if channels == 2 {
                    var f = 0
                    while f < n {
                        output[f] += src[f] * target.x
                        output[f + 1] += src[f + 1] * target.y
                        f += 2
                    }
                } else {
                    for s in 0..<n { output[s] += src[s] * target.x }
                }
            } else {
                if !written {
                    written = true
                    output.update(repeating: 0, count: n)
                }
                // A linear ramp over this cycle.
                let step = (target - start) * inv
                var g = start
                for f in 0..<frames {
                    g += step
                    let base = f * channels
                    if channels == 2 {
                        output[base] += src[base] * g.x
                        output[base + 1] += src[base + 1] * g.y
                    } else {
                        for c in 0..<channels { output[base + c] += src[base + c] * g.x }
                    }
                }
            }
        }
        if !written { output.update(repeating: 0, count: n) }
        let ov = outputVolume.volume
        if ov != 1 || lastOutput != 1 {
            let step = (ov - lastOutput) * inv
            var g = lastOutput
            for f in 0..<frames {
                g += step
                for c in 0..<channels { output[f * channels + c] *= g }
            }
            lastOutput = ov
        }
    }
}

/// The end of the graph (the counterpart of `AVAudioOutputNode`): what reaches it is what the
/// engine plays.
///
/// `@unchecked Sendable`: no state of its own.
public final class AudioOutputNode: AudioNode, @unchecked Sendable {
    init() { super.init(kernel: PassThroughKernel(), inputs: 1, outputs: 0) }
}

/// Copies its first input (silence without one).
///
/// `@unchecked Sendable`: no state at all.
final class PassThroughKernel: NodeKernel, @unchecked Sendable {
    func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                frames: Int, channels: Int, timing: RenderTiming) {
        if let first = inputs.firstInput {
            output.update(from: first.buffer, count: frames * channels)
        } else {
            output.update(repeating: 0, count: frames * channels)
        }
    }
}
