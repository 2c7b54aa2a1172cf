// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmEngine
import TonearmOutput
import TonearmSession
import TonearmTestSupport
@testable import TonearmRecord

/// A session of its own (no bus) in `category`, active (the engine input suites').
func session(_ category: AudioSession.Category, server: String? = nil, _ name: String) throws -> AudioSession {
    let s = AudioSession(identifier: "engine-input-\(name)", bus: .none, pulseServer: server)
    try s.setCategory(category)
    try s.setActive(true)
    return s
}

/// The engine's input without a sound server: the session's category rule and the tap's
/// refusals, which are decided before anything is opened.
@Suite struct EngineInputCategoryTests {
    /// playback, ambient and soloAmbient do not allow input: starting an engine whose input node
    /// is connected, or tapped, throws the category's error before any output or server is
    /// touched, and the input's format is 0 Hz / 0 channels, as AVAudioInputNode's is.
    @Test(arguments: [AudioSession.Category.playback, .ambient, .soloAmbient])
    func aCategoryWithoutInputRefusesTheInputNode(_ category: AudioSession.Category) throws {
        let s = try session(category, "refused-\(category.rawValue)")
        let outputMade = Atomic<Bool>(false)
        let e = AudioEngine(output: { outputMade.store(true, ordering: .relaxed); return NullOutput() },
                            input: { PulseInput(server: "unix:/nonexistent/tonearm-no-server", session: s) })
        let input = e.inputNode
        #expect(input === e.inputNode, "one input node per engine")
        #expect(input.outputFormat(forBus: 0).sampleRate == 0 && input.outputFormat(forBus: 0).channelCount == 0)
        #expect(input.inputAvailability == .failure(.categoryDoesNotAllowInput(category: category.rawValue)))
        try e.connect(input, to: e.mainMixerNode, format: nil)
        #expect(throws: AudioInputError.categoryDoesNotAllowInput(category: category.rawValue)) { try e.start() }
        #expect(!e.isRunning && !outputMade.load(ordering: .relaxed))
        // A tap alone is a use of the input too.
        e.disconnectNodeOutput(input)
        try input.installTap(onBus: 0, bufferSize: 1024, format: nil) { _, _ in }
        #expect(throws: AudioInputError.categoryDoesNotAllowInput(category: category.rawValue)) { try e.start() }
        // Neither connected nor tapped: the engine plays, and opened no input.
        input.removeTap(onBus: 0)
        try e.start()
        #expect(e.isRunning)
        e.stop()
    }

    /// record and playAndRecord allow input: the error is then the missing server, named.
    @Test(arguments: [AudioSession.Category.record, .playAndRecord])
    func aRecordingCategoryGoesOnToTheServer(_ category: AudioSession.Category) throws {
        let s = try session(category, "allowed-\(category.rawValue)")
        let e = AudioEngine(output: { NullOutput() },
                            input: { PulseInput(server: "unix:/nonexistent/tonearm-no-server", session: s) })
        try e.inputNode.installTap(onBus: 0, bufferSize: 1024, format: nil) { _, _ in }
        #expect {
            try e.start()
        } throws: { error in
            guard case AudioInputError.inputUnavailable = error else { return false }
            return true
        }
        #expect(!e.isRunning)
    }

    /// An engine given no input driver takes the one registered: PulseInput.register() makes
    /// PulseAudio's (with its session) every engine's default.
    @Test func theRegisteredDriverIsTheEnginesDefault() throws {
        let s = try session(.playback, "registered")
        PulseInput.register(server: "unix:/nonexistent/tonearm-no-server", session: s)
        #expect(InputDriverRegistry.shared.hasDriver)
        let e = AudioEngine(output: { NullOutput() })
        #expect(e.inputNode.inputAvailability == .failure(.categoryDoesNotAllowInput(category: "playback")))
        try s.setCategory(.record)
        guard case .failure(.inputUnavailable) = e.inputNode.inputAvailability else {
            Issue.record("a record category goes on to the (missing) server: \(e.inputNode.inputAvailability)")
            return
        }
    }

    /// A second tap on one bus, a bus other than 0, a size of 0 and an invalid format are typed
    /// errors (AVFoundation raises exceptions); no driver registered says how to register one.
    @Test func tapRefusalsAreTypedErrors() throws {
        let registry = InputDriverRegistry()
        let e = AudioEngine(output: { NullOutput() }, input: { try registry.makeDriver() })
        let input = e.inputNode
        try input.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in }
        #expect(throws: AudioInputError.tapAlreadyInstalled(node: "the input node", bus: 0)) {
            try input.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in }
        }
        #expect(throws: AudioInputError.noSuchBus(node: "the input node", bus: 1)) {
            try input.installTap(onBus: 1, bufferSize: 512, format: nil) { _, _ in }
        }
        input.removeTap(onBus: 0)
        #expect(!input.hasTap)
        #expect(throws: AudioInputError.self) { try input.installTap(onBus: 0, bufferSize: 0, format: nil) { _, _ in } }
        #expect(throws: AudioInputError.self) {
            try input.installTap(onBus: 0, bufferSize: 512, format: AudioFormat(sampleRate: 0, channelCount: 2)) { _, _ in }
        }
        #expect(input.inputAvailability == .failure(.noInputDriver))
        try input.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in }
        #expect(throws: AudioInputError.noInputDriver) { try e.start() }
        #expect("\(AudioInputError.noInputDriver)".contains("PulseInput.register()"))
    }
}

