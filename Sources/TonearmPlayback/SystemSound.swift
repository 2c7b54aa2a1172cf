// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmOutput
import TonearmSession

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
/// ``playAlert(completion:)`` (`AudioServicesPlayAlertSound`) adds a desktop notification —
/// through `org.freedesktop.Notifications` on ``notificationBus`` — where a bus and a notification
/// server exist, and the terminal bell where not.
///
/// Threading: every method may be called from any thread; completions run on a player node's
/// event thread.
public final class SystemSound: Sendable {
    /// The longest sound accepted, in seconds.
    public static let maximumDuration = 30.0
    /// How many plays can overlap (a further play takes over the voice that started first).
    public static let voices = 6
    /// How long ``playAlert(completion:)`` waits for the notification server, in seconds, before
    /// it rings the bell instead.
    public static let alertNotificationTimeout = 1.0

    /// How an alert reached the user besides its sound.
    public enum AlertDelivery: Sendable, Hashable {
        /// A desktop notification was shown; the server's id for it.
        case notification(id: UInt32)
        /// No notification could be shown, for the reason given; the terminal bell was rung
        /// instead (on standard error, when that is a terminal).
        case bell(DesktopNotification.Failure)
    }

    /// The sound's file.
    public let url: URL
    /// Length in seconds.
    public let duration: Double
    /// The bus ``playAlert(completion:)`` sends its notification on.
    public let notificationBus: AudioSession.Bus
    private let alertText: Mutex<(title: String, body: String)>
    private let buffer: AudioPCMBuffer
    private let engine: AudioEngine
    private let nodes: [AudioPlayerNode]
    private let next = Mutex(0)
    /// Outputs lost so far: a play whose voice stopped after a loss was cut off by it, and its
    /// completion runs (it was not replaced by a later play).
    private let losses = LossCount()
    /// Follows the engine's events for a lost output (see `init`); cancelled with the sound.
    private let lossWatch: Task<Void, Never>

    /// Loads and decodes `url`, and opens the warm output stream `output` makes (by default
    /// PulseAudio with the `event` role when a server answers, otherwise the silent null output).
    /// Alerts notify on `notificationBus` (by default the session bus; ``AudioSession/Bus/none``
    /// for the bell only). Does not touch the bus.
    /// - Throws: the file's ``TonearmError`` (not found, not media, …), `invalidArgument` for a
    ///   sound longer than ``maximumDuration``, `outputUnavailable` when the output cannot open.
    public init(contentsOf url: URL,
                output: @escaping @Sendable () throws -> any AudioOutputDriver = SystemSound.automaticOutput,
                notificationBus: AudioSession.Bus = .session) throws {
        let file = try AudioFile(forReading: url)
        guard file.duration <= Self.maximumDuration else {
            throw TonearmError.invalidArgument("\(url.path): a system sound may last at most \(Int(Self.maximumDuration)) s; this one lasts \(String(format: "%.1f", file.duration)) s")
        }
        let f = file.processingFormat
        guard let b = AudioPCMBuffer(format: f, frameCapacity: max(1, Int(file.length))) else {
            throw TonearmError.invalidArgument("\(url.path): cannot hold \(file.length) frames in memory")
        }
        try file.read(into: b)
        buffer = b
        self.url = url
        duration = file.duration
        self.notificationBus = notificationBus
        alertText = Mutex((title: url.deletingPathExtension().lastPathComponent, body: ""))
        engine = AudioEngine(outputFormat: f.interleavedFloat, output: output)
        nodes = (0..<Self.voices).map { _ in AudioPlayerNode() }
        for n in nodes {
            engine.attach(n)
            try engine.connect(n, to: engine.mainMixerNode, format: nil)
        }
        let events = engine.eventStream
        try engine.start()
        for n in nodes { n.play() }
        // The sound server went away (the engine stopped): what was sounding ends there, and
        // each cut-off play's completion runs — nothing waits for an end that cannot come.
        let watched = nodes
        let losses = losses
        lossWatch = Task.detached {
            for await e in events {
                guard case .outputLost = e else { continue }
                losses.count.withLock { $0 += 1 }
                for n in watched { n.stop() }
            }
        }
    }

    deinit {
        lossWatch.cancel()
        engine.stop()
    }

