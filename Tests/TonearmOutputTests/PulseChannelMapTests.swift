// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Foundation
import Testing
import TonearmCore
@testable import TonearmOutput

/// ``PulseChannelMap``: the stream's channel map is the format's layout in PulseAudio's names.
@Suite struct PulseChannelMapTests {
    /// PulseAudio's own text for `map` (`pa_channel_map_snprint`).
    static func text(_ map: pa_channel_map) -> String {
        var m = map
        var buf = [CChar](repeating: 0, count: Int(PA_CHANNEL_MAP_SNPRINT_MAX))
        pa_channel_map_snprint(&buf, buf.count, &m)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// PulseAudio's channel map for its own text.
    static func parsed(_ text: String) throws -> pa_channel_map {
        var m = pa_channel_map()
        try #require(pa_channel_map_parse(&m, text) != nil, "PulseAudio cannot parse \(text)")
        return m
    }

    static func map(_ layout: AudioChannelLayout) throws -> pa_channel_map {
        try #require(PulseChannelMap.make(for: AudioFormat(sampleRate: 48_000, channelCount: layout.channelCount,
                                                           isInterleaved: true, channelLayout: layout)))
    }

    /// Each named layout, and the map it must give (PulseAudio's channel names, in sample order).
    static let expected: [(String, String)] = [
        ("mono", "mono"),
        ("stereo", "front-left,front-right"),
        ("2.1", "front-left,front-right,lfe"),
        ("3.0", "front-left,front-right,front-center"),
        ("3.0(back)", "front-left,front-right,rear-center"),
        ("4.0", "front-left,front-right,front-center,rear-center"),
        ("quad", "front-left,front-right,rear-left,rear-right"),
        ("quad(side)", "front-left,front-right,side-left,side-right"),
        ("3.1", "front-left,front-right,front-center,lfe"),
        ("5.0", "front-left,front-right,front-center,rear-left,rear-right"),
        ("5.0(side)", "front-left,front-right,front-center,side-left,side-right"),
        ("4.1", "front-left,front-right,front-center,lfe,rear-center"),
        ("5.1", "front-left,front-right,front-center,lfe,rear-left,rear-right"),
        ("5.1(side)", "front-left,front-right,front-center,lfe,side-left,side-right"),
        ("6.0", "front-left,front-right,front-center,rear-center,side-left,side-right"),
        ("6.0(front)", "front-left,front-right,front-left-of-center,front-right-of-center,side-left,side-right"),
        ("hexagonal", "front-left,front-right,front-center,rear-left,rear-right,rear-center"),
        ("6.1", "front-left,front-right,front-center,lfe,rear-center,side-left,side-right"),
        ("6.1(back)", "front-left,front-right,front-center,lfe,rear-left,rear-right,rear-center"),
        ("6.1(front)", "front-left,front-right,lfe,front-left-of-center,front-right-of-center,side-left,side-right"),
        ("7.0", "front-left,front-right,front-center,rear-left,rear-right,side-left,side-right"),
        ("7.0(front)", "front-left,front-right,front-center,front-left-of-center,front-right-of-center,side-left,side-right"),
        ("7.1", "front-left,front-right,front-center,lfe,rear-left,rear-right,side-left,side-right"),
        ("7.1(wide)", "front-left,front-right,front-center,lfe,rear-left,rear-right,front-left-of-center,front-right-of-center"),
        ("7.1(wide-side)", "front-left,front-right,front-center,lfe,front-left-of-center,front-right-of-center,side-left,side-right"),
        ("octagonal", "front-left,front-right,front-center,rear-left,rear-right,rear-center,side-left,side-right"),
        ("downmix", "front-left,front-right"),
    ]

    @Test func everyNamedLayoutIsCovered() {
        #expect(Self.expected.map(\.0) == AudioChannelLayout.named.map(\.name))
    }

    @Test(arguments: expected)
    func namedLayoutMapsToPulseAudiosPositions(name: String, pulse: String) throws {
        let layout = try #require(AudioChannelLayout(named: name))
        var m = try Self.map(layout)
        #expect(Self.text(m) == pulse)
        #expect(pa_channel_map_valid(&m) != 0)
        var p = try Self.parsed(pulse)
        #expect(pa_channel_map_equal(&m, &p) != 0)
    }

    @Test func pulseAudioNamesTheCommonLayoutsAsItsOwn() throws {
        for (layout, pulseName) in [(AudioChannelLayout.mono, "mono"), (.stereo, "stereo"),
                                    (.quad, "surround-40"), (.fivePointZeroBack, "surround-50"),
                                    (.fivePointOneBack, "surround-51"), (.sevenPointOne, "surround-71")] {
            var m = try Self.map(layout)
            let name = pa_channel_map_to_name(&m).map { String(cString: $0) }
            #expect(name == pulseName, "\(layout)")
        }
    }

    @Test func fivePointOneIsNotPulseAudiosDefaultForSixChannels() throws {
        var ours = try Self.map(.fivePointOneBack)
        var pulseDefault = pa_channel_map()
        try #require(pa_channel_map_init_extend(&pulseDefault, 6, PA_CHANNEL_MAP_DEFAULT) != nil)
        #expect(pa_channel_map_equal(&ours, &pulseDefault) == 0)
    }

    @Test func withoutALayoutFFmpegsDefaultForTheCount() throws {
        for count in 1...8 {
            let f = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: count)
            let m = try #require(PulseChannelMap.make(for: f))
            let expected = try Self.map(try #require(AudioChannelLayout.defaultLayout(channelCount: count)))
            #expect(Self.text(m) == Self.text(expected), "\(count) channels")
        }
        // Past eight: the WAVE order.
        let twelve = try #require(PulseChannelMap.make(for: .interleavedFloat(sampleRate: 48_000, channels: 12)))
        #expect(Self.text(twelve).hasPrefix("front-left,front-right,front-center,lfe,rear-left,rear-right,"))
    }

    @Test func positionsPulseAudioHasNoNameForAreAuxChannels() throws {
        let m = try Self.map(AudioChannelLayout([.frontLeft, .frontRight, .wideLeft, .wideRight, .lowFrequency2, .unknown]))
        #expect(Self.text(m) == "front-left,front-right,aux0,aux1,aux2,aux3")
        // A position given twice keeps its name once.
        let twice = try Self.map(AudioChannelLayout([.frontLeft, .stereoLeft]))
        #expect(Self.text(twice) == "front-left,aux0")
    }
}
