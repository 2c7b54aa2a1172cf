// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmEngine

/// A player node whose engine has another channel layout than what it plays (a queue's engine
/// keeps its first item's layout): channels go onto the engine's by position — the same rate
/// or resampled — rendered offline, exactly.
@Suite struct ChannelMixTests {
    /// Renders `buffer` through a player node in an offline engine of `engineFormat`; returns
    /// the channels of `frames` frames.
    func play(_ buffer: AudioPCMBuffer, engine engineFormat: AudioFormat, frames: Int) throws -> [[Float]] {
        let e = AudioEngine()
        try e.enableManualRenderingMode(.offline, format: engineFormat, maximumFrameCount: 4096)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        p.scheduleBuffer(buffer)
        p.play()
        let ch = engineFormat.channelCount
        let out = AudioPCMBuffer(format: .standard(sampleRate: engineFormat.sampleRate, channels: ch), frameCapacity: 1000)!
        var heard = [[Float]](repeating: [], count: ch)
        var done = 0
        while done < frames {
            let n = min(1000, frames - done)
            #expect(try e.renderOffline(n, to: out) == .success)
            for c in 0..<ch { heard[c] += out.channel(c) }
            done += n
        }
        e.stop()
        return heard
    }

    /// A buffer of `frames` frames whose channel `c` holds `values[c]` throughout.
    func constant(_ values: [Float], rate: Double, layout: AudioChannelLayout?, frames: Int) -> AudioPCMBuffer {
        let f = AudioFormat(sampleRate: rate, channelCount: values.count, channelLayout: layout)
        let b = AudioPCMBuffer(format: f, frameCapacity: frames)!
        b.frameLength = frames
        for (c, v) in values.enumerated() { b.floatChannelData[c].update(repeating: v, count: frames) }
        return b
    }

    static let quad = AudioFormat(sampleRate: 48000, channelCount: 4, channelLayout: .quad)
    static let fourPointZero = AudioChannelLayout(named: "4.0")!
    static let half = Float(0.5).squareRoot()

    /// 4.0 (FL FR FC BC) into a quad engine (FL FR BL BR): the centre to the front pair and the
    /// rear centre to the rear pair, −3 dB each.
    @Test func centresGoBetweenTheirPairs() throws {
        let heard = try play(constant([0.1, 0.2, 0.4, 0.8], rate: 48000, layout: Self.fourPointZero, frames: 4000),
                             engine: Self.quad, frames: 4000)
        let expected: [Float] = [0.1 + 0.4 * Self.half, 0.2 + 0.4 * Self.half, 0.8 * Self.half, 0.8 * Self.half]
        for c in 0..<4 {
            #expect(heard[c].allSatisfy { abs($0 - expected[c]) < 1e-6 }, "channel \(c): \(heard[c][100]), not \(expected[c])")
        }
    }

    /// The same at another rate: mixed, then resampled (a constant stays that constant).
    @Test func mixedThenResampled() throws {
        let heard = try play(constant([0.1, 0.2, 0.4, 0.8], rate: 44100, layout: Self.fourPointZero, frames: 8820),
                             engine: Self.quad, frames: 9600)
        let expected: [Float] = [0.1 + 0.4 * Self.half, 0.2 + 0.4 * Self.half, 0.8 * Self.half, 0.8 * Self.half]
        for c in 0..<4 {
            let middle = heard[c][2000..<7000]
            #expect(middle.allSatisfy { abs($0 - expected[c]) < 1e-3 }, "channel \(c): \(middle.first!), not \(expected[c])")
        }
    }

    /// 5.1(side) into a 7.1 engine: each channel on its own speaker, the rears silent.
    @Test func fewerChannelsGoToTheirOwnSpeakers() throws {
        let engine = AudioFormat(sampleRate: 48000, channelCount: 8, channelLayout: .sevenPointOne)
        let heard = try play(constant([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], rate: 48000, layout: .fivePointOneSide, frames: 2000),
                             engine: engine, frames: 2000)
        // 7.1: FL FR FC LFE BL BR SL SR.
        let expected: [Float] = [0.1, 0.2, 0.3, 0.4, 0, 0, 0.5, 0.6]
        for c in 0..<8 { #expect(heard[c].allSatisfy { $0 == expected[c] }, "channel \(c): \(heard[c][100])") }
    }

    /// Unchanged: the same layout is copied, a mono source goes to every channel at full level.
    @Test func sameLayoutAndMonoAsBefore() throws {
        let same = try play(constant([0.1, 0.2, 0.3, 0.4], rate: 48000, layout: .quad, frames: 2000),
                            engine: Self.quad, frames: 2000)
        for c in 0..<4 { #expect(same[c].allSatisfy { $0 == Float(c + 1) / 10 }) }
        let mono = try play(constant([0.25], rate: 48000, layout: .mono, frames: 2000), engine: Self.quad, frames: 2000)
        for c in 0..<4 { #expect(mono[c].allSatisfy { $0 == 0.25 }) }
    }

    /// The matrix itself: side and rear pairs stand in for each other, an LFE without a place is
    /// left out, the centre goes to the front pair.
    @Test func matrix() {
        let mix = ChannelMix(from: .fivePointOneSide, to: .quad)
        let terms = mix.terms.map { "\($0.input)>\($0.output)@\($0.gain)" }
        #expect(terms == ["0>0@1.0", "1>1@1.0", "2>0@\(Self.half)", "2>1@\(Self.half)", "4>2@1.0", "5>3@1.0"])
        #expect(ChannelMix(from: AudioFormat(sampleRate: 48000, channelCount: 2, channelLayout: .stereo),
                           to: AudioFormat(sampleRate: 48000, channelCount: 2)) == nil)
    }
}
