// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport

/// `tonearm extract-audio`, `tonearm convert` and the track list of `tonearm info`, as a user runs them.
@Suite(.offThePool)  final class ExportCommandLineTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("export-cli") }
    deinit { dir.remove() }

    func twoTrackVideo() throws -> String {
        let f = dir.file("two.mp4")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:d=2",
                             "-f", "lavfi", "-i", "sine=frequency=440:duration=2:sample_rate=48000",
                             "-f", "lavfi", "-i", "sine=frequency=660:duration=2:sample_rate=44100",
                             "-map", "0:v", "-map", "1:a", "-map", "2:a", "-c:v", "mpeg4", "-c:a", "aac",
                             "-metadata", "title=Two Tracks", "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", f])
        return f
    }

    @Test func infoListsEveryTrack() throws {
        let f = try twoTrackVideo()
        let r = try run(try tonearmBinary(), ["info", f])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("#0  video    mpeg4 · 64×64"), "\(r.stdout)")
        #expect(r.stdout.contains("#1  audio    aac · 48 kHz · mono"))
        #expect(r.stdout.contains("#2  audio    aac · 44.1 kHz · mono"))
        #expect(r.stdout.contains("fra"))
        let j = try run(try tonearmBinary(), ["info", "--json", f])
        let arr = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]])
        let tracks = try #require(arr[0]["tracks"] as? [[String: Any]])
        #expect(tracks.map { $0["mediaType"] as? String } == ["video", "audio", "audio"])
        // A video without sound is described, not refused.
        let silent = dir.file("silent.mp4")
        try Fixtures.videoOnly(path: silent)
        let s = try run(try tonearmBinary(), ["info", silent])
        #expect(s.status == 0)
        #expect(s.stdout.contains("none (no audio track)"))
        #expect(s.stdout.contains("#0  video"))
    }

    @Test func extractAudioCopiesTheChosenTrack() throws {
        let f = try twoTrackVideo()
        let out = dir.file("second.mka")
        let r = try run(try tonearmBinary(), ["extract-audio", f, "-o", out, "--track", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("progress 100%"), "\(r.stdout)")
        #expect(r.stdout.contains("Wrote \(out): aac, 44100 Hz"))
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,sample_rate", "-of", "csv=p=0", out])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "aac,44100")
        // Again: the file exists.
        let again = try run(try tonearmBinary(), ["extract-audio", f, "-o", out, "--track", "2"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("\(out): already exists; use --force to overwrite it"), "\(again.stderr)")
        let forced = try run(try tonearmBinary(), ["extract-audio", f, "-o", out, "--track", "1", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
    }

    @Test func extractAudioErrorsAreClear() throws {
        let f = try twoTrackVideo()
        let wav = try run(try tonearmBinary(), ["extract-audio", f, "-o", dir.file("out.wav")])
        #expect(wav.status == 1)
        #expect(wav.stderr.contains("aac audio cannot be written to a wav file without re-encoding; compatible file types: m4a, mp4, caf, mka, aac"), "\(wav.stderr)")
        let silent = dir.file("silent.mp4")
        try Fixtures.videoOnly(path: silent)
        let none = try run(try tonearmBinary(), ["extract-audio", silent, "-o", dir.file("out.m4a")])
        #expect(none.status == 1)
        #expect(none.stderr.contains("\(silent): has no audio track"))
        let video = try run(try tonearmBinary(), ["extract-audio", f, "-o", dir.file("v.m4a"), "--track", "0"])
        #expect(video.stderr.contains("no usable track 0 (it is a video track; audio tracks: #1, #2)"), "\(video.stderr)")
        let preset = try run(try tonearmBinary(), ["extract-audio", f, "-o", dir.file("p.m4a"), "--preset", "best"])
        #expect(preset.status != 0)
        #expect(preset.stderr.contains("--preset must be one of passthrough, apple-m4a"))
        #expect(ExportFixturesCLI.hidden(dir.path).isEmpty)
    }
}

extension ExportCommandLineTests {
    @Test func convertTrimsToTheSampleAndKeepsTags() throws {
        let src = dir.file("song.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*550*t):s=44100:d=200",
                             "-metadata", "title=Long Song", "-metadata", "artist=Some Artist", "-c:a", "pcm_s16le", src])
        let out = dir.file("cut.flac")
        let r = try run(try tonearmBinary(), ["convert", src, "-o", out, "--start", "1:30", "--end", "2:45"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("progress 50%"))
        #expect(r.stdout.contains("Wrote \(out): flac, 44100 Hz, stereo, 1:15 (75.000 s)"), "\(r.stdout)")
        // Exactly the frames from 1:30 to 2:45, and exactly the source's samples there.
        let cut = try Fixtures.decodeWithFFmpeg(out)
        let whole = try Fixtures.decodeWithFFmpeg(src)
        #expect(cut.count == 75 * 44100 * 2)
        #expect(Array(whole[(90 * 44100 * 2)..<(165 * 44100 * 2)]) == cut)
        let tags = try run("ffprobe", ["-v", "error", "-show_entries", "format_tags=title,artist", "-of", "csv=p=0", out])
        #expect(tags.stdout.contains("Long Song"))
        let m4a = try run(try tonearmBinary(), ["convert", src, "-o", dir.file("cut.m4a"), "--preset", "appleM4A", "--end", "10"])
        #expect(m4a.status == 0, "\(m4a.stderr)")
        #expect(m4a.stdout.contains("aac, 44100 Hz, stereo, 0:10 (10.000 s)"), "\(m4a.stdout)")
    }

    @Test func convertRejectsBadTimesAndPresets() throws {
        let bad = try run(try tonearmBinary(), ["convert", "x.wav", "-o", dir.file("y.flac"), "--start", "1:75"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--start must be seconds, m:ss or h:mm:ss, not '1:75'"))
        let order = try run(try tonearmBinary(), ["convert", "x.wav", "-o", dir.file("y.flac"), "--start", "20", "--end", "0:10"])
        #expect(order.stderr.contains("--end (0:10) must be after --start (20)"))
        let src = dir.file("s.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", src])
        let wrong = try run(try tonearmBinary(), ["convert", src, "-o", dir.file("y.mp3"), "--preset", "lossless"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("the lossless preset cannot write mp3 files; it writes flac, m4a, mp4, caf, mka, ogg"), "\(wrong.stderr)")
    }
}

extension ExportCommandLineTests {
    @Test func ctrlCStopsAConversionAndLeavesNothing() throws {
        let src = dir.file("long.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=900:sample_rate=48000", "-ac", "2", "-c:a", "pcm_s16le", src])
        let out = dir.file("long.flac")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try tonearmBinary())
        p.arguments = ["convert", src, "-o", out]
        let stdout = Pipe(), stderr = Pipe()
        p.standardOutput = stdout
        p.standardError = stderr
        try p.run()
        // Wait (by reading, not sleeping) until the conversion reports progress, then interrupt it.
        var seen = ""
        while !seen.contains("progress 10%") {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        #expect(seen.contains("progress 10%"), "\(seen)")
        kill(p.processIdentifier, SIGINT)
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 1)
        #expect(err.contains("\(out): export cancelled; no file written"), "\(err)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(ExportFixturesCLI.hidden(dir.path).isEmpty)
    }
}

enum ExportFixturesCLI {
    /// Hidden (temporary) files left in a directory.
    static func hidden(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix(".") }
    }
}

extension ExportCommandLineTests {
    /// `--start` without `--end` keeps everything from there to the end, between every pair of
    /// the common formats (PCM and lossless output exactly the source's samples from the start);
    /// a start at or after the end is a clear error that leaves no file.
    @Test func aStartAloneTrimsToTheEnd() throws {
        let formats: [(ext: String, args: [String], lossless: Bool)] = [
            ("wav", ["-c:a", "pcm_s16le"], true), ("flac", ["-c:a", "flac"], true),
            ("mp3", ["-c:a", "libmp3lame"], false), ("m4a", ["-c:a", "aac"], false), ("opus", ["-c:a", "libopus"], false),
        ]
        for from in formats {
            let src = dir.file("src.\(from.ext)")
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*550*t):s=48000:d=3"]
                                + from.args + ["-y", src])
            let source = try Fixtures.decodeWithFFmpeg(src)
            for to in formats {
                let out = dir.file("tail-\(from.ext).\(to.ext)")
                let r = try run(try tonearmBinary(), ["convert", src, "-o", out, "--start", "1"])
                #expect(r.status == 0, "\(from.ext)→\(to.ext): \(r.stderr)")
                #expect(r.stdout.contains("Wrote \(out)"), "\(from.ext)→\(to.ext): \(r.stdout)")
                if from.ext == "wav" && to.lossless {
                    let tail = try Fixtures.decodeWithFFmpeg(out)
                    #expect(tail == Array(source[(48000 * 2)...]), "\(from.ext)→\(to.ext): not the source's samples from 1 s")
                } else {
                    let probe = try run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", out])
                    let d = try #require(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
                    #expect(abs(d - 2) < 0.06, "\(from.ext)→\(to.ext): \(d) s")
                }
            }
            for start in ["3", "3.2", "0:07"] {
                let late = dir.file("late-\(from.ext).wav")
                let r = try run(try tonearmBinary(), ["convert", src, "-o", late, "--start", start])
                #expect(r.status == 1, "\(from.ext) --start \(start): \(r.status) \(r.stderr)")
                #expect(r.stderr.contains("starts after the end of \(src)"), "\(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: late))
            }
        }
        #expect(ExportFixturesCLI.hidden(dir.path).isEmpty)
    }
}

