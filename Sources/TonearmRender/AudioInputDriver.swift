// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore

/// Why an engine's input (its input node, a tap on it) cannot be used.
public enum AudioInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The audio session's category does not allow input: only `record`, `playAndRecord` and
    /// `multiRoute` do (as on iOS, where `AVAudioEngine.start()` fails the same way).
    case categoryDoesNotAllowInput(category: String)
    /// No input driver is registered (a program registers PulseAudio's with `PulseInput.register()`,
    /// module TonearmRecord).
    case noInputDriver
    /// The input cannot be opened: no sound server, no such source, a refused stream.
    case inputUnavailable(source: String, reason: String)
    /// A tap is already installed on that bus of that node (AVFoundation raises an exception here;
    /// Tonearm throws): remove it first.
    case tapAlreadyInstalled(node: String, bus: Int)
    /// The bus does not exist on that node (a node has output bus 0 only).
    case noSuchBus(node: String, bus: Int)
    /// The tap's buffer size or format cannot be used (`reason` says which).
    case invalidTap(node: String, reason: String)
    /// The input the engine captured from went away while it ran (a USB microphone unplugged, its
    /// module unloaded, the sound server gone): the engine stopped its input (the graph renders
    /// silence for it, a tap's block is called no more). `reason` says what the server reported.
    case inputLost(source: String, reason: String)
    /// Voice processing (the echo canceller) needs the audio session's category to be
    /// `playAndRecord` — playing and recording at once —, as on iOS.
    case voiceProcessingNeedsPlayAndRecord(category: String)
    /// Voice processing can be enabled or disabled only while the engine is stopped (not running,
    /// not paused), as Apple's `setVoiceProcessingEnabled` requires.
    case voiceProcessingWhileRunning
    /// Voice processing needs a device: not in manual rendering mode (as on Apple's platforms).
    case voiceProcessingInManualRenderingMode
    /// The echo canceller cannot be used: the input driver has none, the server cannot load it
    /// (PulseAudio's `module-echo-cancel` missing, or its source or sink), or the output driver
    /// cannot play through it. `reason` says which.
    case voiceProcessingUnavailable(reason: String)

    public var description: String {
        switch self {
        case .categoryDoesNotAllowInput(let c):
            "the audio session's category '\(c)' does not allow input; set the category to record or playAndRecord"
        case .noInputDriver:
            "no input driver is registered; a program registers PulseAudio's with PulseInput.register() (module TonearmRecord)"
        case .inputUnavailable(let s, let r): "cannot open the input \(s): \(r)"
        case .tapAlreadyInstalled(let n, let b): "\(n): a tap is already installed on bus \(b); remove it first"
        case .noSuchBus(let n, let b): "\(n) has no output bus \(b) (only bus 0)"
        case .invalidTap(let n, let r): "\(n): cannot install the tap: \(r)"
        case .inputLost(let s, let r): "the input \(s) went away while the engine ran: \(r); the engine stopped its input"
        case .voiceProcessingNeedsPlayAndRecord(let c):
            "voice processing needs the audio session's category playAndRecord (it is '\(c)')"
        case .voiceProcessingWhileRunning:
            "voice processing can be enabled or disabled only while the engine is stopped; call stop() first"
        case .voiceProcessingInManualRenderingMode: "voice processing needs a device; the engine is in manual rendering mode"
        case .voiceProcessingUnavailable(let r): "voice processing (echo cancellation) is not available: \(r)"
        }
    }
}

/// One open capture stream of an ``AudioInputDriver``: its capture thread (the driver's own, a
/// real-time thread for the purposes of the contract: it allocates nothing, takes no lock of
/// ours and never waits) copies what the source captures into ``ring``, silence for the holes
/// the server reports; one consumer reads the ring.
///
/// Threading: `start`, `close` are control-plane calls (one thread at a time); `waitForData` is
/// the consumer's (a non-real-time thread); the counters may be read from any thread.
public protocol AudioInputStream: AnyObject, Sendable {
    /// The ring the capture thread fills (interleaved Float32 in ``format``).
    var ring: CaptureRing { get }
    /// What the stream captures (interleaved Float32): the rate and channel count asked for, the
    /// server converting from the source's own.
    var format: AudioFormat { get }
    /// The source captured from, as the server names it.
    var sourceName: String { get }
    /// Starts capturing (the stream opens paused).
    func start() throws
    /// Waits until the capture thread wrote to the ring (or the stream was lost) since the last
    /// return, or `timeout` seconds. Consumer thread only.
    func waitForData(timeout: Double)
    /// Wakes a consumer blocked in ``waitForData(timeout:)``. Any thread.
    func wakeConsumer()
    /// Frames of silence written for holes the server reported.
    var holeFrames: Int64 { get }
    /// Frames lost because the ring was full (the consumer fell behind).
    var droppedFrames: Int64 { get }
    /// Whether the stream or its connection failed (the source or the server went away).
    var isLost: Bool { get }
    /// Why the stream captures no more, once it does not: its source went away (the server moved
    /// the stream elsewhere and the driver stopped it) or the stream failed; nil while it captures.
    var lossReason: String? { get }
    /// Calls `handler` once, with ``lossReason``, when the stream captures no more (at once when
    /// it already does not). It runs on the driver's thread (PulseAudio's mainloop) and must not
    /// block: it hands the news on (the input node dispatches it). Control plane, before ``start()``.
    func onLoss(_ handler: @escaping @Sendable (String) -> Void)
    /// Stops capturing and releases the stream; no capture callback runs once it returns. Idempotent.
    func close()
}

