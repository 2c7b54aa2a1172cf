// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmDSP

/// A straightforward sequential cascade of biquads, one band after the other per sample: the
/// reference the SIMD wavefront must match. `exact` runs it in Double (the true output); otherwise
/// it runs in Float with the kernel's section form (TDF2, output substituted into the state
/// updates), so any difference is the wavefront's reorganisation, not float rounding.
struct ReferenceCascade {
    var coefficients: [BiquadCoefficients]
    var state: [[(Double, Double)]]
    var exact: Bool
    init(bands: [EQBand], sampleRate: Double, channels: Int, exact: Bool) {
        coefficients = bands.map { BiquadCoefficients(band: $0, sampleRate: sampleRate) }
        state = Array(repeating: Array(repeating: (0, 0), count: bands.count), count: channels)
        self.exact = exact
    }
    mutating func process(_ x: inout [Float], channels: Int) {
        let frames = x.count / channels
        for f in 0..<frames {
            for c in 0..<channels {
                var v = Double(x[f * channels + c])
                for (b, k) in coefficients.enumerated() {
                    let (s1, s2) = state[c][b]
                    if exact {
                        let y = k.b0 * v + s1
                        state[c][b] = (k.b1 * v - k.a1 * y + s2, k.b2 * v - k.a2 * y)
                        v = y
                    } else {
                        let x = Float(v), o1 = Float(s1), o2 = Float(s2)
                        let y = Float(k.b0) * x + o1
                        let n1 = Float(k.b1 - k.a1 * k.b0) * x + o2 + Float(-k.a1) * o1
                        let n2 = Float(k.b2 - k.a2 * k.b0) * x + Float(-k.a2) * o1
                        state[c][b] = (Double(n1), Double(n2))
                        v = Double(y)
                    }
                }
                x[f * channels + c] = Float(v)
            }
        }
    }
}

/// Deterministic noise in −0.5 ... 0.5.
func noise(_ count: Int, seed: UInt64 = 42) -> [Float] {
    var s = seed
    return (0..<count).map { _ in
        s = s &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(Double(s >> 11) / Double(1 << 53)) - 0.5
    }
}

/// Runs `eq` over `samples` in blocks of the given sizes (cycled).
func run(_ eq: inout Equalizer, _ samples: inout [Float], blocks: [Int]) {
    let ch = eq.channels
    let frames = samples.count / ch
    samples.withUnsafeMutableBufferPointer { p in
        var done = 0, k = 0
        while done < frames {
            let n = min(blocks[k % blocks.count], frames - done)
            eq.process(p.baseAddress! + done * ch, frames: n, channels: ch)
            done += n
            k += 1
        }
    }
}

/// Amplitude of the sinusoid of frequency `w` (radians/sample) in `x`, by least squares over
/// sin, cos and a constant: exact for a pure tone whatever the window length.
func amplitude(_ x: [Double], w: Double) -> Double {
    var m = [[Double]](repeating: [0, 0, 0], count: 3), v = [0.0, 0.0, 0.0]
    for (n, value) in x.enumerated() {
        let basis = [sin(w * Double(n)), cos(w * Double(n)), 1]
        for i in 0..<3 {
            v[i] += basis[i] * value
            for j in 0..<3 { m[i][j] += basis[i] * basis[j] }
        }
    }
    // Solve the 3×3 normal equations by Gaussian elimination.
    for i in 0..<3 {
        for k in (i + 1)..<3 {
            let f = m[k][i] / m[i][i]
            for j in i..<3 { m[k][j] -= f * m[i][j] }
            v[k] -= f * v[i]
        }
    }
    var sol = [0.0, 0.0, 0.0]
    for i in stride(from: 2, through: 0, by: -1) {
        var s = v[i]
        for j in (i + 1)..<3 { s -= m[i][j] * sol[j] }
        sol[i] = s / m[i][i]
    }
    return (sol[0] * sol[0] + sol[1] * sol[1]).squareRoot()
}

@Suite struct FilterResponseTests {
    static let tones: [Double] = [20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 20_000]

