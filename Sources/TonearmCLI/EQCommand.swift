// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// `tonearm eq …`: the equalizer's presets and responses.
struct EQCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eq",
        abstract: "List the equalizer presets, or show the response of a preset or band spec.",
        discussion: """
            Examples:
              tonearm eq list
              tonearm eq show rock
              tonearm eq show 31:+3,62:+2,1k:-1 --plot curve.svg
            """,
        subcommands: [EQListCommand.self, EQShowCommand.self])
}

/// `tonearm eq list`.
struct EQListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the equalizer presets with their gains (dB at 31 Hz … 16 kHz).",
        discussion: """
            The names are what --eq takes (play, pick, render).

            Examples:
              tonearm eq list
            """)

    func run() throws {
        let heads = EQBand.graphicFrequencies.map(EQShowCommand.frequencyLabel)
        let width = max(8, EQPreset.all.map(\.name.count).max() ?? 0)
        var line = "preset".padding(toLength: width, withPad: " ", startingAt: 0)
        for h in heads { line += h.leftPadded(6) }
        line += "  global"
        print(line)
        for p in EQPreset.all {
            var l = p.name.padding(toLength: width, withPad: " ", startingAt: 0)
            for g in p.gains { l += EQShowCommand.signed(g, decimals: 0).leftPadded(6) }
            l += EQShowCommand.signed(p.globalGain, decimals: 0).leftPadded(8)
            print(l)
        }
    }
}

/// `tonearm eq show PRESET|SPEC [--plot OUT.svg] [--rate 44100]`.
struct EQShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the bands and the combined magnitude response of a preset or band spec.",
        discussion: """
            The response is computed from the biquad designs at the given sample rate and \
            includes the preset's global gain.

            Examples:
              tonearm eq show jazz
              tonearm eq show bass-boost --rate 48000
              tonearm eq show 31:+3,62:+2,1k:-1 --plot curve.svg
            """)

    @Argument(help: "A preset name or bands as FREQ:GAIN,… (e.g. 31:+3,62:+2,1k:-1).", completion: Completions.eq)
    var eq: String

    @Option(name: .long, help: "Also write the response curve to this SVG file.")
    var plot: String?

    @Option(name: .long, help: "Sample rate in Hz the filters are designed for.")
    var rate: Double = 44_100

    func validate() throws {
        guard rate >= 8_000 && rate <= 768_000 else { throw ValidationError("--rate must be between 8000 and 768000 Hz, not \(rate)") }
        if let p = plot, !p.lowercased().hasSuffix(".svg") { throw ValidationError("--plot: the output must be a .svg file, not '\(p)'") }
        do { _ = try EQChoice(parsing: eq) } catch { throw ValidationError("\(error)") }
    }

    /// Third-octave frequencies (ISO nominal) from 20 Hz to 20 kHz.
    static let tableFrequencies: [Double] = [
        20, 25, 31.5, 40, 50, 63, 80, 100, 125, 160, 200, 250, 315, 400, 500, 630, 800, 1000, 1250, 1600,
        2000, 2500, 3150, 4000, 5000, 6300, 8000, 10000, 12500, 16000, 20000,
    ]

    func run() throws {
        let choice = try EQChoice(parsing: eq)
        let (bands, global): ([EQBand], Double) = switch choice {
        case .preset(let p): (p.bands, p.globalGain)
        case .bands(let b): (b, 0)
        }
        let response = EQResponse(bands: bands, globalGain: global, sampleRate: rate)
        switch choice {
        case .preset(let p): print("Preset \(p.name), \(bands.count) bands at \(Int(rate)) Hz")
        case .bands: print("\(bands.count) band\(bands.count == 1 ? "" : "s") at \(Int(rate)) Hz")
        }
        print("band  type        frequency  width   gain")
        for (i, b) in bands.enumerated() {
            print("\(String(i + 1).leftPadded(4))  \(b.type.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0))"
                  + "\(Self.frequencyLabel(b.frequency).leftPadded(8)) Hz \(String(format: "%.2f", b.bandwidth).leftPadded(4)) oct"
                  + " \(Self.signed(b.gain, decimals: 1).leftPadded(5)) dB")
        }
        if global != 0 { print("global gain \(Self.signed(global, decimals: 1)) dB") }
        print("")
        print("frequency   response")
        for f in Self.tableFrequencies where f < rate / 2 {
            print("\(Self.frequencyLabel(f).leftPadded(6)) Hz  \(Self.signed(response.total(at: f), decimals: 1).leftPadded(6)) dB")
        }
        if let path = plot {
            let title = switch choice {
            case .preset(let p): "tonearm eq: \(p.name)"
            case .bands: "tonearm eq: \(choice.description)"
            }
            do {
                try response.svg(title: title).write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CommandFailure(path, error.localizedDescription)
            }
            print("\nWrote \(path)")
        }
    }

    static func frequencyLabel(_ f: Double) -> String {
        if f >= 1000 {
            let k = f / 1000
            return k == k.rounded() ? "\(Int(k))k" : String(format: "%gk", k)
        }
        return f == f.rounded() ? "\(Int(f))" : String(format: "%g", f)
    }

    static func signed(_ v: Double, decimals: Int) -> String {
        let s = String(format: "%.\(decimals)f", v)
        if s.hasPrefix("-") {
            // "-0.0" reads as a cut; show it as zero.
            return Double(s) == 0 ? String(s.dropFirst()) : s
        }
        return v == 0 || Double(s) == 0 ? s : "+" + s
    }
}

