// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Testing
import TonearmCore
import TonearmRender
import TonearmOutput

/// The registry between the engine and the drivers: built-in null and file, PulseAudio only once
/// registered, and an automatic choice that follows what is registered. Each test uses a registry
/// of its own (the shared one is the program's), and nothing here needs a sound server.
struct OutputDriverRegistryTests {
    @Test func theBuiltInDriversAreNullAndFile() throws {
        let registry = OutputDriverRegistry()
        #expect(registry.names == ["file", "null"])
        #expect(registry.factory(named: "NULL")?.isAudible == false)
        let null = try #require(try registry.makeDriver(named: "null") as? NullOutput)
        #expect(!null.untimed)
        let untimed = try #require(try registry.makeDriver(named: "null", request: .init(argument: "untimed")) as? NullOutput)
        #expect(untimed.untimed)
        let file = try #require(try registry.makeDriver(named: "file", request: .init(argument: "/tmp/x.wav")) as? FileOutput)
        #expect(file.path == "/tmp/x.wav")
        #expect(throws: TonearmError.self) { try registry.makeDriver(named: "file") }
        #expect(throws: TonearmError.self) { try registry.makeDriver(named: "null", request: .init(argument: "slow")) }
    }

    @Test func anUnregisteredDriverIsAnErrorThatSaysWhatIsRegistered() {
        let registry = OutputDriverRegistry()
        do {
            _ = try registry.makeDriver(named: "pulse")
            Issue.record("made a driver nobody registered")
        } catch let TonearmError.outputUnavailable(driver, reason) {
            #expect(driver == "pulse")
            #expect(reason.contains("registered: file, null"))
            #expect(reason.contains("PulseOutput.register()"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aSelectionWhoseDriverIsNotRegisteredCannotBeOpened() {
        let registry = OutputDriverRegistry()
        let driver = OutputSelection.pulse().makeDriver(registry: registry)
        #expect(!(driver is PulseOutput))
        #expect(driver.name == "pulse")
        do {
            try driver.open(format: .interleavedFloat(sampleRate: 48_000, channels: 2))
            Issue.record("opened an unregistered driver")
        } catch let TonearmError.outputUnavailable(name, reason) {
            #expect(name == "pulse")
            #expect(reason.contains("no output driver named 'pulse' is registered"))
        } catch {
            Issue.record("unexpected \(error)")
        }
        driver.close()
    }

    @Test func registeringPulseMakesPulseOutputs() {
        let registry = OutputDriverRegistry()
        PulseOutput.register(in: registry)
        #expect(registry.names == ["file", "null", "pulse"])
        let driver = OutputSelection.pulse(server: "unix:/nowhere/native").makeDriver(streamName: "S", device: "sink", registry: registry)
        let pulse = driver as? PulseOutput
        #expect(pulse?.server == "unix:/nowhere/native")
        #expect(pulse?.streamName == "S")
        #expect(pulse?.device == "sink")
    }

    @Test func withoutAnAudibleDriverTheAutomaticChoiceIsNullAndSaysWhy() {
        let choice = OutputSelection.automatic(registry: OutputDriverRegistry())
        #expect(choice.selection == .null)
        #expect(choice.notice == OutputSelection.noAudibleDriverNotice)
    }

    @Test func theAutomaticChoiceAsksTheRegisteredDriversProbe() throws {
        let registry = OutputDriverRegistry()
        let asked = Mutex<[String?]>([])
        let answers = Atomic<Bool>(true)
        registry.register(OutputDriverFactory(name: "pulse", isAudible: true, probe: { server, _ in
            asked.withLock { $0.append(server) }
            return answers.load(ordering: .relaxed)
        }, make: { _ in NullOutput() }))
        #expect(OutputSelection.automatic(server: "tcp:here", registry: registry).selection == .pulse(server: "tcp:here"))
        answers.store(false, ordering: .relaxed)
        let none = OutputSelection.automatic(server: "tcp:there", registry: registry)
        #expect(none.selection == .null)
        #expect(none.notice == OutputSelection.noServerNotice)
        #expect(asked.withLock { $0 } == ["tcp:here", "tcp:there"])
        // The factory registered for `pulse` is the one a `.pulse` selection makes.
        #expect(OutputSelection.pulse().makeDriver(registry: registry) is NullOutput)
    }
}