    /// Every filter type, measured with sine tones through the real kernel (one tone per
    /// channel, so 5 stereo passes and 1 mono pass), matches the analytic response within
    /// 0.1 dB. Tones where the analytic response is below −60 dB are skipped: there the output
    /// is within a few orders of magnitude of Float32 rounding noise, so a level comparison is
    /// not meaningful. The first 0.1 s (the filter's transient) is skipped, the next 0.1 s fitted.
    @Test(arguments: EQFilterType.allCases, [44_100.0, 48_000.0])
    func measuredMatchesAnalytic(type: EQFilterType, sampleRate: Double) {
        let band = EQBand(type: type, frequency: 1000, bandwidth: 1, gain: 6)
        let channels = Self.tones.count
        var eq = Equalizer(bands: [band], sampleRate: sampleRate, channels: channels)
        let skip = Int(0.1 * sampleRate), measure = Int(0.1 * sampleRate)
        let frames = skip + measure
        var buffer = [Float](repeating: 0, count: frames * channels)
        for (c, f) in Self.tones.enumerated() {
            let w = 2 * Double.pi * f / sampleRate
            for n in 0..<frames { buffer[n * channels + c] = Float(0.5 * sin(w * Double(n))) }
        }
        let input = buffer
        run(&eq, &buffer, blocks: [512])
        let k = BiquadCoefficients(band: band, sampleRate: sampleRate)
        var checked = 0
        for (c, f) in Self.tones.enumerated() {
            let expected = k.magnitudeResponse(atFrequency: f, sampleRate: sampleRate)
            guard expected > -60 else { continue }
            let w = 2 * Double.pi * f / sampleRate
            let out = (skip..<frames).map { Double(buffer[$0 * channels + c]) }
            let inp = (skip..<frames).map { Double(input[$0 * channels + c]) }
            let measured = 20 * log10(amplitude(out, w: w) / amplitude(inp, w: w))
            #expect(abs(measured - expected) < 0.1, "\(type) at \(f) Hz, \(sampleRate) Hz: measured \(measured) dB, analytic \(expected) dB")
            checked += 1
        }
        #expect(checked >= 5)
    }

    @Test func analyticShapes() {
        let fs = 48_000.0
        func db(_ t: EQFilterType, _ f: Double, gain: Double = 6, bw: Double = 1) -> Double {
            BiquadCoefficients(type: t, frequency: 1000, bandwidth: bw, gain: gain, sampleRate: fs)
                .magnitudeResponse(atFrequency: f, sampleRate: fs)
        }
        #expect(abs(db(.parametric, 1000) - 6) < 1e-9)
        #expect(abs(db(.parametric, 1000, gain: -12) + 12) < 1e-9)
        #expect(abs(db(.lowPass, 1000) + 3.0103) < 0.01) // Butterworth: −3 dB at the corner
        #expect(abs(db(.highPass, 1000) + 3.0103) < 0.01)
        #expect(db(.resonantLowPass, 1000, bw: 0.5) > 6) // Q ≈ 2.87 peaks at the corner
        #expect(abs(db(.bandPass, 1000)) < 1e-9)
        #expect(db(.bandStop, 1000) < -100)
        #expect(abs(db(.lowShelf, 20) - 6) < 0.05 && abs(db(.lowShelf, 20_000)) < 0.05)
        #expect(abs(db(.highShelf, 20_000) - 6) < 0.1 && abs(db(.highShelf, 20)) < 0.05)
        #expect(abs(db(.lowShelf, 1000) - 3) < 0.01) // half the gain at the shelf midpoint
        #expect(db(.resonantHighShelf, 20_000, bw: 0.3) > 5)
        #expect(BiquadCoefficients(type: .parametric, frequency: 1000, bandwidth: 1, gain: 0, sampleRate: fs).isIdentity)
    }
}