    /// PulseAudio (role `event`, a fixed 20 ms buffer) when the program registered it
    /// (`PulseOutput.register()`) and a server answers, otherwise the null output. Never the
    /// growing buffer of media playback (``OutputBuffering/steady``): a system sound must be
    /// heard the moment it is played, and each play goes over the others rather than replacing
    /// them, so there is nothing a flush could do for it.
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
    ///
    /// After the output was lost (the sound server went away), the first play opens it again —
    /// a new server, or the silent output when the automatic one finds none; when it cannot be
    /// opened, nothing is heard and `completion` runs at once. A play cut off by a lost output
    /// runs its completion then. So `completion` always runs, once, unless a later play on the
    /// same voice (one of ``voices``) replaced this one.
    public func play(completion: (@Sendable () -> Void)? = nil) {
        if !engine.isRunning {
            do {
                try engine.start()
                for n in nodes { n.play() }
            } catch {
                completion?()
                return
            }
        }
        let i = next.withLock { n -> Int in
            defer { n = (n + 1) % Self.voices }
            return n
        }
        let node = nodes[i]
        let lossesBefore = losses.count.withLock { $0 }
        let losses = losses
        node.scheduleBuffer(buffer, at: nil, options: .interrupts, completionCallbackType: .dataPlayedBack) { type in
            // A play that a later one on the same voice replaced (`.stopped`) was not heard to
            // its end; one the output's loss cut off has ended all the same.
            if type == .dataPlayedBack || losses.count.withLock({ $0 }) != lossesBefore { completion?() }
        }
    }

    /// The summary of the notification ``playAlert(completion:)`` sends; by default the file's
    /// name without its extension (`"complete"` for `complete.oga`).
    public var alertTitle: String {
        get { alertText.withLock { $0.title } }
        set { alertText.withLock { $0.title = newValue } }
    }

    /// The body of the notification ``playAlert(completion:)`` sends; empty by default. Plain
    /// text for most servers (see ``DesktopNotification/body``).
    public var alertBody: String {
        get { alertText.withLock { $0.body } }
        set { alertText.withLock { $0.body = newValue } }
    }

    /// Plays the sound as an alert (`AudioServicesPlayAlertSound`): the sound at once, as
    /// ``play(completion:)`` does, and a desktop notification — ``alertTitle`` and ``alertBody``,
    /// with the `sound-file` hint naming ``url`` and `suppress-sound` (the sound is played here) —
    /// sent on ``notificationBus``. Where there is no bus, no notification server, or the server
    /// does not answer within ``alertNotificationTimeout``, the terminal bell rings instead, on
    /// standard error when it is a terminal.
    ///
    /// Threading: returns at once; the notification is sent on a background thread, never on the
    /// caller's. `completion`, as for ``play(completion:)``, runs once this play has been heard to
    /// its end, whatever became of the notification.
    /// - Returns: a task whose value tells how the alert was delivered, known as soon as the
    ///   server answered or the bell rang (at most ``alertNotificationTimeout`` and the time to
    ///   start a thread). Discard it to fire and forget.
    @discardableResult
    public func playAlert(completion: (@Sendable () -> Void)? = nil) -> Task<AlertDelivery, Never> {
        play(completion: completion)
        let (title, body) = alertText.withLock { ($0.title, $0.body) }
        let notification = DesktopNotification(summary: title, body: body, soundFile: url.path, suppressSound: true)
        let bus = notificationBus
        return Task.detached {
            await withCheckedContinuation { (done: CheckedContinuation<AlertDelivery, Never>) in
                DispatchQueue.global(qos: .userInitiated).async {
                    done.resume(returning: Self.deliver(notification, on: bus))
                }
            }
        }
    }

    /// Sends `notification` on `bus`, or rings the bell; blocks up to ``alertNotificationTimeout``.
    private static func deliver(_ notification: DesktopNotification, on bus: AudioSession.Bus) -> AlertDelivery {
        do {
            return .notification(id: try notification.send(on: bus, timeout: alertNotificationTimeout))
        } catch {
            if isatty(2) == 1 { FileHandle.standardError.write(Data([7])) }
            return .bell(error)
        }
    }
}

/// How many times a ``SystemSound``'s output was lost, shared with its plays' completions.
private final class LossCount: Sendable {
    let count = Mutex<UInt64>(0)
}
