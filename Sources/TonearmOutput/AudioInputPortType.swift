// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse

/// What kind of device an input is (the counterpart of the input kinds of `AVAudioSession.Port`:
/// `builtInMic`, `headsetMic`, `bluetoothHFP`, `usbAudio`, `lineIn`), with two that Linux adds:
/// the monitor of an output (what it plays, as a source) and a network source.
public enum AudioInputPortType: String, Sendable, Hashable, Codable, CaseIterable {
    /// The computer's own microphone.
    case builtInMic
    /// The microphone of a wired headset.
    case headsetMic
    /// A Bluetooth headset's microphone (its hands-free profile).
    case bluetoothHFP
    /// A USB audio device (a USB microphone, an audio interface).
    case usbAudio
    /// A line input (or S/PDIF in).
    case lineIn
    /// The monitor of an output: what that output plays.
    case monitor
    /// A source on another machine (a PulseAudio tunnel).
    case network
    /// Anything that says nothing about itself (a null source, a virtual device).
    case unknown

    /// The port type of a source: a monitor first (it monitors a sink), then network (the
    /// `PA_SOURCE_NETWORK` flag, a tunnel module or properties), Bluetooth (`device.bus` or
    /// `device.api`), the active port's type, the port's name, `device.form_factor`, then
    /// `device.bus=usb`.
    package static func classify(isMonitor: Bool, driver: String, isNetworkFlag: Bool, activePortName: String?,
                                 activePortType: UInt32?, properties p: [String: String]) -> AudioInputPortType {
        if isMonitor || p["device.class"] == "monitor" { return .monitor }
        let driver = driver.lowercased()
        if isNetworkFlag || driver.contains("tunnel") || p.keys.contains(where: { $0.hasPrefix("tunnel.") })
            || p["device.bus"] == "network" {
            return .network
        }
        if p["device.bus"] == "bluetooth" || p["device.api"] == "bluez" { return .bluetoothHFP }
        if let t = activePortType {
            switch t {
            case PA_DEVICE_PORT_TYPE_MIC.rawValue: return p["device.bus"] == "usb" ? .usbAudio : .builtInMic
            case PA_DEVICE_PORT_TYPE_HEADSET.rawValue: return .headsetMic
            case PA_DEVICE_PORT_TYPE_USB.rawValue: return .usbAudio
            case PA_DEVICE_PORT_TYPE_LINE.rawValue, PA_DEVICE_PORT_TYPE_SPDIF.rawValue: return .lineIn
            case PA_DEVICE_PORT_TYPE_BLUETOOTH.rawValue, PA_DEVICE_PORT_TYPE_HANDSFREE.rawValue: return .bluetoothHFP
            case PA_DEVICE_PORT_TYPE_NETWORK.rawValue: return .network
            default: break
            }
        }
        let port = activePortName?.lowercased() ?? ""
        if port.contains("headset") || port.contains("headphone") { return .headsetMic }
        if port.contains("linein") || port.contains("line-in") || port.contains("line_in") || port.contains("iec958") { return .lineIn }
        switch p["device.form_factor"] {
        case "headset", "headphone", "handset": return .headsetMic
        case "microphone", "webcam", "internal", "computer":
            return p["device.bus"] == "usb" ? .usbAudio : .builtInMic
        default: break
        }
        if p["device.bus"] == "usb" { return .usbAudio }
        if port.contains("mic") { return .builtInMic }
        return .unknown
    }
}
