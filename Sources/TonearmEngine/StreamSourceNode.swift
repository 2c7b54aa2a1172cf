// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmRender

/// A source node that plays one ``StreamRenderer`` (a decoder thread's ring): how
/// `AudioPlayer` puts its stream into an engine graph, so that a player and an engine share one
/// render path.
///
/// `@unchecked Sendable`: only `let`s; see ``StreamKernel``.
package final class StreamSourceNode: AudioNode, @unchecked Sendable {
    package let streamKernel: StreamKernel

    package init(renderer: StreamRenderer) {
        let k = StreamKernel(renderer: renderer)
        streamKernel = k
        super.init(kernel: k, inputs: 0, outputs: 1)
    }
}

/// A source kernel that can tell the engine (on the render thread, right after rendering) that
/// its audio has ended: see `AudioEngine.endsWith`.
package protocol EndingSource: NodeKernel {
    /// Whether the source's audio ended in the last render call (and every call after).
    var endedInLastCall: Bool { get }
    /// Real frames (before the end) in the last render call.
    var framesInLastCall: Int { get }
}

/// Renders the stream and remembers, for the engine on the same render thread, whether the
/// stream ended in the last call and how many real frames that call had.
///
/// `@unchecked Sendable`: its `var`s belong to the render thread alone (the engine reads them on
/// that thread, right after `render`).
package final class StreamKernel: EndingSource, @unchecked Sendable {
    let renderer: StreamRenderer
    /// Render thread only.
    package private(set) var endedInLastCall = false
    package private(set) var framesInLastCall = 0
    private var reportedEnd = false

    init(renderer: StreamRenderer) { self.renderer = renderer }

    package func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                        frames: Int, channels: Int, timing: RenderTiming) {
        let r = renderer.render(into: output, frameCount: frames, timing: timing)
        // After the end, every call reports it again with no real frames.
        framesInLastCall = reportedEnd ? 0 : r.framesRendered
        endedInLastCall = r.ended
        if r.ended { reportedEnd = true }
    }
}
