// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// The `tonearm` binary built beside the tests.
func tonearmBinary() throws -> String {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("tonearm").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    let fromSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../.build/debug/tonearm").standardized.path
    if FileManager.default.isExecutableFile(atPath: fromSource) { return fromSource }
    throw TestSupportError("the tonearm binary was not found; build it with `swift build`")
}

/// `tonearm play` and `tonearm info` as a user runs them.
@Suite(.serialized) struct CLITests {
    let dir: TempDir
    init() throws { dir = try TempDir("cli") }

    @Test func playsAToneThroughPulseAudioAndItIsHeard() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let tone = dir.file("tone.flac")
        // 2 s of 440 Hz at amplitude 0.5 on both channels.
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*440*t):s=44100:d=2",
                             "-c:a", "flac", tone])
        let rec = try server.startRecording(to: dir.file("heard.wav"))
        let r = try run(try tonearmBinary(), ["play", "--output", "pulse", tone], environment: server.environment)
        rec.stop()
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("Playing 1/1"))
        let heard = try readWAV(dir.file("heard.wav"))
        let mono = heard.channels[0]
        let span = try #require(nonSilentSpan(mono, sampleRate: heard.sampleRate))
        let seconds = Double(span.count) / heard.sampleRate
        #expect(abs(seconds - 2.0) < 0.06, "heard \(seconds) s of tone")
        let body = Array(mono[(span.lowerBound + 4800)..<(span.upperBound - 4800)])
        let f = try #require(dominantFrequency(body, sampleRate: heard.sampleRate))
        #expect(abs(f - 440) < 2, "heard \(f) Hz")
        let level = rms(body)
        #expect(abs(Double(level) - 0.5 / 2.0.squareRoot()) < 0.02, "RMS \(level)")
    }

    @Test func playWithoutAServerFallsBackToNullAndSaysSo() throws {
        let tone = dir.file("short.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.3", tone])
        let r = try run(try tonearmBinary(), ["play", tone],
                        environment: ["PULSE_SERVER": "unix:\(dir.path)/no-such-socket"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("nothing will be heard"))
        #expect(r.stderr.contains("--output"))
    }

    @Test func aBadFileIsReportedAndPlaybackGoesOn() throws {
        let good = dir.file("good.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.3", good])
        let bad = dir.file("bad.mp3")
        try "not audio at all\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let missing = dir.file("missing.ogg")
        let out = dir.file("all.wav")
        let r = try run(try tonearmBinary(), ["play", "--output", "file:\(out)", bad, missing, good])
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(bad): not a media file"))
        #expect(r.stderr.contains("\(missing): file not found"))
        #expect(r.stdout.contains("Playing 3/3"))
        #expect(r.stdout.contains("1 played, 2 failed"))
        #expect(try readWAV(out).frameCount == 13230)  // 0.3 s at 44.1 kHz, nothing else
    }

    @Test func fileOutputWritesWhatWouldBeHeard() throws {
        let tone = dir.file("f.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:duration=0.5:sample_rate=48000", tone])
        let out = dir.file("o.wav")
        let r = try run(try tonearmBinary(), ["play", "--output", "file:\(out)", "--volume", "50", tone])
        #expect(r.status == 0, "\(r.stderr)")
        let w = try readWAV(out)
        let src = try readWAV(tone)
        #expect(w.frameCount == src.frameCount)
        // Half volume, after the short anti-click ramp.
        let i = 10_000
        #expect(abs(w.channels[0][i] - src.channels[0][i] * 0.5) < 1e-4)
    }

    @Test func fileOutputHoldsTheWholeSession() throws {
        let a = dir.file("a.wav"), b = dir.file("b.wav"), other = dir.file("c.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=48000", "-ac", "2", "-c:a", "pcm_f32le", a])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=660:duration=0.25:sample_rate=48000", "-ac", "2", "-c:a", "pcm_f32le", b])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=660:duration=0.25:sample_rate=22050", "-ac", "2", other])
        let out = dir.file("session.wav")
        let r = try run(try tonearmBinary(), ["play", "--output", "file:\(out)", a, other, b])
        #expect(r.status == 1)
        #expect(r.stderr.contains("22050 Hz"))
        let w = try readWAV(out)
        #expect(w.frameCount == 24000 + 12000)
        #expect(w.channels[0] == (try readWAV(a)).channels[0] + (try readWAV(b)).channels[0])
    }

    @Test func eqOptionShapesTheOutput() throws {
        let tone = dir.file("eq-tone.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*1000*t):s=48000:d=1", "-c:a", "pcm_f32le", tone])
        let out = dir.file("eq-out.wav")
        let r = try run(try tonearmBinary(), ["play", "--output", "file:\(out)", "--eq", "1k:-6", tone])
        #expect(r.status == 0, "\(r.stderr)")
        let w = try readWAV(out)
        let db = 20 * log10(Double(rms(w.channels[0][4800..<43200])) / (0.25 / 2.0.squareRoot()))
        #expect(abs(db + 6) < 0.15, "measured \(db) dB")
        let fast = dir.file("fast.wav")
        let f = try run(try tonearmBinary(), ["play", "--output", "file:\(fast)", "--rate", "2", tone])
        #expect(f.status == 0, "\(f.stderr)")
        #expect(try readWAV(fast).frameCount == 24000)
        let bad = try run(try tonearmBinary(), ["play", "--eq", "loudest", tone])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("unknown EQ preset 'loudest'"))
        #expect(bad.stderr.contains("rock"))
        let badBand = try run(try tonearmBinary(), ["play", "--eq", "1k:+99", tone])
        #expect(badBand.status != 0)
        #expect(badBand.stderr.contains("+99"))
    }

    @Test func renderWritesTheProcessedFileAndRefusesToClobber() throws {
        let src = dir.file("r-src.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*1000*t):s=48000:d=1", "-c:a", "pcm_f32le", src])
        let out = dir.file("r-out.wav")
        var r = try run(try tonearmBinary(), ["render", src, "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try readWAV(out).channels == (try readWAV(src)).channels)   // no options: the same samples
        r = try run(try tonearmBinary(), ["render", src, "-o", out, "--eq", "1k:-6", "--rate", "2"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("exists; use --force"))
        r = try run(try tonearmBinary(), ["render", src, "-o", out, "--eq", "1k:-6", "--rate", "2", "--force"])
        #expect(r.status == 0, "\(r.stderr)")
        let w = try readWAV(out)
        #expect(w.frameCount == 24000)
        let db = 20 * log10(Double(rms(w.channels[0][2400..<21600])) / (0.25 / 2.0.squareRoot()))
        #expect(abs(db + 6) < 0.2, "measured \(db) dB")
        r = try run(try tonearmBinary(), ["render", dir.file("none.flac"), "-o", dir.file("none.wav")])
        #expect(r.status == 1)
        #expect(r.stderr.contains("file not found"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("none.wav")))
    }

    @Test func renderAppliesPitchAndReverb() throws {
        let src = dir.file("fx-src.wav")
        // 0.5 s of 440 Hz, then 1 s of silence (where a reverb tail must appear).
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*440*t)*lt(t\\,0.5):s=48000:d=1.5",
                             "-c:a", "pcm_f32le", src])
        let pitched = dir.file("fx-pitch.wav")
        var r = try run(try tonearmBinary(), ["render", src, "-o", pitched, "--pitch", "1200"])
        #expect(r.status == 0, "\(r.stderr)")
        let p = try readWAV(pitched)
        #expect(p.frameCount == 72000 + 12000)   // + the pitch shifter's 0.25 s tail
        let span = try #require(nonSilentSpan(p.channels[0], sampleRate: 48000))
        let f = try #require(dominantFrequency(Array(p.channels[0][(span.lowerBound + 4800)..<(span.lowerBound + 19200)]), sampleRate: 48000))
        #expect(abs(f - 880) < 6, "pitched to \(f) Hz")
        let wet = dir.file("fx-reverb.wav")
        r = try run(try tonearmBinary(), ["render", src, "-o", wet, "--reverb", "large-hall:50"])
        #expect(r.status == 0, "\(r.stderr)")
        let w = try readWAV(wet)
        #expect(rms(w.channels[0][36000..<48000]) > 0.001)   // the tail rings on after the tone
        // ... and past the end of the file, for the large hall's decay (2.4 s) and pre-delay (25 ms).
        #expect(w.frameCount == 72000 + 116_400)
        #expect(rms(w.channels[0][72000..<96000]) > 0.0001)
        #expect(rms((try readWAV(src)).channels[0][36000..<48000]) == 0)
        r = try run(try tonearmBinary(), ["render", src, "-o", dir.file("x.wav"), "--reverb", "garage"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("unknown preset 'garage'"))
        #expect(r.stderr.contains("cathedral"))
    }

    @Test func badOptionsAreRefusedClearly() throws {
        let r = try run(try tonearmBinary(), ["play", "--output", "alsa", "x.wav"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("unknown output 'alsa'"))
        let v = try run(try tonearmBinary(), ["play", "--volume", "150", "x.wav"])
        #expect(v.status != 0)
        #expect(v.stderr.contains("--volume must be between 0 and 100"))
    }

    @Test func infoPrintsFormatAndTagsAsTextAndJSON() throws {
        let f = dir.file("tagged.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1:sample_rate=48000",
                             "-metadata", "title=Song Title", "-metadata", "artist=Some Artist",
                             "-metadata", "album=An Album", "-metadata", "track=3/9", "-c:a", "flac", f])
        let t = try run(try tonearmBinary(), ["info", f])
        #expect(t.status == 0)
        #expect(t.stdout.contains("FLAC · 48 kHz"))
        #expect(t.stdout.contains("48000 frames"))
        let j = try run(try tonearmBinary(), ["info", "--json", f, dir.file("nope.wav")])
        #expect(j.status == 1)
        let arr = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]])
        #expect(arr.count == 2)
        #expect(arr[0]["frames"] as? Int == 48000)
        #expect(arr[0]["sampleRate"] as? Int == 48000)
        #expect((arr[0]["tags"] as? [String: String])?["title"] == "Song Title")
        #expect((arr[0]["tags"] as? [String: String])?["track"] == "3/9")
        #expect((arr[1]["error"] as? String)?.contains("file not found") == true)
    }
}
