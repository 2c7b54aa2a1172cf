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

/// The rules of `setVoiceProcessingEnabled`, decided before a server is asked (Apple's: only
/// while the engine is stopped, never in manual rendering mode; the session's category must be
/// playAndRecord).
@Suite struct EngineVoiceProcessingRuleTests {
    @Test func voiceProcessingRefusalsAreTypedErrors() throws {
        let noServer = "unix:/nonexistent/tonearm-no-server"
        let record = try session(.record, "rules-record")
        let e = AudioEngine(output: { NullOutput() }, input: { PulseInput(server: noServer, session: record) })
        let input = e.inputNode
        #expect(!input.isVoiceProcessingEnabled)
        #expect(throws: AudioInputError.voiceProcessingNeedsPlayAndRecord(category: "record")) {
            try input.setVoiceProcessingEnabled(true)
        }
        #expect(!input.isVoiceProcessingEnabled)
        try record.setCategory(.playAndRecord)
        // Running, then paused: stop first.
        try e.start()
        #expect(throws: AudioInputError.voiceProcessingWhileRunning) { try input.setVoiceProcessingEnabled(true) }
        e.pause()
        #expect(throws: AudioInputError.voiceProcessingWhileRunning) { try input.setVoiceProcessingEnabled(true) }
        e.stop()
        try input.setVoiceProcessingEnabled(true)
        #expect(input.isVoiceProcessingEnabled)
        // Enabled with no server: the start fails with the canceller's error, and nothing runs.
        #expect {
            try e.start()
        } throws: { error in
            guard case AudioInputError.voiceProcessingUnavailable(let reason) = error else { return false }
            return reason.contains("tonearm-no-server")
        }
        #expect(!e.isRunning)
        try input.setVoiceProcessingEnabled(false)
        try e.start()
        e.stop()

        let manual = AudioEngine(output: { NullOutput() }, input: { PulseInput(server: noServer, session: record) })
        try manual.enableManualRenderingMode(.offline, format: .interleavedFloat(sampleRate: 48_000, channels: 2),
                                             maximumFrameCount: 1024)
        #expect(throws: AudioInputError.voiceProcessingInManualRenderingMode) {
            try manual.inputNode.setVoiceProcessingEnabled(true)
        }
        let registry = InputDriverRegistry()
        let none = AudioEngine(output: { NullOutput() }, input: { try registry.makeDriver() })
        #expect(throws: AudioInputError.noInputDriver) { try none.inputNode.setVoiceProcessingEnabled(true) }
        #expect("\(AudioInputError.voiceProcessingWhileRunning)".contains("stop()"))
    }
}

/// Voice processing and a source that goes away, against a private PulseAudio.
///
/// The room: the engine plays to the null sink `room`; a `module-loopback` carries `room`'s
/// monitor into a second null sink `air` (the air between a loudspeaker and a microphone, 20 ms
/// of it), and `air.monitor` is the microphone. The null sink's own monitor cannot be the
/// microphone: `module-echo-cancel` refuses "a sink and its monitor", and a `module-remap-source`
/// of that monitor (a distinct source on the sink's own thread) hung this PulseAudio 16.1 as
/// soon as audio went through the canceller; the loopback puts the path on a thread of its own
/// with a real delay, as a room has.
@Suite(.serialized) struct EngineVoiceProcessingPulseTests {
    /// The amplitude of `frequency` in `samples` (a least-squares fit).
    static func level(_ samples: [Float], _ frequency: Double) -> Double {
        EngineInputPulseTests.sineFit(samples, frequency: frequency, rate: 48_000).amplitude
    }

    static func dB(_ ratio: Double) -> Double { 20 * log10(max(ratio, 1e-9)) }

    /// One second of a 440 Hz sine (440 whole periods: it loops without a seam), stereo.
    static func tone() throws -> AudioPCMBuffer {
        let b = try #require(AudioPCMBuffer(format: AudioFormat(sampleRate: 48_000, channelCount: 2), frameCapacity: 48_000))
        b.frameLength = 48_000
        for c in 0..<2 {
            for i in 0..<48_000 { b.floatChannelData[c][i] = Float(0.5 * sin(2 * Double.pi * 440 * Double(i) / 48_000)) }
        }
        return b
    }

    /// Modules loaded now whose name is `name`.
    static func modules(_ server: PrivatePulseServer, _ name: String) throws -> [String] {
        try server.pactl("list", "short", "modules").stdout.split(separator: "\n").filter {
            $0.split(separator: "\t").dropFirst().first.map(String.init) == name
        }.map(String.init)
    }

    /// The device names of the streams of `kind` (`sink-inputs`, `source-outputs`) on the
    /// devices of `devices` (`sinks`, `sources`).
    static func streams(_ server: PrivatePulseServer, _ kind: String, on devices: String) throws -> [String] {
        func rows(_ what: String) throws -> [[String]] {
            try server.pactl("list", "short", what).stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        }
        var names: [String: String] = [:]
        for r in try rows(devices) where r.count > 1 { names[r[0]] = r[1] }
        return try rows(kind).compactMap { $0.count > 1 ? names[$0[1]] : nil }
    }

