// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmDSP

/// The peaking form of the wavefront (graphic-equaliser stages: peaking, notch, identity; the
/// denormal guard at the stage input).
@Suite struct PeakingFormTests {
    @Test func graphicStagesRunInThePeakingForm() {
        let eq = Equalizer(preset: .rock, sampleRate: 44_100, channels: 2)
        #expect(CascadeStage.fitsPeakingForm(BiquadCoefficients(type: .bandStop, frequency: 3000, bandwidth: 1, gain: 0, sampleRate: 44_100)))
        #expect(!CascadeStage.fitsPeakingForm(BiquadCoefficients(type: .lowShelf, frequency: 300, bandwidth: 1, gain: 4, sampleRate: 44_100)))
        _ = eq
    }

    @Test(arguments: [1, 2, 3])
    func peakingStagesEqualTheCascade(channels: Int) {
        let fs = 44_100.0
        var bands = EQBand.graphic(gains: [6, -4, 3, 0, -6, 5, -2, 4, -5, 6])
        bands[6].type = .bandStop
        bands[3].bypass = true
        var eq = Equalizer(bands: bands, sampleRate: fs, channels: channels)
        var ref = ReferenceCascade(bands: bands, sampleRate: fs, channels: channels, exact: false)
        var exact = ReferenceCascade(bands: bands, sampleRate: fs, channels: channels, exact: true)
        var a = noise(5000 * channels, seed: 3)
        var b = a, e = a
        run(&eq, &a, blocks: [1, 7, 9, 64, 1000, 511, 1024])
        ref.process(&b, channels: channels)
        exact.process(&e, channels: channels)
        let refError = zip(a, b).map { abs($0 - $1) }.max()!
        let exactError = zip(a, e).map { abs($0 - $1) }.max()!
        #expect(refError < 1e-5, "max |peaking − Float reference| = \(refError)")
        #expect(exactError < 3e-5, "max |peaking − exact| = \(exactError)")
    }

    /// A stage converted to the general form mid-stream continues the same output.
    @Test(arguments: [1, 2])
    func conversionToTheGeneralFormContinuesTheOutput(channels: Int) {
        let fs = 48_000.0
        let bands = EQBand.graphic(gains: [5, 4, 3, 1, -1, -1, 1, 3, 4, 5])
        var peaking = CascadeStage(laneChannels: channels == 2 ? 2 : 1, channelOffset: 0, bands: 0..<bands.count)
        peaking.choosePeakingForm(true)
        var general = CascadeStage(laneChannels: channels == 2 ? 2 : 1, channelOffset: 0, bands: 0..<bands.count)
        for (i, band) in bands.enumerated() {
            let c = BiquadCoefficients(band: band, sampleRate: fs)
            peaking.setTarget(band: i, c, identity: c.isIdentity)
            general.setTarget(band: i, c, identity: c.isIdentity)
        }
        peaking.beginRamp(steps: 0, targetIsIdentity: false)
        general.beginRamp(steps: 0, targetIsIdentity: false)
        var x = noise(6000 * channels, seed: 11)
        var y = x
        x.withUnsafeMutableBufferPointer { p in
            peaking.process(p.baseAddress!, frames: 3000, stride: channels)
            peaking.convertToGeneralForm()
            #expect(!peaking.peaking)
            for (i, band) in bands.enumerated() {
                let c = BiquadCoefficients(band: band, sampleRate: fs)
                peaking.setTarget(band: i, c, identity: c.isIdentity)
            }
            peaking.beginRamp(steps: 0, targetIsIdentity: false)
            peaking.process(p.baseAddress! + 3000 * channels, frames: 3000, stride: channels)
        }
        y.withUnsafeMutableBufferPointer { p in
            general.process(p.baseAddress!, frames: 6000, stride: channels)
        }
        let error = zip(x, y).map { abs($0 - $1) }.max()!
        #expect(error < 2e-5, "max |converted − general| = \(error)")
    }

    /// Changing a band's type while playing (peaking → shelf) neither clicks nor resets.
    @Test func typeChangeWhilePlayingIsSmooth() {
        let fs = 48_000.0, f = 200.0, amp: Float = 0.25
        let w = 2 * Double.pi * f / fs
        var eq = Equalizer(preset: .rock, sampleRate: fs, channels: 1)
        let frames = 9600
        var x = (0..<frames).map { amp * Float(sin(w * Double($0))) }
        x.withUnsafeMutableBufferPointer { p in
            eq.process(p.baseAddress!, frames: 4800, channels: 1)
            eq.bands[2].type = .lowShelf
            eq.process(p.baseAddress! + 4800, frames: frames - 4800, channels: 1)
        }
        // No sample steps further than a sine of twice the amplitude could.
        let bound = Float(2) * amp * Float(2 * sin(w / 2)) * 1.1
        var maxJump: Float = 0
        for n in 2400..<frames { maxJump = max(maxJump, abs(x[n] - x[n - 1])) }
        #expect(maxJump <= bound, "largest sample jump \(maxJump) > \(bound)")
    }
}
