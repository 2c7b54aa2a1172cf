// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmOutput
import TonearmSession

/// PulseAudio's input driver for an engine's input node (``AudioInputDriver``): each stream is a
/// ``PulseRecordStream`` — the recorder's own capture code — on the session's input (its
/// preferred input, else the server's default source), or on a source named here.
///
/// The session's category decides whether input may be opened at all, as on iOS: `record`,
/// `playAndRecord` and `multiRoute` allow it; `playback`, `ambient` and `soloAmbient` (the
/// default) make every call throw ``AudioInputError/categoryDoesNotAllowInput(category:)``.
///
/// ```swift
/// PulseInput.register()                         // once, at start-up (as PulseOutput.register())
/// try AudioSession.shared.setCategory(.playAndRecord)
/// try AudioSession.shared.setActive(true)
/// let engine = AudioEngine()
/// try engine.inputNode.installTap(onBus: 0, bufferSize: 4800, format: nil) { buffer, when in … }
/// try engine.start()
/// ```
///
/// Threading: immutable; any thread. Each call blocks while it asks the server.
public final class PulseInput: AudioInputDriver, Sendable {
    /// The server (nil: the session's, else libpulse's default), the source (nil: the session's
    /// preferred input, else the default source) and the session whose category and preferred
    /// input apply (nil: none — input always allowed).
    public let server: String?
    public let source: String?
    public let session: AudioSession?
    /// What the echo canceller of voice processing does besides cancelling
    /// (``startVoiceProcessing(outputDevice:)``).
    public let echoCanceller: EchoCancellerSettings
    /// Given to each stream (tests: counts what the capture thread does).
    let readProbe: (@Sendable (() -> Void) -> Void)?

    public convenience init(server: String? = nil, source: String? = nil, session: AudioSession? = .shared,
                            echoCanceller: EchoCancellerSettings = EchoCancellerSettings()) {
        self.init(server: server, source: source, session: session, echoCanceller: echoCanceller, readProbe: nil)
    }

    init(server: String?, source: String?, session: AudioSession?, echoCanceller: EchoCancellerSettings = EchoCancellerSettings(),
         readProbe: (@Sendable (() -> Void) -> Void)?) {
        self.server = server ?? session?.pulseServer
        self.source = source
        self.session = session
        self.echoCanceller = echoCanceller
        self.readProbe = readProbe
    }

    /// Makes PulseAudio the input driver of engines that are given none (``InputDriverRegistry/shared``).
    public static func register(server: String? = nil, session: AudioSession? = .shared) {
        InputDriverRegistry.shared.register { PulseInput(server: server, session: session) }
    }

    public var name: String { "pulse" }

    /// Whether `category` lets a process open input (as on iOS).
    public static func allowsInput(_ category: AudioSession.Category) -> Bool {
        switch category {
        case .record, .playAndRecord, .multiRoute: true
        case .ambient, .soloAmbient, .playback: false
        }
    }

    private func checkCategory() throws {
        if let session, !Self.allowsInput(session.category) {
            throw AudioInputError.categoryDoesNotAllowInput(category: session.category.rawValue)
        }
    }

    private var chosenSource: String? { source ?? session?.preferredInput?.name }

    public func sourceFormat() throws -> AudioFormat {
        try checkCategory()
        let name = chosenSource
        let what = name.map { "'\($0)'" } ?? "the default source"
        let inputs: [AudioInputRoute]
        do { inputs = try AudioRoutes(server: server).inputs() } catch {
            throw AudioInputError.inputUnavailable(source: what, reason: "\(error)")
        }
        guard let route = inputs.first(where: { name == nil ? $0.isDefault : $0.name == name }) else {
            throw AudioInputError.inputUnavailable(source: what, reason: "the server has no such source (see `pactl list short sources`)")
        }
        return .interleavedFloat(sampleRate: route.sampleRate, channels: route.channelCount)
    }

    /// Voice processing needs the session's category `playAndRecord` (no session: allowed).
    public func checkVoiceProcessing() throws {
        if let session, session.category != .playAndRecord {
            throw AudioInputError.voiceProcessingNeedsPlayAndRecord(category: session.category.rawValue)
        }
    }

    /// Loads PulseAudio's echo canceller (`module-echo-cancel`, with ``echoCanceller``) between
    /// the source this driver captures from and the sink `outputDevice` (nil: the server's
    /// default): the engine's streams then capture its source and its output plays to its sink.
    /// Throws ``AudioInputError/voiceProcessingNeedsPlayAndRecord(category:)`` first, then
    /// ``AudioInputError/voiceProcessingUnavailable(reason:)`` when the server cannot load it.
    public func startVoiceProcessing(outputDevice: String?) throws -> any VoiceProcessingInput {
        try checkVoiceProcessing()
        return try PulseEchoCanceller(server: server, session: session, source: chosenSource, sink: outputDevice,
                                      settings: echoCanceller)
    }

    public func openStream(format: AudioFormat?, streamName: String) throws -> any AudioInputStream {
        try checkCategory()
        let f = try format ?? sourceFormat()
        do {
            return try PulseRecordStream(server: server, source: chosenSource, sampleRate: Int(f.sampleRate),
                                         channels: f.channelCount, ringSeconds: 4, streamName: streamName,
                                         readProbe: readProbe)
        } catch AudioRecorderError.sourceUnavailable(let s, let r) {
            throw AudioInputError.inputUnavailable(source: s, reason: r)
        }
    }
}

extension PulseRecordStream: AudioInputStream {
    var format: AudioFormat { .interleavedFloat(sampleRate: Double(sampleRate), channels: channels) }
    var sourceName: String { currentSourceName }
    func start() throws { try setCorked(false) }
    func wakeConsumer() { wakeWriter() }
}
