// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// One band of an ``Equalizer`` (the counterpart of `AVAudioUnitEQFilterParameters`).
public struct EQBand: Sendable, Hashable, Codable {
    /// The filter shape.
    public var type: EQFilterType
    /// Centre or corner frequency in Hz (AVAudioUnitEQ accepts 20 Hz ... sampleRate / 2).
    public var frequency: Double
    /// Width in octaves (AVAudioUnitEQ: 0.05 ... 5); used by the types listed in ``EQFilterType``.
    public var bandwidth: Double
    /// Gain in dB (AVAudioUnitEQ: −96 ... 24); used by parametric and shelf types.
    public var gain: Double
    /// When true the band passes audio unchanged.
    public var bypass: Bool

    public init(type: EQFilterType = .parametric, frequency: Double, bandwidth: Double = 1,
                gain: Double = 0, bypass: Bool = false) {
        self.type = type
        self.frequency = frequency
        self.bandwidth = bandwidth
        self.gain = gain
        self.bypass = bypass
    }

    /// Ranges of the band parameters (those of AVAudioUnitEQ).
    public static let frequencyRange: ClosedRange<Double> = 20...22_050
    public static let bandwidthRange: ClosedRange<Double> = 0.05...5
    public static let gainRange: ClosedRange<Double> = -96...24

    /// Whether the band leaves audio exactly unchanged (bypassed, or a gain type at 0 dB).
    public var isIdentity: Bool { bypass || (type.usesGain && gain == 0) }

    /// The ISO octave centres of the 10-band graphic equaliser, in Hz.
    public static let graphicFrequencies: [Double] = [31.25, 62.5, 125, 250, 500, 1000, 2000, 4000, 8000, 16000]

    /// The 10 one-octave parametric bands of a graphic equaliser, with `gains` in dB (missing
    /// gains are 0).
    public static func graphic(gains: [Double] = []) -> [EQBand] {
        graphicFrequencies.enumerated().map { i, f in
            EQBand(type: .parametric, frequency: f, bandwidth: 1, gain: i < gains.count ? gains[i] : 0)
        }
    }

    /// Parses an equaliser spec: comma-separated `frequency:gain` pairs such as
    /// `"31:+3,62:+2,125:0,1k:-1.5,16k:+4"` (frequency in Hz, a `k` suffix for kHz; gain in dB
    /// with an optional sign and an optional `dB` suffix). Each pair becomes a one-octave
    /// parametric band. Spaces around tokens are ignored.
    ///
    /// - Throws: ``EQSpecError`` naming the first bad token.
    public static func parse(spec: String) throws(EQSpecError) -> [EQBand] {
        guard !spec.trimmingSpaces.isEmpty else { throw .empty }
        var bands: [EQBand] = []
        for entry in ParameterText.entries(spec, separator: ":") {
            let token = entry.text
            guard !token.isEmpty else { throw .emptyToken(spec: spec) }
            guard entry.fields.count == 2 else { throw .malformedToken(token) }
            let fText = entry.fields[0].lowercased()
            var scale = 1.0
            var fDigits = Substring(fText)
            if fDigits.hasSuffix("khz") { fDigits = fDigits.dropLast(3); scale = 1000 }
            else if fDigits.hasSuffix("hz") { fDigits = fDigits.dropLast(2) }
            else if fDigits.hasSuffix("k") { fDigits = fDigits.dropLast(); scale = 1000 }
            guard let fv = Double(fDigits), fv.isFinite else { throw .badFrequency(token: token) }
            let freq = fv * scale
            guard frequencyRange.contains(freq) else { throw .frequencyOutOfRange(token: token, frequency: freq) }
            guard let gain = ParameterText.number(entry.fields[1], unit: "dB") else { throw .badGain(token: token) }
            guard gainRange.contains(gain) else { throw .gainOutOfRange(token: token, gain: gain) }
            bands.append(EQBand(type: .parametric, frequency: freq, bandwidth: 1, gain: gain))
        }
        return bands
    }
}

/// Why an equaliser spec string (``EQBand/parse(spec:)``) or a preset name was refused; each
/// case quotes the offending token.
public enum EQSpecError: Error, Sendable, Hashable, CustomStringConvertible {
    case empty
    case emptyToken(spec: String)
    case malformedToken(String)
    case badFrequency(token: String)
    case frequencyOutOfRange(token: String, frequency: Double)
    case badGain(token: String)
    case gainOutOfRange(token: String, gain: Double)
    case unknownPreset(String)

    public var description: String {
        switch self {
        case .empty: "empty equaliser spec (expected frequency:gain pairs such as 31:+3,62:+2)"
        case .emptyToken(let s): "equaliser spec '\(s)' has an empty entry (a doubled or trailing comma)"
        case .malformedToken(let t): "'\(t)': expected frequency:gain, e.g. 125:+3"
        case .badFrequency(let t): "'\(t)': the frequency is not a number (use Hz, or k for kHz: 1k)"
        case .frequencyOutOfRange(let t, let f):
            "'\(t)': frequency \(f) Hz is outside \(Int(EQBand.frequencyRange.lowerBound))...\(Int(EQBand.frequencyRange.upperBound)) Hz"
        case .badGain(let t): "'\(t)': the gain is not a number of dB (e.g. +3, -2.5)"
        case .gainOutOfRange(let t, let g):
            "'\(t)': gain \(g) dB is outside \(Int(EQBand.gainRange.lowerBound))...\(Int(EQBand.gainRange.upperBound)) dB"
        case .unknownPreset(let n):
            "unknown equaliser preset '\(n)' (known: \(EQPreset.all.map(\.name).joined(separator: ", ")))"
        }
    }
}

