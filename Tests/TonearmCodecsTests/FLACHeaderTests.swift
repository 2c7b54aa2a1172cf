// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

private typealias F = TagFixtures

/// FLAC files read without FFmpeg (`FLACHeader`) give what FFmpeg gives, field for field, and
/// files the native reader leaves to FFmpeg are still read (by FFmpeg).
@Suite(.offThePool) struct FLACHeaderTests {
    /// A FLAC file's metadata blocks and its frames.
    struct Blocks {
        var blocks: [(type: UInt8, body: [UInt8])]
        var frames: [UInt8]

        init(path: String) throws {
            let b = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(b.starts(with: Array("fLaC".utf8)))
            var p = 4
            var out: [(UInt8, [UInt8])] = []
            while true {
                let last = b[p] & 0x80 != 0, type = b[p] & 0x7F
                let n = Int(b[p + 1]) << 16 | Int(b[p + 2]) << 8 | Int(b[p + 3])
                out.append((type, Array(b[(p + 4)..<(p + 4 + n)])))
                p += 4 + n
                if last { break }
            }
            blocks = out
            frames = Array(b[p...])
        }

        /// STREAMINFO, then `extra` (type, body) blocks, then the frames.
        func file(with extra: [(UInt8, [UInt8])], prefix: [UInt8] = [], suffix: [UInt8] = []) -> [UInt8] {
            let all = [blocks[0]] + extra
            var out = prefix + Array("fLaC".utf8)
            for (i, (type, body)) in all.enumerated() {
                out += [type | (i == all.count - 1 ? 0x80 : 0), UInt8(body.count >> 16 & 0xFF), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)]
                out += body
            }
            return out + frames + suffix
        }
    }

    /// A VORBIS_COMMENT body of raw entries.
    static func comment(_ entries: [[UInt8]], vendor: String = "tonearm test") -> [UInt8] {
        var out = F.le32(vendor.utf8.count) + Array(vendor.utf8) + F.le32(entries.count)
        for e in entries { out += F.le32(e.count) + e }
        return out
    }

    static func entry(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A PICTURE body.
    static func picture(type: Int, mime: String, description: String = "", data: [UInt8]) -> [UInt8] {
        F.be32(type) + F.be32(mime.utf8.count) + Array(mime.utf8) + F.be32(description.utf8.count) + Array(description.utf8)
            + F.be32(16) + F.be32(16) + F.be32(24) + F.be32(0) + F.be32(data.count) + data
    }

    /// Expects the probe (native where it can) to equal FFmpeg's reading of `path`, or both to
    /// fail alike; returns whether the native reader took the file.
    @discardableResult
    func expectSameAsFFmpeg(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        var native: Result<MediaProbe, TonearmError>
        do { native = .success(try MediaProbe(path: path)) } catch { native = .failure(error) }
        var ffmpeg: Result<MediaProbe, TonearmError>
        do { ffmpeg = .success(try MediaProbe(ffmpegOnlyPath: path)) } catch { ffmpeg = .failure(error) }
        switch (native, ffmpeg) {
        case (.success(let n), .success(let f)):
            #expect(n.fileFormat == f.fileFormat, "native \(n.fileFormat), FFmpeg \(f.fileFormat)", sourceLocation: sourceLocation)
            #expect(n.duration == f.duration, sourceLocation: sourceLocation)
            #expect(n.headerOnly == f.headerOnly, sourceLocation: sourceLocation)
            #expect(n.metadata.rawTags == f.metadata.rawTags,
                    "native \(n.metadata.rawTags.sorted { $0.key < $1.key }), FFmpeg \(f.metadata.rawTags.sorted { $0.key < $1.key })",
                    sourceLocation: sourceLocation)
            #expect(n.metadata.artwork == f.metadata.artwork, "artwork differs", sourceLocation: sourceLocation)
            var a = n.metadata, b = f.metadata
            a.rawTags = [:]; b.rawTags = [:]; a.artwork = nil; b.artwork = nil
            #expect(a == b, sourceLocation: sourceLocation)
        case (.failure(let n), .failure(let f)):
            #expect(n == f, sourceLocation: sourceLocation)
        default:
            Issue.record("native \(native), FFmpeg \(ffmpeg)", sourceLocation: sourceLocation)
        }
        guard let reader = TagFileReader(path: path) else { return false }
        return FLACHeader(reader) != nil
    }

    @Test(arguments: [(8000, 1, "s16"), (44100, 2, "s16"), (96000, 2, "s32"), (192000, 1, "s32"), (22050, 2, "s16")])
    func streamParametersAndTagsAsFFmpegGivesThem(_ c: (rate: Int, channels: Int, format: String)) throws {
        let dir = try TempDir("flac-native")
        defer { dir.remove() }
        let path = dir.file("a.flac")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.7:sample_rate=\(c.rate)", "-ac", "\(c.channels)",
                      "-c:a", "flac", "-sample_fmt", c.format, "-bits_per_raw_sample", c.format == "s32" ? "24" : "16",
                      "-metadata", "title=Le Temps des Cerises", "-metadata", "artist=Beyoncé", "-metadata", "album_artist=Various",
                      "-metadata", "track=3/12", "-metadata", "disc=1/2", "-metadata", "REPLAYGAIN_TRACK_GAIN=-6.50 dB", path])
        #expect(try expectSameAsFFmpeg(path), "the native reader passed a plain FLAC over")
        let probe = try MediaProbe(path: path)
        #expect(probe.fileFormat.sampleRate == c.rate && probe.fileFormat.channelCount == c.channels)
        #expect(probe.fileFormat.bitsPerSample == (c.format == "s32" ? 24 : 16))
        #expect(probe.metadata.trackNumber == 3 && probe.metadata.trackCount == 12 && probe.metadata.albumArtist == "Various")
    }

    /// A comment's key lower-cased from its bytes is the key decoded, then lower-cased: ASCII
    /// (the letters' neighbours "@", "[", "`", "{" left as they are) and not.
    @Test func keysAreLowerCasedAsDecodedStrings() {
        let keys: [[UInt8]] = [
            Array("ALBUMARTIST".utf8), Array("album_artist".utf8), Array("@AZ[`az{".utf8), [], [0, 0x41],
            Array("REPLAYGAIN_TRACK_GAIN".utf8), Array("ÄÖ".utf8), [0x41, 0xC4], Array("ΣΊΣΥΦΟΣ".utf8),
        ]
        for key in keys {
            #expect(FLACHeader.lowercasedKey(key) == TagText.decode(key).lowercased(), "\(key)")
        }
        #expect(FLACHeader.lowercasedKey(Array("@AZ[`az{".utf8)) == "@az[`az{")
    }

    @Test func commentsAsFFmpegsDictionaryHoldsThem() throws {
        let dir = try TempDir("flac-comments")
        defer { dir.remove() }
        let base = dir.file("base.flac")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", "-c:a", "flac", base])
        let blocks = try Blocks(path: base)
        let latin1: [UInt8] = Array("ALBUM=Caf".utf8) + [0xE9, 0x20] + Array("cr".utf8) + [0xE8, 0x6D, 0x65]
        let gbk = Array("ARTIST=".utf8) + (try F.encode("周杰伦", "GBK"))
        let entries: [[UInt8]] = [
            Self.entry("Title=Mixed Case Key"), Self.entry("artist=First"), gbk, Self.entry("ARTIST=Third"),
            Self.entry("ALBUMARTIST=From Albumartist"), Self.entry("album_artist=From Album_Artist"),
            Self.entry("TRACKNUMBER=3/12"), Self.entry("DISCNUMBER=2"), Self.entry("DISCTOTAL=3"), Self.entry("TOTALTRACKS=12"),
            Self.entry("COMPILATION=1"), Self.entry("REPLAYGAIN_ALBUM_GAIN=-7.25 dB"), Self.entry("REPLAYGAIN_TRACK_PEAK=0.98"),
            Self.entry("LYRICS=line one\nline two"), latin1, Self.entry("GENRE="), Self.entry("no equals sign"),
            Self.entry("=no key"), Array("COMMENT=before".utf8) + [0] + Array("after".utf8), Self.entry("DESCRIPTION=described"),
            Self.entry("DATE=1999-05-01"), Self.entry("ÄÖ=non-ASCII key"), Self.entry("BPM=128"),
        ]
        let path = dir.file("comments.flac")
        try Data(blocks.file(with: [(4, Self.comment(entries))])).write(to: URL(fileURLWithPath: path))
        #expect(try expectSameAsFFmpeg(path))
        let m = try MediaProbe(path: path).metadata
        #expect(m.title == "Mixed Case Key")
        #expect(m.artist == "First;周杰伦;Third")
        #expect(m.album == "Café crème")
        #expect(m.isCompilation == true && m.discNumber == 2 && m.discCount == 3)

        // A comment block that ends early: FFmpeg keeps what it read.
        var short = Self.comment(entries)
        short.removeLast(5)
        try Data(blocks.file(with: [(4, short)])).write(to: URL(fileURLWithPath: path))
        try expectSameAsFFmpeg(path)
        // Two comment blocks, a padding block and an application block.
        try Data(blocks.file(with: [(4, Self.comment([Self.entry("TITLE=one")])), (1, [UInt8](repeating: 0, count: 100)),
                                    (2, Array("test".utf8) + [1, 2, 3]), (4, Self.comment([Self.entry("TITLE=two"), Self.entry("ARTIST=x")]))]))
            .write(to: URL(fileURLWithPath: path))
        #expect(try expectSameAsFFmpeg(path))
    }

    @Test func picturesAsFFmpegTakesThem() throws {
        let dir = try TempDir("flac-pictures")
        defer { dir.remove() }
        let base = dir.file("base.flac")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", "-c:a", "flac", base])
        let blocks = try Blocks(path: base)
        let png = try F.coverPNG(dir.file("cover.png"))
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 60)
        let tags = (4 as UInt8, Self.comment([Self.entry("TITLE=pictured")]))
        let path = dir.file("p.flac")
        func write(_ pictures: [[UInt8]], prefix: [UInt8] = [], suffix: [UInt8] = []) throws {
            try Data(blocks.file(with: [tags] + pictures.map { (6, $0) }, prefix: prefix, suffix: suffix))
                .write(to: URL(fileURLWithPath: path))
        }
        // The front cover among others, with a description; PNG bytes under a JPEG type.
        try write([Self.picture(type: 4, mime: "image/jpeg", data: jpeg),
                   Self.picture(type: 3, mime: "image/jpeg", description: "the front", data: png)])
        #expect(try expectSameAsFFmpeg(path))
        #expect(try MediaProbe(path: path).metadata.artwork == Artwork(data: png, mimeType: "image/png"))
        // No front cover: the first; a type out of range; an unknown MIME type passed over.
        try write([Self.picture(type: 0, mime: "image/x-unknown", data: png), Self.picture(type: 99, mime: "JPG", data: jpeg),
                   Self.picture(type: 5, mime: "image/png", data: png)])
        #expect(try expectSameAsFFmpeg(path))
        #expect(try MediaProbe(path: path).metadata.artwork == Artwork(data: jpeg, mimeType: "image/jpeg"))
        // WebP: not a picture type of FFmpeg 5.1's (Debian 12's).
        let webp = Array("RIFF".utf8) + F.le32(20) + Array("WEBPVP8 ".utf8) + [UInt8](repeating: 1, count: 12)
        try write([Self.picture(type: 3, mime: "image/webp", data: webp)])
        #expect(try expectSameAsFFmpeg(path))
        #expect(try MediaProbe(path: path).metadata.artwork == nil)
        // Damaged: too short, a data length past the block (FFmpeg decides), an empty MIME type.
        try write([[0, 0, 0, 3, 0, 0], Array(Self.picture(type: 3, mime: "image/png", data: png).dropLast(4)),
                   Self.picture(type: 3, mime: "", data: png)])
        try expectSameAsFFmpeg(path)
        // With an APEv2 and an ID3v1 tag after the frames.
        let ape = F.apev2([("Title", Array("APE title".utf8), false), ("Composer", Array("APE composer".utf8), false)])
        let v1 = F.id3v1(title: Array("v1 title".utf8), artist: Array("v1 artist".utf8))
        try write([Self.picture(type: 3, mime: "image/png", data: png)], suffix: ape + v1)
        #expect(try expectSameAsFFmpeg(path))
        #expect(try MediaProbe(path: path).metadata.composer == "APE composer")
    }

    @Test func filesLeftToFFmpegAreReadByIt() throws {
        let dir = try TempDir("flac-fallback")
        defer { dir.remove() }
        let six = dir.file("six.flac")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", "-ac", "6", "-c:a", "flac", six])
        #expect(try !expectSameAsFFmpeg(six), "six channels")
        #expect(try MediaProbe(path: six).fileFormat.channelCount == 6)

        let base = dir.file("base.flac")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", "-c:a", "flac", base])
        let blocks = try Blocks(path: base)
        let path = dir.file("f.flac")
        let cases: [(String, [UInt8])] = [
            ("an ID3v2 tag first", blocks.file(with: [(4, Self.comment([Self.entry("TITLE=x")]))],
                                               prefix: F.id3v2Tag(frames: [F.id3v2TextFrame("TIT2", encoding: 0, Array("id3".utf8))]))),
            ("a channel mask", blocks.file(with: [(4, Self.comment([Self.entry("WAVEFORMATEXTENSIBLE_CHANNEL_MASK=0x3")]))])),
            ("chapters", blocks.file(with: [(4, Self.comment([Self.entry("CHAPTER001=00:00:00.000"), Self.entry("CHAPTER001NAME=Intro")]))])),
            ("a picture in the comments", blocks.file(with: [(4, Self.comment([Array("METADATA_BLOCK_PICTURE=".utf8)
                + Array(Data(F.flacPicture([0xFF, 0xD8, 0xFF, 0], mime: "image/jpeg")).base64EncodedString().utf8)]))])),
        ]
        for (name, bytes) in cases {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try !expectSameAsFFmpeg(path), "\(name)")
        }
        // An unknown length (STREAMINFO's total 0).
        var unknown = blocks
        for i in 13...17 { unknown.blocks[0].body[i] = i == 13 ? unknown.blocks[0].body[i] & 0xF0 : 0 }
        try Data(unknown.file(with: [])).write(to: URL(fileURLWithPath: path))
        #expect(try !expectSameAsFFmpeg(path), "unknown length")
        // Cut inside the metadata: the native reader gives up; both ways fail or read alike.
        let whole = blocks.file(with: [(4, Self.comment([Self.entry("TITLE=" + String(repeating: "x", count: 500))]))])
        try Data(whole.prefix(200)).write(to: URL(fileURLWithPath: path))
        #expect(try !expectSameAsFFmpeg(path), "truncated")
    }
}
