// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport

/// `tonearm play` and `tonearm info` as a user runs them.
@Suite(.serialized) struct CLITests {
    let dir: TempDir
    init() throws {
        dir = try TempDir("cli")
        // `tonearm play` saves its queue under the XDG state directory: keep it in the test's own.
        setenv("XDG_STATE_HOME", dir.file("state"), 1)
    }

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

    @Test func deviceChoosesTheOutputItPlaysTo() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.pactl("load-module", "module-null-sink", "sink_name=second", "rate=48000")
        let tone = dir.file("device-tone.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*440*t):s=48000:d=1", tone])
        let onSecond = try server.startRecording(ofSink: "second", to: dir.file("second.wav"))
        let onDefault = try server.startRecording(to: dir.file("default.wav"))
        let r = try run(try tonearmBinary(), ["play", "--output", "pulse", "--device", "second", tone], environment: server.environment)
        onSecond.stop()
        onDefault.stop()
        #expect(r.status == 0, "\(r.stderr)")
        let heard = try readWAV(dir.file("second.wav")).channels[0]
        let span = try #require(nonSilentSpan(heard, sampleRate: 48000))
        #expect(abs(Double(span.count) / 48000 - 1) < 0.06, "second sink heard \(span.count) frames")
        #expect(nonSilentSpan(try readWAV(dir.file("default.wav")).channels[0], sampleRate: 48000) == nil)
        // An output that does not exist is reported, not played elsewhere.
        let bad = try run(try tonearmBinary(), ["play", "--output", "pulse", "--device", "no-such-sink", tone],
                          environment: server.environment)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("no-such-sink") || bad.stderr.lowercased().contains("no such entity"), "\(bad.stderr)")
        let misplaced = try run(try tonearmBinary(), ["play", "--output", "null", "--device", "second", tone])
        #expect(misplaced.status == 64)
    }

    @Test func soundPlaysShortFilesAsSystemSounds() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let a = dir.file("ding.wav"), b = dir.file("dong.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.3*sin(2*PI*880*t)|0.3*sin(2*PI*880*t):s=48000:d=0.3", a])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.3*sin(2*PI*1320*t)|0.3*sin(2*PI*1320*t):s=48000:d=0.3", b])
        let rec = try server.startRecording(to: dir.file("sounds.wav"))
        let r = try run(try tonearmBinary(), ["sound", "--together", a, b], environment: server.environment)
        rec.stop()
        #expect(r.status == 0, "\(r.stderr)")
        let heard = try readWAV(dir.file("sounds.wav"))
        let span = try #require(nonSilentSpan(heard.channels[0], sampleRate: heard.sampleRate))
        let body = heard.channels[0][(span.lowerBound + 2400)..<(span.lowerBound + 9600)]
        #expect(goertzelPower(body, frequency: 880, sampleRate: heard.sampleRate) > 100 * goertzelPower(body, frequency: 1000, sampleRate: heard.sampleRate))
        #expect(goertzelPower(body, frequency: 1320, sampleRate: heard.sampleRate) > 100 * goertzelPower(body, frequency: 1000, sampleRate: heard.sampleRate))
        let long = dir.file("long-sound.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=31", long])
        let bad = try run(try tonearmBinary(), ["sound", long], environment: server.environment)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("at most 30 s"))
    }

    /// `tonearm sound --alert` in a terminal (util-linux `script`): with a notification server
    /// (dunst on a private bus and its own Xvfb display) the notification shows and no bell
    /// rings; without a bus the bell (BEL) rings instead.
    @Test func soundAlertNotifiesOrRingsTheBell() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let server = try NotificationServer(bus: bus)
        defer { server.stop() }
        let ding = dir.file("ding.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=880:duration=0.3", ding])
        let tonearm = try tonearmBinary()
        let quiet = ["PULSE_SERVER": "unix:\(dir.path)/no-such-socket"]

        let shown = try run("script", ["-qec", "'\(tonearm)' sound --alert '\(ding)'", "/dev/null"],
                            environment: quiet.merging(bus.environment) { $1 })
        #expect(shown.status == 0, "\(shown.stdout)")
        #expect(!shown.stdout.contains("\u{07}"))
        let titled = try run("script", ["-qec", "'\(tonearm)' sound --alert --title 'Tea timer' --body 'The tea is ready.' '\(ding)'",
                                        "/dev/null"], environment: quiet.merging(bus.environment) { $1 })
        #expect(titled.status == 0, "\(titled.stdout)")
        #expect(try server.notifications().map { [$0.summary, $0.body] } == [["ding", ""], ["Tea timer", "The tea is ready."]])

        let noBus = quiet.merging(["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": dir.path]) { $1 }
        let bell = try run("script", ["-qec", "'\(tonearm)' sound --alert '\(ding)'", "/dev/null"], environment: noBus)
        #expect(bell.status == 0, "\(bell.stdout)")
        #expect(bell.stdout.contains("\u{07}"))
        #expect(try server.notifications().count == 2)

        let misplaced = try run(tonearm, ["sound", "--title", "x", ding], environment: quiet)
        #expect(misplaced.status == 64 && misplaced.stderr.contains("--title and --body go with --alert"))
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

    /// Plain progress lines belong to the track announced above them: at a gapless change the
    /// next track's 0:00 comes after its "Playing" line, not before it, and the end prints no 0:00.
    @Test func plainProgressLinesFollowTheirTrack() throws {
        var files: [String] = []
        for (n, hz) in [(1, 440), (2, 660)] {
            let f = dir.file("plain\(n).flac")
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(hz):duration=6", "-metadata", "title=Plain \(n)", f])
            files.append(f)
        }
        let r = try run(try tonearmBinary(), ["play", "--output", "null", "--plain"] + files)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("Playing ") }.count == 2, "\(r.stdout)")
        // Within each track's block the times only go forward, from 0:00, past 0:05.
        var blocks: [[String]] = []
        for line in lines {
            if line.hasPrefix("Playing ") { blocks.append([]) } else if line.hasPrefix("  "), !blocks.isEmpty {
                blocks[blocks.count - 1].append(line.trimmingCharacters(in: .whitespaces))
            }
        }
        #expect(blocks == [["0:00 / 0:06", "0:05 / 0:06"], ["0:00 / 0:06", "0:05 / 0:06"]], "\(r.stdout)")
        #expect(!lines.prefix { !$0.hasPrefix("Playing ") }.contains { $0.hasPrefix("  ") }, "no time before the first track")
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
        #expect(r.status == 0, "\(r.stderr)")
        // One gapless queue: the 22.05 kHz file is resampled to the session's 48 kHz in between.
        let w = try readWAV(out)
        #expect(abs(w.frameCount - (24000 + 12000 + 12000)) <= 2, "\(w.frameCount) frames")
        #expect(Array(w.channels[0][0..<24000]) == (try readWAV(a)).channels[0])
        #expect(Array(w.channels[0][(w.frameCount - 12000)...]) == (try readWAV(b)).channels[0])
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
        // Twice as fast: the 1 s tone lasts 0.5 s (then the time-pitch node's tail allowance, silent).
        let fastTone = try readWAV(fast).channels[0]
        let sounding = try #require(nonSilentSpan(fastTone, sampleRate: 48000))
        #expect(abs(sounding.count - 24000) <= 960, "sounding \(sounding.count) frames")
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
        // The 0.5 s tone comes out whole and in place (the shifter reads ahead, so the render
        // ends with its 0.25 s tail allowance after the cycle in which the file ended).
        #expect((72000...(72000 + 12000 + 4096)).contains(p.frameCount), "\(p.frameCount) frames")
        let span = try #require(nonSilentSpan(p.channels[0], sampleRate: 48000))
        #expect(span.lowerBound < 480 && abs(span.upperBound - 24000) < 960, "tone at \(span)")
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

    /// `--effect NAME:ID=VALUE,…` sets any listed parameter; `tonearm effects` lists them.
    @Test func renderSetsEffectParametersByIdentifier() throws {
        let src = dir.file("ep-src.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*440*t):s=48000:d=1", "-c:a", "pcm_f32le", src])
        let out = dir.file("ep-out.wav")
        // Varispeed at 2: half as long, an octave up; the EQ's band 5 (1 kHz) cut by 6 dB does
        // not touch 880 Hz much, but its global gain of -6 dB does.
        var r = try run(try tonearmBinary(), ["render", src, "-o", out, "--effect", "varispeed:rate=2",
                                              "--effect", "eq:globalGain=-6"])
        #expect(r.status == 0, "\(r.stderr)")
        let w = try readWAV(out)
        let span = try #require(nonSilentSpan(w.channels[0], sampleRate: 48000))
        #expect(abs(span.count - 24_000) <= 4, "sounding \(span.count) frames")
        let middle = Array(w.channels[0][4800..<19200])
        let f = try #require(dominantFrequency(middle, sampleRate: 48000))
        #expect(abs(f - 880) < 4, "varispeed 2 gave \(f) Hz")
        let db = 20 * log10(Double(rms(middle)) / (0.25 / 2.0.squareRoot()))
        #expect(abs(db + 6) < 0.3, "global gain gave \(db) dB")
        // Time-pitch by identifier: twice as fast, pitch kept.
        r = try run(try tonearmBinary(), ["render", src, "-o", out, "--force", "--effect", "time-pitch:rate=2"])
        #expect(r.status == 0, "\(r.stderr)")
        let t = try readWAV(out)
        let ts = try #require(nonSilentSpan(t.channels[0], sampleRate: 48000))
        #expect(abs(ts.count - 24_000) <= 960, "sounding \(ts.count) frames")
        let tf = try #require(dominantFrequency(Array(t.channels[0][4800..<19200]), sampleRate: 48000))
        #expect(abs(tf - 440) < 5, "time-pitch 2 gave \(tf) Hz")
        // Bad specs name what is wrong and what is accepted.
        let bad: [(String, String)] = [
            ("flanger", "unknown effect 'flanger'"),
            ("delay:delayTime=9", "delayTime = 9 is outside 0…2 seconds"),
            ("delay:echo=1", "delay has no parameter 'echo'; it has delayTime, feedback"),
            ("reverb:preset=garage", "'garage' is not a value for preset"),
            ("eq:band12.gain=1", "eq has no parameter 'band12.gain'"),
            ("time-pitch:rate", "'rate' is not ID=VALUE"),
        ]
        for (spec, message) in bad {
            let b = try run(try tonearmBinary(), ["render", src, "-o", dir.file("never.wav"), "--effect", spec])
            #expect(b.status == 64, "\(spec): status \(b.status)")
            #expect(b.stderr.contains(message), "\(spec): \(b.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("never.wav")))
    }

    @Test func effectsListsEveryParameterFromTheDescriptors() throws {
        let r = try run(try tonearmBinary(), ["effects", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        struct Entry: Decodable { var name: String; var parameters: [ParameterDescriptor] }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(r.stdout.utf8))
        #expect(entries.map(\.name) == ["eq", "reverb", "delay", "time-pitch", "varispeed"])
        let rate = try #require(entries.first { $0.name == "time-pitch" }?.parameters.first { $0.identifier == "rate" })
        #expect(rate.range == (1.0 / 32)...32)
        #expect(entries[0].parameters.contains { $0.identifier == "band9.gain" && $0.unit == .decibels })
        let text = try run(try tonearmBinary(), ["effects", "reverb"])
        #expect(text.stdout.contains("preset"))
        #expect(text.stdout.contains("cathedral"))
        #expect(!text.stdout.contains("varispeed"))
        let unknown = try run(try tonearmBinary(), ["effects", "chorus"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown effect 'chorus'"))
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
