// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Tonearm

/// The options that shape the sound, shared by `play` and `render`: equalizer, speed, reverb,
/// pitch. Validated once here; `apply(to:)` sets them on a player.
struct SoundOptions: ParsableArguments {
    @Option(name: .long, help: "Equalizer: a preset (\(EQPreset.all.map(\.name).joined(separator: ", "))) or bands as FREQ:GAIN,… (e.g. 31:+3,62:+2,1k:-1).", completion: Completions.eq)
    var eq: String?

    @Option(name: .long, help: "Speed, 0.5–2.0, pitch kept.")
    var rate: Double = 1

    @Option(name: .long, help: "Reverb: PRESET[:WET%] (\(EffectOptions.presetNames); wet mix 30 % unless given).")
    var reverb: String?

    @Option(name: .long, parsing: .unconditional, help: "Pitch shift in cents, -2400…2400 (speed unchanged).")
    var pitch: Double?

    @Option(name: .customLong("effect"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("An effect and its parameters: NAME[:ID=VALUE,…] (repeatable; chained in order). `tonearm effects` lists them.",
                               valueName: "effect"))
    var effect: [String] = []

    func validate() throws {
        guard TimeStretcher.rateRange.contains(rate) else { throw ValidationError("--rate must be between 0.5 and 2.0, not \(rate)") }
        do {
            _ = try eqChoice()
            _ = try effects()
        } catch { throw ValidationError("\(error)") }
    }

    /// The equalizer asked for (flat when none).
    func eqChoice() throws -> EQChoice { try eq.map { try EQChoice(parsing: $0) } ?? .preset(.flat) }

    /// The effects asked for.
    func effects() throws -> EffectOptions { try EffectOptions(reverb: reverb, pitch: pitch, effects: effect) }

    /// Sets the player's equalizer: the `--eq` choice, then any `--effect eq:…` settings.
    func applyEQ(to eq: AudioUnitEQ) throws {
        try eqChoice().apply(to: eq)
        try effects().applyEQSettings(to: eq)
    }
}