/// The magnitude response of a band cascade, from the exact biquad transfer functions.
struct EQResponse {
    let bands: [EQBand]
    let coefficients: [BiquadCoefficients]
    let globalGain: Double
    let sampleRate: Double

    init(bands: [EQBand], globalGain: Double, sampleRate: Double) {
        self.bands = bands
        self.coefficients = bands.map { BiquadCoefficients(band: $0, sampleRate: sampleRate) }
        self.globalGain = globalGain
        self.sampleRate = sampleRate
    }

    func band(_ i: Int, at f: Double) -> Double {
        coefficients[i].magnitudeResponse(atFrequency: f, sampleRate: sampleRate)
    }

    func total(at f: Double) -> Double {
        coefficients.indices.reduce(globalGain) { $0 + band($1, at: f) }
    }

    /// A hand-written SVG: log-frequency axis 20 Hz–20 kHz, dB axis, grid and labels, the
    /// combined curve, and each band's curve faint.
    func svg(title: String) -> String {
        let width = 860.0, height = 440.0
        let left = 60.0, right = 20.0, top = 40.0, bottom = 50.0
        let plotW = width - left - right, plotH = height - top - bottom
        let fLow = 20.0, fHigh = min(20_000, sampleRate / 2 * 0.999)
        let points = 400
        let freqs = (0...points).map { fLow * pow(fHigh / fLow, Double($0) / Double(points)) }
        let totals = freqs.map { total(at: $0) }
        let perBand = coefficients.indices.map { i in freqs.map { band(i, at: $0) } }
        // dB range: symmetric about 0, at least ±12, in 6 dB steps, −∞ (notches) clipped.
        var extreme = 0.0
        for v in totals + perBand.flatMap({ $0 }) where v.isFinite { extreme = max(extreme, abs(v)) }
        let span = max(12, (extreme / 6).rounded(.up) * 6)
        let step = span <= 12 ? 3.0 : (span <= 24 ? 6.0 : 12.0)
        func x(_ f: Double) -> Double { left + plotW * log10(f / fLow) / log10(fHigh / fLow) }
        func y(_ db: Double) -> Double {
            let v = db.isFinite ? min(max(db, -span), span) : -span
            return top + plotH * (span - v) / (2 * span)
        }
        func n(_ v: Double) -> String { String(format: "%.2f", v) }
        func path(_ values: [Double]) -> String {
            zip(freqs, values).enumerated().map { i, p in "\(i == 0 ? "M" : "L")\(n(x(p.0))),\(n(y(p.1)))" }
                .joined(separator: " ")
        }
        var s = """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <rect x="0" y="0" width="\(Int(width))" height="\(Int(height))" fill="white"/>
        <text x="\(n(width / 2))" y="24" text-anchor="middle" font-size="15">\(Self.escape(title))</text>

        """
        // Frequency grid: every 1-2-…-9 × decade, labelled at 1, 2, 5.
        var decade = 10.0
        while decade <= fHigh {
            for m in 1...9 {
                let f = decade * Double(m)
                guard f >= fLow && f <= fHigh * 1.0001 else { continue }
                let major = m == 1 || m == 2 || m == 5
                s += "<line x1=\"\(n(x(f)))\" y1=\"\(n(top))\" x2=\"\(n(x(f)))\" y2=\"\(n(top + plotH))\" stroke=\"\(major ? "#bbbbbb" : "#e4e4e4")\" stroke-width=\"1\"/>\n"
                if major {
                    s += "<text x=\"\(n(x(f)))\" y=\"\(n(top + plotH + 16))\" text-anchor=\"middle\">\(EQShowCommand.frequencyLabel(f))</text>\n"
                }
            }
            decade *= 10
        }
        // dB grid.
        var db = -span
        while db <= span + 1e-9 {
            s += "<line x1=\"\(n(left))\" y1=\"\(n(y(db)))\" x2=\"\(n(left + plotW))\" y2=\"\(n(y(db)))\" stroke=\"\(db == 0 ? "#888888" : "#dddddd")\" stroke-width=\"1\"/>\n"
            s += "<text x=\"\(n(left - 6))\" y=\"\(n(y(db) + 4))\" text-anchor=\"end\">\(EQShowCommand.signed(db, decimals: 0))</text>\n"
            db += step
        }
        s += "<rect x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(plotW))\" height=\"\(n(plotH))\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1\"/>\n"
        s += "<text x=\"\(n(left + plotW / 2))\" y=\"\(n(height - 12))\" text-anchor=\"middle\">frequency (Hz)</text>\n"
        s += "<text x=\"16\" y=\"\(n(top + plotH / 2))\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(n(top + plotH / 2)))\">gain (dB)</text>\n"
        // Curves: each band faint, then the combined response.
        for (i, values) in perBand.enumerated() where !bands[i].isIdentity {
            s += "<path class=\"band\" d=\"\(path(values))\" fill=\"none\" stroke=\"#4a7fc1\" stroke-opacity=\"0.35\" stroke-width=\"1\"/>\n"
        }
        s += "<path class=\"total\" d=\"\(path(totals))\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2.5\"/>\n"
        s += "</svg>\n"
        return s
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
