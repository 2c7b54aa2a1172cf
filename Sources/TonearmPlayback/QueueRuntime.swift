// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmEngine
import TonearmOutput

/// What a playing queue runs: an engine graph (player node → equaliser → effects → mixer) in
/// real-time manual rendering mode, pulled by the queue's output driver (the ``PlaybackHost``
/// it shares with ``Player``'s runtime). Items are scheduled on the one player node back to
/// back, so that one item's last frame is followed by the next item's first frame in the same
/// render cycle: sample-exact gapless.
///
/// Built in two steps. `init` (on a worker thread: it opens the output, which may take a while)
/// makes the engine with its player node and opens the driver; ``install(eq:effects:events:)``
/// (on the queue player's executor) gives it the queue's one equaliser and effect chain and
/// starts the engine. A runtime built for a start that was cancelled meanwhile is closed without
/// ever having had them: the equaliser and the effects belong to one engine at a time — the one
/// installed after the previous runtime was closed — and a cancelled build can neither configure
/// them while another engine renders them nor detach them from it.
///
/// Threading: `init` on a worker thread; everything else on the queue player's executor (closing
/// joins the node's threads, which never wait for the executor).
final class QueueRuntime: @unchecked Sendable {
    // @unchecked: `host` is the only mutable state; it is set by `install` and read by the other
    // methods, all on the queue player's executor (one thread at a time, in order).
    let node = AudioPlayerNode()
    let format: AudioFormat
    let engine: AudioEngine
    let driver: any AudioOutputDriver
    /// Set by `install`; nil for a runtime that was never installed.
    private var host: PlaybackHost?

    init(format f: AudioFormat, driver: any AudioOutputDriver) throws {
        format = f.interleavedFloat
        engine = AudioEngine(outputFormat: format, output: {
            throw TonearmError.invalidState("a queue's engine is driven by the queue's output")
        })
        try engine.enableManualRenderingMode(.realtime, format: format, maximumFrameCount: 4096)
        engine.attach(node)
        self.driver = driver
        try driver.open(format: format)
    }

    /// Gives the engine the queue's equaliser and effect `chain`, starts it, and calls `events`
    /// with every event of the output until `close`.
    func install(eq: AudioUnitEQ, effects chain: [AudioNode],
                 events: @escaping @Sendable (AudioOutputEvent) -> Void) throws {
        engine.attach(eq)
        try engine.connect(node, to: eq, format: nil)
        try engine.connect(eq, to: engine.mainMixerNode, format: nil)
        engine.endsWith = node
        let h = PlaybackHost(engine: engine, driver: driver, eq: eq)
        host = h
        try? h.setEffects(chain)
        h.watchOutput(events)
        try engine.start()
        node.setOutputLatency(driver.latency)
    }

    /// Puts `chain` between the equaliser and the mixer, live.
    func setEffects(_ chain: [AudioNode]) throws { try host?.setEffects(chain) }

    func startRendering() throws {
        guard let host else { throw TonearmError.invalidState("the queue's output was not installed") }
        node.play()
        try host.startDriver()
    }

    func pauseRendering() {
        node.pause()
        host?.pauseDriver()
    }

    /// The output's underruns and the node's late data (``QueuePlayer/underrunCount``).
    var underrunCount: Int { driver.underrunCount + node.underrunCount }

    /// Stops and releases everything (the equaliser and effects move on to the next runtime).
    func close() {
        if let host {
            host.close()
        } else {
            driver.close()
        }
        node.stop()
        engine.detach(node)
    }
}
