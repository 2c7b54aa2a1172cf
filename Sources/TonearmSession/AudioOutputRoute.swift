// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import TonearmOutput

/// One output a stream can play to: a PulseAudio sink (the counterpart of
/// `AVAudioSessionPortDescription` in a route).
public struct AudioOutputRoute: Sendable, Hashable, Codable {
    /// The sink's name, unique on the server (`alsa_output.pci-0000_00_1f.3.analog-stereo`); what
    /// ``AudioRoutes/setDefaultOutput(named:)`` and `tonearm outputs --set` take.
    public var name: String
    /// The human-readable name (`device.description`: "Built-in Audio Analog Stereo").
    public var description: String
    /// The sink's index on the server (valid while the sink exists).
    public var index: UInt32
    /// Whether it is the server's default output.
    public var isDefault: Bool
    /// What kind of device it is, from the active port and the sink's properties.
    public var portType: AudioOutputPortType
    /// The active port's name (`analog-output-headphones`), when the sink has ports.
    public var activePort: String?
    /// The sink's sample rate in Hz.
    public var sampleRate: Double
    /// The sink's channel count.
    public var channelCount: Int
    /// The name of the sink's monitor source (what it plays, as a recording source).
    public var monitorSource: String

    public init(name: String, description: String, index: UInt32, isDefault: Bool, portType: AudioOutputPortType,
                activePort: String? = nil, sampleRate: Double, channelCount: Int, monitorSource: String) {
        self.name = name
        self.description = description
        self.index = index
        self.isDefault = isDefault
        self.portType = portType
        self.activePort = activePort
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.monitorSource = monitorSource
    }

    init(_ sink: SinkSnapshot, defaultName: String?) {
        self.init(name: sink.name, description: sink.description, index: sink.index, isDefault: sink.name == defaultName,
                  portType: Self.portType(of: sink), activePort: sink.activePortName, sampleRate: sink.sampleRate,
                  channelCount: sink.channelCount, monitorSource: sink.monitorSource)
    }

    /// The port type of a sink (see ``AudioOutputPortType/classify(driver:isNetworkFlag:activePortName:activePortType:properties:)``).
    static func portType(of sink: SinkSnapshot) -> AudioOutputPortType {
        .classify(driver: sink.driver, isNetworkFlag: sink.isNetworkFlag, activePortName: sink.activePortName,
                  activePortType: sink.activePortType, properties: sink.properties)
    }
}

/// A change of the outputs (the counterpart of `AVAudioSession.routeChangeNotification` with
/// its reason and previous route).
public struct AudioRouteChange: Sendable, Hashable {
    /// Why the route changed (the counterpart of `AVAudioSession.RouteChangeReason`).
    public enum Reason: String, Sendable, Hashable, Codable {
        /// An output appeared (a sink was added, or a sink's active port became headphones).
        case newDeviceAvailable
        /// An output went away (a sink was removed, or headphones were unplugged from a sink):
        /// ``AudioRouteChange/previousRoute`` is the route that is gone. Players pause on it
        /// when it was the output they played to.
        case oldDeviceUnavailable
        /// This process changed the output (``AudioRoutes/setDefaultOutput(named:)`` on the same
        /// ``AudioRoutes`` object).
        case override
        /// The audio session's category changed. Not sent by ``AudioRoutes``: reserved for the
        /// audio session, which reports a changed route when its category does.
        case categoryChange
        /// Another client (a desktop mixer, `pactl set-default-sink`, the server itself when the
        /// default sink went away) chose another default output.
        case defaultOutputChanged
        /// An output changed in a way that matters for routing (its active port, its format).
        case routeConfigurationChange
    }

    /// Why.
    public var reason: Reason
    /// The output the change is about: the new device, the changed one, or the new default.
    public var route: AudioOutputRoute?
    /// The route before the change: the removed output for `oldDeviceUnavailable`, the former
    /// default for `defaultOutputChanged` / `override`, the output as it was for
    /// `routeConfigurationChange`.
    public var previousRoute: AudioOutputRoute?

    public init(reason: Reason, route: AudioOutputRoute?, previousRoute: AudioOutputRoute?) {
        self.reason = reason
        self.route = route
        self.previousRoute = previousRoute
    }
}
