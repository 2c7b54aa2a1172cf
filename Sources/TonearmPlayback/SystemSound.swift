// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmOutput

/// A short sound played at once, many times over itself if asked (the counterpart of System Sound
/// Services' `AudioServicesCreateSystemSoundID` / `AudioServicesPlaySystemSound`): a click, a
/// notification chime, a game effect.
///
/// The file is decoded into memory when the sound is created (any format; longer than
/// ``maximumDuration`` is refused, as on iOS). The sound keeps one output stream open and warm
/// (PulseAudio role `event`, a short buffer), mixing up to ``voices`` plays at a time through an
/// engine graph, so `play()` reaches the server within one short period. Everything is released
/// when the sound goes away.
///
/// Threading: every method may be called from any thread; completions run on a player node's
/// event thread.
public final class SystemSound: Sendable {
    /// The longest sound accepted, in seconds.
    public static let maximumDuration = 30.0
    /// How many plays can overlap (a further play takes over the voice that started first).
    public static let voices = 6

    /// Length in seconds.
    public let duration: Double
    private let buffer: AudioPCMBuffer
    private let engine: AudioEngine
    private let nodes: [AudioPlayerNode]
    private let next = Mutex(0)

    /// Loads and decodes `url`, and opens the warm output stream `output` makes (by default
    /// PulseAudio with the `event` role when a server answers, otherwise the silent null output).
    /// - Throws: the file's ``TonearmError`` (not found, not media, …), `invalidArgument` for a
    ///   sound longer than ``maximumDuration``, `outputUnavailable` when the output cannot open.
    public init(contentsOf url: URL,
                output: @escaping @Sendable () throws -> any AudioOutputDriver = SystemSound.automaticOutput) throws {
        let file = try AudioFile(forReading: url)
        guard file.duration <= Self.maximumDuration else {
            throw TonearmError.invalidArgument("\(url.path): a system sound may last at most \(Int(Self.maximumDuration)) s; this one lasts \(String(format: "%.1f", file.duration)) s (play it with AudioPlayer)")
        }
        let f = file.processingFormat
        guard let b = AudioPCMBuffer(format: f, frameCapacity: max(1, Int(file.length))) else {
            throw TonearmError.invalidArgument("\(url.path): cannot hold \(file.length) frames in memory")
        }
        try file.read(into: b)
        buffer = b
        duration = file.duration
        engine = AudioEngine(outputFormat: .interleavedFloat(sampleRate: f.sampleRate, channels: f.channelCount), output: output)
        nodes = (0..<Self.voices).map { _ in AudioPlayerNode() }
        for n in nodes {
            engine.attach(n)
            try engine.connect(n, to: engine.mainMixerNode, format: nil)
        }
        try engine.start()
        for n in nodes { n.play() }
    }

    deinit { engine.stop() }

    /// PulseAudio (role `event`, a 20 ms buffer) when a server answers, otherwise the null output.
    public static let automaticOutput: @Sendable () throws -> any AudioOutputDriver = {
        switch OutputSelection.automatic().selection {
        case .pulse(let server):
            return PulseOutput(server: server, streamName: "System sound", role: "event", targetLatency: 0.02)
        case let other:
            return other.makeDriver(streamName: "System sound", role: "event")
        }
    }

    /// Plays the sound (over any plays still sounding); `completion` runs once this play has
    /// been heard to its end.
    public func play(completion: (@Sendable () -> Void)? = nil) {
        let i = next.withLock { n -> Int in
            defer { n = (n + 1) % Self.voices }
            return n
        }
        let node = nodes[i]
        node.scheduleBuffer(buffer, at: nil, options: .interrupts, completionCallbackType: .dataPlayedBack) { _ in
            completion?()
        }
    }

    /// Plays the sound as an alert: the sound, and the terminal bell on standard error when it is
    /// a terminal (a desktop notification is not sent yet).
    public func playAlert(completion: (@Sendable () -> Void)? = nil) {
        if isatty(2) == 1 { FileHandle.standardError.write(Data([7])) }
        play(completion: completion)
    }
}
