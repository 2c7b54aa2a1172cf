// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Glibc
import Tonearm

/// `tonearm record FILE [--duration S] [--source NAME] [--rate R] [--channels N] [--bits B]
/// [--force]`: records from the default source (or a named one) into a WAV or FLAC file with
/// ``AudioRecorder``, shows the elapsed time and a level meter per channel on a terminal (a plain
/// line a second when piped), and prints a summary. Ctrl-C (SIGINT), SIGTERM or SIGHUP stop it
/// and keep a valid file; it then exits with 128 + the signal's number, as `library watch` does.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record from a sound input (a PulseAudio/PipeWire source) into a WAV or FLAC file.",
        discussion: """
            The file's extension chooses the format: .wav (linear PCM) or .flac. Without \
            --duration it records until Ctrl-C; the file is complete either way. --source takes \
            a source's name (`pactl list short sources`; a sink's monitor, NAME.monitor, records \
            what that output plays).

            Examples:
              tonearm record take.flac
              tonearm record note.wav --duration 10 --rate 44100 --channels 1
              tonearm record desktop.flac --source alsa_output.pci-0000_00_1f.3.analog-stereo.monitor
            """)

    @Argument(help: ArgumentHelp("The file to write (.wav or .flac).", valueName: "FILE"))
    var file: String

    @Option(name: .long, help: ArgumentHelp("Stop after exactly SECONDS (to the sample).", valueName: "SECONDS"))
    var duration: Double?

    @Option(name: .long, help: ArgumentHelp("Record from the source NAME (default: the system's default input).", valueName: "NAME"))
    var source: String?

    @Option(name: .long, help: ArgumentHelp("Sample rate in Hz.", valueName: "HZ"))
    var rate = 48_000

    @Option(name: .long, help: ArgumentHelp("Number of channels (1-8).", valueName: "N"))
    var channels = 2

    @Option(name: .long, help: ArgumentHelp("Bits per sample: 8, 16, 24 or 32 for WAV, 16 or 24 for FLAC.", valueName: "BITS"))
    var bits = 16

    @Flag(name: .long, help: "Replace FILE if it exists.")
    var force = false

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
    }

    private enum Event: Sendable {
        case recorder(AudioRecorderEvent)
        case tick
        case signalled(Int32)
    }

    func run() async throws {
        try Overwrite.check(file, force: force)
        let settings: [String: Any] = [AVSampleRateKey: rate, AVNumberOfChannelsKey: channels, AVLinearPCMBitDepthKey: bits]
        let recorder: AudioRecorder
        do {
            recorder = try AudioRecorder(url: URL(fileURLWithPath: file), settings: settings, source: source)
        } catch AudioRecorderError.invalidSetting(let key, let value, let reason) {
            // The settings' key as the option that set it.
            let option = [AVSampleRateKey: "--rate", AVNumberOfChannelsKey: "--channels", AVLinearPCMBitDepthKey: "--bits"][key] ?? key
            throw ValidationError("\(option) \(value): \(reason)")
        }
        let format = recorder.format
        let interactive = isatty(1) == 1
        recorder.isMeteringEnabled = true
        let (events, sink) = AsyncStream<Event>.makeStream()
        let recorderEvents = recorder.events
        let pump = Task { for await e in recorderEvents { sink.yield(.recorder(e)) } }
        let signals = SignalWatch { sink.yield(.signalled($0)) }
        defer {
            signals.cancel()
            pump.cancel()
        }
        try recorder.prepare()
        let from = recorder.sourceName ?? source ?? "the default source"
        try recorder.start(duration: duration)
        Terminal.write("Recording from \(from) to \(file)" + (duration == nil ? " (Ctrl-C to stop)\n" : "\n"))
        // The meter's pace: 10 a second on a terminal, a line a second when piped.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(interactive ? 100 : 1000))
                sink.yield(.tick)
            }
        }
        defer { ticker.cancel() }
        var status: Int32 = 0
        var success = true
        loop: for await event in events {
            switch event {
            case .tick:
                recorder.updateMeters()
                let line = Self.meterLine(recorder, channels: format.channelCount)
                Terminal.write(interactive ? "\r\u{1B}[K" + line : line + "\n")
            case .signalled(let sig):
                status = 128 + sig
                recorder.stop()
            case .recorder(.finished(let ok, _)):
                success = ok
                break loop
            case .recorder(.encodeError(let error)):
                Terminal.writeProblem("record: \(error)")
            case .recorder:
                break
            }
        }
        if interactive { Terminal.write("\r\u{1B}[K") }
        Terminal.write(Self.summary(recorder, file: file) + "\n")
        if !success {
            throw recorder.lastError ?? TonearmError.writeFailed(path: file, reason: "the recording failed")
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// `● 0:03.2  L ▮▮▮▮▮▮▮▮▮▮▮▯▯▯▯▯▯▯▯▯  -9.0 dB (peak -6.0)  R …`: the time, and per channel
    /// (the first two) a bar from −60 to 0 dBFS of the RMS, with the RMS and the peak.
    static func meterLine(_ r: AudioRecorder, channels: Int) -> String {
        let t = r.currentTime
        let tenths = Int((t * 10).rounded(.down)) % 10
        var line = "● \(formatTime(t)).\(tenths)"
        let names = channels == 1 ? ["M"] : ["L", "R"]
        for (c, name) in names.enumerated() {
            let avg = r.averagePower(forChannel: c), peak = r.peakPower(forChannel: c)
            let filled = max(0, min(20, Int(((Double(avg) + 60) / 3).rounded())))
            let bar = String(repeating: "▮", count: filled) + String(repeating: "▯", count: 20 - filled)
            line += "  \(name) \(bar) \(Self.db(avg)) dB (peak \(Self.db(peak)))"
        }
        return line
    }

    private static func db(_ v: Float) -> String {
        v <= -160 ? "-inf" : String(format: "%.1f", Double(v))
    }

    /// `Recorded 0:05.000 (240000 frames) from SOURCE to FILE: FLAC, 48 kHz, 16-bit, 2 ch` and the
    /// holes filled or frames lost, when there were any.
    static func summary(_ r: AudioRecorder, file: String) -> String {
        let f = r.format
        let frames = r.recordedFrameCount
        let seconds = Double(frames) / Double(f.sampleRate)
        let ms = Int((seconds * 1000).rounded()) % 1000
        let msText = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        var s = "Recorded \(formatTime(seconds)).\(msText) (\(frames) frames) from \(r.sourceName ?? "the default source") to \(file): "
        s += "\(f.fileType == .flac ? "FLAC" : (f.isFloat ? "WAV float" : "WAV")), \(f.sampleRate) Hz, \(f.bitDepth)-bit, \(f.channelCount) ch"
        if r.holeFrameCount > 0 { s += "; \(r.holeFrameCount) frames of silence filled where the server reported holes" }
        if r.droppedFrameCount > 0 { s += "; \(r.droppedFrameCount) frames lost (the writer fell behind)" }
        return s
    }
}