    /// Plays the tone through the engine for `seconds` of input and returns what a tap on the
    /// input (mono, 48 kHz) took in its last 2 s.
    static func playAndRecord(_ e: AudioEngine, seconds: Int) async throws -> [Float] {
        let taken = Watched<[Float]>([])
        try e.inputNode.installTap(onBus: 0, bufferSize: 4_800, format: .standard(sampleRate: 48_000, channels: 1)) { b, _ in
            let samples = Array(b.channel(0))
            taken.update { $0 += samples }
        }
        defer { e.inputNode.removeTap(onBus: 0) }
        try e.start()
        defer { e.stop() }
        guard await taken.wait(timeout: Double(seconds) + 20, until: { $0.count >= seconds * 48_000 }) else {
            throw TimedOut(what: "\(seconds) s of input")
        }
        return Array(taken.value.suffix(2 * 48_000))
    }

    /// playAndRecord with the echo canceller: the engine plays a 440 Hz tone in the room while a
    /// voice — a 700 Hz `module-sine` straight into the room, not through the engine — speaks.
    /// Without voice processing the input node hears both; with it, the input hears the voice
    /// and the tone is taken out (at least 20 dB down against the same path without it, the
    /// voice within 12 dB of its level without it). While it runs the canceller is loaded for
    /// the input's source (air.monitor) and the output's sink (room), the engine's stream plays
    /// to its sink and its capture comes from its source; `stop()` unloads it, and a start with
    /// it disabled plays straight to the room again. An output that cannot play through it (the
    /// null output) fails the start with a typed error and leaves no module behind.
    @Test func theEchoCancellerTakesOutWhatTheEnginePlays() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        for args in [["module-null-sink", "sink_name=room", "format=float32le", "rate=48000", "channels=1"],
                     ["module-null-sink", "sink_name=air", "format=float32le", "rate=48000", "channels=1"],
                     ["module-loopback", "source=room.monitor", "sink=air", "latency_msec=20",
                      "source_dont_move=true", "sink_dont_move=true"],
                     ["module-sine", "sink=room", "frequency=700"]] {
            let r = try await run("pactl", ["load-module"] + args, environment: server.environment)
            try #require(r.status == 0, "load-module \(args): \(r.stderr)")
        }
        let serverString = server.serverString
        let s = try session(.playAndRecord, server: serverString, "echo")
        let e = AudioEngine(output: { PulseOutput(server: serverString, streamName: "engine", device: "room") },
                            input: { PulseInput(server: nil, source: "air.monitor", session: s) })
        let player = AudioPlayerNode()
        e.attach(player)
        try e.connect(player, to: e.mainMixerNode, format: nil)
        player.scheduleBuffer(try Self.tone(), options: .loops)
        player.play()

        // The same path without the canceller.
        let plain = try await Self.playAndRecord(e, seconds: 3)
        let toneOff = Self.level(plain, 440), voiceOff = Self.level(plain, 700)
        #expect(toneOff > 0.1, "the microphone hears the tone: \(toneOff)")
        #expect(voiceOff > 0.01, "and the voice: \(voiceOff)")
        #expect(try Self.modules(server, "module-echo-cancel").isEmpty)

