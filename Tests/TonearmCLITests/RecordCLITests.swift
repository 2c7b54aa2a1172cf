// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm record` against a private PulseAudio with a `module-sine-source` (440 Hz, amplitude
/// 0.5: −9.03 dBFS RMS): the summary, the file's exact length, Ctrl-C keeping a valid file, and
/// the refusals (named options, file types, an existing file, an unknown source).
@Suite(.serialized) struct RecordCLITests {
    static func serverWithSine() throws -> PrivatePulseServer {
        let server = try PrivatePulseServer()
        try server.pactl("load-module", "module-sine-source", "source_name=sine", "frequency=440", "rate=48000")
        return server
    }

    @Test func recordsForADurationAndSaysWhat() throws {
        let server = try Self.serverWithSine()
        defer { server.stop() }
        let dir = try TempDir("record-cli")
        defer { dir.remove() }
        let out = dir.file("take.flac")
        let r = try run(try tonearmBinary(), ["record", out, "--source", "sine", "--duration", "0.5", "--channels", "1"],
                        environment: server.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("Recording from sine to \(out)\n"), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("Recorded 0:00.500 (24000 frames) from sine to \(out): FLAC, 48000 Hz, 16-bit, 1 ch\n"), "\(r.stdout)")
        let samples = try Fixtures.decodeWithFFmpeg(out)
        #expect(samples.count == 24_000)
        let level = 20 * log10(Double(rms(samples.suffix(12_000))))
        #expect(abs(level - 20 * log10(0.5 / 2.squareRoot())) < 0.5, "\(level) dBFS")
    }

    /// SIGINT (Ctrl-C) stops the recording: the summary, status 130, and a WAV whose header holds
    /// the frames the summary states.
    @Test func ctrlCStopsWithAValidFile() async throws {
        let server = try Self.serverWithSine()
        defer { server.stop() }
        let dir = try TempDir("record-cli")
        defer { dir.remove() }
        let out = dir.file("open.wav")
        let p = try ChildProcess([try tonearmBinary(), "record", out, "--source", "sine"], environment: server.environment,
                                 captureStandardOutput: true)
        defer { p.terminate(SIGKILL) }
        // A meter line: recording has run (a plain line a second when piped).
        _ = await p.waitForStandardOutput(timeout: 10) { $0.text.contains("● ") }
        p.terminate(SIGINT)
        #expect(await p.waitForExit(timeout: 10))
        #expect(p.status.map { ($0 >> 8) & 0xff } == 130, "status \(String(describing: p.status))")
        let text = p.standardOutputText
        let frames = text.split(separator: "\n").last.flatMap { line -> Int? in
            guard let open = line.firstIndex(of: "("), let space = line[open...].firstIndex(of: " ") else { return nil }
            return Int(line[line.index(after: open)..<space])
        }
        let wav = try readWAV(out)
        #expect(frames != nil && wav.frameCount == frames, "\(text)")
        #expect(wav.frameCount > 0 && wav.channelCount == 2)
    }

    /// A disk that fills up (here a file-size limit, `ulimit -f`, which fails writes as a full
    /// disk does): the recording stops with the error naming the file (status 1), and the WAV's
    /// header says what the file holds — whole frames of the recorded tone, as many as the
    /// summary states — instead of the empty file a header left unwritten would announce.
    @Test func aFullDiskStopsWithAPlayableFile() throws {
        let server = try Self.serverWithSine()
        defer { server.stop() }
        let dir = try TempDir("record-cli")
        defer { dir.remove() }
        let out = dir.file("full.wav")
        // 100 blocks of 512 bytes (dash's ulimit): about a quarter of a second of 48 kHz stereo.
        let r = try run("/bin/sh", ["-c", "ulimit -f 100; exec \"$0\" record \"$1\" --source sine --duration 5", try tonearmBinary(), out],
                        environment: server.environment)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("\(out): cannot be written (File too large)"), "\(r.stderr)")
        // (libpulse also says "ftruncate() failed: File too large" under the limit: its shared
        // memory file is refused too, and it goes on without.)
        #expect(r.stderr.components(separatedBy: "cannot be written").count == 2, "said once: \(r.stderr)")
        let wav = try readWAV(out)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: out)[.size] as? Int)
        #expect(size <= 51_200 && wav.frameCount > 10_000, "\(size) bytes, \(wav.frameCount) frames")
        #expect(r.stdout.contains("(\(wav.frameCount) frames)"), "the summary states the frames in the file: \(r.stdout)")
        let level = 20 * log10(Double(rms(wav.channels[0].suffix(4_800))))
        #expect(abs(level - 20 * log10(0.5 / 2.squareRoot())) < 0.5, "the tone up to the end: \(level) dBFS")
    }

    /// The same for compressed files: FLAC is cut after its last whole frame and its STREAMINFO
    /// made to say the samples it holds (FFmpeg's trailer had written all it was given), Ogg Opus
    /// keeps its whole pages; each decodes without an error to exactly the frames the summary
    /// states — what the file holds, not what was given to the encoder.
    @Test(arguments: ["flac", "opus"]) func aFullDiskLeavesACompressedFileThatSaysWhatItHolds(_ ext: String) throws {
        let server = try Self.serverWithSine()
        defer { server.stop() }
        let dir = try TempDir("record-cli")
        defer { dir.remove() }
        let out = dir.file("full.\(ext)")
        let r = try run("/bin/sh", ["-c", "ulimit -f 100; exec \"$0\" record \"$1\" --source sine --duration 5", try tonearmBinary(), out],
                        environment: server.environment)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("\(out): cannot be written (File too large)"), "\(r.stderr)")
        let raw = dir.file("decoded.raw")
        let decode = try run("ffmpeg", ["-v", "error", "-i", out, "-f", "f32le", "-ac", "1", raw])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "the file decodes without an error: \(decode.stderr)")
        let bytes = try #require(try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int)
        let frames = bytes / 4
        #expect(frames > 48_000 && frames < 240_000, "\(frames) frames")
        #expect(r.stdout.contains("(\(frames) frames)"), "the summary states the frames in the file: \(r.stdout)")
        if ext == "flac" {
            let probe = try run("ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", out])
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(frames)", "STREAMINFO says what the file holds")
        }
    }

    @Test func refusalsNameWhatIsWrong() throws {
        let server = try Self.serverWithSine()
        defer { server.stop() }
        let dir = try TempDir("record-cli")
        defer { dir.remove() }
        let bin = try tonearmBinary()
        let bits = try run(bin, ["record", dir.file("a.wav"), "--bits", "20"], environment: server.environment)
        #expect(bits.status == 64 && bits.stderr.hasPrefix("tonearm: record: --bits 20: integer PCM is 8, 16, 24 or 32 bits\n"), "\(bits.stderr)")
        let mp3 = try run(bin, ["record", dir.file("a.mp3")], environment: server.environment)
        #expect(mp3.status == 1 && mp3.stderr.contains("cannot record to a '.mp3' file; the recorder writes .wav, .flac"), "\(mp3.stderr)")
        let source = try run(bin, ["record", dir.file("a.wav"), "--source", "nope", "--duration", "1"], environment: server.environment)
        #expect(source.status == 1 && source.stderr.contains("cannot record from 'nope': the server has no such source"), "\(source.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("a.wav")))
        try Data().write(to: URL(fileURLWithPath: dir.file("b.wav")))
        let exists = try run(bin, ["record", dir.file("b.wav"), "--duration", "1"], environment: server.environment)
        #expect(exists.status == 1 && exists.stderr.contains("already exists; use --force"), "\(exists.stderr)")
    }
}
