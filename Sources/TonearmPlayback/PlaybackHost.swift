// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmEngine
import TonearmOutput

/// What a ``Player``'s runtime and a ``QueuePlayer``'s runtime share: an engine graph that an
/// output driver pulls (its head — a stream source node or a player node — then the player's
/// equaliser, an effect chain and the main mixer), the driver's start, pause and resume, the
/// effect chain re-wired live, the driver's events, and closing it all.
///
/// Threading: used by its runtime's owner on the control plane (the owner serialises the calls);
/// `close` never joins the render or event threads.
final class PlaybackHost: @unchecked Sendable {
    let engine: AudioEngine
    let driver: any AudioOutputDriver
    private let eq: AudioUnitEQ
    private var effects: [AudioNode] = []
    private(set) var driverStarted = false
    private var outputEventsTask: Task<Void, Never>?

    /// A host for `engine` (already in manual rendering mode, its head connected to `eq` and `eq`
    /// to the main mixer), pulled by `driver`.
    init(engine: AudioEngine, driver: any AudioOutputDriver, eq: AudioUnitEQ) {
        self.engine = engine
        self.driver = driver
        self.eq = eq
    }

    /// Puts `chain` between the equaliser and the mixer (live: the engine swaps in the new graph
    /// between two render cycles). Throws when a node cannot be connected (it has no input or
    /// output); the graph then plays without the effects.
    func setEffects(_ chain: [AudioNode]) throws {
        do {
            effects = try engine.replaceChain(after: eq, old: effects, with: chain)
        } catch {
            effects = []
            throw error
        }
    }

    /// Calls `handler` with every event of the driver (on a task of its own) until `close`.
    func watchOutput(_ handler: @escaping @Sendable (AudioOutputEvent) -> Void) {
        let stream = driver.events
        outputEventsTask = Task.detached { for await e in stream { handler(e) } }
    }

    /// Starts the driver pulling the engine, or resumes it.
    func startDriver() throws {
        if driverStarted {
            driver.resume()
        } else {
            try driver.start(source: engine)
            driverStarted = true
        }
    }

    func pauseDriver() {
        if driverStarted { driver.pause() }
    }

    /// Stops and closes the driver, stops the engine and detaches the equaliser and the effects
    /// (they move on to the owner's next engine).
    func close() {
        driver.stop()
        driver.close()
        engine.stop()
        engine.detach(eq)
        for n in effects { engine.detach(n) }
        outputEventsTask?.cancel()
    }
}