/// Opens the capture streams of an engine's input (the counterpart of the input half of an
/// `AVAudioEngine`'s audio unit): what the engine knows of an input — the render contract
/// knows no sound server. PulseAudio's is `PulseInput` (module TonearmRecord).
///
/// Threading: every member may be called from any control thread; each blocks while it asks
/// the server.
public protocol AudioInputDriver: AnyObject, Sendable {
    /// A short name for messages (`pulse`).
    var name: String { get }
    /// The format of the source the driver captures from (its own rate and channel count).
    /// Throws ``AudioInputError/categoryDoesNotAllowInput(category:)`` when the session forbids
    /// input, ``AudioInputError/inputUnavailable(source:reason:)`` when there is no such source.
    func sourceFormat() throws -> AudioFormat
    /// Opens a paused capture stream from the source in `format` (nil: the source's own), named
    /// `streamName` on the server. Throws as ``sourceFormat()`` does.
    func openStream(format: AudioFormat?, streamName: String) throws -> any AudioInputStream
    /// Starts voice processing (`AVAudioIONode.setVoiceProcessingEnabled(true)`'s work): an echo
    /// canceller between the driver's source and the output device `outputDevice` (nil: the
    /// server's default), returned as a driver whose streams capture the source with what is
    /// played through ``VoiceProcessingInput/outputDevice`` taken out. Called by the engine as it
    /// starts; it closes the canceller when it stops.
    /// Throws ``AudioInputError/voiceProcessingNeedsPlayAndRecord(category:)``,
    /// ``AudioInputError/voiceProcessingUnavailable(reason:)`` (the default: a driver without one).
    func startVoiceProcessing(outputDevice: String?) throws -> any VoiceProcessingInput
    /// Whether voice processing could start (the session's category), without starting it.
    /// Throws as ``startVoiceProcessing(outputDevice:)``.
    func checkVoiceProcessing() throws
}

extension AudioInputDriver {
    public func startVoiceProcessing(outputDevice: String?) throws -> any VoiceProcessingInput {
        throw AudioInputError.voiceProcessingUnavailable(reason: "the input driver '\(name)' has no echo canceller")
    }
    public func checkVoiceProcessing() throws {
        throw AudioInputError.voiceProcessingUnavailable(reason: "the input driver '\(name)' has no echo canceller")
    }
}

/// A running echo canceller (PulseAudio's `module-echo-cancel`): an input driver whose streams
/// capture the source with what is played through ``outputDevice`` taken out. The engine plays
/// its output to ``outputDevice`` while it runs.
///
/// Threading: as ``AudioInputDriver``'s; `close` from the control plane, after every stream
/// opened from it was closed.
public protocol VoiceProcessingInput: AudioInputDriver {
    /// The device outputs play to so that the canceller hears what it must take out (its sink).
    var outputDevice: String { get }
    /// Removes the canceller (unloads the module). Idempotent.
    func close()
}

/// The input driver engines use when they are given none (``AudioEngine``'s default): empty
/// until a program registers one — `PulseInput.register()` for PulseAudio, as `tonearm` does.
///
/// Threading: any thread (a mutex guards the factory; it runs outside it).
public final class InputDriverRegistry: Sendable {
    public static let shared = InputDriverRegistry()

    private let factory = Mutex<(@Sendable () -> any AudioInputDriver)?>(nil)

    public init() {}

    /// Makes `make` the input driver factory (replacing an earlier one).
    public func register(_ make: @escaping @Sendable () -> any AudioInputDriver) {
        factory.withLock { $0 = make }
    }

    /// Whether a driver is registered.
    public var hasDriver: Bool { factory.withLock { $0 != nil } }

    /// A new driver from the registered factory. Throws ``AudioInputError/noInputDriver``
    /// when none is registered.
    public func makeDriver() throws -> any AudioInputDriver {
        guard let make = factory.withLock({ $0 }) else { throw AudioInputError.noInputDriver }
        return make()
    }
}
