// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import Testing
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

private typealias F = TagFixtures

/// Charset repair on its own: CJK mojibake is repaired, real Latin-1 is left alone.
@Suite(.offThePool) struct MetadataTagTextTests {
    @Test(arguments: ["青花瓷", "周杰伦", "我很忙", "稻香", "爱在西元前", "月亮代表我的心", "邓丽君", "王菲",
                      "陈奕迅 - 十年", "「红豆」", "Jay周杰伦", "第1集：开始"])
    func gbkBytesAndLatin1Mojibake(_ text: String) throws {
        let gbk = try F.encode(text, "GBK")
        #expect(TagText.decode(gbk) == text)
        // What FFmpeg makes of a GBK string in an ISO-8859-1 ID3v2 frame.
        let mojibake = String(String.UnicodeScalarView(gbk.map { Unicode.Scalar($0) }))
        #expect(TagText.repair(mojibake) == text)
    }

    @Test(arguments: ["周杰倫", "青花瓷", "我很忙", "稻香", "月亮代表我的心", "鄧麗君", "張學友", "陳奕迅 - 十年",
                      "王菲《紅豆》"])
    func big5Bytes(_ text: String) throws {
        let big5 = try F.encode(text, "BIG5")
        #expect(TagText.decode(big5) == text)
        let mojibake = String(String.UnicodeScalarView(big5.map { Unicode.Scalar($0) }))
        #expect(TagText.repair(mojibake) == text)
    }

    @Test(arguments: ["Beyoncé", "Motörhead", "Sigur Rós", "Björk", "Mötley Crüe", "Ágætis byrjun",
                      "Françoise Hardy", "Café del Mar", "Hüsker Dü", "Þórður", "© 2004 Sony",
                      "Señor Coconut", "Blue Öyster Cult", "Mañana", "Ólafur Arnalds", "Röyksopp",
                      "Die Ärzte", "Mädchen", "Ärzte", "Åke", "Zürich", "Øresund", "Trentemøller", "Émilie Simon", "¿Qué?", "Æon", "Jóhann Jóhannsson",
                      "Los Fabulosos Cadillacs - «Matador»", "½ Gentlemen", "Zoë Keating"])
    func realLatin1StaysUnchanged(_ text: String) throws {
        #expect(TagText.repair(text) == text)
        #expect(TagText.decode(try F.encode(text, "ISO-8859-1")) == text)
    }

    /// GBK strings that are also valid UTF-8 by accident, and real UTF-8 that is also valid GBK.
    @Test func utf8VersusGBKAmbiguity() throws {
        for text in ["状态", "什么", "停止", "签页", "拼", "目", "谢", "注"] {
            #expect(TagText.decode(try F.encode(text, "GBK")) == text)
        }
        for text in ["Привет", "да е", "Ελλάδα", "שלום", "Zażółć gęślą", "Café", "ʻOkina"] {
            #expect(TagText.decode(Array(text.utf8)) == text)
        }
    }

    @Test func utf8InLatin1FrameAndWindows1252() throws {
        let utf8 = Array("Sigur Rós – 周杰伦".utf8)
        let mojibake = String(String.UnicodeScalarView(utf8.map { Unicode.Scalar($0) }))
        #expect(TagText.repair(mojibake) == "Sigur Rós – 周杰伦")
        // cp1252 curly quotes in a "Latin-1" field.
        #expect(TagText.decode([0x93] + Array("Hey".utf8) + [0x94]) == "\u{201C}Hey\u{201D}")
        #expect(TagText.repair("plain ASCII") == "plain ASCII")
        #expect(TagText.repair("日本語") == "日本語")
    }

    @Test func numberParsing() {
        #expect(MetadataReader.parseDecibels("-6.50 dB") == -6.5)
        #expect(MetadataReader.parseDecibels("+1.25 dB") == 1.25)
        #expect(MetadataReader.parseDecibels("\u{2212}3,10 dB") == -3.1)
        #expect(MetadataReader.parseDecibels(" 0.988525 ") == 0.988525)
        #expect(MetadataReader.parseDecibels("1e-1") == 0.1)
        #expect(MetadataReader.parseDecibels("dB") == nil)
        #expect(MetadataReader.parseNumberPair("3/12") == (3, 12))
        #expect(MetadataReader.parseNumberPair(" 03 ") == (3, nil))
        #expect(MetadataReader.parseNumberPair("3 of 12") == (3, 12))
        #expect(MetadataReader.parseNumberPair("/12") == (nil, 12))
        #expect(MetadataReader.parseNumberPair("A1") == (nil, nil))
        #expect(MetadataReader.parseBool("1") == true)
        #expect(MetadataReader.parseBool("0") == false)
        #expect(MetadataReader.sniffMIME([0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        #expect(MetadataReader.sniffMIME(Array("GIF89a..".utf8)) == "image/gif")
        #expect(MetadataReader.sniffMIME([1, 2, 3]) == nil)
    }
}