/// The engine's input against a private PulseAudio whose input is a `module-sine-source`
/// (440 Hz, amplitude 0.5: −9.03 dBFS RMS, mono, 48 kHz).
@Suite(.serialized) struct EngineInputPulseTests {
    static func serverWithSine() throws -> PrivatePulseServer {
        let server = try PrivatePulseServer()
        #expect(try server.pactl("load-module", "module-sine-source", "source_name=sine", "frequency=440", "rate=48000").status == 0)
        return server
    }

    /// The buffers a tap received, in order, and when removeTap returned.
    final class Taken: Sendable {
        let buffers = Watched<[(time: AudioTime, samples: [Float], frames: Int, rate: Double, channels: Int)]>([])
        let removed = Atomic<Bool>(false)
        let callsAfterRemoval = Atomic<Int>(0)
        var block: AudioNodeTapBlock {
            { buffer, time in
                if self.removed.load(ordering: .acquiring) { self.callsAfterRemoval.add(1, ordering: .relaxed) }
                let samples = Array(buffer.channel(0))
                self.buffers.update { $0.append((time, samples, buffer.frameLength, buffer.format.sampleRate, buffer.channelCount)) }
            }
        }
        func wait(for count: Int, _ what: String) async throws {
            guard await buffers.wait(timeout: 10, until: { $0.count >= count }) else { throw TimedOut(what: what) }
        }
    }

    /// How far `samples` are from one steady sine of `frequency` (the least-squares fit's
    /// residual RMS, and the fit's amplitude): a gap or a repeated block anywhere breaks the
    /// phase and leaves a residual near the amplitude.
    static func sineFit(_ samples: [Float], frequency: Double, rate: Double) -> (amplitude: Double, residual: Double) {
        var s = 0.0, c = 0.0
        for (i, x) in samples.enumerated() {
            let w = 2 * Double.pi * frequency * Double(i) / rate
            s += Double(x) * sin(w)
            c += Double(x) * cos(w)
        }
        let n = Double(samples.count)
        let a = 2 * s / n, b = 2 * c / n
        var r = 0.0
        for (i, x) in samples.enumerated() {
            let w = 2 * Double.pi * frequency * Double(i) / rate
            let d = Double(x) - (a * sin(w) + b * cos(w))
            r += d * d
        }
        return ((a * a + b * b).squareRoot(), (r / n).squareRoot())
    }

