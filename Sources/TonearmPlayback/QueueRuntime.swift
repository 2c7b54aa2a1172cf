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
/// Threading: created (it opens the output) and closed by the queue player off its lock
/// (closing joins the node's threads, which may be waiting for that lock).
final class QueueRuntime: @unchecked Sendable {
    let node = AudioPlayerNode()
    let format: AudioFormat
    private let host: PlaybackHost

    var engine: AudioEngine { host.engine }
    var driver: any AudioOutputDriver { host.driver }

    init(format f: AudioFormat, driver: any AudioOutputDriver, eq: AudioUnitEQ) throws {
        format = .interleavedFloat(sampleRate: f.sampleRate, channels: f.channelCount)
        let engine = AudioEngine(outputFormat: format, output: {
            throw TonearmError.invalidState("a queue's engine is driven by the queue's output")
        })
        try engine.enableManualRenderingMode(.realtime, format: format, maximumFrameCount: 4096)
        engine.attach(node)
        engine.attach(eq)
        try engine.connect(node, to: eq, format: nil)
        try engine.connect(eq, to: engine.mainMixerNode, format: nil)
        engine.endsWith = node
        host = PlaybackHost(engine: engine, driver: driver, eq: eq)
        try driver.open(format: format)
        try engine.start()
        node.setOutputLatency(driver.latency)
    }

    /// Puts `chain` between the equaliser and the mixer, live.
    func setEffects(_ chain: [AudioNode]) throws { try host.setEffects(chain) }

    func watchOutput(_ handler: @escaping @Sendable (AudioOutputEvent) -> Void) { host.watchOutput(handler) }

    func startRendering() throws {
        node.play()
        try host.startDriver()
    }

    func pauseRendering() {
        node.pause()
        host.pauseDriver()
    }

    /// Stops and releases everything (the equaliser and effects move on to the next runtime).
    func close() {
        host.close()
        node.stop()
        host.engine.detach(node)
    }
}