/// Whole files: tags written by ffmpeg in every container, and hand-made tag bytes.
@Suite(.offThePool) struct MetadataTests {
    /// The common `-metadata` options for the ffmpeg-written fixtures.
    static let commonTags: [String] = [
        "title=Le Temps des Cerises", "artist=Beyoncé", "album=Ágætis byrjun", "album_artist=Various",
        "composer=Jean-Baptiste Clément", "genre=Chanson", "date=1999", "comment=a comment",
    ].flatMap { ["-metadata", $0] }

    static func expectCommon(_ m: AudioMetadata) {
        #expect(m.title == "Le Temps des Cerises")
        #expect(m.artist == "Beyoncé")
        #expect(m.album == "Ágætis byrjun")
        #expect(m.albumArtist == "Various")
        #expect(m.composer == "Jean-Baptiste Clément")
        #expect(m.genre == "Chanson")
        #expect(m.date == "1999")
        #expect(m.year == 1999)
        #expect(m.comment == "a comment")
    }

    @Test(arguments: [3, 4])
    func mp3ID3v2WithArtwork(version: Int) throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let png = try F.coverPNG(dir.file("cover.png"))
        let out = dir.file("a.mp3")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-i", dir.file("cover.png"),
                      "-map", "0", "-map", "1", "-c:a", "libmp3lame", "-c:v", "copy",
                      "-disposition:v", "attached_pic", "-id3v2_version", "\(version)"] + Self.commonTags + [
                      "-metadata", "track=3/12", "-metadata", "disc=1/2", "-metadata", "lyrics-eng=la la la",
                      "-metadata", "compilation=1",
                      "-metadata", "REPLAYGAIN_TRACK_GAIN=-6.50 dB", "-metadata", "REPLAYGAIN_TRACK_PEAK=0.988525",
                      "-metadata", "REPLAYGAIN_ALBUM_GAIN=-7.25 dB", "-metadata", "REPLAYGAIN_ALBUM_PEAK=1.000000",
                      out])
        let m = try MetadataReader.readMetadata(path: out)
        Self.expectCommon(m)
        #expect(m.trackNumber == 3)
        #expect(m.trackCount == 12)
        #expect(m.discNumber == 1)
        #expect(m.discCount == 2)
        #expect(m.lyrics == "la la la")
        #expect(m.isCompilation == true)
        #expect(m.replayGain == ReplayGain(trackGain: -6.5, trackPeak: 0.988525, albumGain: -7.25, albumPeak: 1))
        #expect(m.artwork == Artwork(data: png, mimeType: "image/png"))
        #expect(m.rawTags["replaygain_track_gain"] == "-6.50 dB")
        #expect(m.rawTags["title"] == "Le Temps des Cerises")
        #expect(m.rawTags.keys.allSatisfy { $0 == $0.lowercased() })
    }

    @Test func flacVorbisCommentsWithArtworkAndSeparateTotals() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let png = try F.coverPNG(dir.file("cover.png"))
        let out = dir.file("a.flac")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-i", dir.file("cover.png"),
                      "-map", "0", "-map", "1", "-c:a", "flac", "-c:v", "copy",
                      "-disposition:v", "attached_pic"] + Self.commonTags + [
                      "-metadata", "TRACKNUMBER=5", "-metadata", "TRACKTOTAL=9",
                      "-metadata", "DISCNUMBER=2", "-metadata", "DISCTOTAL=3",
                      "-metadata", "LYRICS=first line\nsecond line", "-metadata", "COMPILATION=1",
                      "-metadata", "REPLAYGAIN_TRACK_GAIN=+1.20 dB", "-metadata", "REPLAYGAIN_ALBUM_PEAK=0.5",
                      out])
        let m = try MetadataReader.readMetadata(path: out)
        Self.expectCommon(m)
        #expect(m.trackNumber == 5)
        #expect(m.trackCount == 9)
        #expect(m.discNumber == 2)
        #expect(m.discCount == 3)
        #expect(m.lyrics == "first line\nsecond line")
        #expect(m.isCompilation == true)
        #expect(m.replayGain == ReplayGain(trackGain: 1.2, albumPeak: 0.5))
        #expect(m.artwork == Artwork(data: png, mimeType: "image/png"))
    }

    @Test func oggVorbisCommentsWithPictureBlock() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let png = try F.coverPNG(dir.file("cover.png"))
        let block = Data(F.flacPicture(png, mime: "image/png")).base64EncodedString()
        let out = dir.file("a.ogg")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "libvorbis"] + Self.commonTags + [
                      "-metadata", "TRACKNUMBER=7/10", "-metadata", "DISCNUMBER=1", "-metadata", "TOTALDISCS=4",
                      "-metadata", "UNSYNCEDLYRICS=unsynced words", "-metadata", "COMPILATION=0",
                      "-metadata", "REPLAYGAIN_TRACK_GAIN=-2.5 dB", "-metadata", "REPLAYGAIN_TRACK_PEAK=0.75",
                      "-metadata", "METADATA_BLOCK_PICTURE=\(block)", out])
        let m = try MetadataReader.readMetadata(path: out)
        Self.expectCommon(m)
        #expect(m.trackNumber == 7)
        #expect(m.trackCount == 10)
        #expect(m.discNumber == 1)
        #expect(m.discCount == 4)
        #expect(m.lyrics == "unsynced words")
        #expect(m.isCompilation == false)
        #expect(m.replayGain == ReplayGain(trackGain: -2.5, trackPeak: 0.75))
        #expect(m.artwork == Artwork(data: png, mimeType: "image/png"))
    }

    @Test func opusComments() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let out = dir.file("a.opus")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "libopus"] + Self.commonTags + [
                      "-metadata", "TRACKNUMBER=2", "-metadata", "TOTALTRACKS=11",
                      "-metadata", "LYRICS=opus lyrics", "-metadata", "REPLAYGAIN_ALBUM_GAIN=-4.00 dB", out])
        let m = try MetadataReader.readMetadata(path: out)
        Self.expectCommon(m)
        #expect(m.trackNumber == 2)
        #expect(m.trackCount == 11)
        #expect(m.lyrics == "opus lyrics")
        #expect(m.replayGain.albumGain == -4)
    }

    @Test func m4aAtomsWithArtwork() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let png = try F.coverPNG(dir.file("cover.png"))
        let out = dir.file("a.m4a")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-i", dir.file("cover.png"),
                      "-map", "0", "-map", "1", "-c:a", "aac", "-c:v", "copy",
                      "-disposition:v", "attached_pic"] + Self.commonTags + [
                      "-metadata", "track=4/15", "-metadata", "disc=2/2", "-metadata", "lyrics=m4a lyrics",
                      "-metadata", "compilation=1", out])
        let m = try MetadataReader.readMetadata(path: out)
        Self.expectCommon(m)
        #expect(m.trackNumber == 4)
        #expect(m.trackCount == 15)
        #expect(m.discNumber == 2)
        #expect(m.discCount == 2)
        #expect(m.lyrics == "m4a lyrics")
        #expect(m.isCompilation == true)
        #expect(m.artwork == Artwork(data: png, mimeType: "image/png"))
    }

    @Test func id3v1WithGBKText() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let out = dir.file("v1.mp3")
        try F.plainMP3(out)
        try F.wrap(out, suffix: F.id3v1(title: try F.encode("青花瓷", "GBK"), artist: try F.encode("周杰伦", "GBK"),
                                        album: try F.encode("我很忙", "GBK"), year: "2007",
                                        comment: try F.encode("中国风", "GBK"), track: 5, genre: 13))
        let m = try MetadataReader.readMetadata(path: out)
        #expect(m.title == "青花瓷")
        #expect(m.artist == "周杰伦")
        #expect(m.album == "我很忙")
        #expect(m.comment == "中国风")
        #expect(m.date == "2007")
        #expect(m.trackNumber == 5)
        #expect(m.genre == "Pop")
        #expect(m.rawTags["title"] == "青花瓷")
    }

    @Test func id3v1WithBig5AndLatin1() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let out = dir.file("v1.mp3")
        try F.plainMP3(out)
        try F.wrap(out, suffix: F.id3v1(title: try F.encode("月亮代表我的心", "BIG5"), artist: try F.encode("鄧麗君", "BIG5"),
                                        album: try F.encode("Motörhead", "ISO-8859-1"), year: "1977"))
        let m = try MetadataReader.readMetadata(path: out)
        #expect(m.title == "月亮代表我的心")
        #expect(m.artist == "鄧麗君")
        #expect(m.album == "Motörhead")
        #expect(m.year == 1977)
    }

    /// Hand-written ID3v2.3 frames as Chinese taggers write them: GBK or Big5 bytes under
    /// encoding byte 0 (ISO-8859-1), next to real Latin-1, UTF-16 and TXXX frames; plus an
    /// ID3v1 tag that FFmpeg ignores (an ID3v2 tag is present) and that fills the gaps.
    @Test(arguments: [3, 4])
    func id3v2HandWrittenCharsets(version: Int) throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let out = dir.file("v2.mp3")
        try F.plainMP3(out)
        let frames: [[UInt8]] = [
            F.id3v2TextFrame("TIT2", encoding: 0, try F.encode("青花瓷", "GBK"), version: version),
            F.id3v2TextFrame("TPE1", encoding: 0, try F.encode("周杰倫", "BIG5"), version: version),
            F.id3v2TextFrame("TALB", encoding: 0, try F.encode("Sigur Rós", "ISO-8859-1"), version: version),
            try F.id3v2UTF16Frame("TPE2", "王菲", version: version),
            try F.id3v2UTF16Frame("TCOM", "Motörhead", version: version),
            F.id3v2TextFrame("TCON", encoding: 0, try F.encode("流行", "GBK"), version: version),
            F.id3v2TextFrame("TRCK", encoding: 0, Array("03/12".utf8), version: version),
            F.id3v2TextFrame("TPOS", encoding: 0, Array("1/1".utf8), version: version),
            F.id3v2TextFrame("TCMP", encoding: 0, Array("1".utf8), version: version),
            F.id3v2TXXX("REPLAYGAIN_TRACK_GAIN", "-3.21 dB", version: version),
            F.id3v2TXXX("replaygain_album_peak", "0.9", version: version),
            // USLT: encoding 0, language "chi", empty descriptor, GBK lyrics.
            F.id3v2Frame("USLT", [0] + Array("chi".utf8) + [0] + (try F.encode("天青色等烟雨\n而我在等你", "GBK")),
                         version: version),
            // COMM: encoding 1 (UTF-16), language, empty descriptor.
            F.id3v2Frame("COMM", [1] + Array("eng".utf8) + [0xFF, 0xFE, 0, 0, 0xFF, 0xFE] + (try F.encode("好听", "UTF-16LE")),
                         version: version),
        ]
        try F.wrap(out, prefix: F.id3v2Tag(version: version, frames: frames),
                   suffix: F.id3v1(title: Array("v1 title".utf8), artist: [], year: "2007"))
        let m = try MetadataReader.readMetadata(path: out)
        #expect(m.title == "青花瓷")
        #expect(m.artist == "周杰倫")
        #expect(m.album == "Sigur Rós")
        #expect(m.albumArtist == "王菲")
        #expect(m.composer == "Motörhead")
        #expect(m.genre == "流行")
        #expect(m.trackNumber == 3)
        #expect(m.trackCount == 12)
        #expect(m.discNumber == 1)
        #expect(m.discCount == 1)
        #expect(m.isCompilation == true)
        #expect(m.replayGain == ReplayGain(trackGain: -3.21, albumPeak: 0.9))
        #expect(m.lyrics == "天青色等烟雨\n而我在等你")
        #expect(m.comment == "好听")
        #expect(m.date == "2007")   // only in the ID3v1 tag
    }

    @Test func apev2AppendedToMP3() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let png = try F.coverPNG(dir.file("cover.png"))
        let out = dir.file("ape.mp3")
        try F.plainMP3(out)
        let tag = F.apev2([
            ("Title", Array("Ape Title".utf8), false),
            ("Artist", try F.encode("周杰伦", "GBK"), false),
            ("Album", Array("Ágætis byrjun".utf8), false),
            ("Album Artist", Array("Sigur Rós".utf8), false),
            ("Composer", Array("A\u{0}B".utf8), false),
            ("Genre", Array("Post-Rock".utf8), false),
            ("Track", Array("4/9".utf8), false),
            ("Disc", Array("1".utf8), false),
            ("Year", Array("1999".utf8), false),
            ("Comment", Array("ape comment".utf8), false),
            ("Lyrics", Array("ape lyrics".utf8), false),
            ("Compilation", Array("1".utf8), false),
            ("REPLAYGAIN_TRACK_GAIN", Array("+1.25 dB".utf8), false),
            ("REPLAYGAIN_TRACK_PEAK", Array("0.612".utf8), false),
            ("Cover Art (Front)", Array("cover.png".utf8) + [0] + png, true),
        ])
        try F.wrap(out, suffix: tag + F.id3v1(title: Array("v1".utf8), artist: Array("v1 artist".utf8)))
        let m = try MetadataReader.readMetadata(path: out)
        #expect(m.title == "Ape Title")      // APE wins over ID3v1
        #expect(m.artist == "周杰伦")
        #expect(m.album == "Ágætis byrjun")
        #expect(m.albumArtist == "Sigur Rós")
        #expect(m.composer == "A; B")
        #expect(m.genre == "Post-Rock")
        #expect(m.trackNumber == 4)
        #expect(m.trackCount == 9)
        #expect(m.discNumber == 1)
        #expect(m.date == "1999")
        #expect(m.comment == "ape comment")
        #expect(m.lyrics == "ape lyrics")
        #expect(m.isCompilation == true)
        #expect(m.replayGain == ReplayGain(trackGain: 1.25, trackPeak: 0.612))
        #expect(m.artwork == Artwork(data: png, mimeType: "image/png"))
        #expect(m.rawTags["album artist"] == "Sigur Rós")
    }

    @Test func untaggedFileHasEmptyMetadata() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let out = dir.file("plain.mp3")
        try F.plainMP3(out)
        let m = try MetadataReader.readMetadata(path: out)
        #expect(m.title == nil)
        #expect(m.artist == nil)
        #expect(m.trackNumber == nil)
        #expect(m.artwork == nil)
        #expect(m.replayGain.isEmpty)
    }

    @Test func errorsNameTheFile() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let missing = dir.file("missing.mp3")
        #expect(throws: TonearmError.fileNotFound(path: missing)) { try MetadataReader.readMetadata(path: missing) }
        #expect(throws: TonearmError.isDirectory(path: dir.path)) { try MetadataReader.readMetadata(path: dir.path) }
        let empty = dir.file("empty.mp3")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(throws: TonearmError.emptyFile(path: empty)) { try MetadataReader.readMetadata(path: empty) }
        let junk = dir.file("junk.mp3")
        _ = FileManager.default.createFile(atPath: junk, contents: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        do {
            _ = try MetadataReader.readMetadata(path: junk)
            Issue.record("junk read as media")
        } catch let e as TonearmError {
            #expect(e.path == junk)
            if case .notMediaFile = e {} else if case .noAudioTrack = e {} else { Issue.record("unexpected \(e)") }
        }
        let png = dir.file("cover.png")
        try F.coverPNG(png)
        #expect(throws: TonearmError.noAudioTrack(path: png)) { try MetadataReader.readMetadata(path: png) }
    }
}

