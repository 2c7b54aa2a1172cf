// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Foundation
import Synchronization
import TonearmCore
import TonearmOutput
import TonearmSession

/// What PulseAudio's echo canceller (`module-echo-cancel`) does besides taking the echo out.
///
/// The default is the canceller alone — WebRTC's, without its gain control (which would change
/// the source's own volume, for every program) and without noise suppression (which takes
/// steady sounds out, wanted ones too) —, so that what is not played through it reaches the
/// recording as it is.
public struct EchoCancellerSettings: Sendable, Hashable {
    /// The canceller's algorithm (`aec_method`): `webrtc` (Debian's PulseAudio 16 has it; the
    /// one that follows the delay of a real room) or `speex`.
    public var method: String
    /// WebRTC's noise suppression (`noise_suppression`).
    public var noiseSuppression: Bool
    /// WebRTC's automatic gain control (`analog_gain_control`, `digital_gain_control`): it
    /// changes the source's volume on the server.
    public var gainControl: Bool

    public init(method: String = "webrtc", noiseSuppression: Bool = false, gainControl: Bool = false) {
        self.method = method
        self.noiseSuppression = noiseSuppression
        self.gainControl = gainControl
    }

    /// The module's arguments for a canceller between `source` and `sink` (nil: the server's
    /// defaults), making the source `sourceName` and the sink `sinkName`.
    func moduleArguments(source: String?, sink: String?, sourceName: String, sinkName: String) -> String {
        var a = ["aec_method=\(method)"]
        if method == "webrtc" {
            let g = gainControl ? 1 : 0
            a.append("aec_args=\"analog_gain_control=\(g) digital_gain_control=\(g) noise_suppression=\(noiseSuppression ? 1 : 0)\"")
        }
        if let source { a.append("source_master=\(Self.quoted(source))") }
        if let sink { a.append("sink_master=\(Self.quoted(sink))") }
        a.append("source_name=\(sourceName)")
        a.append("sink_name=\(sinkName)")
        return a.joined(separator: " ")
    }

    /// A module argument's value, quoted when it holds a space or a quote.
    static func quoted(_ value: String) -> String {
        guard value.contains(where: { $0 == " " || $0 == "\"" || $0 == "'" || $0 == "\\" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// One loaded `module-echo-cancel` on a server, for one run of an engine with voice processing:
/// its source (the input with what was played through its sink taken out) is what the streams
/// opened here capture; its sink (``outputDevice``) is where the engine plays. ``close()``
/// unloads it. The module outlives a process that dies without closing it (PulseAudio modules
/// belong to the server): its names carry the process id, so that a user can tell whose it is.
///
/// Threading: `init` and `close` block while they ask the server (control plane); the rest is
/// immutable.
final class PulseEchoCanceller: VoiceProcessingInput, @unchecked Sendable {
    // @unchecked: `closed` is atomic; the rest is set in `init`.
    let server: String?
    let session: AudioSession?
    let sourceName: String
    let outputDevice: String
    let moduleIndex: UInt32
    private let connection: PulseConnection
    private let closed = Atomic<Bool>(false)

    private static let counter = Atomic<Int>(0)

    var name: String { "pulse-echo-cancel" }

    /// Loads the canceller between `source` (nil: the default source) and `sink` (nil: the
    /// default sink) on `server`. Throws ``AudioInputError/voiceProcessingUnavailable(reason:)``
    /// naming what failed: no server, a module the server cannot load.
    init(server: String?, session: AudioSession?, source: String?, sink: String?, settings: EchoCancellerSettings,
         timeout: Double = 5) throws {
        self.server = server
        self.session = session
        let n = Self.counter.add(1, ordering: .relaxed).newValue
        let tag = "tonearm_echo_\(getpid())_\(n)"
        sourceName = "\(tag).source"
        outputDevice = "\(tag).sink"
        func unavailable(_ reason: String) -> AudioInputError { .voiceProcessingUnavailable(reason: reason) }
        let c: PulseConnection
        do {
            c = try PulseConnection(server: server, serverText: server ?? "the default server", clientName: "Tonearm",
                                    timeout: timeout, driver: "pulse")
        } catch TonearmError.outputUnavailable(_, let reason) {
            throw unavailable(reason)
        }
        connection = c
        let arguments = settings.moduleArguments(source: source, sink: sink, sourceName: sourceName, sinkName: outputDevice)
        let answer = LoadAnswer(connection: c)
        let index: UInt32? = c.withLock {
            guard let ctx = c.context,
                  let op = pa_context_load_module(ctx, "module-echo-cancel", arguments, { _, index, ud in
                      let answer = Unmanaged<LoadAnswer>.fromOpaque(ud!).takeUnretainedValue()
                      answer.index = index == UInt32.max ? nil : index  // PA_INVALID_INDEX: refused
                      answer.answered = true
                      answer.connection.signal()
                  }, Unmanaged.passUnretained(answer).toOpaque()) else { return nil }
            c.finish(op, atMost: timeout)
            return answer.index
        }
        guard let index else {
            let why = c.withLock { answer.answered } ? c.errorText : "the server did not answer within \(timeout) s"
            c.close()
            let pair = "source \(source.map { "'\($0)'" } ?? "(the default)"), sink \(sink.map { "'\($0)'" } ?? "(the default)")"
            throw unavailable("the server could not load module-echo-cancel (\(arguments)) for the \(pair): \(why); "
                              + "is the module installed (Debian: the pulseaudio package), and do the source and the sink exist?")
        }
        moduleIndex = index
    }

    deinit { close() }

    func sourceFormat() throws -> AudioFormat {
        let inputs: [AudioInputRoute]
        do { inputs = try AudioRoutes(server: server).inputs() } catch {
            throw AudioInputError.inputUnavailable(source: "'\(sourceName)'", reason: "\(error)")
        }
        guard let route = inputs.first(where: { $0.name == sourceName }) else {
            throw AudioInputError.inputUnavailable(source: "'\(sourceName)'", reason: "the echo canceller's source is gone")
        }
        return .interleavedFloat(sampleRate: route.sampleRate, channels: route.channelCount)
    }

    func openStream(format: AudioFormat?, streamName: String) throws -> any AudioInputStream {
        let f = try format ?? sourceFormat()
        do {
            return try PulseRecordStream(server: server, source: sourceName, sampleRate: Int(f.sampleRate),
                                         channels: f.channelCount, ringSeconds: 4, streamName: streamName)
        } catch AudioRecorderError.sourceUnavailable(let s, let r) {
            throw AudioInputError.inputUnavailable(source: s, reason: r)
        }
    }

    /// Unloads the module (waiting at most 2 s for the server) and disconnects. Idempotent.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let c = connection
        let me = Unmanaged.passUnretained(self).toOpaque()
        c.withLock {
            guard let ctx = c.context,
                  let op = pa_context_unload_module(ctx, moduleIndex, { _, _, ud in
                      Unmanaged<PulseEchoCanceller>.fromOpaque(ud!).takeUnretainedValue().connection.signal()
                  }, me) else { return }
            c.finish(op, atMost: 2)
        }
        c.close()
    }
}

/// The server's answer to a `pa_context_load_module` (written by its callback and read by the
/// caller, both with the mainloop lock held).
private final class LoadAnswer: @unchecked Sendable {
    let connection: PulseConnection
    var index: UInt32?
    var answered = false
    init(connection: PulseConnection) { self.connection = connection }
}
