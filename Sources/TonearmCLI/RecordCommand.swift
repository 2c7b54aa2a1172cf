// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Glibc
import Tonearm

/// `tonearm record FILE [--duration S] [--source NAME] [--rate R] [--channels N] [--bits B]
/// [--codec C] [--bit-rate B | --quality Q] [--force]`: records from the default source (or a
/// named one) into a file (WAV, FLAC, CAF, M4A, AAC, Opus, Ogg) with
/// ``AudioRecorder``, shows the elapsed time and a level meter per channel on a terminal (a plain
/// line a second when piped), and prints a summary. Ctrl-C (SIGINT), SIGTERM or SIGHUP stop it
/// and keep a valid file; it then exits with 128 + the signal's number, as `library watch` does.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record from a sound input (a PulseAudio/PipeWire source) into an audio file.",
        discussion: """
            The file's extension chooses the format: .wav (linear PCM), .flac, .caf (linear \
            PCM, or Apple Lossless with --codec alac), .m4a (AAC, or Apple Lossless with \
            --codec alac), .aac (AAC), .opus or .ogg (Opus). AAC and Opus take --bit-rate or \
            --quality (default medium: AAC 64 kb/s, Opus 48 kb/s a channel). Without \
            --duration it records until Ctrl-C; the file is complete either way. --source takes \
            a source's name (`pactl list short sources`; a sink's monitor, NAME.monitor, records \
            what that output plays).

            Examples:
              tonearm record take.flac
              tonearm record note.wav --duration 10 --rate 44100 --channels 1
              tonearm record memo.m4a --channels 1 --quality high
              tonearm record talk.opus --bit-rate 32000
              tonearm record desktop.flac --source alsa_output.pci-0000_00_1f.3.analog-stereo.monitor
            """)

    @Argument(help: ArgumentHelp("The file to write (.wav, .flac, .caf, .m4a, .aac, .opus or .ogg).", valueName: "FILE"))
    var file: String

    @Option(name: .long, help: ArgumentHelp("Stop after exactly SECONDS (to the sample).", valueName: "SECONDS"))
    var duration: Double?

    @Option(name: .long, help: ArgumentHelp("Record from the source NAME (default: the system's default input; see `tonearm inputs`).", valueName: "NAME"),
            completion: Completions.inputs)
    var source: String?

    @Option(name: .long, help: ArgumentHelp("Sample rate in Hz.", valueName: "HZ"))
    var rate = 48_000

    @Option(name: .long, help: ArgumentHelp("Number of channels (1-8).", valueName: "N"))
    var channels = 2

    @Option(name: .long, help: ArgumentHelp("Bits per sample: 8, 16, 24 or 32 for linear PCM, 16 or 24 for FLAC and Apple Lossless.",
                                            valueName: "BITS"))
    var bits = 16

    @Option(name: .long, help: ArgumentHelp("The format, when the file type holds more than one: pcm, flac, aac, alac, opus.",
                                            valueName: "CODEC"))
    var codec: String?

    @Option(name: .customLong("bit-rate"), help: ArgumentHelp("AAC and Opus: bits a second, all channels together.", valueName: "BPS"))
    var bitRate: Int?

    @Option(name: .long, help: ArgumentHelp("AAC and Opus: min, low, medium, high or max (a bit rate per channel).", valueName: "Q"))
    var quality: String?

    @Flag(name: .long, help: "Replace FILE if it exists.")
    var force = false

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
        if let codec, Self.codecs[codec.lowercased()] == nil {
            throw ValidationError("--codec \(codec): not a format the recorder writes (pcm, flac, aac, alac, opus)")
        }
        if let quality, Self.qualities[quality.lowercased()] == nil {
            throw ValidationError("--quality \(quality): not one of min, low, medium, high, max")
        }
        if bitRate != nil, quality != nil { throw ValidationError("--bit-rate and --quality: give one of them") }
    }

    static let codecs: [String: UInt32] = ["pcm": kAudioFormatLinearPCM, "lpcm": kAudioFormatLinearPCM, "flac": kAudioFormatFLAC,
                                           "aac": kAudioFormatMPEG4AAC, "alac": kAudioFormatAppleLossless, "opus": kAudioFormatOpus]
    static let qualities: [String: AVAudioQuality] = ["min": .min, "low": .low, "medium": .medium, "high": .high, "max": .max]

    private enum Event: Sendable {
        case recorder(AudioRecorderEvent)
        case tick
        case signalled(Int32)
    }

    func run() async throws {
        try Overwrite.check(file, force: force)
        // A file-size limit (ulimit -f) then fails a write with EFBIG, as a full disk fails one
        // with ENOSPC, instead of killing the process before the file is made whole.
        signal(SIGXFSZ, SIG_IGN)
        var settings: [String: Any] = [AVSampleRateKey: rate, AVNumberOfChannelsKey: channels, AVLinearPCMBitDepthKey: bits]
        if let codec { settings[AVFormatIDKey] = Self.codecs[codec.lowercased()] }
        if let bitRate { settings[AVEncoderBitRateKey] = bitRate }
        if let quality { settings[AVEncoderAudioQualityKey] = Self.qualities[quality.lowercased()]?.rawValue }
        let recorder: AudioRecorder
        do {
            recorder = try AudioRecorder(url: URL(fileURLWithPath: file), settings: settings, source: source)
        } catch AudioRecorderError.invalidSetting(let key, let value, let reason) {
            // The settings' key as the option that set it.
            let option = [AVSampleRateKey: "--rate", AVNumberOfChannelsKey: "--channels", AVLinearPCMBitDepthKey: "--bits",
                          AVEncoderBitRateKey: "--bit-rate", AVFormatIDKey: "--codec"][key] ?? key
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
        var inputLost = false
        loop: for await event in events {
            switch event {
            case .tick:
                recorder.updateMeters()
                let line = Self.meterLine(recorder, channels: format.channelCount, width: interactive ? Terminal.width : nil)
                Terminal.write(interactive ? "\r\u{1B}[K" + line : line + "\n")
            case .signalled(let sig):
                status = 128 + sig
                recorder.stop()
            case .recorder(.finished(let ok, _)):
                success = ok
                break loop
            case .recorder(.encodeError):
                break  // the failure is thrown below, after the summary of what the file holds
            case .recorder(.inputLost(let source)):
                // Not on from another input nobody chose: the file ends where the input went.
                if interactive { Terminal.write("\r\u{1B}[K") }
                Terminal.writeProblem("record: the input '\(source)' went away; the recording stopped")
                inputLost = true
                recorder.stop()
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
        if inputLost { throw ExitCode(1) }
    }

    /// `● 0:03.2  L ▮▮▮▮▮▮▮▮▮▮▮▯▯▯▯▯▯▯▯▯  -9.0 dB (peak -6.0)  R …`: the time, and per channel
    /// (the first two) a bar from −60 to 0 dBFS of the RMS, with the RMS and the peak. Within
    /// `width` columns less one when given (a terminal's, so that `\r` redraws one line): the
    /// bars shorten to 4 cells, then the peaks go, then the bars, then the line is clipped.
    static func meterLine(_ r: AudioRecorder, channels: Int, width: Int? = nil) -> String {
        let t = r.currentTime
        let tenths = Int((t * 10).rounded(.down)) % 10
        let time = "● \(formatTime(t)).\(tenths)"
        let names = channels == 1 ? ["M"] : ["L", "R"]
        let levels = names.indices.map { (avg: r.averagePower(forChannel: $0), peak: r.peakPower(forChannel: $0)) }
        func line(bar cells: Int, peaks: Bool) -> String {
            var line = time
            for (name, level) in zip(names, levels) {
                line += "  \(name) "
                if cells > 0 {
                    let filled = max(0, min(cells, Int(((Double(level.avg) + 60) / 60 * Double(cells)).rounded())))
                    line += String(repeating: "▮", count: filled) + String(repeating: "▯", count: cells - filled) + " "
                }
                line += "\(Self.db(level.avg)) dB" + (peaks ? " (peak \(Self.db(level.peak)))" : "")
            }
            return line
        }
        guard let width else { return line(bar: 20, peaks: true) }
        let room = width - 1
        for peaks in [true, false] {
            for cells in stride(from: 20, through: 4, by: -1) {
                let l = line(bar: cells, peaks: peaks)
                if TextWidth.of(l) <= room { return l }
            }
        }
        return TextWidth.clip(line(bar: 0, peaks: false), to: max(1, room))
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
        s += f.summary
        if r.holeFrameCount > 0 { s += "; \(r.holeFrameCount) frames of silence filled where the server reported holes" }
        if r.droppedFrameCount > 0 { s += "; \(r.droppedFrameCount) frames lost (the writer fell behind)" }
        return s
    }
}
