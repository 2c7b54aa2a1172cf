// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// FFmpeg's `AVChannelLayout` → ``AudioChannelLayout``, held against FFmpeg itself, and the
/// layout a decoded file carries in its processing format.
@Suite(.offThePool) struct ChannelLayoutTests {
    /// FFmpeg's layout for `name` (`av_channel_layout_from_string`).
    static func ffmpegLayout(_ name: String) throws -> AVChannelLayout {
        var l = AVChannelLayout()
        try #require(av_channel_layout_from_string(&l, name) == 0, "FFmpeg does not know \(name)")
        return l
    }

    static func describe(_ layout: AVChannelLayout) -> String {
        var l = layout
        var buf = [CChar](repeating: 0, count: 128)
        _ = av_channel_layout_describe(&l, &buf, 128)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test(arguments: AudioChannelLayout.named.map(\.name))
    func eachNamedLayoutIsFFmpegs(name: String) throws {
        var l = try Self.ffmpegLayout(name)
        defer { av_channel_layout_uninit(&l) }
        let converted = try #require(AudioChannelLayout(ffmpeg: l))
        #expect(converted == AudioChannelLayout(named: name))
        #expect(converted.name == name)
        #expect(Self.describe(l) == name)
        // Native-order masks are the WAVE speaker bits for the first 18 positions.
        if l.order == AV_CHANNEL_ORDER_NATIVE, l.u.mask < (1 << 18) {
            #expect(converted.waveChannelMask.map(UInt64.init) == l.u.mask, "\(name)")
        }
    }

    @Test func defaultsAreFFmpegsDefaults() {
        for count in 1...8 {
            var l = AVChannelLayout()
            av_channel_layout_default(&l, Int32(count))
            #expect(AudioChannelLayout(ffmpeg: l) == AudioChannelLayout.defaultLayout(channelCount: count), "\(count) channels")
            av_channel_layout_uninit(&l)
        }
    }

    @Test func anUnspecifiedOrderIsNoLayout() {
        var l = AVChannelLayout()
        l.order = AV_CHANNEL_ORDER_UNSPEC
        l.nb_channels = 6
        #expect(AudioChannelLayout(ffmpeg: l) == nil)
    }

    /// Files written by ffmpeg with a layout (FLAC keeps its own; WAV writes the channel mask):
    /// the decoder's processing format carries that layout.
    @Test(arguments: [("mono", "flac"), ("stereo", "flac"), ("2.1", "wav"), ("quad", "flac"), ("5.0", "flac"),
                      ("5.1", "flac"), ("5.1(side)", "wav"), ("6.1", "flac"), ("7.1", "flac"), ("7.1(wide)", "wav"),
                      ("quad(side)", "wav")])
    func decodedFilesCarryTheirLayout(name: String, ext: String) throws {
        let dir = try TempDir("layout")
        defer { dir.remove() }
        let expected = try #require(AudioChannelLayout(named: name))
        let exprs = (0..<expected.channelCount).map { "0.1*sin(2*PI*\(300 + 100 * $0)*t)" }.joined(separator: "|")
        let path = dir.file("f.\(ext)")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(exprs):c=\(name):s=48000:d=0.2"]
                            + (ext == "wav" ? ["-c:a", "pcm_s16le"] : ["-c:a", "flac"]) + [path])
        let file = try AudioFile(forReading: URL(fileURLWithPath: path))
        #expect(file.processingFormat.channelLayout == expected,
                "\(name): \(file.processingFormat.channelLayout?.description ?? "none")")
        #expect(file.fileFormat.channelLayout == name)
    }
}