@Suite struct EqualizerKernelTests {
    @Test(arguments: [1, 2, 3, 6])
    func wavefrontEqualsScalarCascade(channels: Int) {
        let fs = 44_100.0
        let types = EQFilterType.allCases
        var bands = EQBand.graphic(gains: [4, -3, 2, 6, -6, 3, -2, 5, -4, 2])
        bands[2].type = .lowShelf
        bands[8].type = .highShelf
        var eq = Equalizer(bands: bands, sampleRate: fs, channels: channels)
        var ref = ReferenceCascade(bands: bands, sampleRate: fs, channels: channels, exact: false)
        var exact = ReferenceCascade(bands: bands, sampleRate: fs, channels: channels, exact: true)
        var a = noise(3000 * channels)
        var b = a, e = a
        run(&eq, &a, blocks: [1, 3, 7, 9, 10, 64, 1000, 511])
        ref.process(&b, channels: channels)
        exact.process(&e, channels: channels)
        let maxError = zip(a, b).map { abs($0 - $1) }.max()!
        #expect(maxError < 1e-5, "max |SIMD − scalar reference| = \(maxError)")
        // Against the exact (Double) cascade: Float rounding of low-frequency sections only
        // (a textbook Float TDF2 cascade is off by ~1.5e-4 here).
        let exactError = zip(a, e).map { abs($0 - $1) }.max()!
        #expect(exactError < 3e-5, "max |SIMD − exact| = \(exactError)")
        _ = types
    }

    /// 20 bands (two stages per pass) of every type, stereo and mono.
    @Test(arguments: [1, 2])
    func manyBandsEveryTypeEqualsScalarCascade(channels: Int) {
        let fs = 48_000.0
        let bands = (0..<22).map { i in
            let type = EQFilterType.allCases[i % EQFilterType.allCases.count]
            let frequency: Double = 40 * pow(2, Double(i) * 0.45)
            let bandwidth: Double = 0.7 + Double(i % 4) * 0.4
            let gain: Double = Double(i % 5) * 2 - 4
            return EQBand(type: type, frequency: frequency, bandwidth: bandwidth, gain: gain)
        }
        var eq = Equalizer(bands: bands, sampleRate: fs, channels: channels)
        var ref = ReferenceCascade(bands: bands, sampleRate: fs, channels: channels, exact: false)
        var a = noise(4000 * channels, seed: 7)
        var b = a
        run(&eq, &a, blocks: [256, 5, 1024])
        ref.process(&b, channels: channels)
        let maxError = zip(a, b).map { abs($0 - $1) }.max()!
        #expect(maxError < 1e-5, "max |SIMD − reference| = \(maxError)")
    }

    @Test func flatAndBypassedAreBitTransparent() {
        let input = noise(4096 * 2)
        var flat = Equalizer(preset: .flat, sampleRate: 44_100, channels: 2)
        #expect(flat.isTransparent)
        var a = input
        run(&flat, &a, blocks: [1000])
        #expect(a.map(\.bitPattern) == input.map(\.bitPattern))

        var rock = Equalizer(preset: .rock, sampleRate: 44_100, channels: 2)
        rock.bypass = true
        var b = input
        run(&rock, &b, blocks: [333])
        #expect(b.map(\.bitPattern) == input.map(\.bitPattern))

        // Every band bypassed, global gain 0 dB: transparent too.
        var bands = EQPreset.rock.bands
        for i in bands.indices { bands[i].bypass = true }
        var allBypassed = Equalizer(bands: bands, sampleRate: 44_100, channels: 2)
        var c = input
        run(&allBypassed, &c, blocks: [256])
        #expect(c.map(\.bitPattern) == input.map(\.bitPattern))

        // Ramping from a boost back to flat ends exactly transparent.
        var eq = Equalizer(preset: .rock, sampleRate: 44_100, channels: 2)
        var warm = input
        run(&eq, &warm, blocks: [512])
        eq.apply(.flat)
        #expect(!eq.isTransparent)
        run(&eq, &warm, blocks: [512]) // 4096 frames > the 662-frame ramp
        #expect(eq.isTransparent)
        var d = input
        run(&eq, &d, blocks: [512])
        #expect(d.map(\.bitPattern) == input.map(\.bitPattern))
    }

