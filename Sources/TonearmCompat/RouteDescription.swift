// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

// AVAudioSession's route descriptions (issue 23): what `AVAudioSessionRouteChangePreviousRouteKey`
// holds, so that iOS code that asks whether the route that went away was headphones —
// `(info[AVAudioSessionRouteChangePreviousRouteKey] as? AVAudioSessionRouteDescription)?
// .outputs.first?.portType == .headphones`, or its raw value `"Headphones"` — runs as it is.

extension AudioSession {
    /// `AVAudioSession.Port`: a port's kind, with Apple's raw values ("Headphones", "Speaker"…).
    public struct Port: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let headphones = Port(rawValue: "Headphones")
        public static let builtInSpeaker = Port(rawValue: "Speaker")
        public static let builtInReceiver = Port(rawValue: "Receiver")
        public static let bluetoothA2DP = Port(rawValue: "BluetoothA2DPOutput")
        public static let bluetoothHFP = Port(rawValue: "BluetoothHFP")
        public static let bluetoothLE = Port(rawValue: "BluetoothLE")
        public static let usbAudio = Port(rawValue: "USBAudio")
        public static let HDMI = Port(rawValue: "HDMIOutput")
        public static let airPlay = Port(rawValue: "AirPlay")
        public static let lineOut = Port(rawValue: "LineOut")
        public static let carAudio = Port(rawValue: "CarAudio")

        /// The kind of a Tonearm output: a network sink is AirPlay's nearest, an unknown one a
        /// line output.
        public init(_ type: AudioOutputPortType) {
            switch type {
            case .speaker: self = .builtInSpeaker
            case .headphones: self = .headphones
            case .bluetoothA2DP: self = .bluetoothA2DP
            case .bluetoothHFP: self = .bluetoothHFP
            case .usb: self = .usbAudio
            case .hdmi: self = .HDMI
            case .network: self = .airPlay
            default: self = .lineOut
            }
        }
    }
}

/// `AVAudioSessionPortDescription`: one output of a route (a sound-server sink).
public final class AVAudioSessionPortDescription: Sendable {
    public let portType: AudioSession.Port
    /// The sink's description, as the desktop's mixer shows it.
    public let portName: String
    /// The sink's name, stable across restarts of the server.
    public let uid: String
    /// The Tonearm route it describes.
    public let route: AudioOutputRoute

    public init(_ route: AudioOutputRoute) {
        self.route = route
        portType = AudioSession.Port(route.portType)
        portName = route.description
        uid = route.name
    }
}

/// `AVAudioSessionRouteDescription`: a route's outputs (one sink here; no inputs are described).
public final class AVAudioSessionRouteDescription: Sendable {
    public let outputs: [AVAudioSessionPortDescription]
    public let inputs: [AVAudioSessionPortDescription] = []

    public init(outputs: [AudioOutputRoute]) {
        self.outputs = outputs.map(AVAudioSessionPortDescription.init)
    }
}
