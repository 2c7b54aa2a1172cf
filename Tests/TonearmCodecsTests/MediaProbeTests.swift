// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmTestSupport

private typealias F = TagFixtures

/// The tags every probe fixture carries (ReplayGain included).
private let probeTags: [String] = [
    "title=Le Temps des Cerises", "artist=Beyoncé", "album=Ágætis byrjun", "album_artist=Various",
    "genre=Chanson", "date=1999", "track=3/12",
    "REPLAYGAIN_TRACK_GAIN=-6.50 dB", "REPLAYGAIN_TRACK_PEAK=0.988525",
].flatMap { ["-metadata", $0] }

/// Samples the probe's duration may differ from the decoded length by: 0 where the headers state
/// the length exactly, else one packet of the codec: Matroska's timestamps are in milliseconds;
/// FFmpeg's Vorbis decoder may drop up to half a block more at the start than the granule
/// positions say; CAF's packet table counts ALAC's last packet whole.
private func durationTolerance(_ c: FormatCase) -> Int {
    let packet = ["mp3": 1152, "aac": 1024, "opus": 960, "vorbis": 2048, "alac": 4096][c.codec] ?? 0
    switch c.container {
    case "Matroska", "WebM", "CAF": return packet
    default: return c.codec == "vorbis" ? packet : 0
    }
}

/// Expects the probe to report what `AudioFile` reports; returns both for more checks.
@discardableResult
private func expectSame(_ path: String, tolerance: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> (MediaProbe, AudioFile) {
    let file = try AudioFile(path: path)
    let probe = try MediaProbe(path: path)
    let f = file.fileFormat, p = probe.fileFormat
    #expect(p.containerName == f.containerName, sourceLocation: sourceLocation)
    #expect(p.formatName == f.formatName, sourceLocation: sourceLocation)
    #expect(p.codecName == f.codecName, sourceLocation: sourceLocation)
    #expect(p.sampleRate == f.sampleRate, sourceLocation: sourceLocation)
    #expect(p.channelCount == f.channelCount, sourceLocation: sourceLocation)
    #expect(p.channelLayout == f.channelLayout, sourceLocation: sourceLocation)
    #expect(p.bitsPerSample == f.bitsPerSample, sourceLocation: sourceLocation)
    // The bit rate of MP3 in Matroska beside a video stream comes from FFmpeg's parser only.
    #expect(p.bitRate == f.bitRate || p.bitRate == nil && f.formatName.hasPrefix("matroska") && f.codecName == "mp3",
            "probe \(p.bitRate.map(String.init) ?? "nil"), AudioFile \(f.bitRate.map(String.init) ?? "nil")",
            sourceLocation: sourceLocation)
    let frames = (probe.duration ?? -1) * Double(f.sampleRate)
    #expect(abs(frames - Double(file.length)) <= Double(tolerance) + 0.5,
            "probe \(frames) frames, AudioFile \(file.length) (tolerance \(tolerance))", sourceLocation: sourceLocation)
    #expect(probe.metadata == file.metadata, sourceLocation: sourceLocation)
    return (probe, file)
}

/// Expects the probe to fail as `AudioFile` does.
private func expectSameError(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
    var fileError: TonearmError?
    do { _ = try AudioFile(path: path) } catch { fileError = error }
    var probeError: TonearmError?
    do { _ = try MediaProbe(path: path) } catch { probeError = error }
    #expect(fileError != nil, "AudioFile opened \(path)", sourceLocation: sourceLocation)
    #expect(probeError == fileError, sourceLocation: sourceLocation)
}

@Suite("MediaProbe", .offThePool)
struct MediaProbeTests {
    /// Every format of the AudioFile tests, tagged: the same fields as AudioFile, read from the
    /// headers (FFmpeg's stream-info fallback only for ADTS and CAF's PCM).
    @Test(arguments: formatCases)
    func probeReportsWhatAudioFileReports(_ c: FormatCase) throws {
        let dir = try TempDir("probe")
        defer { dir.remove() }
        let path = dir.file("\(c.name).\(c.ext)")
        try Fixtures.tone(path: path, codecArgs: c.args + probeTags, seconds: 2, rate: c.rate,
                          channels: c.channels, video: c.video)
        if c.container == "ADTS" {
            // No header states an ADTS stream's length: FFmpeg estimates it from the bit rate,
            // which AAC does not keep. Only decoding tells (the library then opens an AudioFile).
            let probe = try MediaProbe(path: path)
            #expect(probe.duration == nil && !probe.headerOnly)
            #expect(probe.metadata == (try AudioFile(path: path)).metadata)
            return
        }
        let (probe, _) = try expectSame(path, tolerance: durationTolerance(c))
        #expect(probe.headerOnly == (c.name != "caf-lpcm"))
    }