/// The entry point `AudioFile` calls for an input opened from memory: tag blocks at the end of
/// the file are read from the bytes, not from the name hint.
@Suite(.offThePool) struct MetadataInMemoryTests {
    @Test func readsAPEAndID3v1FromData() throws {
        let dir = try TempDir("meta")
        defer { dir.remove() }
        let out = dir.file("mem.mp3")
        try F.plainMP3(out)
        try F.wrap(out, suffix: F.apev2([("Title", Array("From APE".utf8), false)])
                   + F.id3v1(title: Array("v1".utf8), artist: try F.encode("周杰伦", "GBK")))
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: out)))
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        #expect(avformat_open_input(&ctx, out, nil, nil) >= 0)
        defer { avformat_close_input(&ctx) }
        let fc = try #require(ctx)
        let m = MetadataReader.read(formatContext: fc, path: "/nonexistent/name-hint.mp3", data: bytes)
        #expect(m.title == "From APE")
        #expect(m.artist == "周杰伦")
    }
}

/// `TagSet` finds each named field as tags go in (one lookup per tag, not one per spelling of
/// every field when read): it must give what looking each spelling up in its rank order gives,
/// whatever the order tags arrive in, with sources' duplicates, removals (ID3v1 values that
/// FFmpeg read and that rank lower) and values of blanks only.
@Suite(.offThePool) struct TagSetFieldTests {
    /// The field as it was read before: the first of its spellings that has a value, trimmed.
    static func lookedUp(_ tags: TagSet, _ field: TagSet.Field) -> String? {
        for key in field.keys { if let v = tags.first(key) { return v } }
        return nil
    }