        try e.inputNode.setVoiceProcessingEnabled(true)
        // 6 s: the canceller converges within the first seconds; the last 2 s are measured.
        let taken = Watched<[Float]>([])
        try e.inputNode.installTap(onBus: 0, bufferSize: 4_800, format: .standard(sampleRate: 48_000, channels: 1)) { b, _ in
            let samples = Array(b.channel(0))
            taken.update { $0 += samples }
        }
        try e.start()
        let loaded = try Self.modules(server, "module-echo-cancel")
        #expect(loaded.count == 1 && loaded[0].contains("source_master=air.monitor") && loaded[0].contains("sink_master=room"),
                "\(loaded)")
        let playing = try Self.streams(server, "sink-inputs", on: "sinks")
        let capturing = try Self.streams(server, "source-outputs", on: "sources")
        #expect(playing.contains { $0.hasPrefix("tonearm_echo_") && $0.hasSuffix(".sink") },
                "the engine plays to the canceller's sink: \(playing)")
        #expect(capturing.contains { $0.hasPrefix("tonearm_echo_") && $0.hasSuffix(".source") },
                "the tap captures from the canceller's source: \(capturing)")
        let enough = await taken.wait(timeout: 30) { $0.count >= 6 * 48_000 }
        e.inputNode.removeTap(onBus: 0)
        e.stop()
        try #require(enough, "6 s of input through the canceller")
        #expect(try Self.modules(server, "module-echo-cancel").isEmpty, "stop() unloads the canceller")
        let cancelled = Array(taken.value.suffix(2 * 48_000))
        let toneOn = Self.level(cancelled, 440), voiceOn = Self.level(cancelled, 700)
        let attenuation = Self.dB(toneOff) - Self.dB(toneOn)
        #expect(attenuation > 20, "the tone, \(Self.dB(toneOff)) dB without the canceller, \(Self.dB(toneOn)) dB with it")
        // (Measured: the tone 62 to 88 dB down, the voice 6 to 8 dB — WebRTC's residual echo suppressor.)
        #expect(Self.dB(voiceOff) - Self.dB(voiceOn) < 12,
                "the voice passes: \(Self.dB(voiceOff)) dB without, \(Self.dB(voiceOn)) dB with the canceller")

        // Disabled again: straight to the room, no module.
        try e.inputNode.setVoiceProcessingEnabled(false)
        let again = try await Self.playAndRecord(e, seconds: 1)
        #expect(Self.level(again, 440) > 0.1)
        #expect(try Self.modules(server, "module-echo-cancel").isEmpty)

        // An output without devices cannot play through the canceller: a typed error, no module left.
        let silent = AudioEngine(output: { NullOutput() }, input: { PulseInput(server: nil, source: "air.monitor", session: s) })
        try silent.inputNode.setVoiceProcessingEnabled(true)
        #expect {
            try silent.start()
        } throws: { error in
            guard case AudioInputError.voiceProcessingUnavailable(let reason) = error else { return false }
            return reason.contains("null")
        }
        #expect(try Self.modules(server, "module-echo-cancel").isEmpty)
    }

    /// A USB microphone unplugged while the engine captures (the null sink whose monitor is the
    /// input, unloaded): the server moves the streams to its default source, and instead of
    /// recording on from an input nobody chose — or waiting for one that is gone — the engine
    /// reports a configuration change and `inputLost` naming the source, stops its input (the
    /// tap's stream is closed; the engine goes on playing), and the node's `inputError` says
    /// the same. A start after a stop, with the source still gone, fails with a typed error.
    /// The microphone is either the monitor of a null sink a `module-sine` plays into, or a
    /// `module-null-source` (a source of its own, as a USB microphone is).
    @Test(arguments: ["null-sink monitor", "null-source"])
    func anInputThatGoesAwayStopsTheInputWithAnEvent(_ kind: String) async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let load: RunResult
        let sourceName: String
        if kind == "null-source" {
            load = try server.pactl("load-module", "module-null-source", "source_name=usbmic", "format=float32le", "rate=48000", "channels=1")
            sourceName = "usbmic"
        } else {
            load = try server.pactl("load-module", "module-null-sink", "sink_name=usbmic", "format=float32le", "rate=48000", "channels=1")
            sourceName = "usbmic.monitor"
        }
        try #require(load.status == 0, "\(load.stderr)")
        let module = load.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        if kind != "null-source" {
            #expect(try server.pactl("load-module", "module-sine", "sink=usbmic", "frequency=440").status == 0)
        }
        let s = try session(.record, server: server.serverString, "lost-\(kind)")
        let e = AudioEngine(output: { NullOutput(periodDuration: 0.01) },
                            input: { PulseInput(server: nil, source: sourceName, session: s) })
        let events = Watched<[AudioEngineEvent]>([])
        let stream = e.eventStream
        let reader = Task { for await ev in stream { events.update { $0.append(ev) } } }
        defer { reader.cancel() }
        let buffers = Watched(0)
        try e.inputNode.installTap(onBus: 0, bufferSize: 960, format: nil) { _, _ in buffers.update { $0 += 1 } }
        try e.connect(e.inputNode, to: e.mainMixerNode, format: nil)
        try e.start()
        defer { e.stop() }
        #expect(try server.sourceOutputCount() == 2, "the graph's stream and the tap's")
        #expect(await buffers.wait(timeout: 10) { $0 >= 5 }, "the tap hears the microphone")
        #expect(e.inputNode.inputError == nil)

        #expect(try server.pactl("unload-module", module).status == 0)
        let reported = await events.wait(timeout: 10) { $0.contains { if case .inputLost = $0 { true } else { false } } }
        try #require(reported, "an inputLost event: \(events.value)")
        let lost = try #require(events.value.first { if case .inputLost = $0 { true } else { false } })
        guard case .inputLost(.inputLost(let source, let reason)) = lost else {
            Issue.record("\(lost)")
            return
        }
        #expect(source == "'\(sourceName)'" && reason.contains("'\(sourceName)'"), "\(source): \(reason)")
        let index = try #require(events.value.firstIndex(of: lost))
        #expect(index > 0 && events.value[index - 1] == .configurationChange, "\(events.value)")
        #expect(e.inputNode.inputError == .inputLost(source: source, reason: reason))
        #expect("\(e.inputNode.inputError!)".contains("went away"))
        #expect(e.isRunning, "the engine goes on playing")
        #expect(try server.sourceOutputCount() == 1, "the tap's stream is closed (the graph's closes at stop())")
        e.stop()
        #expect(try server.sourceOutputCount() == 0)
        #expect {
            try e.start()
        } throws: { error in
            guard case AudioInputError.inputUnavailable = error else { return false }
            return true
        }
    }
}
