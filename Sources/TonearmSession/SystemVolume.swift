// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Dispatch
import TonearmCore

/// The volume and mute of an output, as one value.
public struct SystemVolumeState: Sendable, Hashable, Codable {
    /// The average channel volume, 0...1, where 1 is PulseAudio's 100 % (`PA_VOLUME_NORM`).
    /// Linear in PulseAudio's volume scale, as desktop mixers and `pactl` show it: 0.5 is 50 %.
    public var volume: Float
    /// Whether the output is muted.
    public var isMuted: Bool
    /// The output (sink) it belongs to.
    public var outputName: String

    public init(volume: Float, isMuted: Bool, outputName: String) {
        self.volume = volume
        self.isMuted = isMuted
        self.outputName = outputName
    }

    init(_ sink: SinkSnapshot) {
        let values = PulseControl.volumes(sink.volume)
        let average = values.isEmpty ? 0 : Double(values.reduce(0) { $0 + UInt64($1) }) / Double(values.count)
        self.init(volume: Float(average / Double(tonearm_pa_volume_norm())), isMuted: sink.muted, outputName: sink.name)
    }
}

/// The system volume: the volume and mute of the output in use — the default sink, or a named
/// one — not a player's own volume (Tonearm's counterpart of `MPVolumeView`, of
/// `AVAudioSession.outputVolume` and of its change notification). Changes made here are seen by
/// every desktop mixer, and theirs by ``changes``.
///
/// Volumes are 0...1 of PulseAudio's 100 % (`PA_VOLUME_NORM`), the average of the channels;
/// setting one keeps the balance between channels.
///
/// Threading: every method may be called from any thread; each blocks the caller until the
/// server has answered (at most `timeout` seconds per request). Do not call them from a
/// PulseAudio callback. ``changes`` are produced on the connection's own mainloop thread.
///
/// Errors: ``TonearmError/outputUnavailable(driver:reason:)`` when no server answers, the
/// connection is lost, the output does not exist, or the server refuses or does not answer in
/// time (the reason says which); ``TonearmError/invalidArgument(_:)`` for a volume that is not a
/// number.
public final class SystemVolume: Sendable {
    /// The server; nil for libpulse's default (`PULSE_SERVER`, then the user's socket).
    public let server: String?
    /// The output whose volume this is; nil for the default output at the time of each call.
    public let outputName: String?
    /// How long each request may take, in seconds.
    public let timeout: Double
    private let control: SharedControl

    /// The volume of `output` (a sink name), or of the default output when nil. Connects on
    /// first use.
    public init(server: String? = nil, output: String? = nil, timeout: Double = 2) {
        self.server = server
        outputName = output
        self.timeout = max(timeout, 0.05)
        control = SharedControl(server: server, clientName: "Tonearm volume", timeout: self.timeout)
    }

    /// The name libpulse takes for the output: the sink's, or `@DEFAULT_SINK@`.
    private var target: String { outputName ?? "@DEFAULT_SINK@" }

    private func sink(_ c: PulseControl) throws -> SinkSnapshot {
        if let s = try c.sink(named: target) { return s }
        let known = (try? c.sinks().map(\.name)) ?? []
        let outputs = known.isEmpty ? "none" : known.joined(separator: ", ")
        if let outputName {
            throw TonearmError.outputUnavailable(driver: "pulse:\(outputName)",
                                                 reason: "there is no output named '\(outputName)'; outputs: \(outputs)")
        }
        throw TonearmError.outputUnavailable(driver: "pulse", reason: "the server has no default output; outputs: \(outputs)")
    }

    /// The volume and mute of the output now.
    public func state() throws -> SystemVolumeState {
        SystemVolumeState(try sink(try control.get()))
    }

    /// The volume, 0...1 (1 = 100 %).
    public func volume() throws -> Float { try state().volume }

    /// Whether the output is muted.
    public func isMuted() throws -> Bool { try state().isMuted }

    /// Sets the volume (clamped to 0...1; 1 = 100 %), keeping the balance between channels.
    /// Throws ``TonearmError/invalidArgument(_:)`` for NaN or infinity.
    public func setVolume(_ volume: Float) throws {
        guard volume.isFinite else { throw TonearmError.invalidArgument("volume \(volume) is not a number between 0 and 1") }
        let c = try control.get()
        let s = try sink(c)
        try c.setSinkVolume(s.name, PulseControl.cvolume(PulseControl.volumes(PulseControl.volumes(s.volume), scaledTo: volume,
                                                                                channels: s.channelCount)))
    }

    /// Mutes or unmutes the output.
    public func setMuted(_ muted: Bool) throws {
        let c = try control.get()
        try c.setSinkMute(try sink(c).name, muted)
    }

    /// The volume and mute from now on, each time either changes (also when the default output
    /// changes to one with another volume, when this object follows the default), from the
    /// server's subscription events — nothing polls. The current value is not repeated first:
    /// read ``state()``.
    ///
    /// Each access makes a new stream with a connection of its own, subscribed before the
    /// getter returns; it ends when the connection is lost and the connection is closed when the
    /// stream is dropped. Throws ``TonearmError/outputUnavailable(driver:reason:)`` without a
    /// server. Blocks the caller while it connects.
    public var changes: AsyncStream<SystemVolumeState> {
        get throws {
            try PulseControl.changeStream(server: server, clientName: "Tonearm volume events", timeout: timeout,
                                          bufferingNewest: 64) { control, continuation in
                try VolumeWatcher(control: control, target: target, continuation: continuation).start()
            }
        }
    }
}

/// Follows one output's volume for a ``SystemVolume/changes`` stream. Its state is touched only
/// with the mainloop lock held.
final class VolumeWatcher: @unchecked Sendable {
    let control: PulseControl
    private let target: String
    private let continuation: AsyncStream<SystemVolumeState>.Continuation
    private var last: SystemVolumeState?
    private var lastIndex: UInt32?

    init(control: PulseControl, target: String, continuation: AsyncStream<SystemVolumeState>.Continuation) {
        self.control = control
        self.target = target
        self.continuation = continuation
    }

    /// Subscribes and reads the initial state (caller's thread); events that arrived meanwhile
    /// lead to more reads. The connection holds the watcher from here on.
    func start() throws {
        let mask = pa_subscription_mask_t(rawValue: PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue)
        try control.follow(mask, finishing: continuation, initial: {
            let s = try control.sink(named: target)
            return {
                self.last = s.map(SystemVolumeState.init)
                self.lastIndex = s?.index
            }
        }, handle: handle)
    }

    /// Mainloop thread, lock held.
    private func handle(_ e: PulseEvent) {
        // Changes of other sinks do not matter; new and removed sinks, and the server (a new
        // default), may.
        if e.facility == PA_SUBSCRIPTION_EVENT_SINK, e.kind == PA_SUBSCRIPTION_EVENT_CHANGE, e.index != lastIndex { return }
        refresh()
    }

    private func refresh() {
        control.requestSink(named: target) { [weak self] s in
            guard let self, let s else { return }
            lastIndex = s.index
            let state = SystemVolumeState(s)
            if state != last {
                last = state
                continuation.yield(state)
            }
        }
    }
}