    @Test func everyFieldIsItsFirstRankedSpellingWhateverTheOrder() {
        var rng = SplitMix(seed: 0x7A65_7431)
        let spellings = TagSet.Field.allCases.flatMap(\.keys) + ["lyrics-eng", "tbpm", "vendor", "Artist", "TITLE"]
        let values = ["A", " B ", "\tC", "   ", "D\u{0}", "Ünïcödé", "1/12", "x"]
        for _ in 0..<3_000 {
            var tags = TagSet()
            var added: [(String, String)] = []
            for _ in 0..<Int(rng.next() % 12) {
                let key = spellings[Int(rng.next() % UInt64(spellings.count))]
                let value = values[Int(rng.next() % UInt64(values.count))]
                tags.add(key: key, value: value)
                added.append((key.lowercased(), value))
            }
            for _ in 0..<Int(rng.next() % 3) where !added.isEmpty {
                let (key, value) = added[Int(rng.next() % UInt64(added.count))]
                // As ID3v1 removes: only when the value is the one held.
                tags.remove(key: key, ifValue: rng.next() % 2 == 0 ? value : "other")
            }
            for field in TagSet.Field.allCases {
                #expect(tags[field] == Self.lookedUp(tags, field), "\(field) of \(added)")
            }
            #expect(tags.hasNumberedLyrics || !tags.values.keys.contains { $0.hasPrefix("lyrics-") })
        }
    }

