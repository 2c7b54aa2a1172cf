// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// Messages from the control plane to a render thread. Plain values, sent through a preallocated
/// ``SPSCQueue`` so that the render thread never locks.
package enum RenderCommand: Sendable, BitwiseCopyable {
    /// Ramp the gain to `target` over `frames` frames (0 = at once).
    case gain(target: Float, frames: Int)
    /// Set the stereo pan (-1 left … +1 right).
    case pan(Float)
    /// Render silence for `frames` frames before any audio (for `play(atTime:)`).
    case delay(frames: Int)
    /// Start (true) or stop (false) consuming audio; when stopped the renderer outputs silence.
    case running(Bool)
}

/// Messages from a render thread to the control plane (fixed-size records).
package enum RenderEvent: Sendable, BitwiseCopyable {
    /// The end-of-stream block of `generation` has been rendered. (Underruns are not events: they
    /// are counted in the renderer's atomic counter, so that nothing can crowd this one out.)
    case ended(generation: UInt64)
    /// A player node rendered the last frame of scheduled item `sequence` of `generation`.
    case itemEnded(generation: UInt64, sequence: UInt64)
    /// The ring ran dry while playing `generation` (after its first block, before its end): the
    /// decoder is late. Posted once per starvation (again only after audio flowed in between),
    /// so that it cannot flood the queue. Not posted by player nodes, which are idle between items.
    case starved(generation: UInt64)
}
