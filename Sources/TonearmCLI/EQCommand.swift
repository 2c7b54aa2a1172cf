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
        var line = "preset".rightPadded(width)
        for h in heads { line += h.leftPadded(6) }
        line += "  global"
        print(line)
        for p in EQPreset.all {
            var l = p.name.rightPadded(width)
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

    @Option(name: .long, help: "Also write the response curve to this file: .svg or .png.")
    var plot: String?

    @Option(name: .long, help: "Sample rate in Hz the filters are designed for.")
    var rate: Double = 44_100

    func validate() throws {
        guard rate >= 8_000 && rate <= 768_000 else { throw ValidationError("--rate must be between 8000 and 768000 Hz, not \(rate)") }
        if let p = plot, !p.lowercased().hasSuffix(".svg") && !p.lowercased().hasSuffix(".png") {
            throw ValidationError("--plot: the output must be a .svg or .png file, not '\(p)'")
        }
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
        // The plot is written first: a plot that cannot be written fails the command before
        // anything is printed.
        if let path = plot {
            let title = switch choice {
            case .preset(let p): "tonearm eq: \(p.name)"
            case .bands: "tonearm eq: \(choice.description)"
            }
            let data = path.lowercased().hasSuffix(".png") ? response.png(title: title) : Data(response.svg(title: title).utf8)
            try Self.write(data, to: path)  // reported by the entry point: `tonearm: <path>: <why>`, status 1
        }
        switch choice {
        case .preset(let p): print("Preset \(p.name), \(bands.count) bands at \(Int(rate)) Hz")
        case .bands: print("\(bands.count) band\(bands.count == 1 ? "" : "s") at \(Int(rate)) Hz")
        }
        // Bands are numbered from 0, as the equalizer's parameters (band0.gain, …) in `tonearm effects eq`.
        let typeWidth = max(10, bands.map { EffectOptions.kebab($0.type.rawValue).count }.max() ?? 0)
        print("band  \("type".rightPadded(typeWidth))  frequency  width   gain")
        for (i, b) in bands.enumerated() {
            print("\(String(i).leftPadded(4))  \(EffectOptions.kebab(b.type.rawValue).rightPadded(typeWidth))"
                  + "\(Self.frequencyLabel(b.frequency).leftPadded(8)) Hz \(String(format: "%.2f", b.bandwidth).leftPadded(4)) oct"
                  + " \(Self.signed(b.gain, decimals: 1).leftPadded(5)) dB"
                  + (response.isLeftOut(i) ? "  (left out: not below Nyquist, \(Self.frequencyLabel(rate / 2)) Hz)" : ""))
        }
        if global != 0 { print("global gain \(Self.signed(global, decimals: 1)) dB") }
        print("")
        print("frequency   response")
        for f in Self.tableFrequencies where f < rate / 2 {
            print("\(Self.frequencyLabel(f).leftPadded(6)) Hz  \(Self.signed(response.total(at: f), decimals: 1).leftPadded(6)) dB")
        }
        if let path = plot { print("\nWrote \(path)") }
    }

    /// Writes `data` to `path` (replacing a file there). Throws `writeFailed` naming the path and
    /// saying why: a missing or unwritable folder, a full disk.
    static func write(_ data: Data, to path: String) throws(TonearmError) {
        let dir = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else {
            throw .writeFailed(path: path, reason: "the folder \(dir) does not exist")
        }
        guard isDir.boolValue else { throw .writeFailed(path: path, reason: "\(dir) is not a folder") }
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .writeFailed(path: path, reason: (error as NSError).localizedFailureReason ?? error.localizedDescription)
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

    /// Whether band `i` does nothing at this rate although it is set (it lies at or above
    /// Nyquist: see ``BiquadCoefficients/isBeyondNyquist(type:frequency:sampleRate:)``).
    func isLeftOut(_ i: Int) -> Bool { !bands[i].isIdentity && coefficients[i].isIdentity }

    func band(_ i: Int, at f: Double) -> Double {
        coefficients[i].magnitudeResponse(atFrequency: f, sampleRate: sampleRate)
    }

    func total(at f: Double) -> Double {
        coefficients.indices.reduce(globalGain) { $0 + band($1, at: f) }
    }

    /// Where everything of the plot goes (shared by the SVG and the PNG): log-frequency axis
    /// 20 Hz–20 kHz (or Nyquist), a dB axis symmetric about 0, the curves sampled at 401 points.
    struct Layout {
        let width = 860.0, height = 440.0
        let left = 60.0, right = 20.0, top = 40.0, bottom = 50.0
        var plotW: Double { width - left - right }
        var plotH: Double { height - top - bottom }
        let fLow = 20.0
        let fHigh: Double
        let freqs: [Double]
        let totals: [Double]
        /// Each band's curve; nil for a band that does nothing (flat, bypassed, left out).
        let perBand: [[Double]?]
        /// The dB range is −span…+span, with grid lines every `step` dB.
        let span: Double
        let step: Double

        init(_ r: EQResponse) {
            fHigh = min(20_000, r.sampleRate / 2 * 0.999)
            let points = 400
            let (lo, hi) = (fLow, fHigh)
            freqs = (0...points).map { lo * pow(hi / lo, Double($0) / Double(points)) }
            let fs = freqs
            totals = fs.map { r.total(at: $0) }
            perBand = r.coefficients.indices.map { i in r.coefficients[i].isIdentity ? nil : fs.map { r.band(i, at: $0) } }
            // At least ±12, in 6 dB steps, −∞ (notches) clipped.
            var extreme = 0.0
            for v in totals + perBand.compactMap({ $0 }).flatMap({ $0 }) where v.isFinite { extreme = max(extreme, abs(v)) }
            span = max(12, (extreme / 6).rounded(.up) * 6)
            step = span <= 12 ? 3.0 : (span <= 24 ? 6.0 : 12.0)
        }

        func x(_ f: Double) -> Double { left + plotW * log10(f / fLow) / log10(fHigh / fLow) }
        func y(_ db: Double) -> Double {
            let v = db.isFinite ? min(max(db, -span), span) : -span
            return top + plotH * (span - v) / (2 * span)
        }

        /// Frequency grid lines: every 1-2-…-9 × decade; the major ones (1, 2, 5) are labelled.
        var frequencyGrid: [(f: Double, major: Bool)] {
            var out: [(Double, Bool)] = []
            var decade = 10.0
            while decade <= fHigh {
                for m in 1...9 {
                    let f = decade * Double(m)
                    guard f >= fLow && f <= fHigh * 1.0001 else { continue }
                    out.append((f, m == 1 || m == 2 || m == 5))
                }
                decade *= 10
            }
            return out
        }

        /// dB grid lines from −span to +span.
        var dbGrid: [Double] {
            var out: [Double] = []
            var db = -span
            while db <= span + 1e-9 { out.append(db); db += step }
            return out
        }
    }

    /// A hand-written SVG: log-frequency axis 20 Hz–20 kHz, dB axis, grid and labels, the
    /// combined curve, and each band's curve faint.
    func svg(title: String) -> String {
        let g = Layout(self)
        func n(_ v: Double) -> String { String(format: "%.2f", v) }
        func path(_ values: [Double]) -> String {
            zip(g.freqs, values).enumerated().map { i, p in "\(i == 0 ? "M" : "L")\(n(g.x(p.0))),\(n(g.y(p.1)))" }
                .joined(separator: " ")
        }
        let (width, height, left, top, plotW, plotH) = (g.width, g.height, g.left, g.top, g.plotW, g.plotH)
        var s = """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <rect x="0" y="0" width="\(Int(width))" height="\(Int(height))" fill="white"/>
        <text x="\(n(width / 2))" y="24" text-anchor="middle" font-size="15">\(Self.escape(title))</text>

        """
        for (f, major) in g.frequencyGrid {
            s += "<line x1=\"\(n(g.x(f)))\" y1=\"\(n(top))\" x2=\"\(n(g.x(f)))\" y2=\"\(n(top + plotH))\" stroke=\"\(major ? "#bbbbbb" : "#e4e4e4")\" stroke-width=\"1\"/>\n"
            if major {
                s += "<text x=\"\(n(g.x(f)))\" y=\"\(n(top + plotH + 16))\" text-anchor=\"middle\">\(EQShowCommand.frequencyLabel(f))</text>\n"
            }
        }
        for db in g.dbGrid {
            s += "<line x1=\"\(n(left))\" y1=\"\(n(g.y(db)))\" x2=\"\(n(left + plotW))\" y2=\"\(n(g.y(db)))\" stroke=\"\(db == 0 ? "#888888" : "#dddddd")\" stroke-width=\"1\"/>\n"
            s += "<text x=\"\(n(left - 6))\" y=\"\(n(g.y(db) + 4))\" text-anchor=\"end\">\(EQShowCommand.signed(db, decimals: 0))</text>\n"
        }
        s += "<rect x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(plotW))\" height=\"\(n(plotH))\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1\"/>\n"
        s += "<text x=\"\(n(left + plotW / 2))\" y=\"\(n(height - 12))\" text-anchor=\"middle\">frequency (Hz)</text>\n"
        s += "<text x=\"16\" y=\"\(n(top + plotH / 2))\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(n(top + plotH / 2)))\">gain (dB)</text>\n"
        // Curves: each band faint, then the combined response.
        for values in g.perBand.compactMap({ $0 }) {
            s += "<path class=\"band\" d=\"\(path(values))\" fill=\"none\" stroke=\"#4a7fc1\" stroke-opacity=\"0.35\" stroke-width=\"1\"/>\n"
        }
        s += "<path class=\"total\" d=\"\(path(g.totals))\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2.5\"/>\n"
        s += "</svg>\n"
        return s
    }

    /// The same plot as ``svg(title:)``, rasterised (860 × 440) and encoded as a PNG.
    func png(title: String) -> Data {
        let g = Layout(self)
        var img = PNGImage(width: Int(g.width), height: Int(g.height))
        let (left, top, plotW, plotH) = (g.left, g.top, g.plotW, g.plotH)
        img.text(title, x: g.width / 2, y: 26, anchor: .middle, scale: 2)
        for (f, major) in g.frequencyGrid {
            img.line(g.x(f), top, g.x(f), top + plotH, major ? 0xBBBBBB : 0xE4E4E4)
            if major { img.text(EQShowCommand.frequencyLabel(f), x: g.x(f), y: top + plotH + 16, anchor: .middle, 0x000000) }
        }
        for db in g.dbGrid {
            img.line(left, g.y(db), left + plotW, g.y(db), db == 0 ? 0x888888 : 0xDDDDDD)
            img.text(EQShowCommand.signed(db, decimals: 0), x: left - 6, y: g.y(db) + 4, anchor: .end, 0x000000)
        }
        img.line(left, top, left + plotW, top, 0x444444)
        img.line(left, top + plotH, left + plotW, top + plotH, 0x444444)
        img.line(left, top, left, top + plotH, 0x444444)
        img.line(left + plotW, top, left + plotW, top + plotH, 0x444444)
        img.text("frequency (Hz)", x: left + plotW / 2, y: g.height - 12, anchor: .middle, 0x000000)
        img.text("dB", x: 16, y: top + plotH / 2, anchor: .middle, 0x000000)
        func curve(_ values: [Double], _ color: UInt32, thickness: Double, opacity: Double) {
            for i in 1..<g.freqs.count {
                img.line(g.x(g.freqs[i - 1]), g.y(values[i - 1]), g.x(g.freqs[i]), g.y(values[i]), color, thickness: thickness, opacity: opacity)
            }
        }
        for values in g.perBand.compactMap({ $0 }) { curve(values, 0x4A7FC1, thickness: 1, opacity: 0.35) }
        curve(g.totals, 0xC0392B, thickness: 3, opacity: 1)
        return img.pngData()
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension String {
    /// Spaces before the text up to `width` characters; a longer text is kept whole.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    /// Spaces after the text up to `width` characters; a longer text is kept whole (never cut,
    /// unlike `padding(toLength:withPad:startingAt:)`).
    func rightPadded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
