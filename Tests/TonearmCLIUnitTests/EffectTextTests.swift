// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import Tonearm
@testable import TonearmCLI

/// `--reverb`, `--effect` and `--eq` read their texts through ``ParameterText``.
@Suite struct EffectTextTests {
    private func message(_ body: () throws -> Void) -> String {
        do { try body(); return "" } catch { return "\(error)" }
    }

    @Test func reverbTakesEitherSpellingAndAPercentage() throws {
        let a = try EffectOptions(reverb: "medium-hall-2:40%", pitch: nil)
        #expect(a.reverb?.preset == .mediumHall2)
        #expect(a.reverb?.wet == 40)
        let b = try EffectOptions(reverb: "mediumHall2", pitch: nil)
        #expect(b.reverb?.preset == .mediumHall2)
        #expect(b.reverb?.wet == 30)
        #expect(message { _ = try EffectOptions(reverb: "large-hall:150", pitch: nil) }
            .contains("the wet mix '150' must be a percentage 0–100"))
    }

    /// An empty `--reverb` is an unknown preset, not a crash (it indexed an empty split).
    @Test func anEmptyReverbIsAnError() {
        #expect(message { _ = try EffectOptions(reverb: "", pitch: nil) }.contains("--reverb: unknown preset ''"))
    }

    @Test func effectSpecsReadIdentifiersAndValues() throws {
        let spec = try EffectSpec(parsing: "Reverb: preset = medium_hall ,, wetDryMix=+40")
        #expect(spec.name == "reverb")
        #expect(spec.settings.map(\.identifier) == ["preset", "wetDryMix"])
        #expect(spec.settings[1].value == 40)
        #expect(message { _ = try EffectSpec(parsing: "delay:delayTime=") }.contains("'delayTime=' is not ID=VALUE"))
        #expect(message { _ = try EffectSpec(parsing: "delay:=1") }.contains("'=1' is not ID=VALUE"))
    }

    @Test func eqBandsAndPresets() throws {
        guard case .bands(let b) = try EQChoice(parsing: "31:+3,1k:-1") else { Issue.record("not bands"); return }
        #expect(b.map(\.gain) == [3, -1])
        guard case .preset(let p) = try EQChoice(parsing: "Bass_Boost") else { Issue.record("not a preset"); return }
        #expect(p.name == "bass-boost")
    }
}