    @Test func aHigherRankedSpellingAddedLaterWinsAndARemovalFallsBack() {
        var tags = TagSet()
        tags.add(key: "TPE1", value: "From ID3")
        tags.add(key: "author", value: "Author")
        #expect(tags[.artist] == "From ID3")
        tags.add(key: "Artist", value: " Vorbis ")
        #expect(tags[.artist] == "Vorbis")
        tags.remove(key: "artist", ifValue: " Vorbis ")
        #expect(tags[.artist] == "From ID3")
        tags.remove(key: "tpe1", ifValue: "From ID3")
        #expect(tags[.artist] == "Author")
        tags.remove(key: "author", ifValue: "Author")
        #expect(tags[.artist] == nil)
    }

    @Test func everySpellingNamesOneField() {
        let all = TagSet.Field.allCases.flatMap(\.keys)
        #expect(Set(all).count == all.count)
        #expect(all.allSatisfy { $0 == $0.lowercased() })
    }

    /// The table of spellings (hashed by bytes) finds each spelling's field and rank, and
    /// nothing for a key that only looks like one (a prefix, a longer key, another case).
    @Test func theSpellingTableFindsEverySpellingAndNothingElse() {
        var reference: [String: (field: TagSet.Field, rank: Int)] = [:]
        for field in TagSet.Field.allCases {
            for (rank, key) in field.keys.enumerated() { reference[key] = (field, rank) }
        }
        var probes = ["", "x", "vendor", "lyrics-eng", "tbpm", "encoder", String(repeating: "title", count: 20)]
        for key in reference.keys { probes += [key, String(key.dropLast()), key + "x", "x" + key, key.uppercased()] }
        for probe in probes {
            let found = TagSet.fieldKeys[probe], expected = reference[probe]
            #expect(found?.field == expected?.field && found?.rank == expected?.rank, "\(probe)")
        }
    }
}

