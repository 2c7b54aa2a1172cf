// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm

/// One `--effect NAME[:ID=VALUE,…]`: an effect node from ``EffectCatalog`` (or `eq`, the
/// player's own equalizer) and parameters to set on it, by identifier as `tonearm effects` lists
/// them. Values are numbers; indexed parameters also take their value names (`preset=medium-hall`,
/// `band0.type=low-shelf`; the camel-case spellings too), switches on/off.
struct EffectSpec: Sendable {
    var name: String
    var settings: [(identifier: String, value: Double)]

    /// Parses and checks one spec against the node's descriptors; the error names the spec and
    /// says what is accepted.
    init(parsing text: String) throws {
        let (head, list) = ParameterText.head(text)
        name = head.lowercased()
        let node: any ParameterizedNode
        if name == "eq" {
            node = AudioUnitEQ(preset: .flat)
        } else if let n = EffectCatalog.make(name) {
            node = n
        } else {
            throw TonearmError.invalidArgument("--effect \(text): unknown effect '\(name)'; effects: eq, \(EffectCatalog.names.joined(separator: ", ")) (see tonearm effects)")
        }
        settings = []
        guard let list else { return }
        for entry in ParameterText.entries(list, separator: "=", maxSplits: 1, omittingEmpty: true) {
            let kv = entry.fields
            guard kv.count == 2, !kv[0].isEmpty, !kv[1].isEmpty else {
                throw TonearmError.invalidArgument("--effect \(text): '\(entry.text)' is not ID=VALUE")
            }
            guard let d = node.parameterDescriptors.first(where: { $0.identifier.lowercased() == kv[0].lowercased() }) else {
                throw TonearmError.invalidArgument("--effect \(text): \(name) has no parameter '\(kv[0])'; it has \(Self.identifiers(of: node))")
            }
            guard let v = Self.value(kv[1], for: d) else {
                let accepted = d.valueNames.isEmpty ? "a number" : "a number or one of \(d.valueNames.map(EffectOptions.kebab).joined(separator: ", "))"
                throw TonearmError.invalidArgument("--effect \(text): '\(kv[1])' is not a value for \(d.identifier) (\(accepted))")
            }
            guard d.accepts(v) else {
                throw TonearmError.invalidArgument("--effect \(text): \(d.identifier) = \(kv[1]) is outside \(Self.format(d.range.lowerBound))…\(Self.format(d.range.upperBound)) \(d.unit.rawValue)")
            }
            settings.append((d.identifier, v))
        }
    }

    /// A fresh node with the settings applied (nil for `eq`, which is the player's own).
    func makeNode() -> AudioUnitEffect? {
        guard let n = EffectCatalog.make(name) else { return nil }
        apply(to: n)
        return n
    }

    /// Sets the settings on `node` (already validated).
    func apply(to node: any ParameterizedNode) {
        for s in settings { try? node.setValue(s.value, forParameter: s.identifier) }
    }

    static func identifiers(of node: any ParameterizedNode) -> String {
        let ids = node.parameterDescriptors.map(\.identifier)
        if ids.count > 12 { return ids.prefix(7).joined(separator: ", ") + ", … (see tonearm effects eq)" }
        return ids.joined(separator: ", ")
    }

    static func value(_ text: String, for d: ParameterDescriptor) -> Double? {
        if let v = ParameterText.number(text) { return v }
        let key = ParameterText.nameKey(text)
        if let i = d.valueNames.firstIndex(where: { ParameterText.nameKey($0) == key }) {
            return Double(i)
        }
        if d.unit == .boolean {
            switch key {
            case "on", "yes", "true": return 1
            case "off", "no", "false": return 0
            default: return nil
            }
        }
        return nil
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e9 ? String(Int(v)) : String(v)
    }
}