    /// A +12 dB step of a 1 kHz band while a 1 kHz tone plays: with smoothing no sample moves
    /// further from the previous one than the loudest tone could (no click), and the level
    /// settles at the target.
    @Test func gainStepIsSmoothAndReachesTarget() {
        let fs = 48_000.0, f = 1000.0, amp: Float = 0.25
        let w = 2 * Double.pi * f / fs
        var eq = Equalizer(bands: [EQBand(type: .parametric, frequency: f, bandwidth: 1, gain: 0)],
                           sampleRate: fs, channels: 1)
        let frames = 9600
        var x = (0..<frames).map { amp * Float(sin(w * Double($0))) }
        x.withUnsafeMutableBufferPointer { p in
            eq.process(p.baseAddress!, frames: 2400, channels: 1)
            eq.bands[0].gain = 12
            eq.process(p.baseAddress! + 2400, frames: frames - 2400, channels: 1)
        }
        // The largest step a sine of the final amplitude (+12 dB ≈ 3.98×) makes, with 10 % margin.
        let bound = Float(3.981) * amp * Float(2 * sin(w / 2)) * 1.1
        var maxJump: Float = 0
        for n in 1..<frames { maxJump = max(maxJump, abs(x[n] - x[n - 1])) }
        #expect(maxJump <= bound, "largest sample jump \(maxJump) > \(bound)")
        let tail = (frames - 2400..<frames).map { Double(x[$0]) }
        let level = 20 * log10(amplitude(tail, w: w) / Double(amp))
        #expect(abs(level - 12) < 0.05, "settled at \(level) dB")
    }

    @Test func globalGainRampsAndLandsExactly() {
        var eq = Equalizer(preset: .flat, sampleRate: 48_000, channels: 2, smoothingTime: 0.01)
        eq.globalGain = -6
        var x = [Float](repeating: 0.5, count: 2000 * 2)
        run(&eq, &x, blocks: [128])
        let g = Equalizer.linear(-6)
        // Monotonic ramp over 480 frames, then exactly the target factor.
        for n in 1..<480 { #expect(x[2 * n] <= x[2 * (n - 1)]) }
        #expect(x[2 * 479] == 0.5 * g)
        #expect(x[2 * 1999] == 0.5 * g && x[2 * 1999 + 1] == 0.5 * g)
    }

    @Test func silenceAfterAudioStaysNormal() {
        var eq = Equalizer(preset: .loudness, sampleRate: 44_100, channels: 2)
        var x = noise(44_100 * 2)
        for i in (22_050 * 2)..<x.count { x[i] = 0 }
        run(&eq, &x, blocks: [1024])
        let tail = x[(40_000 * 2)...]
        #expect(tail.allSatisfy { $0 == 0 || $0.isNormal })
        #expect(tail.allSatisfy { abs($0) < 1e-9 })
    }
}

@Suite struct EqualizerControlTests {
    @Test func presetsAreListableAndNamed() throws {
        #expect(EQPreset.all.count >= 10)
        #expect(Set(EQPreset.all.map(\.name)).count == EQPreset.all.count)
        #expect(EQPreset.all.allSatisfy { $0.gains.count == 10 })
        #expect(try EQPreset.named("Bass Boost") == .bassBoost)
        #expect(try EQPreset.named("bassBoost") == .bassBoost)
        #expect(try EQPreset.named("LOUDNESS") == .loudness)
        #expect(throws: EQSpecError.unknownPreset("disco")) { try EQPreset.named("disco") }
        #expect(EQPreset.bassBoost.bands.map(\.frequency) == EQBand.graphicFrequencies)
    }

    @Test func specParsing() throws {
        let bands = try EQBand.parse(spec: "31:+3, 62:+2,125:0,1k:-1.5,16kHz:4dB,250Hz:-2")
        #expect(bands.map(\.frequency) == [31, 62, 125, 1000, 16_000, 250])
        #expect(bands.map(\.gain) == [3, 2, 0, -1.5, 4, -2])
        #expect(bands.allSatisfy { $0.type == .parametric && $0.bandwidth == 1 })
    }

