// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmOutput

/// One input a recording can read from: a PulseAudio source — a microphone, a line in, or the
/// monitor of an output (the counterpart of `AVAudioSessionPortDescription` in
/// `AVAudioSession.availableInputs`).
public struct AudioInputRoute: Sendable, Hashable, Codable {
    /// The source's name, unique on the server (`alsa_input.pci-0000_00_1f.3.analog-stereo`); what
    /// ``AudioRoutes/setDefaultInput(named:)``, `AudioRecorder(…, source:)` and
    /// `tonearm record --source` take.
    public var name: String
    /// The human-readable name (`device.description`: "Built-in Audio Analog Stereo").
    public var description: String
    /// The source's index on the server (valid while the source exists).
    public var index: UInt32
    /// Whether it is the server's default input.
    public var isDefault: Bool
    /// What kind of device it is, from the active port and the source's properties.
    public var portType: AudioInputPortType
    /// The active port's name (`analog-input-mic`), when the source has ports.
    public var activePort: String?
    /// The source's sample rate in Hz.
    public var sampleRate: Double
    /// The source's channel count.
    public var channelCount: Int
    /// For the monitor of an output, that output's name (nil for a real input).
    public var monitorOf: String?

    public init(name: String, description: String, index: UInt32, isDefault: Bool, portType: AudioInputPortType,
                activePort: String? = nil, sampleRate: Double, channelCount: Int, monitorOf: String? = nil) {
        self.name = name
        self.description = description
        self.index = index
        self.isDefault = isDefault
        self.portType = portType
        self.activePort = activePort
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.monitorOf = monitorOf
    }

    init(_ source: SourceSnapshot, defaultName: String?) {
        self.init(name: source.name, description: source.description, index: source.index,
                  isDefault: source.name == defaultName,
                  portType: .classify(isMonitor: source.monitorOf != nil, driver: source.driver, isNetworkFlag: source.isNetworkFlag,
                                      activePortName: source.activePortName, activePortType: source.activePortType,
                                      properties: source.properties),
                  activePort: source.activePortName, sampleRate: source.sampleRate, channelCount: source.channelCount,
                  monitorOf: source.monitorOf)
    }
}