/// A named equaliser setting over the 10-band graphic layout (``EQBand/graphic(gains:)``).
public struct EQPreset: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The lower-case name used on the command line, e.g. `bassBoost` is `bass-boost`.
    public var name: String
    /// Gains in dB at 31.25, 62.5, 125, 250, 500, 1k, 2k, 4k, 8k, 16k Hz.
    public var gains: [Double]
    /// Gain applied after the bands, in dB (negative to leave headroom for boosts).
    public var globalGain: Double

    public init(name: String, gains: [Double], globalGain: Double = 0) {
        self.name = name
        self.gains = gains
        self.globalGain = globalGain
    }

    /// The preset's bands.
    public var bands: [EQBand] { EQBand.graphic(gains: gains) }

    public var description: String {
        "\(name): " + zip(EQBand.graphicFrequencies, gains).map { f, g in
            let fs = f >= 1000 ? "\(Int(f / 1000))k" : (f == f.rounded() ? "\(Int(f))" : "\(f)")
            return "\(fs):\(g >= 0 ? "+" : "")\(g)"
        }.joined(separator: ",") + (globalGain != 0 ? " global \(globalGain) dB" : "")
    }

    public static let flat = EQPreset(name: "flat", gains: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    public static let bassBoost = EQPreset(name: "bass-boost", gains: [6, 5, 4, 2, 0, 0, 0, 0, 0, 0], globalGain: -3)
    public static let bassCut = EQPreset(name: "bass-cut", gains: [-6, -5, -4, -2, 0, 0, 0, 0, 0, 0])
    public static let trebleBoost = EQPreset(name: "treble-boost", gains: [0, 0, 0, 0, 0, 0, 2, 4, 5, 6], globalGain: -3)
    public static let trebleCut = EQPreset(name: "treble-cut", gains: [0, 0, 0, 0, 0, 0, -2, -4, -5, -6])
    public static let vocal = EQPreset(name: "vocal", gains: [-2, -2, -1, 1, 3, 4, 3, 1, 0, -1], globalGain: -2)
    public static let rock = EQPreset(name: "rock", gains: [5, 4, 3, 1, -1, -1, 1, 3, 4, 5], globalGain: -3)
    public static let pop = EQPreset(name: "pop", gains: [-1, 0, 2, 3, 4, 3, 1, 0, -1, -1], globalGain: -2)
    public static let jazz = EQPreset(name: "jazz", gains: [3, 2, 1, 2, -1, -1, 0, 1, 2, 3], globalGain: -2)
    public static let classical = EQPreset(name: "classical", gains: [4, 3, 2, 1, 0, 0, 0, 1, 2, 3], globalGain: -2)
    public static let dance = EQPreset(name: "dance", gains: [6, 5, 2, 0, 0, -2, -1, 0, 3, 4], globalGain: -3)
    public static let electronic = EQPreset(name: "electronic", gains: [4, 4, 1, 0, -2, 1, 0, 1, 4, 5], globalGain: -3)
    public static let hipHop = EQPreset(name: "hip-hop", gains: [5, 4, 1, 3, -1, -1, 1, -1, 2, 3], globalGain: -3)
    public static let acoustic = EQPreset(name: "acoustic", gains: [4, 4, 3, 1, 2, 2, 3, 3, 3, 2], globalGain: -2)
    /// Fletcher–Munson style loudness contour for quiet listening: lows and highs lifted.
    public static let loudness = EQPreset(name: "loudness", gains: [6, 4, 2, 0, 0, 0, 0, 1, 3, 4], globalGain: -3)
    public static let spokenWord = EQPreset(name: "spoken-word", gains: [-6, -4, -2, 0, 2, 3, 3, 2, 0, -2])
    public static let smallSpeakers = EQPreset(name: "small-speakers", gains: [6, 5, 4, 2, 0, 0, 0, -1, -2, -3], globalGain: -3)

    /// Every preset, in listing order.
    public static let all: [EQPreset] = [
        flat, bassBoost, bassCut, trebleBoost, trebleCut, vocal, rock, pop, jazz, classical,
        dance, electronic, hipHop, acoustic, loudness, spokenWord, smallSpeakers,
    ]

    /// The preset called `name` (case, spaces, `-` and `_` ignored: `Bass Boost`, `bassBoost`
    /// and `bass-boost` are the same).
    public static func named(_ name: String) throws(EQSpecError) -> EQPreset {
        let key = ParameterText.nameKey(name)
        if let p = all.first(where: { ParameterText.nameKey($0.name) == key }) { return p }
        throw .unknownPreset(name)
    }
}

/// `error.localizedDescription` is the same text as ``description`` (ported iOS code reports
/// errors that way; see TonearmCore's LocalizedErrors.swift).
extension EQSpecError: LocalizedError {
    public var errorDescription: String? { description }
}
