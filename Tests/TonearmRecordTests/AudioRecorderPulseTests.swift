// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmSession
import TonearmTestSupport
@testable import TonearmRecord

/// The recorder against a private PulseAudio: a known tone (1 kHz, amplitude 0.5: −6.02 dBFS
/// peak, −9.03 dBFS RMS) played with `paplay` into the null sink, recorded from its monitor.
@Suite(.serialized) struct AudioRecorderPulseTests {
    static let rate = 48_000

    /// Frames written and the latest chunk's peak, as the writer thread reports them.
    final class Progress: Sendable {
        let state = Watched<(frames: Int64, peak: Float)>((0, 0))
        func attach(_ r: AudioRecorder) { r.observeWrites { f, p in self.state.update { $0 = (f, p) } } }
        func wait(_ what: String, timeout: Double = 10, _ condition: @escaping @Sendable ((frames: Int64, peak: Float)) -> Bool) async throws {
            guard await state.wait(timeout: timeout, until: condition) else { throw TimedOut(what: what) }
        }
    }

    /// Plays `seconds` of `frequency` at amplitude `amplitude` into the null sink with paplay.
    static func play(_ server: PrivatePulseServer, dir: TempDir, frequency: Double, amplitude: Float, seconds: Double) throws -> ChildProcess {
        let path = dir.file("tone-\(Int(frequency)).wav")
        let tone = sineWave(frequency: frequency, amplitude: amplitude, seconds: seconds, sampleRate: Double(rate))
        try writeWAV16(path, channels: [tone, tone], sampleRate: rate)
        return try ChildProcess(["paplay", "--latency-msec=20", "-d", server.sinkName, path], environment: server.environment)
    }

    static func recorder(_ server: PrivatePulseServer, _ path: String, _ settings: [String: Any] = [:]) throws -> AudioRecorder {
        try AudioRecorder(url: URL(fileURLWithPath: path), settings: settings, source: "\(server.sinkName).monitor",
                          server: server.serverString)
    }

    static func decibels(_ x: Double) -> Double { 20 * log10(x) }

