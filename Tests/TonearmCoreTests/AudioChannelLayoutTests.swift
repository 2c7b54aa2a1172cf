// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore

@Suite struct AudioChannelLayoutTests {
    @Test func namedLayoutsAreFoundByNameAndNameThemselves() throws {
        #expect(Set(AudioChannelLayout.named.map(\.name)).count == AudioChannelLayout.named.count)
        for (name, layout) in AudioChannelLayout.named {
            #expect(AudioChannelLayout(named: name) == layout)
            #expect(layout.name == name)
            #expect(layout.description == name)
            #expect(Set(layout.positions).count == layout.channelCount, "\(name) repeats a position")
        }
        #expect(AudioChannelLayout(named: "5.1")?.channelCount == 6)
        #expect(AudioChannelLayout(named: "9.9") == nil)
        let odd = AudioChannelLayout([.frontLeft, .lowFrequency2])
        #expect(odd.name == nil && odd.description == "FL+LFE2")
    }

    @Test func sideAndBackAreDifferentLayouts() {
        #expect(AudioChannelLayout.fivePointOneBack != AudioChannelLayout.fivePointOneSide)
        #expect(AudioChannelLayout.fivePointOneBack.name == "5.1")
        #expect(AudioChannelLayout.fivePointOneSide.name == "5.1(side)")
        #expect(AudioChannelLayout.sevenPointOne.positions.contains(.sideLeft)
                && AudioChannelLayout.sevenPointOne.positions.contains(.backLeft))
    }

    @Test func theFormatCarriesItsLayoutAndDropsAMismatchedOne() throws {
        let f = AudioFormat(sampleRate: 48_000, channelCount: 6, channelLayout: .fivePointOneSide)
        #expect(f.channelLayout == .fivePointOneSide)
        #expect(f.effectiveChannelLayout == .fivePointOneSide)
        let i = f.interleavedFloat
        #expect(i.isInterleaved && i.channelLayout == .fivePointOneSide && i.channelCount == 6)
        #expect(f != AudioFormat(sampleRate: 48_000, channelCount: 6, channelLayout: .fivePointOneBack))
        #expect(f.description.contains("5.1(side)"))
        // A layout of another channel count is not kept.
        #expect(AudioFormat(sampleRate: 48_000, channelCount: 2, channelLayout: .fivePointOneBack).channelLayout == nil)
        var g = f
        g.channelCount = 2
        g.channelLayout = .fivePointOneBack
        #expect(g.channelLayout == nil)
        // Unknown: FFmpeg's default for the count.
        let plain = AudioFormat.standard(sampleRate: 48_000, channels: 6)
        #expect(plain.channelLayout == nil && plain.effectiveChannelLayout == .fivePointOneBack)
        #expect(AudioFormat.standard(sampleRate: 48_000, channels: 12).effectiveChannelLayout == nil)
        // Encoded and decoded; a format encoded before layouts existed decodes without one.
        let data = try JSONEncoder().encode(f)
        #expect(try JSONDecoder().decode(AudioFormat.self, from: data) == f)
        let old = #"{"sampleRate":44100,"channelCount":2,"commonFormat":"pcmFormatFloat32","isInterleaved":false}"#
        #expect(try JSONDecoder().decode(AudioFormat.self, from: Data(old.utf8)).channelLayout == nil)
    }

    @Test func waveChannelMasksFollowTheSpeakerBits() {
        // SPEAKER_FRONT_LEFT 0x1, FRONT_RIGHT 0x2, FRONT_CENTER 0x4, LOW_FREQUENCY 0x8,
        // BACK_LEFT 0x10, BACK_RIGHT 0x20, SIDE_LEFT 0x200, SIDE_RIGHT 0x400 (Microsoft's ksmedia.h).
        #expect(AudioChannelLayout.fivePointOneBack.waveChannelMask == 0x3F)
        #expect(AudioChannelLayout.fivePointOneSide.waveChannelMask == 0x60F)
        #expect(AudioChannelLayout.sevenPointOne.waveChannelMask == 0x63F)
        #expect(AudioChannelLayout.mono.waveChannelMask == 0x4)
        // Out of the mask's order, or a position without a bit: WAV cannot say it.
        #expect(AudioChannelLayout([.frontRight, .frontLeft]).waveChannelMask == nil)
        #expect(AudioChannelLayout([.frontLeft, .frontRight, .wideLeft]).waveChannelMask == nil)
    }
}
