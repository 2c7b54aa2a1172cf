// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// Which output to play to, as chosen on the command line
/// (`--output pulse|null|null:untimed|file:PATH.wav`), and a factory for its driver.
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

    /// Makes a new, unopened driver for the selection. `device` names the PulseAudio sink to
    /// play to (nil: the server's default); the other outputs ignore it.
    public func makeDriver(applicationName: String = "Tonearm", streamName: String = "Playback",
                           role: String = "music", device: String? = nil) -> any AudioOutputDriver {
        switch self {
        case .pulse(let server):
            PulseOutput(server: server, applicationName: applicationName, streamName: streamName, role: role, device: device)
        case .null:
            NullOutput()
        case .nullUntimed:
            NullOutput(untimed: true)
        case .file(let path):
            FileOutput(path: path)
        }
    }

    /// What ``automatic(server:timeout:)`` chose, with a message for the user when the choice
    /// means nothing will be heard.
    public struct AutomaticChoice: Sendable, Hashable {
        public var selection: OutputSelection
        /// Nil when a sound server answered; otherwise a sentence to show the user.
        public var notice: String?
    }

    /// The message shown when no sound server answered.
    public static let noServerNotice = "No sound server answered (PulseAudio/PipeWire); playing to the silent null output — nothing will be heard. Choose an output with --output \(syntax)"

    /// PulseAudio when a server at `server` (nil: the default one) answers within `timeout`
    /// seconds; otherwise the null output with ``noServerNotice``. Blocks for at most `timeout`.
    public static func automatic(server: String? = nil, timeout: Double = 1.5) -> AutomaticChoice {
        if PulseOutput.isServerAvailable(server: server, timeout: timeout) {
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