/// ``MetadataReader/plainNumberPair(_:)`` (track and disc numbers read from the bytes) gives
/// what the general parse gives for every text it takes, and takes the usual forms.
@Suite(.offThePool) struct NumberPairTests {
    @Test func thePlainPathAgreesWithTheGeneralOne() {
        var rng = SplitMix(seed: 0x7472_6B21)
        let pieces = ["0", "1", "7", "9", "/", " ", "a", "-", "12", "0000000000", "١"]
        var texts = ["", "7", "03", "3/12", "3/", "/12", "/", "1/2/3", "123456789", "1234567890", "1/1234567890", "00000000001"]
        for _ in 0..<5_000 {
            texts.append((0..<Int(rng.next() % 8)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined())
        }
        var taken = 0
        for text in texts {
            let general = MetadataReader.generalNumberPair(text)
            if let plain = MetadataReader.plainNumberPair(text) {
                taken += 1
                #expect(plain.0 == general.0 && plain.1 == general.1, "\(text): \(plain) against \(general)")
            }
            let parsed = MetadataReader.parseNumberPair(text)
            #expect(parsed.0 == general.0 && parsed.1 == general.1, "\(text)")
        }
        #expect(taken > 500)
        for usual in ["1", "12", "3/12", "03/12"] { #expect(MetadataReader.plainNumberPair(usual) != nil, "\(usual)") }
    }
}

/// A reproducible pseudo-random sequence (SplitMix64).
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
