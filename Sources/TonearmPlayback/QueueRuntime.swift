// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmEngine
import TonearmOutput

/// What a playing queue runs: an engine graph (player node → equaliser → effects → mixer) in
/// real-time manual rendering mode, pulled by the queue's output driver. Items are scheduled on
/// the one player node back to back, so that one item's last frame is followed by the next
/// item's first frame in the same render cycle: sample-exact gapless.
///
/// Threading: created and closed by the queue player on the control plane, outside its lock
/// when closing (closing joins the node's threads, which may be waiting for that lock).
final class QueueRuntime: @unchecked Sendable {
    let engine: AudioEngine
    let node = AudioPlayerNode()
    let driver: any AudioOutputDriver
    let format: AudioFormat
    private let eq: AudioUnitEQ
    private var effects: [AudioNode] = []
    private var driverStarted = false
    private var outputEventsTask: Task<Void, Never>?

    init(format f: AudioFormat, driver: any AudioOutputDriver, eq: AudioUnitEQ) throws {
        format = .interleavedFloat(sampleRate: f.sampleRate, channels: f.channelCount)
        self.driver = driver
        self.eq = eq
        engine = AudioEngine(outputFormat: format, output: {
            throw TonearmError.invalidState("a queue's engine is driven by the queue's output")
        })
        try engine.enableManualRenderingMode(.realtime, format: format, maximumFrameCount: 4096)
        engine.attach(node)
        engine.attach(eq)
        try engine.connect(node, to: eq, format: nil)
        try engine.connect(eq, to: engine.mainMixerNode, format: nil)
        engine.endsWith = node
        try driver.open(format: format)
        try engine.start()
        node.setOutputLatency(driver.latency)
    }

    /// Puts `chain` between the equaliser and the mixer, live.
    func setEffects(_ chain: [AudioNode]) throws {
        do {
            effects = try engine.replaceChain(after: eq, old: effects, with: chain)
        } catch {
            effects = []
            throw error
        }
    }

    func watchOutput(_ handler: @escaping @Sendable (AudioOutputEvent) -> Void) {
        let stream = driver.events
        outputEventsTask = Task.detached { for await e in stream { handler(e) } }
    }

    func startRendering() throws {
        node.play()
        if driverStarted {
            driver.resume()
        } else {
            try driver.start(source: engine)
            driverStarted = true
        }
    }

    func pauseRendering() {
        node.pause()
        if driverStarted { driver.pause() }
    }

    /// Stops and releases everything (the equaliser and effects move on to the next runtime).
    func close() {
        driver.stop()
        driver.close()
        engine.stop()
        engine.detach(eq)
        for n in effects { engine.detach(n) }
        node.stop()
        engine.detach(node)
        outputEventsTask?.cancel()
    }
}