    /// record(forDuration:) stops by itself after exactly duration × rate frames; the WAV's header
    /// says so; the delegate and the event stream hear of the end.
    @Test func recordForDurationWritesExactlyItsFrames() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("tonearm-rec")
        defer { dir.remove() }
        let path = dir.file("exact.wav")
        let r = try Self.recorder(server, path, [AVSampleRateKey: 44_100, AVNumberOfChannelsKey: 1, AVLinearPCMBitDepthKey: 24])
        final class Delegate: AudioRecorderDelegate {
            let finished = Watched<Bool?>(nil)
            func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool) { finished.update { $0 = flag } }
        }
        let delegate = Delegate()
        r.delegate = delegate
        let events = r.events
        #expect(r.prepareToRecord())
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(r.record(forDuration: 0.5))
        #expect(r.isRecording)
        let end = try await waitForEvent(events, timeout: 10, "the end of the timed recording") {
            if case .finished = $0 { return true } else { return false }
        }
        #expect(end == .finished(successfully: true, frames: 22_050))
        #expect(await delegate.finished.wait(timeout: 5) { $0 != nil } && delegate.finished.value == true)
        #expect(!r.isRecording && r.currentTime == 0 && r.recordedFrameCount == 22_050)
        let wav = try readWAV(path)
        #expect(wav.frameCount == 22_050 && wav.sampleRate == 44_100 && wav.channelCount == 1 && wav.bitsPerSample == 24)
        #expect(r.holeFrameCount == 0 && r.droppedFrameCount == 0)
        #expect(r.deleteRecording() && !FileManager.default.fileExists(atPath: path))
    }

    /// A timed recording into the compressed formats through the same path: Apple Lossless in
    /// M4A holds exactly the frames taken (its index says so, read back by FFmpeg), AAC and Opus
    /// play for that length to within the encoder's priming and last packet.
    /// (The three record at once, from one monitor: a null sink's monitor that nothing plays to
    /// sends its first block about 2 s after a stream connects, whatever latency the stream asks.)
    @Test func aTimedRecordingIntoACompressedFormatHasItsLength() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("tonearm-rec")
        defer { dir.remove() }
        let formats = [("alac.m4a", kAudioFormatAppleLossless), ("aac.m4a", kAudioFormatMPEG4AAC), ("voice.opus", kAudioFormatOpus)]
        var running: [(String, UInt32, AudioRecorder, AsyncStream<AudioRecorderEvent>)] = []
        for (name, format) in formats {
            let r = try Self.recorder(server, dir.file(name), [AVFormatIDKey: format, AVNumberOfChannelsKey: 1])
            running.append((name, format, r, r.events))
        }
        for (name, _, r, _) in running { #expect(r.record(forDuration: 0.3), "\(name)") }
        for (name, format, _, events) in running {
            let end = try await waitForEvent(events, timeout: 10, "the end of the timed recording into \(name)") {
                if case .finished = $0 { return true } else { return false }
            }
            #expect(end == .finished(successfully: true, frames: 14_400), "\(name)")
            let decoded = try Fixtures.decodeWithFFmpeg(dir.file(name))
            if format == kAudioFormatAppleLossless {
                #expect(decoded.count == 14_400, "\(decoded.count) frames in \(name)")
            } else {
                #expect(abs(decoded.count - 14_400) <= 2_048, "\(decoded.count) frames in \(name)")
            }
        }
    }

    /// record(atTime:forDuration:) keeps nothing captured before its time — the recording ends no
    /// sooner than its start plus its length on the deviceCurrentTime clock — holds exactly its
    /// frames, and a second start time while it records is refused with a reason. The recorder
    /// names no source: it reads from its session's preferred input, not the server's default.
    @Test func aRecordingAtATimeStartsThenAndHasItsLength() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("tonearm-rec")
        defer { dir.remove() }
        let path = dir.file("later.wav")
        // Named by no source: the session's preferred input (a second input, not the default).
        #expect(try server.pactl("load-module", "module-remap-source", "master=\(server.sinkName).monitor", "source_name=voice",
                                 "channels=1", "channel_map=mono").status == 0)
        #expect(try server.pactl("set-default-source", "\(server.sinkName).monitor").status == 0)
        let session = AudioSession(identifier: "rec-at-time", bus: .none, pulseServer: server.serverString)
        let voice = try #require(try AudioRoutes(server: server.serverString).inputs().first { $0.name == "voice" })
        try session.setPreferredInput(voice)
        let r = try AudioRecorder(url: URL(fileURLWithPath: path), settings: [AVNumberOfChannelsKey: 1], server: server.serverString,
                                  session: session)
        let events = r.events
        #expect(r.prepareToRecord())
        #expect(r.sourceName == "voice", "the preferred input: \(String(describing: r.sourceName))")
        let start = r.deviceCurrentTime + 0.4
        #expect(r.record(atTime: start, forDuration: 0.2))
        #expect(!r.record(atTime: start + 1))
        #expect(r.lastError.map { "\($0)" }?.contains("record(atTime:) while already recording") == true, "\(String(describing: r.lastError))")
        let end = try await waitForEvent(events, timeout: 10, "the end of the recording at a time") {
            if case .finished = $0 { return true } else { return false }
        }
        let endedAt = r.deviceCurrentTime
        #expect(end == .finished(successfully: true, frames: 9_600))
        #expect(endedAt >= start + 0.2, "ended \(endedAt - start) s after its start time")
        #expect(try readWAV(path).frameCount == 9_600)
        #expect(!r.record(atTime: .nan) && r.lastError.map { "\($0)" }?.contains("not a time") == true)
    }

    /// The input unplugged mid-recording (its source removed: the server moves the stream to its
    /// default source): the recorder pauses and says which input went away rather than record
    /// on from an input nobody chose; nothing from the other input is in the file until
    /// record() resumes, into the same file; the file holds exactly the frames counted. A move
    /// by a user to an input that stays is followed without a pause.
    @Test func anInputThatGoesAwayPausesTheRecording() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("tonearm-rec")
        defer { dir.remove() }
        let module = try server.pactl("load-module", "module-remap-source", "master=\(server.sinkName).monitor", "source_name=usbmic",
                                      "channels=1", "channel_map=mono").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try server.pactl("set-default-source", "\(server.sinkName).monitor").status == 0)
        let path = dir.file("unplugged.flac")
        let r = try AudioRecorder(url: URL(fileURLWithPath: path), settings: [AVNumberOfChannelsKey: 1], source: "usbmic",
                                  server: server.serverString, session: nil)
        let progress = Progress()
        progress.attach(r)
        let events = r.events
        #expect(r.record())
        try await progress.wait("0.2 s recorded from the input") { $0.frames >= 9_600 }
        // A move by a user (pavucontrol, pactl) to an input that stays: the recording goes on.
        // Ours is the source output on usbmic (the remap module's own reads the monitor).
        func rows(_ what: String) throws -> [[String]] {
            try server.pactl("list", "short", what).stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        }
        let usbmic: String = try #require(try rows("sources").first { $0.count > 1 && $0[1] == "usbmic" }?[0])
        let index: String = try #require(try rows("source-outputs").first { $0.count > 1 && $0[1] == usbmic }?[0])
        #expect(try server.pactl("move-source-output", index, "\(server.sinkName).monitor").status == 0)
        let moved = r.recordedFrameCount
        try await progress.wait("0.1 s more after a user's move") { $0.frames >= moved + 4_800 }
        #expect(r.isRecording && r.sourceName == "\(server.sinkName).monitor", "\(String(describing: r.sourceName))")
        #expect(try server.pactl("move-source-output", index, "usbmic").status == 0)
        let back = r.recordedFrameCount
        try await progress.wait("0.1 s more after the move back") { $0.frames >= back + 4_800 }
        #expect(r.isRecording && r.sourceName == "usbmic")
        // Unplugged.
        #expect(try server.pactl("unload-module", module).status == 0)
        let lost = try await waitForEvent(events, timeout: 10, "the input going away") {
            if case .inputLost = $0 { return true } else { return false }
        }
        #expect(lost == .inputLost(source: "usbmic"))
        let paused = try await waitForEvent(events, timeout: 10, "the pause") { $0 == .paused }
        #expect(paused == .paused && !r.isRecording)
        let atPause = r.recordedFrameCount
        #expect(r.sourceName == "\(server.sinkName).monitor", "now the server's choice: \(String(describing: r.sourceName))")
        // Resumed: from the input in use now, into the same file.
        #expect(r.record())
        try await progress.wait("0.2 s more after the resume") { $0.frames >= atPause + 9_600 }
        r.stop()
        let frames = r.recordedFrameCount
        #expect(frames >= atPause + 9_600)
        let decoded = try Fixtures.decodeWithFFmpeg(path)
        #expect(Int64(decoded.count) == frames, "\(decoded.count) frames in the file, \(frames) counted")
    }

    /// The recording holds the tone at its frequency and level, and the meters read the tone's
    /// dBFS (RMS −9.03, peak −6.02) within 0.5 dB of the file's own measure.
    @Test func theToneIsRecordedAndMeteredAtItsLevel() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("tonearm-rec")
        defer { dir.remove() }
        let path = dir.file("tone.wav")
        let r = try Self.recorder(server, path, [AVLinearPCMIsFloatKey: true])
        r.isMeteringEnabled = true
        let progress = Progress()
        progress.attach(r)
        #expect(r.record())
        let player = try Self.play(server, dir: dir, frequency: 1000, amplitude: 0.5, seconds: 3)
        defer { player.terminate() }
        try await progress.wait("the tone in the recording") { $0.peak > 0.4 }
        r.updateMeters()  // the window starts now: tone only from here
        let from = progress.state.value.frames
        try await progress.wait("0.4 s more of the tone") { $0.frames >= from + 19_200 }
        r.updateMeters()
        let average = Double(r.averagePower(forChannel: 0)), peak = Double(r.peakPower(forChannel: 1))
        r.stop()
        #expect(r.averagePower(forChannel: 2) == -160)
        let wav = try readWAV(path)
        #expect(Int64(wav.frameCount) == r.recordedFrameCount && wav.formatTag == 3)
        // The last 0.3 s (all tone: the tone lasts 3 s and the recording ended inside it).
        let tail = wav.channels[0].suffix(14_400)
        let level = Self.decibels(Double(rms(tail)))
        #expect(abs(level - Self.decibels(0.5 / 2.squareRoot())) < 0.5, "the file's RMS: \(level) dBFS")
        #expect(abs(average - level) < 0.5, "metered \(average) dBFS, the file \(level) dBFS")
        #expect(abs(peak - Self.decibels(0.5)) < 0.5, "peak \(peak) dBFS")
        let at1k = goertzelPower(tail, frequency: 1000, sampleRate: 48_000)
        for other in [500.0, 900, 1100, 2000] {
            #expect(at1k > 100 * goertzelPower(tail, frequency: other, sampleRate: 48_000), "\(other) Hz against 1 kHz")
        }
    }

    /// pause() then record() continues the same file: what the source gave while paused (a 2 kHz
    /// burst played to its end) is not in it, the frame count stands still while paused, and
    /// the file (FLAC) holds exactly the frames of the two parts.
    @Test func pauseThenRecordContinuesTheSameFile() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("tonearm-rec")
        defer { dir.remove() }
        let path = dir.file("paused.flac")
        let r = try Self.recorder(server, path)
        let progress = Progress()
        progress.attach(r)
        let tone = try Self.play(server, dir: dir, frequency: 1000, amplitude: 0.5, seconds: 4)
        defer { tone.terminate() }
        #expect(r.record())
        try await progress.wait("the tone in the recording") { $0.peak > 0.4 }
        let start = progress.state.value.frames
        try await progress.wait("0.25 s of the tone") { $0.frames >= start + 12_000 }
        r.pause()
        #expect(!r.isRecording)
        let first = r.recordedFrameCount
        #expect(r.currentTime == Double(first) / 48_000, "currentTime while paused: the frames taken")
        let burst = try Self.play(server, dir: dir, frequency: 2000, amplitude: 0.5, seconds: 0.3)
        #expect(await burst.waitForExit(timeout: 10) && burst.succeeded)
        #expect(r.recordedFrameCount == first, "frames were taken while paused")
        #expect(r.record())
        #expect(r.isRecording && r.currentTime >= Double(first) / 48_000)
        try await progress.wait("0.25 s after the resume") { $0.frames >= first + 12_000 }
        let total = r.recordedFrameCount
        r.stop()
        let final = r.recordedFrameCount
        #expect(final >= total)
        let decoded = try Fixtures.decodeWithFFmpeg(path)
        #expect(Int64(decoded.count / 2) == final, "the FLAC's length against the frames recorded")
        let left = stride(from: 0, to: decoded.count, by: 2).map { decoded[$0] }
        // No 2 kHz anywhere (windows of 10 ms), and the tone right on both sides of the join.
        var window = 0
        while window + 480 <= left.count {
            let slice = left[window..<window + 480]
            #expect(goertzelPower(slice, frequency: 2000, sampleRate: 48_000) < 0.001, "2 kHz at frame \(window)")
            window += 480
        }
        let join = Int(first)
        // (0.2 against the tone's 0.35: a late wake-up of paplay on a loaded machine may cost a few ms; a gap
        // of the pause's length would read 0.)
        #expect(rms(left[(join - 960)..<join]) > 0.2 && rms(left[join..<(join + 960)]) > 0.2, "the tone on both sides of the join")
    }
}