extension ExportCommandLineTests {
    /// The cover `tonearm info --json` reads from `path`: (MIME type, bytes), nil when none.
    func cover(_ path: String) throws -> (String, Int)? {
        let r = try run(try tonearmBinary(), ["info", "--json", path])
        let arr = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], "\(r.stderr)")
        guard let art = arr.first?["artwork"] as? [String: Any] else { return nil }
        return (art["mimeType"] as? String ?? "?", art["bytes"] as? Int ?? -1)
    }

    /// `convert` carries the embedded cover to MP3, M4A, FLAC, Ogg and Opus (also converting a
    /// file in place), and leaves it out with `--no-artwork`.
    @Test func convertCarriesTheCover() throws {
        let png = dir.file("cover.png")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=48x32:d=1", "-frames:v", "1", png])
        let coverBytes = try Data(contentsOf: URL(fileURLWithPath: png)).count
        let sources: [(ext: String, args: [String])] = [
            ("mp3", ["-c:a", "libmp3lame", "-id3v2_version", "3"]), ("flac", ["-c:a", "flac"]), ("m4a", ["-c:a", "aac"]),
        ]
        for s in sources {
            let src = dir.file("with-cover.\(s.ext)")
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", "-i", png, "-map", "0", "-map", "1"] + s.args
                                + ["-c:v", "png", "-disposition:v", "attached_pic", "-metadata", "title=Covered", "-y", src])
            let original = try #require(try cover(src), "the \(s.ext) fixture has no cover")
            #expect(original == ("image/png", coverBytes))
            for ext in ["mp3", "m4a", "flac", "ogg", "opus"] {
                let out = dir.file("from-\(s.ext).\(ext)")
                let r = try run(try tonearmBinary(), ["convert", src, "-o", out])
                #expect(r.status == 0, "\(s.ext)→\(ext): \(r.stderr)")
                let got = try cover(out)
                #expect(got?.0 == "image/png" && got?.1 == coverBytes, "\(s.ext)→\(ext): \(String(describing: got))")
                // FFmpeg sees it too, as the attached picture.
                let probe = try run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_name:stream_disposition=attached_pic",
                                                "-of", "csv=p=0", out])
                #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "png,1", "\(s.ext)→\(ext): \(probe.stdout)")
                let bare = dir.file("bare-\(s.ext).\(ext)")
                let n = try run(try tonearmBinary(), ["convert", src, "-o", bare, "--no-artwork"])
                #expect(n.status == 0, "\(n.stderr)")
                #expect(try cover(bare) == nil, "\(s.ext)→\(ext) --no-artwork")
            }
            // In place: the file keeps its cover (and its tags).
            let copy = dir.file("in-place.\(s.ext)")
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: src, toPath: copy)
            let r = try run(try tonearmBinary(), ["convert", copy, "-o", copy, "--force"])
            #expect(r.status == 0, "in place \(s.ext): \(r.stderr)")
            #expect(try cover(copy)?.1 == coverBytes, "in place \(s.ext)")
        }
    }
}
