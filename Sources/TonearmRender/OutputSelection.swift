// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// Which output to play to, as chosen on the command line
/// (`--output pulse|null|null:untimed|file:PATH.wav`). Its driver is made by the
/// ``OutputDriverRegistry`` (`null` and `file` are built in; `pulse` is registered by the
/// program, with `PulseOutput.register()`).
public enum OutputSelection: Sendable, Hashable, CustomStringConvertible {
    /// PulseAudio (or PipeWire's PulseAudio server). `server` nil: the default server.
    case pulse(server: String? = nil)
    /// The silent real-time null output.
    case null
    /// The silent null output pulling as fast as the source can deliver (benchmarks: decoding
    /// speed without writing anything).
    case nullUntimed
    /// A WAV file of what would be heard.
    case file(path: String)

    /// The forms ``init(parsing:)`` accepts, for help texts.
    public static let syntax = "pulse|null|null:untimed|file:PATH.wav"

    /// Parses `pulse`, `null`, `null:untimed` (or its synonym `null:fast`) or `file:PATH.wav`
    /// (names are case-insensitive; the path is kept as written and must end in `.wav`). Throws ``TonearmError/invalidArgument(_:)`` with a message
    /// naming the accepted forms for anything else.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let lower = trimmed.lowercased()
        if lower == "pulse" {
            self = .pulse()
        } else if lower == "null" {
            self = .null
        } else if lower == "null:untimed" || lower == "null:fast" {
            self = .nullUntimed
        } else if lower.hasPrefix("file:") {
            let path = String(trimmed.dropFirst("file:".count))
            guard !path.isEmpty else {
                throw TonearmError.invalidArgument("output 'file:' needs a path, as in file:out.wav")
            }
            guard path.lowercased().hasSuffix(".wav"), path.count > 4, !path.hasSuffix("/.wav") else {
                throw TonearmError.invalidArgument("output '\(trimmed)': the file output writes WAV only; name a file ending in .wav")
            }
            self = .file(path: path)
        } else {
            throw TonearmError.invalidArgument("unknown output '\(trimmed)'; choose one of \(Self.syntax)")
        }
    }

    /// `pulse`, `null`, `null:untimed` or `file:PATH`.
    public var description: String {
        switch self {
        case .pulse: "pulse"
        case .null: "null"
        case .nullUntimed: "null:untimed"
        case .file(let p): "file:\(p)"
        }
    }

    /// The registry name of the selection's driver: `pulse`, `null` (both null forms; untimed is
    /// the argument `untimed`) or `file` (the path is the argument).
    public var driverName: String {
        switch self {
        case .pulse: "pulse"
        case .null, .nullUntimed: "null"
        case .file: "file"
        }
    }

    /// Makes a new, unopened driver for the selection from `registry`'s factory for
    /// ``driverName``. `device` names the sink to play to (nil: the server's default); the null
    /// and file outputs ignore it. `buffering`: how much the driver keeps queued ahead
    /// (``OutputBuffering``; `.steady` only for a player that flushes on a seek). When that driver is not registered (PulseAudio in a program
    /// that did not call `PulseOutput.register()`), the driver returned cannot be opened: its
    /// `open` throws ``TonearmError/outputUnavailable(driver:reason:)`` saying so.
    public func makeDriver(applicationName: String = "Tonearm", streamName: String = "Playback",
                           role: String = "music", device: String? = nil, buffering: OutputBuffering = .short,
                           registry: OutputDriverRegistry = .shared) -> any AudioOutputDriver {
        var request = OutputDriverRequest(applicationName: applicationName, streamName: streamName, role: role, device: device,
                                          buffering: buffering)
        switch self {
        case .pulse(let server): request.server = server
        case .null: break
        case .nullUntimed: request.argument = "untimed"
        case .file(let path): request.argument = path
        }
        do {
            return try registry.makeDriver(named: driverName, request: request)
        } catch {
            let reason: String
            if case TonearmError.outputUnavailable(_, let r) = error { reason = r } else { reason = "\(error)" }
            return UnregisteredOutput(name: description, reason: reason)
        }
    }

    /// What ``automatic(server:timeout:registry:)`` chose, with a message for the user when the choice
    /// means nothing will be heard.
    public struct AutomaticChoice: Sendable, Hashable {
        public var selection: OutputSelection
        /// Nil when a sound server answered; otherwise a sentence to show the user.
        public var notice: String?
    }

    /// The message shown when no sound server answered.
    public static let noServerNotice = "No sound server answered (PulseAudio/PipeWire); playing to the silent null output — nothing will be heard. Choose an output with --output \(syntax)"

    /// The message shown when no audible driver is registered (a program that did not register
    /// PulseAudio).
    public static let noAudibleDriverNotice = "No audible output driver is registered; playing to the silent null output — nothing will be heard. (A program registers PulseAudio with PulseOutput.register().)"

    /// PulseAudio when `registry` has a `pulse` driver and a server at `server` (nil: the default
    /// one) answers within `timeout` seconds; otherwise the null output, with
    /// ``noServerNotice`` (no server answered) or ``noAudibleDriverNotice`` (no `pulse` driver is
    /// registered). Blocks for at most `timeout`.
    public static func automatic(server: String? = nil, timeout: Double = 1.5,
                                 registry: OutputDriverRegistry = .shared) -> AutomaticChoice {
        guard let pulse = registry.factory(named: "pulse") else {
            return AutomaticChoice(selection: .null, notice: noAudibleDriverNotice)
        }
        if pulse.probe?(server, timeout) ?? true {
            return AutomaticChoice(selection: .pulse(server: server), notice: nil)
        }
        return AutomaticChoice(selection: .null, notice: noServerNotice)
    }
}

private extension String {
    func trimmingCharacters(in set: WhitespaceSet) -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
    enum WhitespaceSet { case whitespaces }
}
