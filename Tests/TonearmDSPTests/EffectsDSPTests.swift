// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmDSP

/// The effect kernels on their own: reverb decay and stability, the varispeed resampler.
@Suite struct EffectsDSPTests {
    /// Reverberation time estimated from the impulse response: Schroeder backward integration,
    /// the time the decay curve takes from −5 dB to −25 dB, times 3 (T20).
    static func rt60(_ preset: ReverbPreset, seconds: Double = 4) -> Double {
        let sr = 48000.0
        var r = Reverb(preset: preset, wetDryMix: 100, sampleRate: sr, channels: 2)
        let n = Int(seconds * sr)
        var buf = [Float](repeating: 0, count: n * 2)
        buf[0] = 1; buf[1] = 1
        buf.withUnsafeMutableBufferPointer { r.process($0.baseAddress!, frames: n, channels: 2) }
        var edc = [Double](repeating: 0, count: n)
        var acc = 0.0
        for i in stride(from: n - 1, through: 0, by: -1) {
            let l = Double(buf[2 * i])
            acc += l * l
            edc[i] = acc
        }
        let total = edc[0]
        func time(at dB: Double) -> Double {
            let level = total * pow(10, dB / 10)
            return Double(edc.firstIndex { $0 < level } ?? n) / sr
        }
        return (time(at: -25) - time(at: -5)) * 3
    }

    @Test func reverbDecayTimesAreOrderedByRoom() {
        let small = Self.rt60(.smallRoom), hall = Self.rt60(.largeHall), cathedral = Self.rt60(.cathedral, seconds: 6)
        #expect(small < hall && hall < cathedral, "RT60 small \(small), large hall \(hall), cathedral \(cathedral)")
        #expect(small > 0.2 && small < 0.8, "small room RT60 \(small)")
        #expect(hall > 1.2 && hall < 3.6, "large hall RT60 \(hall)")
        #expect(cathedral > 2.5 && cathedral < 7.5, "cathedral RT60 \(cathedral)")
    }

    @Test func reverbLeftAndRightAreDecorrelated() {
        var r = Reverb(preset: .mediumHall, wetDryMix: 100, sampleRate: 48000, channels: 2)
        let n = 48000
        var buf = [Float](repeating: 0, count: n * 2)
        buf[0] = 1; buf[1] = 1
        buf.withUnsafeMutableBufferPointer { r.process($0.baseAddress!, frames: n, channels: 2) }
        var lr = 0.0, ll = 0.0, rr = 0.0
        for i in 0..<n { let l = Double(buf[2 * i]), rt = Double(buf[2 * i + 1]); lr += l * rt; ll += l * l; rr += rt * rt }
        let correlation = lr / (ll * rr).squareRoot()
        #expect(abs(correlation) < 0.5, "L/R correlation \(correlation)")
    }

    @Test func reverbStaysBoundedOverTenSecondsOfNoise() {
        for preset in [ReverbPreset.cathedral, .plate, .largeHall2, .smallRoom] {
            var r = Reverb(preset: preset, wetDryMix: 100, sampleRate: 48000, channels: 2)
            var peak: Float = 0
            var lastSecond = 0.0
            let block = 4800
            var buf = [Float](repeating: 0, count: block * 2)
            for b in 0..<100 {
                for i in buf.indices { buf[i] = Float.random(in: -0.5...0.5) }
                buf.withUnsafeMutableBufferPointer { r.process($0.baseAddress!, frames: block, channels: 2) }
                for v in buf { #expect(v.isFinite); peak = max(peak, abs(v)) }
                if b >= 90 { lastSecond += Double(rms(buf)) / 10 }
            }
            // Input RMS ≈ 0.29; the wet level is normalised to about the input's.
            #expect(peak < 4, "\(preset): peak \(peak)")
            #expect(lastSecond > 0.05 && lastSecond < 1, "\(preset): RMS of the last second \(lastSecond)")
        }
    }

    @Test func varispeedChangesSpeedAndPitchTogether() {
        let sr = 48000.0
        let tone = (0..<48000).map { 0.25 * Float(sin(2 * Double.pi * 440 * Double($0) / sr)) }
        for rate in [2.0, 0.5] {
            let v = Varispeed(channels: 1, rate: rate, maxFrames: 1024)
            var read = 0
            var out: [Float] = []
            var block = [Float](repeating: 0, count: 1000)
            while true {
                let got = block.withUnsafeMutableBufferPointer { o in
                    v.render(into: o.baseAddress!, frameCount: 1000) { dst, max in
                        let n = min(max, tone.count - read)
                        for i in 0..<n { dst[i] = tone[read + i] }
                        read += n
                        return n
                    }
                }
                out += block[0..<got]
                if got < 1000 { break }
            }
            let expected = Double(tone.count) / rate
            #expect(abs(Double(out.count) - expected) < 8, "rate \(rate): \(out.count) frames, expected \(expected)")
            let f = dominantFrequency(Array(out[100..<(out.count - 100)]), sampleRate: sr) ?? 0
            #expect(abs(f - 440 * rate) < 2, "rate \(rate): \(f) Hz")
        }
    }
}

private func rms<C: Collection>(_ s: C) -> Float where C.Element == Float {
    guard !s.isEmpty else { return 0 }
    var sum = 0.0
    for x in s { sum += Double(x) * Double(x) }
    return Float((sum / Double(s.count)).squareRoot())
}

/// Zero-crossing estimate refined by a Goertzel scan (the test-support helper is not a dependency here).
private func dominantFrequency(_ x: [Float], sampleRate: Double) -> Double? {
    var first: Double?, last = 0.0, count = 0
    for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
        let t = Double(i - 1) + Double(-x[i - 1]) / Double(x[i] - x[i - 1])
        if first == nil { first = t } else { count += 1 }
        last = t
    }
    guard let first, count > 0 else { return nil }
    return Double(count) * sampleRate / (last - first)
}
