// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// `tonearm effects [NAME…] [--json]`: lists the effects `--effect` accepts and every parameter
/// of each (identifier, range, unit, default, value names), from the nodes' own descriptors.
struct EffectsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "effects",
        abstract: "List the effects and their parameters (for --effect NAME:ID=VALUE,…).",
        discussion: """
            Examples:
              tonearm effects
              tonearm effects reverb --json
            """)

    @Argument(help: "Effects to list (eq, \(EffectCatalog.names.joined(separator: ", "))); all when none.")
    var names: [String] = []

    @Flag(name: .long, help: "Print JSON: an object per effect with its parameter descriptors.")
    var json = false

    struct Entry: Codable {
        var name: String
        var summary: String
        var parameters: [ParameterDescriptor]
    }

    /// `d` with its value names as the CLI writes them (kebab-case: `medium-hall`, `low-shelf`),
    /// the one spelling `--reverb`, `--effect` and `eq show` print (the camel-case one is accepted too).
    static func forDisplay(_ d: ParameterDescriptor) -> ParameterDescriptor {
        var d = d
        d.valueNames = d.valueNames.map(EffectOptions.kebab)
        return d
    }

    func validate() throws {
        for n in names where n.lowercased() != "eq" && EffectCatalog.make(n.lowercased()) == nil {
            throw ValidationError("unknown effect '\(n)'; effects: eq, \(EffectCatalog.names.joined(separator: ", "))")
        }
    }

    func run() throws {
        let all = ["eq"] + EffectCatalog.names
        let chosen = names.isEmpty ? all : names.map { $0.lowercased() }
        let entries = chosen.map { name -> Entry in
            if name == "eq" {
                return Entry(name: "eq", summary: "the player's 10-band equalizer (--eq sets a preset first)",
                             parameters: AudioUnitEQ(preset: .flat).parameterDescriptors.map(Self.forDisplay))
            }
            return Entry(name: name, summary: EffectCatalog.summary(name),
                         parameters: EffectCatalog.make(name)!.parameterDescriptors.map(Self.forDisplay))
        }
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(entries), as: UTF8.self))
            return
        }
        for (i, e) in entries.enumerated() {
            if i > 0 { print("") }
            print("\(e.name) — \(e.summary)")
            for d in e.parameters {
                var line = "  \(d.identifier.rightPadded(18)) "
                line += "\(EffectSpec.format(d.range.lowerBound))…\(EffectSpec.format(d.range.upperBound)) \(d.unit.rawValue)"
                line += ", default \(d.valueNames.indices.contains(Int(d.defaultValue)) && d.unit == .indexed ? d.valueNames[Int(d.defaultValue)] : EffectSpec.format(d.defaultValue))"
                if !d.valueNames.isEmpty { line += " (\(d.valueNames.joined(separator: ", ")))" }
                print(line)
            }
        }
        print("\nSet them with --effect NAME:ID=VALUE,… on play and render, e.g. --effect delay:delayTime=0.3,feedback=40")
    }
}
