// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The shape of one equaliser band: the cases of `AVAudioUnitEQFilterType`.
///
/// How each maps onto the RBJ "Audio EQ Cookbook" biquads (`f` = frequency, `BW` = bandwidth in
/// octaves, `G` = gain in dB):
///
/// | type | cookbook filter | uses |
/// |---|---|---|
/// | `parametric` | peakingEQ, α from BW | f, BW, G |
/// | `lowPass`, `highPass` | LPF / HPF, 2nd-order Butterworth (Q = 1/√2) | f |
/// | `resonantLowPass`, `resonantHighPass` | LPF / HPF, Q = 1 / (2 sinh(ln2/2 · BW)) | f, BW |
/// | `bandPass` | BPF with 0 dB peak gain, α from BW | f, BW |
/// | `bandStop` | notch, α from BW | f, BW |
/// | `lowShelf`, `highShelf` | shelf with slope S = 1 (steepest without overshoot) | f, G |
/// | `resonantLowShelf`, `resonantHighShelf` | shelf with Q = 1 / (2 sinh(ln2/2 · BW)) (overshoot for small BW) | f, BW, G |
///
/// "α from BW" is the cookbook's digital-bandwidth form α = sin ω₀ · sinh(ln2/2 · BW · ω₀/sin ω₀);
/// the Q mapping is the analogue octave-bandwidth relation, so BW = 1 octave gives Q ≈ 1.41.
/// Types that do not use the gain ignore it, as AVAudioUnitEQ does.
///
/// Near and above the Nyquist frequency (half the sample rate), where a band cannot exist as
/// designed, the design degrades gracefully instead of turning the band into broadband gain:
/// - The factor ω₀/sin ω₀ grows without bound as ω₀ → π (a 1-octave bell at 0.499 · rate would
///   cover the whole spectrum at full gain), so it is held at its value at 0.4 · rate
///   (``BiquadCoefficients/bandwidthWarpLimit``): above that the band narrows towards Nyquist.
///   Every band of the graphic presets lies below 0.4 · rate at 44.1 and 48 kHz, and so does
///   every band of a preset that still exists at 16, 22.05 or 32 kHz, so their shapes are
///   unchanged.
/// - A band at or above Nyquist that would only shape content above it is left out (identity):
///   `parametric`, `bandStop`, `highShelf`, `resonantHighShelf`, `lowPass`, `resonantLowPass`.
///   The types whose meaning reaches below the corner (`highPass`, `resonantHighPass`,
///   `bandPass`: they remove what lies below; `lowShelf`, `resonantLowShelf`: everything is below
///   the corner) are designed at 0.499 · rate.
public enum EQFilterType: String, Sendable, Hashable, Codable, CaseIterable {
    case parametric
    case lowPass
    case highPass
    case resonantLowPass
    case resonantHighPass
    case bandPass
    case bandStop
    case lowShelf
    case highShelf
    case resonantLowShelf
    case resonantHighShelf

    /// Whether the band's gain changes its response (parametric and shelves).
    public var usesGain: Bool {
        switch self {
        case .parametric, .lowShelf, .highShelf, .resonantLowShelf, .resonantHighShelf: true
        default: false
        }
    }

    /// Whether the band's bandwidth changes its response.
    public var usesBandwidth: Bool {
        switch self {
        case .lowPass, .highPass, .lowShelf, .highShelf: false
        default: true
        }
    }
}

/// The normalised coefficients of one second-order IIR section,
/// `H(z) = (b0 + b1 z⁻¹ + b2 z⁻²) / (1 + a1 z⁻¹ + a2 z⁻²)`, designed from the RBJ Audio EQ
/// Cookbook (see ``EQFilterType`` for how each type is mapped).
///
/// A plain value: computing one allocates nothing, so it may be done on a render thread.
public struct BiquadCoefficients: Sendable, Hashable {
    public var b0: Double
    public var b1: Double
    public var b2: Double
    public var a1: Double
    public var a2: Double

    /// The filter that passes its input unchanged (b0 = 1, everything else 0).
    public static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    /// The frequencies accepted, as a fraction of the sample rate: designs are clamped into
    /// 1 Hz ... 0.499 · sampleRate so that every filter stays stable and well defined.
    public static let maximumRelativeFrequency = 0.499

    /// The relative frequency (of the sample rate) above which the bandwidth warp ω₀/sin ω₀ is
    /// held constant, so that a band near Nyquist narrows instead of spreading over the spectrum.
    public static let bandwidthWarpLimit = 0.4

