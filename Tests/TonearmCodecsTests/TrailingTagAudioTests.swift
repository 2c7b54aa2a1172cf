// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmTestSupport

private typealias F = TagFixtures

/// An MP3 followed by an APEv2 tag holding binary cover art (and an ID3v1 tag after it), as
/// foobar2000 and mp3tag write them. FFmpeg's MP3 demuxer reads on into the tag: the cover's
/// bytes hold MPEG sync words, its parser makes "frames" of them, and the decoder reported each
/// as corrupt audio and played what it made of the others; the tag's size also made FFmpeg
/// doubt the Xing frame. The audio must end where the tag begins: the same samples, the same
/// length, no warning, and the tags still read.
@Suite(.offThePool) struct TrailingTagAudioTests {
    /// A cover of `count` bytes: a PNG signature, then noise dense with MPEG frame headers
    /// (0xFF 0xFB …), deterministic.
    static func coverBytes(_ count: Int) -> [UInt8] {
        var x: UInt32 = 0x1234_5678
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        while bytes.count < count {
            x = x &* 1_103_515_245 &+ 12345
            let r = UInt8(truncatingIfNeeded: x >> 16)
            // Every 64th byte starts a plausible layer III header (44.1 kHz, 128 kb/s).
            if bytes.count % 64 == 0 { bytes += [0xFF, 0xFB, 0x90, 0x64] } else { bytes.append(r) }
        }
        return Array(bytes.prefix(count))
    }

    /// `plain` with an APEv2 tag (title, and a front cover of 6 KB) and an ID3v1 tag appended, at `tagged`.
    static func appendTags(_ plain: String, to tagged: String, id3v1: Bool = true) throws {
        try FileManager.default.copyItem(atPath: plain, toPath: tagged)
        let tag = F.apev2([
            ("Title", Array("Cover Song".utf8), false),
            ("Cover Art (Front)", Array("cover.png".utf8) + [0] + coverBytes(6000), true),
        ])
        try F.wrap(tagged, suffix: tag + (id3v1 ? F.id3v1(title: Array("v1".utf8), artist: Array("V1 Artist".utf8)) : []))
    }

    static func readAll(_ f: AudioFile) throws -> [Float] {
        var out: [Float] = []
        let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: 4096)!
        while true {
            try f.read(into: buf)
            if buf.frameLength == 0 { break }
            for i in 0..<Int(buf.frameLength) {
                for c in 0..<f.processingFormat.channelCount { out.append(buf.floatChannelData[c][i]) }
            }
        }
        return out
    }

    /// A LAME-tagged MP3 (gapless: the exact length from its Xing/LAME frame) and one without a
    /// Xing frame: tagged, each decodes to exactly the untagged file's samples, with no warning,
    /// from a path and from memory; a seek lands on the same samples; the tags are read.
    @Test(arguments: [false, true]) func apeTagWithCoverArtDoesNotReachTheDecoder(noXing: Bool) throws {
        let dir = try TempDir("ape-audio")
        defer { dir.remove() }
        let plain = dir.file("plain.mp3"), tagged = dir.file("tagged.mp3")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1.5:sample_rate=44100", "-ac", "2",
                      "-c:a", "libmp3lame", "-b:a", "128k"] + (noXing ? ["-write_xing", "0"] : []) + [plain])
        try Self.appendTags(plain, to: tagged)

        let reference = try AudioFile(path: plain)
        let expected = try Self.readAll(reference)
        let channels = reference.processingFormat.channelCount
        if !noXing { #expect(reference.length == 66150) }  // the LAME tag's exact length: 1.5 s

        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: tagged)))
        for f in [try AudioFile(path: tagged), try AudioFile(data: bytes, nameHint: "tagged.mp3")] {
            #expect(f.warnings.isEmpty, "\(f.warnings)")
            #expect(f.length == reference.length)
            let samples = try Self.readAll(f)
            #expect(samples.count == expected.count)
            #expect(samples == expected)
            #expect(f.takeWarnings().isEmpty)

            // A seek near the end, then to the middle: the same samples as the straight read.
            for target in [f.length - 3000, f.length / 2] {
                try f.seek(toFrame: target)
                let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: 2000)!
                try f.read(into: buf)
                #expect(buf.frameLength == 2000)
                let start = Int(target) * channels
                var same = true
                for i in 0..<Int(buf.frameLength) {
                    for c in 0..<channels where buf.floatChannelData[c][i] != expected[start + i * channels + c] { same = false }
                }
                #expect(same, "seek to \(target)")
            }
            #expect(f.takeWarnings().isEmpty)

            #expect(f.metadata.title == "Cover Song")      // APE, over ID3v1
            #expect(f.metadata.artist == "V1 Artist")      // ID3v1 behind the APE tag
            #expect(f.metadata.artwork?.data == Self.coverBytes(6000))
        }
    }

    /// Without an ID3v1 tag after it, the APE tag is cut off too.
    @Test func apeTagAtTheVeryEnd() throws {
        let dir = try TempDir("ape-audio")
        defer { dir.remove() }
        let plain = dir.file("plain.mp3"), tagged = dir.file("tagged.mp3")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1:sample_rate=44100",
                      "-c:a", "libmp3lame", "-b:a", "96k", plain])
        try Self.appendTags(plain, to: tagged, id3v1: false)
        let reference = try AudioFile(path: plain)
        let f = try AudioFile(path: tagged)
        #expect(f.length == 44100)
        #expect(try Self.readAll(f) == (try Self.readAll(reference)))
        #expect(f.takeWarnings().isEmpty)
        #expect(f.metadata.title == "Cover Song")
    }
}