    @Test func specErrorsNameTheToken() {
        #expect(throws: EQSpecError.empty) { try EQBand.parse(spec: "  ") }
        #expect(throws: EQSpecError.malformedToken("125+3")) { try EQBand.parse(spec: "31:1,125+3") }
        #expect(throws: EQSpecError.badFrequency(token: "abc:3")) { try EQBand.parse(spec: "abc:3") }
        #expect(throws: EQSpecError.badGain(token: "125:loud")) { try EQBand.parse(spec: "125:loud") }
        #expect(throws: EQSpecError.frequencyOutOfRange(token: "5:3", frequency: 5)) { try EQBand.parse(spec: "5:3") }
        #expect(throws: EQSpecError.gainOutOfRange(token: "1k:+40", gain: 40)) { try EQBand.parse(spec: "1k:+40") }
        #expect(throws: EQSpecError.emptyToken(spec: "31:1,,62:2")) { try EQBand.parse(spec: "31:1,,62:2") }
        #expect(String(describing: EQSpecError.badGain(token: "125:loud")).contains("'125:loud'"))
    }

    @Test func parametersAsData() throws {
        var eq = Equalizer(preset: .flat, sampleRate: 48_000, channels: 2)
        let ds = eq.parameterDescriptors
        #expect(ds.count == 2 + 10 * 5)
        #expect(Set(ds.map(\.identifier)).count == ds.count)
        let gain = try #require(ds.first { $0.identifier == "band3.gain" })
        #expect(gain.unit == .decibels && gain.range == -96...24 && gain.defaultValue == 0)
        #expect(ds.first { $0.identifier == "band0.type" }?.valueNames == EQFilterType.allCases.map(\.rawValue))
        try eq.setValue(6, forParameter: "band3.gain")
        #expect(eq.bands[3].gain == 6 && eq.value(forParameter: "band3.gain") == 6)
        try eq.setValue(Double(EQFilterType.allCases.firstIndex(of: .highShelf)!), forParameter: "band9.type")
        #expect(eq.bands[9].type == .highShelf)
        #expect(throws: TonearmError.self) { try eq.setValue(30, forParameter: "band3.gain") }
        #expect(throws: TonearmError.self) { try eq.setValue(1, forParameter: "band10.gain") }
        #expect(ParameterDescriptor(identifier: "x", name: "x", range: 0...1, unit: .ratio, defaultValue: 5).defaultValue == 1)
    }
}

/// Presets and bands at sample rates below 44.1 kHz: a band that cannot exist under Nyquist is
/// left out, never turned into broadband gain, and the rest keeps its shape.
@Suite struct EqualizerSampleRateTests {
    static let rates: [Double] = [16_000, 22_050, 32_000, 44_100, 48_000]

    /// The combined response (global gain included) of `bands` at `sampleRate`, from the designs.
    static func response(_ bands: [EQBand], global: Double, at f: Double, sampleRate: Double) -> Double {
        bands.reduce(global) { $0 + BiquadCoefficients(band: $1, sampleRate: sampleRate).magnitudeResponse(atFrequency: f, sampleRate: sampleRate) }
    }

    /// Frequencies from 20 Hz in steps of 1/24 octave, up to `limit`.
    static func frequencies(upTo limit: Double) -> [Double] {
        (0..<400).map { 20 * pow(2, Double($0) / 24) }.filter { $0 <= limit }
    }

