// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play` and `tonearm info` of MP3s as collections hold them and the other tests do
/// not: an APEv2 tag with binary cover art after the audio, and VBR without a Xing frame.
/// Through the real binary, with files generated here.
@Suite struct MP3EdgeCLITests {
    /// No sound server and no session bus: nothing outside the test is touched.
    static func environment(_ dir: TempDir) -> [String: String] {
        ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state"), "PULSE_SERVER": "unix:\(dir.file("no-pulse"))",
         "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.file("no-bus"))"]
    }

    func tonearm(_ arguments: [String], in dir: TempDir) throws -> RunResult {
        try run(try tonearmBinary(), arguments, environment: Self.environment(dir), currentDirectory: dir.path)
    }

    func json(_ arguments: [String], in dir: TempDir) throws -> [String: Any] {
        let r = try tonearm(["info", "--json"] + arguments, in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let all = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        return try #require(all.first)
    }

    /// A cover of `count` bytes: a PNG signature, then noise with an MPEG layer III frame
    /// header every 64 bytes (what FFmpeg's parser takes for frames), deterministic.
    static func cover(_ count: Int) -> [UInt8] {
        var x: UInt32 = 0x9E37_79B9
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        while bytes.count < count {
            x = x &* 1_103_515_245 &+ 12345
            if bytes.count % 64 == 0 { bytes += [0xFF, 0xFB, 0x90, 0x64] } else { bytes.append(UInt8(truncatingIfNeeded: x >> 16)) }
        }
        return Array(bytes.prefix(count))
    }

    /// `plain.mp3` (1.5 s of a 440 Hz sine, 128 kbit/s stereo) and `tagged.mp3`: the same bytes
    /// followed by an APEv2 tag (a title, 6 KB of cover art) and an ID3v1 tag.
    func makeAPETaggedPair(in dir: TempDir) throws {
        let plain = dir.file("plain.mp3"), tagged = dir.file("tagged.mp3")
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1.5:sample_rate=44100", "-ac", "2",
                                "-c:a", "libmp3lame", "-b:a", "128k", plain])
        try FileManager.default.copyItem(atPath: plain, toPath: tagged)
        try TagFixtures.wrap(tagged, suffix: TagFixtures.apev2([
            ("Title", Array("Cover Song".utf8), false),
            ("Cover Art (Front)", Array("cover.png".utf8) + [0] + Self.cover(6000), true),
        ]) + TagFixtures.id3v1(title: Array("v1".utf8), artist: Array("V1 Artist".utf8)))
    }

    /// An MP3 with an APE tag holding 6 KB of cover art, then an ID3v1 tag: it plays and is
    /// described exactly as the same MP3 without them — no "corrupt audio" warning, the same
    /// frames to the sample — and its tags and cover are read. (The tag reached FFmpeg's MP3
    /// decoder as packets: warnings, extra frames of noise, and a length taken from the bit rate.)
    @Test func apeTagWithCoverArtIsNotPlayedAsAudio() throws {
        let dir = try TempDir("cli-mp3-ape")
        defer { dir.remove() }
        try makeAPETaggedPair(in: dir)

        // After another file in the queue (a gapless join) and on its own.
        let played = try tonearm(["play", "--plain", "--output", "null:untimed", "plain.mp3", "tagged.mp3"], in: dir)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(!played.stderr.contains("corrupt"), "\(played.stderr)")
        #expect(!played.stdout.contains("corrupt"), "\(played.stdout)")
        #expect(played.stdout.contains("2 played, 0 failed"), "\(played.stdout)")

        // What is played, to the sample: the untagged file's audio, 1.5 s (the LAME tag's length).
        for name in ["plain", "tagged"] {
            let r = try tonearm(["play", "--output", "file:\(name).wav", "\(name).mp3"], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(!r.stderr.contains("corrupt"), "\(r.stderr)")
        }
        let (a, b) = (try readWAV(dir.file("plain.wav")), try readWAV(dir.file("tagged.wav")))
        #expect(a.frameCount == 66150)
        #expect(b.frameCount == a.frameCount)
        #expect(b.channels == a.channels)

        let info = try tonearm(["info", "tagged.mp3"], in: dir)
        #expect(info.status == 0, "\(info.stderr)")
        #expect(!info.stdout.contains("Warning"), "\(info.stdout)")
        #expect(info.stdout.contains("(66150 frames, 1.500 s)"), "\(info.stdout)")
        let j = try json(["tagged.mp3"], in: dir), p = try json(["plain.mp3"], in: dir)
        #expect(j["warnings"] == nil, "\(j)")
        #expect(j["frames"] as? Int == p["frames"] as? Int)
        let tags = try #require(j["tags"] as? [String: String])
        #expect(tags["title"] == "Cover Song")
        #expect(tags["artist"] == "V1 Artist")
        #expect((j["artwork"] as? [String: Any])?["bytes"] as? Int == 6000)
        let track = try #require((j["tracks"] as? [[String: Any]])?.first?["timeRange"] as? [String: Double])
        #expect(track["duration"] == j["duration"] as? Double)
    }

    /// Copied without re-encoding (`convert --preset passthrough`), the same MP3 gives the same
    /// audio packets: the APE tag's bytes are not copied as MP3 frames (they were: 731 frames
    /// of noise more, and a length from the bit rate in "Wrote").
    @Test func apeTagIsNotCopiedAsAudio() throws {
        let dir = try TempDir("cli-mp3-ape-copy")
        defer { dir.remove() }
        try makeAPETaggedPair(in: dir)
        for name in ["plain", "tagged"] {
            let r = try tonearm(["convert", "\(name).mp3", "-o", "\(name)-copy.mp3", "--preset", "passthrough"], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("(1.5"), "\(r.stdout)")
        }
        let copy = try json(["tagged-copy.mp3"], in: dir), reference = try json(["plain-copy.mp3"], in: dir)
        #expect(copy["warnings"] == nil, "\(copy)")
        #expect(copy["frames"] as? Int == reference["frames"] as? Int)
        for name in ["plain-copy", "tagged-copy"] {
            #expect(try tonearm(["play", "--output", "file:\(name).wav", "\(name).mp3"], in: dir).status == 0)
        }
        #expect(try readWAV(dir.file("tagged-copy.wav")).channels == (try readWAV(dir.file("plain-copy.wav"))).channels)
    }

    /// A VBR MP3 without a Xing frame, quiet then loud (the first frame's bit rate, which an
    /// estimate goes by, is far below the average): `info` gives the exact length on every
    /// line — the Length and the track's time range — not the estimate (28.9 s of a 20.0 s file).
    @Test func vbrWithoutXingHasItsExactLengthOnEveryLine() throws {
        let dir = try TempDir("cli-mp3-vbr")
        defer { dir.remove() }
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=10:sample_rate=44100",
                                "-f", "lavfi", "-i", "anoisesrc=duration=10:sample_rate=44100:amplitude=0.3",
                                "-filter_complex", "[0][1]concat=n=2:v=0:a=1", "-ac", "2",
                                "-c:a", "libmp3lame", "-q:a", "2", "-write_xing", "0", dir.file("vbr.mp3")])
        // What decoding gives (the decoder's length is checked against ffmpeg's decode elsewhere).
        try TagFixtures.ffmpeg(["-i", dir.file("vbr.mp3"), "-f", "f32le", "-ac", "1", dir.file("vbr.f32")])
        let decodedFrames = try #require(try FileManager.default.attributesOfItem(atPath: dir.file("vbr.f32"))[.size] as? Int) / 4
        let decodedSeconds = Double(decodedFrames) / 44100

        let j = try json(["vbr.mp3"], in: dir)
        let duration = try #require(j["duration"] as? Double)
        #expect(abs(duration - decodedSeconds) < 0.06, "\(duration) s, ffmpeg decodes \(decodedSeconds) s")
        let tracks = try #require(j["tracks"] as? [[String: Any]])
        let range = try #require(tracks.first?["timeRange"] as? [String: Double])
        #expect(range["duration"] == duration, "\(range) against \(duration) s")

        // The text: the track's range ends at the Length.
        let info = try tonearm(["info", "vbr.mp3"], in: dir)
        #expect(info.status == 0, "\(info.stderr)")
        let lines = info.stdout.split(separator: "\n").map(String.init)
        let length = try #require(lines.first { $0.hasPrefix("  Length") })
        let shown = try #require(length.split(separator: " ").dropFirst().first.map(String.init))  // "0:20"
        let trackLine = try #require(lines.first { $0.contains("#0") })
        #expect(trackLine.hasSuffix("0:00–\(shown)"), "\(info.stdout)")
    }
}
