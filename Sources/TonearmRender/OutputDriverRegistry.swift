// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore

/// What a driver factory is asked to make: the stream's names for the sound server, the device,
/// and the text after the driver's name in an output choice (`file:PATH.wav` → `PATH.wav`).
/// Drivers ignore what does not apply to them (the null output ignores all of it).
public struct OutputDriverRequest: Sendable, Hashable {
    /// The client's name on the sound server (`application.name`).
    public var applicationName: String
    /// The stream's name on the sound server (`media.name`).
    public var streamName: String
    /// The stream's role (`media.role`: `music`, `video`, `event`, …).
    public var role: String
    /// The device to play to; nil: the driver's default.
    public var device: String?
    /// The server to connect to; nil: the driver's default.
    public var server: String?
    /// What followed `name:` in the output choice (a file's path, `untimed`); nil when nothing did.
    public var argument: String?
    /// How much the output keeps queued ahead (``OutputBuffering``): `.steady` for media
    /// playback whose player flushes on a seek, `.short` for everything else.
    public var buffering: OutputBuffering

    public init(applicationName: String = "Tonearm", streamName: String = "Playback", role: String = "music",
                device: String? = nil, server: String? = nil, argument: String? = nil,
                buffering: OutputBuffering = .short) {
        self.buffering = buffering
        self.applicationName = applicationName
        self.streamName = streamName
        self.role = role
        self.device = device
        self.server = server
        self.argument = argument
    }
}

/// One kind of output driver in an ``OutputDriverRegistry``: its name, whether it is heard, how
/// to tell whether its device answers, and how to make one.
public struct OutputDriverFactory: Sendable {
    /// The name an output choice uses (`pulse`, `null`, `file`). Lower case, no colon.
    public let name: String
    /// Whether the driver's audio is heard (PulseAudio: yes; null and file: no).
    public let isAudible: Bool
    /// Whether the driver's device or server answers within `timeout` seconds (blocking);
    /// `server` as in ``OutputDriverRequest/server``. Nil: always available.
    public let probe: (@Sendable (_ server: String?, _ timeout: Double) -> Bool)?
    /// Makes a new, unopened driver. Throws ``TonearmError/invalidArgument(_:)`` for a request
    /// the driver cannot take (a file driver without a path).
    public let make: @Sendable (OutputDriverRequest) throws -> any AudioOutputDriver

    public init(name: String, isAudible: Bool,
                probe: (@Sendable (_ server: String?, _ timeout: Double) -> Bool)? = nil,
                make: @escaping @Sendable (OutputDriverRequest) throws -> any AudioOutputDriver) {
        self.name = name.lowercased()
        self.isAudible = isAudible
        self.probe = probe
        self.make = make
    }
}

/// The output drivers a program can play to, by name: the seam between the engine, which knows
/// only the render contract (``AudioOutputDriver``, ``AudioRenderSource``), and the drivers.
///
/// The drivers that need no C library are built in: `null` (``NullOutput``; `null:untimed`
/// pulls as fast as the source delivers) and `file` (``FileOutput``; `file:PATH.wav`). Every
/// other driver is registered by the program that links it — the `tonearm` command registers
/// PulseAudio at start-up (`PulseOutput.register()`, module TonearmOutput), and so must any
/// program that wants ``OutputSelection/automatic(server:timeout:registry:)`` (the default of
/// `AudioEngine`, `AudioPlayer` and `QueuePlayer`) to choose an audible output. Without an
/// audible driver registered the automatic choice is the silent null output, with a notice that
/// says why.
///
/// Threading: every member may be called from any thread (a mutex guards the table; factories
/// run outside it). Registering a name again replaces the earlier factory.
public final class OutputDriverRegistry: Sendable {
    /// The registry that ``OutputSelection`` and the players' automatic output use.
    public static let shared = OutputDriverRegistry()

    private let factories: Mutex<[String: OutputDriverFactory]>

