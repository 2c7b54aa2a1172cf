// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Testing
import TonearmCore
import TonearmOutput

struct OutputSelectionTests {
    @Test func parsesEveryForm() throws {
        PulseOutput.register()
        #expect(try OutputSelection(parsing: "pulse") == .pulse())
        #expect(try OutputSelection(parsing: "NULL") == .null)
        #expect(try OutputSelection(parsing: "null:untimed") == .nullUntimed)
        #expect(try OutputSelection(parsing: " Null:Fast ") == .nullUntimed)
        #expect(OutputSelection.nullUntimed.description == "null:untimed")
        #expect(try OutputSelection(parsing: "file:/tmp/a b.wav") == .file(path: "/tmp/a b.wav"))
        #expect(try OutputSelection(parsing: "file:Out.WAV") == .file(path: "Out.WAV"))
        #expect(try OutputSelection(parsing: "file:out.wav").makeDriver().name == "file:out.wav")
        let timed = try #require(try OutputSelection(parsing: "null").makeDriver() as? NullOutput)
        #expect(!timed.untimed)
        let untimed = try #require(try OutputSelection(parsing: "null:untimed").makeDriver() as? NullOutput)
        #expect(untimed.untimed)
        #expect(try OutputSelection(parsing: "pulse").makeDriver() is PulseOutput)
    }

    @Test(arguments: ["", "alsa", "pulse:", "file:", "file:out.mp3", "file:.wav", "nul", "null:", "null:slow"])
    func rejectsEverythingElse(_ text: String) {
        do {
            _ = try OutputSelection(parsing: text)
            Issue.record("accepted '\(text)'")
        } catch let error as TonearmError {
            guard case .invalidArgument(let message) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(message.contains("wav") || message.contains("WAV"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// The buffering a player asks for reaches the driver's factory (the `pulse` factory makes a
    /// steady buffer of it, the null output ignores it); `.short` unless asked.
    @Test func theBufferingAskedForReachesTheFactory() throws {
        let registry = OutputDriverRegistry()
        let asked = Mutex<[OutputBuffering]>([])
        registry.register(OutputDriverFactory(name: "probe", isAudible: false) { request in
            asked.withLock { $0.append(request.buffering) }
            return NullOutput()
        })
        registry.register(PulseOutput.driverFactory)
        _ = try registry.makeDriver(named: "probe")
        _ = try registry.makeDriver(named: "probe", request: OutputDriverRequest(buffering: .steady))
        #expect(asked.withLock { $0 } == [.short, .steady])
        let steady = try #require(OutputSelection.pulse().makeDriver(buffering: .steady, registry: registry) as? PulseOutput)
        #expect(steady.startLatency == PulseOutput.shortLatency && steady.targetLatency == PulseOutput.steadyLatency)
        let short = try #require(OutputSelection.pulse().makeDriver(registry: registry) as? PulseOutput)
        #expect(short.startLatency == PulseOutput.shortLatency && short.targetLatency == PulseOutput.shortLatency)
    }

    @Test func noServerMeansNullWithANotice() {
        PulseOutput.register()
        let choice = OutputSelection.automatic(server: "unix:/nonexistent-tonearm/native", timeout: 1)
        #expect(choice.selection == .null)
        #expect(choice.notice == OutputSelection.noServerNotice)
        #expect(OutputSelection.noServerNotice.contains("--output pulse|null|null:untimed|file:PATH.wav"))
    }
}
