// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// Whether this process may record (`AVAudioSession.RecordPermission`).
public enum RecordPermission: String, Sendable, Hashable, Codable {
    /// Not asked yet (``AudioSession/requestRecordPermission(_:)`` has not been called).
    case undetermined
    /// The sound server refuses, is not there, or has no input.
    case denied
    case granted
}

extension AudioSession {
    /// The input's gain object: the preferred input's, else the server's default input's.
    private var inputGainControl: InputGain { InputGain(server: pulseServer, input: preferredInput?.name) }

    /// The gain of the input recordings use (`AVAudioSession.inputGain`): the preferred input's
    /// (``preferredInput``), else the server's default input's; 0...1 of PulseAudio's 100 %.
    /// Blocks while it asks the server. Throws ``TonearmError/outputUnavailable(driver:reason:)``
    /// without a server or an input.
    public var inputGain: Float {
        get throws { try inputGainControl.gain() }
    }

    /// Sets that gain (`AVAudioSession.setInputGain(_:)`), clamped to 0...1. It is the source's
    /// own volume: other programs and desktop mixers see it. Throws as ``inputGain`` does, and
    /// ``TonearmError/invalidArgument(_:)`` for NaN or infinity.
    public func setInputGain(_ gain: Float) throws { try inputGainControl.setGain(gain) }

    /// Whether the gain can be set (`AVAudioSession.isInputGainSettable`): there is an input.
    /// PulseAudio lets every input's volume be set.
    public var isInputGainSettable: Bool { (try? inputGainControl.gain()) != nil }

    /// Whether the input recordings use is muted (`AVAudioApplication.isInputMuted`): a muted
    /// source records silence. Throws as ``inputGain`` does.
    public var isInputMuted: Bool {
        get throws { try inputGainControl.isMuted() }
    }

    /// Mutes or unmutes that input (`AVAudioApplication.setInputMuted(_:)`).
    public func setInputMuted(_ muted: Bool) throws { try inputGainControl.setMuted(muted) }

    /// Whether this process may record (`AVAudioSession.recordPermission`): `.undetermined` until
    /// ``requestRecordPermission(_:)`` has asked, then `.granted` when the sound server answered
    /// and has an input it lets us read, `.denied` when it did not. Linux has no per-program
    /// microphone permission outside sandboxes: the server is what decides.
    public var recordPermission: RecordPermission { recordPermissionState.withLock { $0 } }

    /// Asks whether this process may record (`AVAudioSession.requestRecordPermission(_:)`): asks
    /// the sound server (blocking the calling thread while it does), stores the answer in
    /// ``recordPermission`` and calls `response` with it (on the calling thread, before this
    /// returns; iOS calls it on another thread — code that waits for it works either way).
    public func requestRecordPermission(_ response: @Sendable (Bool) -> Void) {
        let granted = inputGainControl.canRecord()
        recordPermissionState.withLock { $0 = granted ? .granted : .denied }
        response(granted)
    }
}