    /// Cover art and tags in each tagging scheme: the probe's metadata equals AudioFile's.
    @Test(arguments: ["mp3-id3v2.3", "mp3-id3v2.4", "flac", "m4a", "ogg-picture-block"])
    func artworkAndTags(_ kind: String) throws {
        let dir = try TempDir("probe")
        defer { dir.remove() }
        let cover = dir.file("cover.png")
        let png = try F.coverPNG(cover)
        let withCover = ["-i", cover, "-map", "0", "-map", "1", "-c:v", "copy", "-disposition:v", "attached_pic"]
        let (ext, args): (String, [String]) = switch kind {
        case "mp3-id3v2.3": ("mp3", withCover + ["-c:a", "libmp3lame", "-id3v2_version", "3"])
        case "mp3-id3v2.4": ("mp3", withCover + ["-c:a", "libmp3lame", "-id3v2_version", "4"])
        case "flac": ("flac", withCover + ["-c:a", "flac"])
        case "m4a": ("m4a", withCover + ["-c:a", "aac"])
        default: ("ogg", ["-c:a", "libvorbis", "-metadata",
                          "METADATA_BLOCK_PICTURE=\(Data(F.flacPicture(png, mime: "image/png")).base64EncodedString())"])
        }
        let path = dir.file("a.\(ext)")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.5"] + args + probeTags
                     + ["-metadata", "REPLAYGAIN_ALBUM_GAIN=-7.25 dB", "-metadata", "compilation=1", path])
        let (probe, _) = try expectSame(path, tolerance: ext == "ogg" ? 2048 : 0)
        #expect(probe.metadata.artwork == Artwork(data: png, mimeType: "image/png"))
        if ext != "m4a" { #expect(probe.metadata.replayGain.trackGain == -6.5) }  // MP4 has no such atom
        #expect(probe.metadata.title == "Le Temps des Cerises")
    }

    /// MP3s without a Xing frame (the length is estimated from the bit rate, within a frame), with
    /// an ID3v1 and an APEv2 tag at the end, and with the content not matching the extension.
    @Test func mp3WithoutXingTagsAtTheEndAndWrongExtensions() throws {
        let dir = try TempDir("probe")
        defer { dir.remove() }
        let plain = dir.file("plain.mp3")
        try F.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:a", "libmp3lame", "-b:a", "128k",
                      "-id3v2_version", "0", "-write_xing", "0", plain])
        try expectSame(plain, tolerance: 1152)

        let tagged = dir.file("tagged.mp3")
        try FileManager.default.copyItem(atPath: plain, toPath: tagged)
        try F.wrap(tagged, prefix: F.id3v2Tag(frames: [try F.id3v2UTF16Frame("TIT2", "Front")]),
                   suffix: F.apev2([("Artist", Array("APE Artist".utf8), false)])
                       + F.id3v1(title: Array("v1 title".utf8), artist: Array("v1 artist".utf8)))
        let (probe, _) = try expectSame(tagged, tolerance: 1152)
        #expect(probe.metadata.title == "Front")
        #expect(probe.metadata.artist == "APE Artist")

        // Content sniffed, not the extension: a FLAC named .mp3, a WAV named .flac, an MP3 named .m4a.
        let flac = dir.file("flac.mp3"), wav = dir.file("wav.flac"), mp3 = dir.file("mp3.m4a")
        try Fixtures.tone(path: flac, codecArgs: ["-c:a", "flac", "-f", "flac"], seconds: 0.5, rate: 44100)
        try Fixtures.tone(path: wav, codecArgs: ["-c:a", "pcm_s16le", "-f", "wav"], seconds: 0.5, rate: 44100)
        try FileManager.default.copyItem(atPath: tagged, toPath: mp3)
        try expectSame(flac)
        try expectSame(wav)
        try expectSame(mp3, tolerance: 1152)
    }

    /// Files that are not playable media fail as AudioFile fails (the library skips them with the reason).
    @Test func notMediaFailsAsAudioFileDoes() throws {
        let dir = try TempDir("probe")
        defer { dir.remove() }
        var x: UInt32 = 12345
        let noise = (0..<4000).map { _ -> UInt8 in x = x &* 1_103_515_245 &+ 12345; return UInt8(truncatingIfNeeded: x >> 16) }
        for name in ["noise.mp3", "noise.bin", "noise"] {
            try Data(noise).write(to: URL(fileURLWithPath: dir.file(name)))
            expectSameError(dir.file(name))
        }
        // Bytes that start like an MP3 frame (and an ID3v2 tag) but are noise.
        try Data([0xFF, 0xFB, 0x90, 0x64] + noise).write(to: URL(fileURLWithPath: dir.file("sync.mp3")))
        expectSameError(dir.file("sync.mp3"))
        try Data(F.id3v2Tag(frames: [try F.id3v2UTF16Frame("TIT2", "x")]) + noise).write(to: URL(fileURLWithPath: dir.file("id3.mp3")))
        expectSameError(dir.file("id3.mp3"))
        try "Shopping list:\n- milk\n".write(toFile: dir.file("notes.mp3"), atomically: true, encoding: .utf8)
        expectSameError(dir.file("notes.mp3"))
        try Data().write(to: URL(fileURLWithPath: dir.file("empty.flac")))
        expectSameError(dir.file("empty.flac"))
        expectSameError(dir.file("missing.flac"))
        expectSameError(dir.path)
        try Fixtures.png(path: dir.file("cover.png"))
        expectSameError(dir.file("cover.png"))
        try F.coverPNG(dir.file("cover.jpg"))  // a PNG named .jpg
        expectSameError(dir.file("cover.jpg"))
        try F.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=32x32:rate=1:d=1", "-frames:v", "1", dir.file("photo.jpg")])
        expectSameError(dir.file("photo.jpg"))
        try Fixtures.videoOnly(path: dir.file("silent.mp4"))
        expectSameError(dir.file("silent.mp4"))
        try Fixtures.undecodableM4A(path: dir.file("mpegh.m4a"))
        expectSameError(dir.file("mpegh.m4a"))
        // A FLAC whose header is cut short.
        try Fixtures.tone(path: dir.file("cut.flac"), codecArgs: ["-c:a", "flac"], seconds: 0.5)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir.file("cut.flac")))
        try bytes.prefix(20).write(to: URL(fileURLWithPath: dir.file("cut.flac")))
        expectSameError(dir.file("cut.flac"))
    }
}