    /// An engine that only plays opens no input; a tap installed while it runs opens one stream
    /// and receives the sine — 440 Hz at −6.02 dBFS peak — in buffers of exactly the size asked,
    /// in the source's format, their times following each other with no gap, and the samples
    /// one unbroken sine across the buffers. After removeTap returns the block is never called
    /// again and the stream is closed; a tap installed again works; a second tap is refused.
    @Test func aTapOnTheInputReceivesTheSineInBuffersOfItsSizeWithoutAGap() async throws {
        let server = try Self.serverWithSine()
        defer { server.stop() }
        let s = try session(.record, server: server.serverString, "tap")
        let sine = try #require(try AudioRoutes(server: server.serverString).inputs().first { $0.name == "sine" })
        try s.setPreferredInput(sine)
        let e = AudioEngine(output: { NullOutput(periodDuration: 0.01) }, input: { PulseInput(session: s) })
        try e.start()
        defer { e.stop() }
        let input = e.inputNode
        #expect(try server.sourceOutputCount() == 0, "an engine whose input is unused opens none")
        let format = input.outputFormat(forBus: 0)
        #expect(format.sampleRate == 48_000 && format.channelCount == sine.channelCount)

        let first = Taken()
        try input.installTap(onBus: 0, bufferSize: 1_000, format: nil, block: first.block)
        #expect(try server.sourceOutputCount() == 1)
        #expect(throws: AudioInputError.tapAlreadyInstalled(node: "the input node", bus: 0)) {
            try input.installTap(onBus: 0, bufferSize: 1_000, format: nil) { _, _ in }
        }
        try await first.wait(for: 24, "24 buffers of 1000 frames")
        input.removeTap(onBus: 0)
        first.removed.store(true, ordering: .releasing)
        let taken = first.buffers.value
        #expect(try server.sourceOutputCount() == 0, "removeTap closes the tap's stream")

        #expect(taken.allSatisfy { $0.frames == 1_000 && $0.samples.count == 1_000 && $0.rate == 48_000 && $0.channels == sine.channelCount })
        #expect(taken.map(\.time.sampleTime) == (0..<Int64(taken.count)).map { $0 * 1_000 }, "\(taken.map(\.time.sampleTime))")
        let all = taken.flatMap(\.samples)
        let frequency = try #require(dominantFrequency(all, sampleRate: 48_000))
        #expect(abs(frequency - 440) < 1, "\(frequency) Hz")
        let level = 20 * log10(Double(rms(all)))
        #expect(abs(level - 20 * log10(0.5 / 2.squareRoot())) < 0.5, "\(level) dBFS")
        let fit = Self.sineFit(all, frequency: 440, rate: 48_000)
        #expect(abs(fit.amplitude - 0.5) < 0.02 && fit.residual < 0.01, "one unbroken sine: \(fit)")

        // Another tap, in another format (the server converts): by the time it has its buffers,
        // the removed tap would have been called had it not stopped.
        let second = Taken()
        try input.installTap(onBus: 0, bufferSize: 480, format: .standard(sampleRate: 24_000, channels: 2), block: second.block)
        try await second.wait(for: 5, "5 buffers of the second tap")
        #expect(first.callsAfterRemoval.load(ordering: .relaxed) == 0)
        #expect(first.buffers.value.count == taken.count)
        #expect(second.buffers.value.allSatisfy { $0.frames == 480 && $0.rate == 24_000 && $0.channels == 2 })

        // The tap stays across stop() and start(): its stream is closed and opened again, and its
        // times start again from 0.
        e.stop()
        #expect(try server.sourceOutputCount() == 0 && input.hasTap)
        let before = second.buffers.value.count
        try e.start()
        try await second.wait(for: before + 3, "3 buffers after the restart")
        #expect(second.buffers.value[before].time.sampleTime == 0)
        input.removeTap(onBus: 0)

