// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// FFmpeg is loaded when a command first needs it, not when `tonearm` starts (CFFmpegLazy), and
/// SDL2 when a window first opens (CSDL2Lazy), librubberband when a rate or pitch first changes
/// (CRubberBandLazy), OpenSSL on the first HTTPS connection (COpenSSLLazy), libpulse on the first
/// sound-server connection (CPulseLazy): the dynamic loader's
/// own log (`LD_DEBUG=files`) tells which libraries a run loaded, and how.
@Suite struct LazyFFmpegCLITests {
    /// The lines of the loader's log that load `library`.
    private func loads(_ library: String, in log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains("file=\(library)") }
    }

    @Test func theBinaryDoesNotLinkFFmpeg() throws {
        let dynamic = try run("readelf", ["-d", try tonearmBinary()])
        #expect(dynamic.status == 0, "\(dynamic.stderr)")
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "\(dynamic.stdout.prefix(1000))")
        #expect(!needed.contains { $0.contains("libav") || $0.contains("libswresample") || $0.contains("libswscale") }, "\(needed)")
        #expect(!needed.contains { $0.contains("libSDL2") || $0.contains("librubberband") }, "\(needed)")
        #expect(!needed.contains { $0.contains("libssl") || $0.contains("libcrypto") }, "\(needed)")
        #expect(!needed.contains { $0.contains("libpulse") }, "\(needed)")
    }

    @Test func startingDoesNotLoadFFmpeg() throws {
        let r = try run(try tonearmBinary(), ["--version"], environment: ["LD_DEBUG": "files"])
        #expect(r.status == 0, "\(r.stderr.suffix(1000))")
        #expect(!loads("libc.so", in: r.stderr).isEmpty, "no loader log: \(r.stderr.prefix(500))")
        #expect(loads("libavformat", in: r.stderr).isEmpty)
        #expect(loads("libavcodec", in: r.stderr).isEmpty)
        #expect(loads("libSDL2", in: r.stderr).isEmpty)
        #expect(loads("librubberband", in: r.stderr).isEmpty)
        #expect(loads("libssl", in: r.stderr).isEmpty)
        #expect(loads("libcrypto", in: r.stderr).isEmpty)
        #expect(loads("libpulse", in: r.stderr).isEmpty)
    }

    @Test func readingAFileLoadsFFmpegOnFirstUse() throws {
        let dir = try TempDir("lazy-ffmpeg")
        defer { dir.remove() }
        let tone = dir.file("tone.ogg")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "libvorbis", tone])
        let r = try run(try tonearmBinary(), ["info", tone], environment: ["LD_DEBUG": "files"])
        #expect(r.status == 0, "\(r.stderr.suffix(1000))")
        #expect(r.stdout.contains("vorbis"), "\(r.stdout)")
        let avformat = loads("libavformat", in: r.stderr)
        #expect(avformat.contains { $0.contains("dynamically loaded") }, "\(avformat)")
        #expect(!avformat.contains { $0.contains("needed by") }, "\(avformat)")
    }

    @Test func aLibraryScanOfFLACFilesDoesNotLoadFFmpeg() throws {
        let dir = try TempDir("lazy-ffmpeg-scan")
        defer { dir.remove() }
        let music = dir.file("Music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        for i in 0..<3 {
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(440 + 110 * i):duration=0.3", "-c:a", "flac",
                                 "-metadata", "title=Song \(i)", "-metadata", "artist=Lazy", "\(music)/\(i).flac"])
        }
        let db = dir.file("library.sqlite")
        let scan = try run(try tonearmBinary(), ["library", "scan", music, "--db", db, "--quiet"], environment: ["LD_DEBUG": "files"])
        #expect(scan.status == 0, "\(scan.stderr.suffix(1000))")
        #expect(scan.stdout.contains("3 added"), "\(scan.stdout)")
        #expect(loads("libavformat", in: scan.stderr).isEmpty, "FFmpeg was loaded to scan FLAC files")
        #expect(loads("libSDL2", in: scan.stderr).isEmpty, "SDL was loaded to scan FLAC files")
        #expect(loads("librubberband", in: scan.stderr).isEmpty, "librubberband was loaded to scan FLAC files")
        #expect(loads("libcrypto", in: scan.stderr).isEmpty, "OpenSSL was loaded to scan FLAC files")
        #expect(loads("libpulse", in: scan.stderr).isEmpty, "libpulse was loaded to scan FLAC files")
        let songs = try run(try tonearmBinary(), ["library", "songs", "--artist", "Lazy", "--db", db])
        #expect(songs.stdout.contains("Song 0") && songs.stdout.contains("Song 2"), "\(songs.stdout)")

        // An Ogg Vorbis file is read by FFmpeg, loaded for it.
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", "-c:a", "libvorbis", "\(music)/3.ogg"])
        let again = try run(try tonearmBinary(), ["library", "scan", music, "--db", db, "--quiet"], environment: ["LD_DEBUG": "files"])
        #expect(again.stdout.contains("1 added"), "\(again.stdout)")
        #expect(loads("libavformat", in: again.stderr).contains { $0.contains("dynamically loaded") })
    }

    @Test func playingAndDescribingAFLACFileDoesNotLoadFFmpeg() throws {
        let dir = try TempDir("lazy-ffmpeg-flac")
        defer { dir.remove() }
        let song = dir.file("song.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "flac",
                             "-metadata", "title=Lazy Song", song])
        let play = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", song], environment: ["LD_DEBUG": "files"])
        #expect(play.status == 0, "\(play.stderr.suffix(1000))")
        #expect(play.stdout.contains("1 played"), "\(play.stdout)")
        #expect(!loads("libc.so", in: play.stderr).isEmpty, "no loader log: \(play.stderr.prefix(500))")
        #expect(loads("libavformat", in: play.stderr).isEmpty, "FFmpeg was loaded to play a FLAC file")
        #expect(loads("libavcodec", in: play.stderr).isEmpty)
        #expect(loads("libSDL2", in: play.stderr).isEmpty, "SDL was loaded to play a FLAC file")
        #expect(loads("librubberband", in: play.stderr).isEmpty, "librubberband was loaded to play at rate 1")
        #expect(loads("libcrypto", in: play.stderr).isEmpty, "OpenSSL was loaded to play a local file")
        let info = try run(try tonearmBinary(), ["info", song], environment: ["LD_DEBUG": "files"])
        #expect(info.status == 0, "\(info.stderr.suffix(1000))")
        #expect(info.stdout.contains("Lazy Song") && info.stdout.contains("#0  audio"), "\(info.stdout)")
        #expect(loads("libavformat", in: info.stderr).isEmpty, "FFmpeg was loaded to describe a FLAC file")

        // A FLAC file with more channels than the Swift path takes is FFmpeg's, loaded for it.
        let surround = dir.file("surround.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", "-af", "aformat=channel_layouts=5.1", "-c:a", "flac", surround])
        let other = try run(try tonearmBinary(), ["info", surround], environment: ["LD_DEBUG": "files"])
        #expect(other.status == 0, "\(other.stderr.suffix(1000))")
        #expect(loads("libavformat", in: other.stderr).contains { $0.contains("dynamically loaded") })
    }

    /// `tonearm play VIDEO` starts loading FFmpeg on a thread of its own before it parses its
    /// arguments (the loading overlaps the parsing); an FFmpeg that cannot be loaded (an empty
    /// libavformat found first on LD_LIBRARY_PATH) is still said once, at the first use, with what
    /// to install and status 127 — not by the loading thread, and not for a FLAC file, which does
    /// not need FFmpeg and plays.
    @Test func aVideoLoadsFFmpegAheadAndAnFFmpegThatCannotLoadIsSaidAtItsFirstUse() throws {
        let dir = try TempDir("lazy-ffmpeg-ahead")
        defer { dir.remove() }
        let clip = dir.file("clip.mp4")
        try VideoFixtures.clip(clip, seconds: 0.5)
        let played = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", "--video-output", "null", clip],
                             environment: ["LD_DEBUG": "files"])
        #expect(played.status == 0, "\(played.stderr.suffix(1000))")
        #expect(played.stdout.contains("1 played"), "\(played.stdout)")
        #expect(loads("libavformat", in: played.stderr).contains { $0.contains("dynamically loaded") })

        let broken = dir.file("broken-libs")
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: "\(broken)/libavformat.so.59", contents: Data()))
        let failed = try run(try tonearmBinary(), ["play", "--plain", "--output", "null", "--video-output", "null", clip],
                             environment: ["LD_LIBRARY_PATH": broken])
        #expect(failed.status == 127, "\(failed.stderr.suffix(1000))")
        let said = failed.stderr.split(separator: "\n").filter { $0.contains("cannot be loaded") }
        #expect(said.count == 1, "\(failed.stderr.suffix(1000))")
        #expect(said.first?.contains("tonearm: FFmpeg's libavformat.so.59 cannot be loaded (\(broken)/libavformat.so.59: file too short)") == true,
                "\(failed.stderr.suffix(1000))")

        let song = dir.file("song.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.3", "-c:a", "flac", song])
        let flac = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", song],
                           environment: ["LD_LIBRARY_PATH": broken])
        #expect(flac.status == 0, "\(flac.stderr.suffix(1000))")
    }

    /// librubberband is loaded when a rate other than 1 first needs it; a librubberband that
    /// cannot be loaded (an empty file found first on LD_LIBRARY_PATH) stops only such a run, with
    /// a message that says what to install, and not a run at rate 1 (linked, neither would start).
    @Test func aRateOtherThanOneLoadsRubberBandOnFirstUse() throws {
        let dir = try TempDir("lazy-rubberband")
        defer { dir.remove() }
        let song = dir.file("song.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "flac", song])
        let fast = try run(try tonearmBinary(), ["play", "--plain", "--output", "file:\(dir.file("fast.wav"))", "--rate", "2", song],
                           environment: ["LD_DEBUG": "files"])
        #expect(fast.status == 0, "\(fast.stderr.suffix(1000))")
        let rubberband = loads("librubberband", in: fast.stderr)
        #expect(rubberband.contains { $0.contains("dynamically loaded") }, "\(rubberband)")
        #expect(!rubberband.contains { $0.contains("needed by") }, "\(rubberband)")

        let broken = dir.file("broken-libs")
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: "\(broken)/librubberband.so.2", contents: Data()))
        let plain = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", song],
                            environment: ["LD_LIBRARY_PATH": broken])
        #expect(plain.status == 0, "\(plain.stderr.suffix(1000))")
        #expect(plain.stdout.contains("1 played"), "\(plain.stdout)")
        let stretched = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", "--rate", "2", song],
                                environment: ["LD_LIBRARY_PATH": broken])
        #expect(stretched.status == 127, "\(stretched.stderr.suffix(1000))")
        #expect(stretched.stderr.contains("tonearm: librubberband cannot be loaded (\(broken)/librubberband.so.2: file too short)"),
                "\(stretched.stderr.suffix(1000))")
    }

    /// OpenSSL is loaded by the first HTTPS connection: here to a server whose self-signed
    /// certificate is not trusted, so the connection fails, said as a TLS failure (OpenSSL's
    /// verification, through the loaded library), not a crash.
    @Test func anHTTPSConnectionLoadsOpenSSLOnFirstUse() throws {
        let dir = try TempDir("lazy-openssl")
        defer { dir.remove() }
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.3", "-c:a", "libmp3lame", dir.file("tone.mp3")])
        let server = try PrivateHTTPServer(root: dir.path, tls: true)
        defer { server.stop() }
        let r = try run(try tonearmBinary(), ["play", "--plain", "--output", "null:untimed", server.url("/tone.mp3").absoluteString],
                        environment: ["LD_DEBUG": "files"])
        #expect(r.status != 0, "\(r.stdout)")
        #expect(r.stderr.contains("certificate"), "\(r.stderr.suffix(1000))")
        // Loaded during the run (by COpenSSLLazy's dlopen, or first by FFmpeg's dependencies when
        // FFmpeg is loaded first: then the dlopen finds it there), not before main.
        #expect(!loads("libssl", in: r.stderr).isEmpty, "OpenSSL was not loaded: \(r.stderr.suffix(500))")
        let beforeMain = r.stderr.components(separatedBy: "transferring control").first ?? ""
        #expect(beforeMain.count < r.stderr.count, "no loader log: \(r.stderr.prefix(500))")
        #expect(loads("libssl", in: beforeMain).isEmpty && loads("libcrypto", in: beforeMain).isEmpty,
                "OpenSSL was loaded at the start: \(loads("libssl", in: beforeMain))")
    }
}
