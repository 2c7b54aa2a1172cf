// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm

/// What `--eq` asked for: a named preset, or bands from a spec such as `31:+3,62:+2,1k:-1`.
enum EQChoice: Sendable, CustomStringConvertible {
    case preset(EQPreset)
    case bands([EQBand])

    /// Parses a preset name or a band spec; the error names the bad token and lists the presets.
    init(parsing text: String) throws {
        if let p = try? EQPreset.named(text) {
            self = .preset(p)
            return
        }
        guard text.contains(":") else {
            throw TonearmError.invalidArgument("unknown EQ preset '\(text)'; presets: \(EQPreset.all.map(\.name).joined(separator: ", ")); or bands as FREQ:GAIN,… (e.g. 31:+3,62:+2,1k:-1)")
        }
        do {
            let b = try EQBand.parse(spec: text)
            guard b.count <= 10 else { throw TonearmError.invalidArgument("--eq: at most 10 bands, got \(b.count)") }
            self = .bands(b)
        } catch let e as EQSpecError {
            throw TonearmError.invalidArgument("--eq: \(e)")
        }
    }

    var description: String {
        switch self {
        case .preset(let p): p.name
        case .bands(let b): b.map { "\(Int($0.frequency)):\($0.gain >= 0 ? "+" : "")\($0.gain)" }.joined(separator: ",")
        }
    }

    /// Sets a 10-band equaliser to this choice (bands not named by a spec are flat).
    func apply(to eq: AudioUnitEQ) {
        switch self {
        case .preset(let p):
            eq.apply(p)
        case .bands(let bands):
            eq.apply(.flat)
            for (i, b) in bands.enumerated() where i < eq.bands.count {
                eq.bands[i].filterType = b.type
                eq.bands[i].frequency = b.frequency
                eq.bands[i].bandwidth = b.bandwidth
                eq.bands[i].gain = b.gain
            }
        }
    }
}
