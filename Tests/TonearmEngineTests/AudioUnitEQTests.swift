// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmDSP
@testable import TonearmEngine
import TonearmTestSupport

/// The EQ node inside an engine graph, rendered offline.
@Suite(.offThePool) struct AudioUnitEQTests {
    /// player (a generated buffer) → EQ → main mixer; returns the rendered left channel.
    func run(eq: AudioUnitEQ, signal: [Float], midway: ((AudioUnitEQ) -> Void)? = nil) throws -> [Float] {
        let e = AudioEngine()
        try e.enableManualRenderingMode(.offline, format: .standard(sampleRate: 48000, channels: 2), maximumFrameCount: 1024)
        let p = AudioPlayerNode()
        e.attach(p)
        e.attach(eq)
        try e.connect(p, to: eq, format: nil)
        try e.connect(eq, to: e.mainMixerNode, format: nil)
        try e.start()
        let buf = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: signal.count)!
        buf.frameLength = signal.count
        for (i, v) in signal.enumerated() { buf.floatChannelData[0][i] = v; buf.floatChannelData[1][i] = v }
        p.scheduleBuffer(buf)
        p.play()
        let out = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 1024)!
        var left: [Float] = []
        var changed = false
        while left.count < signal.count {
            let n = min(1024, signal.count - left.count)
            _ = try e.renderOffline(n, to: out)
            left += out.channel(0)
            if left.count >= signal.count / 2, let m = midway, !changed { m(eq); changed = true }
        }
        return left
    }

    static func sine(_ f: Double, frames: Int, amplitude: Float = 0.25) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * .pi * f * Double($0) / 48000)) }
    }

    @Test func aFlatEQIsBitTransparent() throws {
        let noise = (0..<20_000).map { _ in Float.random(in: -0.5...0.5) }
        let out = try run(eq: AudioUnitEQ(preset: .flat), signal: noise)
        #expect(out == noise)
        let bypassed = AudioUnitEQ(preset: .rock)
        bypassed.bypass = true
        #expect(try run(eq: bypassed, signal: noise) == noise)
    }

    @Test func aParametricBandBoostsItsFrequency() throws {
        let eq = AudioUnitEQ(numberOfBands: 1)
        eq.bands[0].filterType = .parametric
        eq.bands[0].frequency = 1000
        eq.bands[0].bandwidth = 1
        eq.bands[0].gain = 6
        let out = try run(eq: eq, signal: Self.sine(1000, frames: 48_000))
        let gainDB = 20 * log10(Double(rms(out[9600...]) / rms(Self.sine(1000, frames: 48_000)[9600...])))
        #expect(abs(gainDB - 6) < 0.1, "measured \(gainDB) dB")
    }

    @Test func aChangeWhilePlayingReachesItsTargetSmoothly() throws {
        let eq = AudioUnitEQ(numberOfBands: 1)
        eq.bands[0].frequency = 1000
        eq.bands[0].gain = 0
        let input = Self.sine(1000, frames: 96_000)
        let out = try run(eq: eq, signal: input, midway: { $0.bands[0].gain = -12 })
        let before = 20 * log10(Double(rms(out[10_000..<40_000]) / rms(input[10_000..<40_000])))
        let after = 20 * log10(Double(rms(out[70_000...]) / rms(input[70_000...])))
        #expect(abs(before) < 0.1)
        #expect(abs(after + 12) < 0.1, "after the change: \(after) dB")
        // No zipper: no jump between neighbouring samples larger than the sine itself makes.
        let maxStep = zip(out.dropFirst(), out).map { abs($0 - $1) }.max() ?? 0
        let sineStep = Float(0.25 * 2 * Double.pi * 1000 / 48000)
        #expect(maxStep <= sineStep * 1.05)
    }

    @Test func parametersAreDescribedAsData() {
        let eq = AudioUnitEQ(preset: .rock)
        let ids = eq.parameterDescriptors.map(\.identifier)
        #expect(ids.count > 10)
        #expect(eq.bands.count == 10)
        #expect(eq.bands[0].gain == 5)
    }
}
