// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCore
import TonearmEngine
import TonearmOutput

/// Everything a prepared player runs: the ring, the decoder thread, the renderer, an engine graph
/// (stream → equaliser → mixer → output) that the output driver pulls (the ``PlaybackHost`` it
/// shares with ``QueuePlayer``'s runtime), and the thread that drains the renderer's events.
/// Built by `prepare`, torn down by `close`. Owned by one player, used under its lock.
final class PlayerRuntime: @unchecked Sendable {
    let ring: PCMBlockRing
    let renderer: StreamRenderer
    let decoder: StreamDecoder
    /// The graph the driver pulls (the player's stream through its equaliser), and the driver.
    private let host: PlaybackHost
    var driver: any AudioOutputDriver { host.driver }
    var engine: AudioEngine { host.engine }
    private let sourceNode: StreamSourceNode
    let format: AudioFormat
    var driverStarted: Bool { host.driverStarted }
    private let eventThreadStop = Atomic<Bool>(false)

    /// Frames per ring block (about 21 ms at 48 kHz).
    static let blockFrames = 1024

    init(source: any PlaybackSource, driver: any AudioOutputDriver, eq: AudioUnitEQ,
         onWarnings: @escaping @Sendable ([AudioWarning]) -> Void,
         onError: @escaping @Sendable (any Error) -> Void,
         onPositioned: (@Sendable (UInt64) -> Void)? = nil) {
        let fmt = source.sourceFormat
        format = fmt
        // About 1.5 s of audio ahead, at least 8 blocks.
        let blocks = max(8, Int(fmt.sampleRate * 1.5) / Self.blockFrames)
        ring = PCMBlockRing(blockFrames: Self.blockFrames, channels: fmt.channelCount, blockCount: blocks)
        let wake = DispatchSemaphore(value: 0)
        let data = DispatchSemaphore(value: 0)
        renderer = StreamRenderer(ring: ring, spaceSignal: wake, dataSignal: data)
        decoder = StreamDecoder(source: source, ring: ring, wake: wake, dataSignal: data,
                                onWarnings: onWarnings, onError: onError, onPositioned: onPositioned)
        let outFormat = fmt.interleavedFloat
        let engine = AudioEngine(outputFormat: outFormat, output: {
            throw TonearmError.invalidState("a player's engine is driven by the player's output")
        })
        sourceNode = StreamSourceNode(renderer: renderer)
        try? engine.enableManualRenderingMode(.realtime, format: outFormat, maximumFrameCount: 4096)
        engine.attach(sourceNode)
        engine.attach(eq)
        // All attached to this fresh engine, no loop: these cannot fail.
        try? engine.connect(sourceNode, to: eq, format: nil)
        try? engine.connect(eq, to: engine.mainMixerNode, format: nil)
        engine.endsWith = sourceNode
        host = PlaybackHost(engine: engine, driver: driver, eq: eq)
    }

    /// Puts `chain` between the equaliser and the mixer (live: the engine swaps in the new graph
    /// between two render cycles). Control plane, under the player's lock.
    /// Throws when a node cannot be connected (it has no input or output); the graph then plays
    /// without the effects.
    func setEffects(_ chain: [AudioNode]) throws { try host.setEffects(chain) }

    /// Opens the output, starts decoding and waits (at most `timeout` seconds) for the first
    /// block, so that playback starts without an underrun.
    func prepare(request: StreamDecoder.Request, timeout: Double = 2) throws {
        try driver.open(format: format.interleavedFloat)
        renderer.requestGeneration(request.generation, startFrame: request.startFrame)
        try engine.start()
        decoder.start(name: "tonearm-decoder")
        decoder.schedule(request)
        let deadline = DispatchTime.now() + timeout
        while ring.availableBlocks == 0 {
            if renderer.dataSignal.wait(timeout: deadline) == .timedOut { break }
        }
    }

    /// Starts the thread that turns render events into calls of `handler` (never on the render thread).
    func startEventPump(_ handler: @escaping @Sendable (RenderEvent) -> Void,
                        outputEvents: @escaping @Sendable (AudioOutputEvent) -> Void) {
        let t = Thread { [self] in
            nameCurrentThread("tonearm-events")
            while !eventThreadStop.load(ordering: .acquiring) {
                renderer.eventSignal.wait()
                while let e = renderer.events.pop() {
                    if eventThreadStop.load(ordering: .acquiring) { return }
                    handler(e)
                }
            }
        }
        t.name = "tonearm-events"
        t.start()
        host.watchOutput(outputEvents)
    }

    func startRendering() throws {
        renderer.commands.push(.running(true))
        try host.startDriver()
    }

    func pauseRendering() {
        renderer.commands.push(.running(false))
        host.pauseDriver()
    }

    /// Stops everything. Safe to call from the event thread (it does not join it).
    func close() {
        host.close()  // the equaliser and effects move on to the player's next engine
        decoder.shutdown()
        eventThreadStop.store(true, ordering: .releasing)
        renderer.eventSignal.signal()
    }
}