    /// Whether a band of `type` at `frequency` is left out (identity) at `sampleRate`: it lies
    /// at or above Nyquist and would only shape content above it.
    public static func isBeyondNyquist(type: EQFilterType, frequency: Double, sampleRate: Double) -> Bool {
        guard frequency >= sampleRate / 2 else { return false }
        switch type {
        case .parametric, .bandStop, .highShelf, .resonantHighShelf, .lowPass, .resonantLowPass: return true
        case .highPass, .resonantHighPass, .bandPass, .lowShelf, .resonantLowShelf: return false
        }
    }

    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
    }

    /// Designs a section. `frequency` is clamped to 1 Hz ... 0.499 · `sampleRate` and
    /// `bandwidth` to 0.01 ... 10 octaves; a band beyond Nyquist is left out
    /// (``isBeyondNyquist(type:frequency:sampleRate:)``). A gain-using type
    /// (``EQFilterType/usesGain``) with a gain of exactly 0 dB gives exactly ``identity``, so that
    /// a flat band costs no rounding. Allocates nothing (render-thread safe).
    public init(type: EQFilterType, frequency: Double, bandwidth: Double, gain: Double, sampleRate: Double) {
        if (type.usesGain && gain == 0) || Self.isBeyondNyquist(type: type, frequency: frequency, sampleRate: sampleRate) {
            self = .identity
            return
        }
        let f = min(max(frequency, 1), sampleRate * Self.maximumRelativeFrequency)
        let bw = min(max(bandwidth, 0.01), 10)
        let w0 = 2 * Double.pi * f / sampleRate
        let cw = cos(w0)
        let sw = sin(w0)
        let bigA = pow(10, gain / 40)
        let qFromBandwidth = 1 / (2 * sinh(M_LN2 / 2 * bw))
        // ω₀/sin ω₀, held at its value at the warp limit so that a band near Nyquist narrows.
        let wLimit = 2 * Double.pi * Self.bandwidthWarpLimit
        let warp = w0 <= wLimit ? w0 / sw : wLimit / sin(wLimit)
        let alphaBW = sw * sinh(M_LN2 / 2 * bw * warp)
        var b0 = 1.0, b1 = 0.0, b2 = 0.0, a0 = 1.0, a1 = 0.0, a2 = 0.0
        switch type {
        case .parametric:
            b0 = 1 + alphaBW * bigA; b1 = -2 * cw; b2 = 1 - alphaBW * bigA
            a0 = 1 + alphaBW / bigA; a1 = -2 * cw; a2 = 1 - alphaBW / bigA
        case .lowPass, .resonantLowPass, .highPass, .resonantHighPass:
            let q = (type == .lowPass || type == .highPass) ? 1 / 2.0.squareRoot() : qFromBandwidth
            let alpha = sw / (2 * q)
            if type == .lowPass || type == .resonantLowPass {
                b0 = (1 - cw) / 2; b1 = 1 - cw; b2 = (1 - cw) / 2
            } else {
                b0 = (1 + cw) / 2; b1 = -(1 + cw); b2 = (1 + cw) / 2
            }
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        case .bandPass:
            b0 = alphaBW; b1 = 0; b2 = -alphaBW
            a0 = 1 + alphaBW; a1 = -2 * cw; a2 = 1 - alphaBW
        case .bandStop:
            b0 = 1; b1 = -2 * cw; b2 = 1
            a0 = 1 + alphaBW; a1 = -2 * cw; a2 = 1 - alphaBW
        case .lowShelf, .highShelf, .resonantLowShelf, .resonantHighShelf:
            let alpha: Double
            if type == .lowShelf || type == .highShelf {
                // Slope S = 1: α = sin ω₀ / 2 · √((A + 1/A)(1/S − 1) + 2) = sin ω₀ / √2.
                alpha = sw / 2 * 2.0.squareRoot()
            } else {
                alpha = sw / (2 * qFromBandwidth)
            }
            let ap1 = bigA + 1, am1 = bigA - 1
            let twoSqrtAAlpha = 2 * bigA.squareRoot() * alpha
            if type == .lowShelf || type == .resonantLowShelf {
                b0 = bigA * (ap1 - am1 * cw + twoSqrtAAlpha)
                b1 = 2 * bigA * (am1 - ap1 * cw)
                b2 = bigA * (ap1 - am1 * cw - twoSqrtAAlpha)
                a0 = ap1 + am1 * cw + twoSqrtAAlpha
                a1 = -2 * (am1 + ap1 * cw)
                a2 = ap1 + am1 * cw - twoSqrtAAlpha
            } else {
                b0 = bigA * (ap1 + am1 * cw + twoSqrtAAlpha)
                b1 = -2 * bigA * (am1 + ap1 * cw)
                b2 = bigA * (ap1 + am1 * cw - twoSqrtAAlpha)
                a0 = ap1 - am1 * cw + twoSqrtAAlpha
                a1 = 2 * (am1 - ap1 * cw)
                a2 = ap1 - am1 * cw - twoSqrtAAlpha
            }
        }
        self.init(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// Designs the section for `band` (``BiquadCoefficients/identity`` when the band is bypassed).
    public init(band: EQBand, sampleRate: Double) {
        if band.bypass {
            self = .identity
        } else {
            self.init(type: band.type, frequency: band.frequency, bandwidth: band.bandwidth,
                      gain: band.gain, sampleRate: sampleRate)
        }
    }

    /// Whether this is exactly ``identity``.
    public var isIdentity: Bool { self == .identity }

    /// The exact gain of the section at `frequency` Hz, in dB (−∞ at a zero of the response),
    /// computed from the transfer function — for tests and for plotting a response curve.
    public func magnitudeResponse(atFrequency frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let c1 = cos(w), s1 = sin(w), c2 = cos(2 * w), s2 = sin(2 * w)
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return 10 * log10((nr * nr + ni * ni) / (dr * dr + di * di))
    }
}
