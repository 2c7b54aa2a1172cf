// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import TonearmCore

/// The gain and mute of an input: the PulseAudio source's own volume (what desktop mixers show
/// as the microphone's level) — `AVAudioSession.inputGain`, `setInputGain(_:)` and
/// `AVAudioApplication`'s input mute, through ``AudioSession``. Gains are 0...1 of PulseAudio's
/// 100 % (`PA_VOLUME_NORM`), the average of the channels; setting one keeps the balance.
///
/// Threading: every method may be called from any thread and blocks until the server answers
/// (at most `timeout` seconds). Errors: ``TonearmError/outputUnavailable(driver:reason:)``
/// without a server or when the input does not exist (the reason lists the inputs);
/// ``TonearmError/invalidArgument(_:)`` for a gain that is not a number.
public final class InputGain: Sendable {
    /// The server; nil for libpulse's default.
    public let server: String?
    /// The input (a source's name); nil for the default input at the time of each call.
    public let inputName: String?
    public let timeout: Double
    private let control: SharedControl

    public init(server: String? = nil, input: String? = nil, timeout: Double = 2) {
        self.server = server
        inputName = input
        self.timeout = max(timeout, 0.05)
        control = SharedControl(server: server, clientName: "Tonearm input gain", timeout: self.timeout)
    }

    private func source(_ c: PulseControl) throws -> SourceSnapshot {
        if let s = try c.source(named: inputName ?? "@DEFAULT_SOURCE@") { return s }
        let known = (try? c.sources().filter { $0.monitorOf == nil }.map(\.name)) ?? []
        let inputs = known.isEmpty ? "none" : known.joined(separator: ", ")
        if let inputName {
            throw TonearmError.outputUnavailable(driver: "pulse:\(inputName)", reason: "there is no input named '\(inputName)'; inputs: \(inputs)")
        }
        throw TonearmError.outputUnavailable(driver: "pulse", reason: "the server has no default input; inputs: \(inputs)")
    }

    /// The gain, 0...1 (1 = 100 %).
    public func gain() throws -> Float {
        let s = try source(try control.get())
        let values = s.volumes
        let average = values.isEmpty ? 0 : Double(values.reduce(0) { $0 + UInt64($1) }) / Double(values.count)
        return Float(average / Double(tonearm_pa_volume_norm()))
    }

    /// Sets the gain (clamped to 0...1), keeping the balance between channels. Throws
    /// ``TonearmError/invalidArgument(_:)`` for NaN or infinity.
    public func setGain(_ gain: Float) throws {
        guard gain.isFinite else { throw TonearmError.invalidArgument("input gain \(gain) is not a number between 0 and 1") }
        let c = try control.get()
        let s = try source(c)
        try c.setSourceVolume(s.name, PulseControl.cvolume(PulseControl.volumes(s.volumes, scaledTo: gain, channels: s.channelCount)))
    }

    /// Whether the input is muted.
    public func isMuted() throws -> Bool { try source(try control.get()).muted }

    /// Mutes or unmutes the input.
    public func setMuted(_ muted: Bool) throws {
        let c = try control.get()
        try c.setSourceMute(try source(c).name, muted)
    }

    /// Whether the server lets this process read an input: it answers, and has an input that is
    /// not a monitor (the default one, or `inputName`) whose details it gives us.
    func canRecord() -> Bool {
        guard let c = try? control.get(), let s = try? source(c) else { return false }
        return s.monitorOf == nil || inputName != nil
    }
}