    /// Every preset at every common rate matches its 44.1 kHz response less the bands that
    /// cannot exist at that rate (≥ Nyquist) within 1 dB up to 0.45 × rate (and 0.4 × 44.1 kHz,
    /// above which the reference itself bends towards its own Nyquist), is within 0.1 dB of it
    /// at 1 kHz, and rises nowhere above its 44.1 kHz peak (+0.5 dB).
    @Test(arguments: EQPreset.all, rates)
    func presetsKeepTheirShapeBelowNyquist(preset: EQPreset, sampleRate: Double) {
        let reference = 44_100.0
        let missing = preset.bands.filter { $0.frequency >= sampleRate / 2 }
        func expected(_ f: Double) -> Double {
            Self.response(preset.bands, global: preset.globalGain, at: f, sampleRate: reference)
                - Self.response(missing, global: 0, at: f, sampleRate: reference)
        }
        for f in Self.frequencies(upTo: min(0.45 * sampleRate, 0.4 * reference)) {
            let got = Self.response(preset.bands, global: preset.globalGain, at: f, sampleRate: sampleRate)
            #expect(abs(got - expected(f)) < 1, "\(preset.name) at \(f) Hz, \(sampleRate) Hz: \(got) dB, expected \(expected(f)) dB")
        }
        let at1k = Self.response(preset.bands, global: preset.globalGain, at: 1000, sampleRate: sampleRate)
        let ref1k = Self.response(preset.bands, global: preset.globalGain, at: 1000, sampleRate: reference)
        #expect(abs(at1k - ref1k) < 0.1, "\(preset.name) at 1 kHz, \(sampleRate) Hz: \(at1k) dB, at 44.1 kHz \(ref1k) dB")
        let peak = Self.frequencies(upTo: reference / 2 * 0.999).map { Self.response(preset.bands, global: preset.globalGain, at: $0, sampleRate: reference) }.max()!
        for f in Self.frequencies(upTo: sampleRate / 2 * 0.999) {
            #expect(Self.response(preset.bands, global: preset.globalGain, at: f, sampleRate: sampleRate) < peak + 0.5)
        }
        // The bands left out are exactly those at or above Nyquist.
        #expect(preset.bands.filter { BiquadCoefficients(band: $0, sampleRate: sampleRate).isIdentity && !$0.isIdentity }.count
                == missing.filter { !$0.isIdentity }.count)
    }

    /// A band above Nyquist changes nothing; one just below it stays narrow.
    @Test(arguments: [16_000.0, 22_050, 32_000])
    func aBandAboveNyquistIsLeftOut(sampleRate: Double) {
        let above = EQBand(type: .parametric, frequency: 16_000, bandwidth: 1, gain: 12)
        #expect(BiquadCoefficients(band: above, sampleRate: sampleRate).isIdentity)
        for f in Self.frequencies(upTo: sampleRate / 2 * 0.999) {
            #expect(abs(Self.response([above], global: 0, at: f, sampleRate: sampleRate)) < 1e-9)
        }
        // Just below Nyquist: +12 dB near the top, almost nothing an octave and more below.
        let near = EQBand(type: .parametric, frequency: sampleRate * 0.49, bandwidth: 1, gain: 12)
        for f in Self.frequencies(upTo: sampleRate / 4) {
            #expect(Self.response([near], global: 0, at: f, sampleRate: sampleRate) < 1, "\(f) Hz")
        }
        #expect(Self.response([near], global: 0, at: sampleRate * 0.49, sampleRate: sampleRate) > 11.9)
        // Types whose meaning reaches below the corner are still designed there.
        let shelf = EQBand(type: .lowShelf, frequency: 20_000, bandwidth: 1, gain: 6)
        #expect(abs(Self.response([shelf], global: 0, at: 1000, sampleRate: sampleRate) - 6) < 0.1)
        let highPass = EQBand(type: .highPass, frequency: 20_000, bandwidth: 1, gain: 0)
        #expect(Self.response([highPass], global: 0, at: 1000, sampleRate: sampleRate) < -40)
    }

    /// The kernel itself, on a 22.05 kHz 1 kHz tone, gives what the analytic response says.
    @Test func theKernelAt22kHzMatchesTheAnalyticResponse() {
        let fs = 22_050.0
        var eq = Equalizer(preset: .rock, sampleRate: fs, channels: 1)
        let n = Int(0.3 * fs), skip = Int(0.1 * fs)
        let w = 2 * Double.pi * 1000 / fs
        var x = (0..<n).map { Float(0.5 * sin(w * Double($0))) }
        let input = x
        run(&eq, &x, blocks: [256])
        let measured = 20 * log10(amplitude(x[skip...].map(Double.init), w: w) / amplitude(input[skip...].map(Double.init), w: w))
        let analytic = Self.response(EQPreset.rock.bands, global: EQPreset.rock.globalGain, at: 1000, sampleRate: fs)
        #expect(abs(measured - analytic) < 0.1, "measured \(measured) dB, analytic \(analytic) dB")
        #expect(measured < -3, "rock is -3.7 dB at 1 kHz at 44.1 kHz; measured \(measured) dB")
    }
}
