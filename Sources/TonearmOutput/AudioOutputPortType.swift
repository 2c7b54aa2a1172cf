// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse

/// What kind of device an output is (the counterpart of `AVAudioSession.Port`).
public enum AudioOutputPortType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Built-in or external loudspeakers.
    case speaker
    /// Wired headphones or a headset.
    case headphones
    /// A Bluetooth device playing music (A2DP).
    case bluetoothA2DP
    /// A Bluetooth device in its hands-free / headset profile (HFP / HSP).
    case bluetoothHFP
    /// A USB audio device.
    case usb
    /// HDMI or DisplayPort (a screen or a receiver).
    case hdmi
    /// A network output: a PulseAudio tunnel to another machine, an AirPlay (RAOP) receiver.
    case network
    /// A line output (or S/PDIF).
    case lineOut
    /// Anything that says nothing about itself (a null sink, a virtual device).
    case unknown

    /// The port type of a sink: network first (the `PA_SINK_NETWORK` flag, a tunnel or RAOP
    /// module, tunnel / RAOP properties), then Bluetooth (`device.bus` or `device.api`, with the
    /// profile in `bluetooth.protocol` or the port name), then the active port's type, then the
    /// port's name, then `device.form_factor`, then `device.bus=usb`.
    package static func classify(driver: String, isNetworkFlag: Bool, activePortName: String?, activePortType: UInt32?,
                                 properties p: [String: String]) -> AudioOutputPortType {
        let driver = driver.lowercased()
        if isNetworkFlag || driver.contains("tunnel") || driver.contains("raop")
            || p.keys.contains(where: { $0.hasPrefix("tunnel.") || $0.hasPrefix("raop.") })
            || p["device.bus"] == "network" {
            return .network
        }
        let port = activePortName?.lowercased() ?? ""
        if p["device.bus"] == "bluetooth" || p["device.api"] == "bluez" {
            let profile = (p["bluetooth.protocol"] ?? p["device.profile.name"] ?? port).lowercased()
            if profile.contains("hsp") || profile.contains("hfp") || profile.contains("headset_head_unit")
                || profile.contains("handsfree") {
                return .bluetoothHFP
            }
            return .bluetoothA2DP
        }
        if let t = activePortType {
            switch t {
            case PA_DEVICE_PORT_TYPE_HEADPHONES.rawValue, PA_DEVICE_PORT_TYPE_HEADSET.rawValue: return .headphones
            case PA_DEVICE_PORT_TYPE_SPEAKER.rawValue: return .speaker
            case PA_DEVICE_PORT_TYPE_HDMI.rawValue: return .hdmi
            case PA_DEVICE_PORT_TYPE_USB.rawValue: return .usb
            case PA_DEVICE_PORT_TYPE_LINE.rawValue, PA_DEVICE_PORT_TYPE_SPDIF.rawValue: return .lineOut
            case PA_DEVICE_PORT_TYPE_BLUETOOTH.rawValue: return .bluetoothA2DP
            case PA_DEVICE_PORT_TYPE_HANDSFREE.rawValue: return .bluetoothHFP
            case PA_DEVICE_PORT_TYPE_NETWORK.rawValue: return .network
            default: break
            }
        }
        if port.contains("headphone") || port.contains("headset") { return .headphones }
        if port.contains("hdmi") || port.contains("displayport") { return .hdmi }
        if port.contains("speaker") { return .speaker }
        if port.contains("lineout") || port.contains("line-out") || port.contains("iec958") || port.contains("spdif") { return .lineOut }
        switch p["device.form_factor"] {
        case "headphones", "headset": return .headphones
        case "speaker", "internal", "computer": return .speaker
        case "tv": return .hdmi
        default: break
        }
        if p["device.bus"] == "usb" { return .usb }
        return .unknown
    }

    /// The port type of the sink `info` describes (see
    /// ``classify(driver:isNetworkFlag:activePortName:activePortType:properties:)``).
    package static func classify(_ info: pa_sink_info) -> AudioOutputPortType {
        let port = info.active_port
        return classify(driver: info.driver.map { String(cString: $0) } ?? "",
                        isNetworkFlag: info.flags.rawValue & PA_SINK_NETWORK.rawValue != 0,
                        activePortName: port.flatMap { $0.pointee.name.map { String(cString: $0) } },
                        activePortType: port.map { $0.pointee.type },
                        properties: pulseProperties(info.proplist))
    }
}

/// The properties in a PulseAudio property list, as strings.
package func pulseProperties(_ list: OpaquePointer?) -> [String: String] {
    guard let list else { return [:] }
    var result: [String: String] = [:]
    var state: UnsafeMutableRawPointer?
    while let key = pa_proplist_iterate(list, &state) {
        if let value = pa_proplist_gets(list, key) {
            result[String(cString: key)] = String(cString: value)
        }
    }
    return result
}
