// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm

/// `--reverb PRESET[:WET]`, `--pitch CENTS` and `--effect NAME[:ID=VALUE,…]`, shared by `play`
/// and `render`.
struct EffectOptions: Sendable {
    var reverb: (preset: ReverbPreset, wet: Float)?
    var pitch: Float?
    /// The `--effect` specs, in the order given (after the pitch and reverb in the chain).
    var specs: [EffectSpec] = []

    /// The CLI name of a preset: `large-hall` for `.largeHall`, `medium-hall-2` for `.mediumHall2`.
    static func name(_ p: ReverbPreset) -> String { kebab("\(p)") }

    /// The kebab-case form the CLI shows for a camel-case name: `medium-hall-2` for
    /// `mediumHall2`, `resonant-low-pass` for `resonantLowPass`.
    static func kebab(_ camel: String) -> String {
        var out = ""
        for ch in camel {
            if !out.isEmpty && (ch.isUppercase || (ch.isNumber && !(out.last?.isNumber ?? false))) { out += "-" }
            out += ch.lowercased()
        }
        return out
    }

    static var presetNames: String { ReverbPreset.allCases.map(name).joined(separator: ", ") }

    /// Parses the options; the error says which value is wrong and what is accepted.
    init(reverb: String?, pitch: Double?, effects: [String] = []) throws {
        specs = try effects.map { try EffectSpec(parsing: $0) }
        if let r = reverb {
            let (name, wetText) = ParameterText.head(r)
            // The kebab-case name, or quietly the camel-case one (mediumHall2 = medium-hall-2).
            let key = ParameterText.nameKey(name)
            guard let preset = ReverbPreset.allCases.first(where: { ParameterText.nameKey(Self.name($0)) == key }) else {
                throw TonearmError.invalidArgument("--reverb: unknown preset '\(name)'; presets: \(Self.presetNames)")
            }
            var wet: Float = 30
            if let wetText {
                guard let w = ParameterText.number(wetText, unit: "%"), (0...100).contains(w) else {
                    throw TonearmError.invalidArgument("--reverb: the wet mix '\(wetText)' must be a percentage 0–100")
                }
                wet = Float(w)
            }
            self.reverb = (preset, wet)
        }
        if let p = pitch {
            guard (-2400...2400).contains(p) else {
                throw TonearmError.invalidArgument("--pitch must be between -2400 and +2400 cents, not \(p)")
            }
            self.pitch = Float(p)
        }
    }

    /// Fresh effect nodes for one player.
    func makeNodes() -> [AudioNode] {
        var nodes: [AudioNode] = []
        if let p = pitch, p != 0 {
            let tp = AudioUnitTimePitch()
            tp.pitch = p
            nodes.append(tp)
        }
        if let r = reverb {
            let rv = AudioUnitReverb()
            rv.loadFactoryPreset(r.preset)
            rv.wetDryMix = r.wet
            nodes.append(rv)
        }
        nodes += specs.compactMap { $0.makeNode() }
        return nodes
    }

    /// Applies the `--effect eq:…` settings to a player's equalizer (after its preset).
    func applyEQSettings(to eq: AudioUnitEQ) {
        for s in specs where s.name == "eq" { s.apply(to: eq) }
    }
}