    /// A registry holding the built-in drivers (`null`, `file`).
    public init() {
        var table: [String: OutputDriverFactory] = [:]
        for f in [Self.nullFactory, Self.fileFactory] { table[f.name] = f }
        factories = Mutex(table)
    }

    /// Adds `factory` under its name (replacing a factory of that name).
    public func register(_ factory: OutputDriverFactory) {
        factories.withLock { $0[factory.name] = factory }
    }

    /// The factory registered as `name` (case-insensitive), or nil.
    public func factory(named name: String) -> OutputDriverFactory? {
        factories.withLock { $0[name.lowercased()] }
    }

    /// The registered names, sorted.
    public var names: [String] { factories.withLock { $0.keys.sorted() } }

    /// Makes a new, unopened driver from the factory registered as `name`.
    /// - Throws: ``TonearmError/outputUnavailable(driver:reason:)`` naming the registered drivers
    ///   when none is registered as `name`; whatever the factory throws for a request it cannot take.
    public func makeDriver(named name: String, request: OutputDriverRequest = OutputDriverRequest()) throws -> any AudioOutputDriver {
        guard let factory = factory(named: name) else {
            throw TonearmError.outputUnavailable(driver: name, reason: Self.notRegisteredReason(name, registered: names))
        }
        return try factory.make(request)
    }

    /// Why a driver named `name` cannot be made.
    static func notRegisteredReason(_ name: String, registered: [String]) -> String {
        "no output driver named '\(name)' is registered (registered: \(registered.joined(separator: ", "))); "
            + "a program registers the drivers it links, e.g. PulseOutput.register() for PulseAudio"
    }

    // MARK: Built-in drivers

    /// `null` (real time) and `null` with the argument `untimed` or `fast` (as fast as the source delivers).
    /// In real time it starts with 50 ms periods and, after a second of steady playback, pulls
    /// 250 ms at a time: 4 wake-ups a second instead of 20 (nobody hears it, so nothing needs the
    /// shorter latency once playing; the ring of a player holds a second or more ahead).
    static let nullFactory = OutputDriverFactory(name: "null", isAudible: false) { request in
        switch request.argument?.lowercased() {
        case nil: return NullOutput(periodDuration: 0.05, steadyPeriodDuration: 0.25)
        case "untimed", "fast": return NullOutput(untimed: true)
        case let other?: throw TonearmError.invalidArgument("output 'null:\(other)': the null output takes 'untimed' or nothing")
        }
    }

    /// `file` with the WAV file's path as its argument.
    static let fileFactory = OutputDriverFactory(name: "file", isAudible: false) { request in
        guard let path = request.argument, !path.isEmpty else {
            throw TonearmError.invalidArgument("output 'file:' needs a path, as in file:out.wav")
        }
        return FileOutput(path: path)
    }
}

/// The driver ``OutputSelection/makeDriver(applicationName:streamName:role:device:buffering:registry:)`` returns for
/// a choice whose driver is not registered: it cannot be opened, and says why.
///
/// Threading: immutable; every member may be used from any thread.
final class UnregisteredOutput: AudioOutputDriver, Sendable {
    let name: String
    private let reason: String
    private let eventChannel = OutputEventChannel()

    init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }

    var format: AudioFormat { .interleavedFloat(sampleRate: 48_000, channels: 2) }
    var isAudible: Bool { false }
    var events: AsyncStream<AudioOutputEvent> { eventChannel.stream }

    /// Throws ``TonearmError/outputUnavailable(driver:reason:)``: the driver is not registered.
    func open(format: AudioFormat) throws {
        throw TonearmError.outputUnavailable(driver: name, reason: reason)
    }

    /// Throws as `open` does.
    func start(source: any AudioRenderSource) throws {
        throw TonearmError.outputUnavailable(driver: name, reason: reason)
    }

    func pause() {}
    func resume() {}
    func stop() {}
    func close() { eventChannel.finish() }
    func setVolume(_ volume: Float) {}
    var latency: Double { 0 }
    var framesPlayed: Int64 { 0 }
    var underrunCount: Int { 0 }
}