        // removeTap from inside the block: that call is the last, and nothing waits for itself.
        let third = Taken()
        let removedInside = Watched(false)
        try input.installTap(onBus: 0, bufferSize: 960, format: nil) { buffer, time in
            third.block(buffer, time)
            if third.buffers.value.count == 3 {
                input.removeTap(onBus: 0)
                removedInside.update { $0 = true }
            }
        }
        #expect(await removedInside.wait(timeout: 10) { $0 })
        #expect(!input.hasTap && third.buffers.value.count == 3)
        #expect(try server.sourceOutputCount() == 0)
    }

    /// The microphone monitored through an effect: input → EQ (−6 dB) → main mixer → output on
    /// the null sink. The input is the monitor of a second null sink that `module-sine` plays a
    /// 440 Hz tone into (amplitude 0.5; module-sine-source sends 2 s blocks, a steady live input
    /// it is not). The output sink's monitor holds the tone 6 dB down, unbroken at its end; the
    /// render thread (PulseAudio's, through the probe) and the capture thread (the read
    /// callbacks) allocate, free, lock and wait for nothing while the input plays through the graph.
    @Test func theInputMonitoredThroughAnEQReachesTheOutputAndRendersWithoutAllocating() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        #expect(try server.pactl("load-module", "module-null-sink", "sink_name=mic").status == 0)
        #expect(try server.pactl("load-module", "module-sine", "sink=mic", "frequency=440").status == 0)
        let serverString = server.serverString
        let s = try session(.playAndRecord, server: serverString, "monitor")
        let probe = RenderProbe(skippingFirst: 20)
        let captureProbe = RenderProbe(skippingFirst: 10)
        let e = AudioEngine(output: { ProbingOutput(PulseOutput(server: serverString, streamName: "engine"), probe: probe) },
                            input: { PulseInput(server: nil, source: "mic.monitor", session: s,
                                                readProbe: { body in captureProbe.measure(body) }) })
        let eq = AudioUnitEQ(numberOfBands: 1)
        eq.globalGain = -6
        e.attach(eq)
        try e.connect(e.inputNode, to: eq, format: nil)
        try e.connect(eq, to: e.mainMixerNode, format: nil)
        let recording = try server.startRecording(to: "\(server.directory)/monitor.wav")
        try e.start()
        #expect(try server.sourceOutputCount() == 2, "the graph's input stream and parecord's")
        #expect(probe.waitUntilCounting())
        #expect(captureProbe.waitUntilCounting())
        // The input's sink runs with small blocks once our stream asked: from then on the input is
        // live. A tap on the input is the clock: 0.8 s more captured after that.
        try server.waitForSinkLatency(below: 0.1, of: "mic")
        let clock = Taken()
        try e.inputNode.installTap(onBus: 0, bufferSize: 4_800, format: nil, block: clock.block)
        try await clock.wait(for: 8, "0.8 s of input")
        probe.disarm()
        captureProbe.disarm()
        recording.stop()
        e.stop()
        #expect(try server.sourceOutputCount() == 0, "stop closes the input")

        let mono = try readWAV(recording.path).mono
        try #require(mono.count > 28_800, "\(mono.count) frames recorded")
        let last = Array(mono[(mono.count - 24_000)..<(mono.count - 4_800)])
        let found = dominantFrequency(last, sampleRate: 48_000)
        try #require(found != nil, "the monitor's end is silent")
        let frequency = found!
        #expect(abs(frequency - 440) < 1, "\(frequency) Hz")
        let level = 20 * log10(Double(rms(last)))
        #expect(abs(level - (20 * log10(0.5 / 2.squareRoot()) - 6)) < 1, "\(level) dBFS")
        let fit = Self.sineFit(last, frequency: frequency, rate: 48_000)
        #expect(fit.residual < 0.02, "one unbroken tone at the end: \(fit)")
        let c = probe.counts
        #expect(c.calls > 0)
        if RenderProbe.isAvailable { #expect(c.isClean, "\(c)\n\(probe.firstOffences)") }
        // The capture thread (libpulse's mainloop: the read callbacks of the graph's stream and
        // the tap's, libpulse's own peek and drop included) neither.
        let captured = captureProbe.counts
        #expect(captured.calls > 0)
        if RenderProbe.isAvailable { #expect(captured.isClean, "capture: \(captured)\n\(captureProbe.firstOffences)") }
    }
}
