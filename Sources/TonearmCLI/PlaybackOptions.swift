// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// How `play` and `pick` play: the output, volume, repeat, shuffle, crossfade, ReplayGain, the
/// audio session, the sound options and the screen. ``play(files:problems:resume:)`` is the one
/// place that runs a queue of files (``PlaySession``), for both commands.
struct PlaybackOptions: ParsableArguments {
    /// `--config`: given before the subcommand (`tonearm --config F play`), it reaches here.
    @OptionGroup var config: ConfigOption

    @Option(name: .long, help: "Where to play: \(OutputSelection.syntax). Default: PulseAudio/PipeWire if a server answers, else null.", completion: .list(Completions.outputKinds))
    var output: String?

    @Option(name: .long, help: "The PulseAudio output (sink) to play to, by name (`tonearm outputs` lists them). Default: the system's default output.", completion: Completions.outputs)
    var device: String?

    @Option(name: .long, help: "Initial volume, 0–100. Default: the last run's, else the config file's, else 100.")
    var volume: Int?

    @Option(name: [.customLong("repeat"), .customLong("loop")], help: "Repeat: off, one (the current item) or all (the queue).", completion: .list(Completions.repeatModes))
    var repeatMode: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Shuffle the queue: every item once, in a random order from a random first item (play --start FILE names the first); --no-shuffle overrides the config file.")
    var shuffle: Bool?

    @Option(name: .long, help: "Crossfade between items, in seconds (0: gapless; consecutive tracks of one album always stay gapless). Default: 0.")
    var crossfade: Double?

    @Option(name: .long, help: "ReplayGain: off, track or album (album falls back to track). Default: off.", completion: .list(Completions.replayGainModes))
    var replaygain: String?

    @Option(name: .long, help: "ReplayGain pre-amp in dB. Default: 0.")
    var preamp: Double?

    @Flag(name: .long, help: "Play along with other Tonearm players instead of pausing them (by default a player that starts interrupts the others).")
    var mix = false

    @OptionGroup var sound: SoundOptions

    @Flag(name: .long, help: "Plain progress lines even in a terminal.")
    var plain = false

    @Flag(name: .long, help: "With --output file:PATH, overwrite PATH if it exists.")
    var force = false

    /// Refuses `--output file:PATH` onto an existing file without `--force` (called first by the
    /// commands' `run()`: an error thrown from `validate()` reaches the entry point wrapped).
    func checkOutputFile() throws(TonearmError) {
        if let o = output, case .file(let path)? = try? OutputSelection(parsing: o) { try Overwrite.check(path, force: force) }
    }

    func validate() throws {
        if let v = volume, !(0...100).contains(v) { throw ValidationError("--volume must be between 0 and 100, not \(v)") }
        if let r = repeatMode, Self.repeatValue(r) == nil { throw ValidationError("--repeat must be off, one or all, not '\(r)'") }
        if let r = replaygain, ReplayGainMode(rawValue: r) == nil { throw ValidationError("--replaygain must be off, track or album, not '\(r)'") }
        if let c = crossfade, !(0...30).contains(c) { throw ValidationError("--crossfade must be between 0 and 30 seconds, not \(c)") }
        if let p = preamp, !(-20...20).contains(p) { throw ValidationError("--preamp must be between -20 and +20 dB, not \(p)") }
        if let o = output {
            let selection: OutputSelection
            do { selection = try OutputSelection(parsing: o) } catch { throw ValidationError("\(error)") }
            _ = selection
        }
        if let d = device {
            guard !d.trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("--device needs an output name (see tonearm outputs)") }
            if let o = output, (try? OutputSelection(parsing: o)).map({ if case .pulse = $0 { return false } else { return true } }) == true {
                throw ValidationError("--device chooses a PulseAudio output; it does not apply to --output \(o)")
            }
        }
    }

    static func repeatValue(_ s: String) -> RepeatMode? {
        switch s.lowercased() {
        case "off", "none": return RepeatMode.none
        case "one", "track": return .one
        case "all", "queue", "playlist": return .all
        default: return nil
        }
    }

    /// Whether the live screen is drawn (a terminal, and not --plain).
    var interactive: Bool { !plain && Terminal.isInteractive }

    /// Where the EQ and speed of the last run are kept for `--resume`.
    static var settingsStore: PlaybackSettingsStore { PlaybackSettingsStore(path: PlaybackSettingsStore.defaultPath()) }

    /// The settings to play with: these flags over what the last run left (its volume; with
    /// `resume` its EQ and speed) over the config file over the defaults. A config file with
    /// problems is reported and ends the command (status 1); a damaged state file is reported
    /// and passed over.
    func effective(command: String, resume: Bool, db: String? = nil) throws -> EffectiveSettings {
        let file = try config.loadOrExit(command: command)
        let queue = QueueStateStore(path: QueueStateStore.defaultPath())
        var volume: Setting<Float>?
        do {
            volume = try queue.load().map { Setting(value: min(1, max(0, $0.volume)), source: .remembered(path: queue.path)) }
        } catch {
            Terminal.writeError("\(error); the last run's volume is not used")
        }
        var resumed: Setting<SavedPlaybackSettings>?
        if resume {
            let store = Self.settingsStore
            do {
                resumed = try store.load().map { Setting(value: $0, source: .remembered(path: store.path)) }
            } catch {
                Terminal.writeError("\(error); the last run's EQ and speed are not used")
            }
        }
        let e = try EffectiveSettings(flags: self, db: db, file: file, rememberedVolume: volume, resumed: resumed)
        if e.device.value != nil, let o = e.output.value, !o.isPulse {
            // --device against --output is refused by validate(); the file's device is passed over.
            if case .flag = e.device.source {
                throw ValidationError("--device chooses a PulseAudio output; it does not apply to the config file's output \(o)")
            }
            return e.droppingDevice()
        }
        return e
    }

    /// The output of `settings`, else the automatic choice with its notice (nothing will be
    /// heard). A device that cannot apply is reported; a PulseAudio device that the server
    /// does not have is an error listing the ones it has (before anything plays).
    func selection(_ settings: EffectiveSettings) throws -> (OutputSelection, notice: String?) {
        let selection: OutputSelection
        var notice: String?
        if let o = settings.output.value {
            selection = o
        } else {
            let auto = OutputSelection.automatic()
            selection = auto.selection
            notice = auto.notice
        }
        guard let device = settings.device.value else { return (selection, notice) }
        guard case .pulse(let server) = selection else {
            Terminal.writeError("\(Self.describe(device, settings.device.source)) is ignored: no sound server answered")
            return (selection, notice)
        }
        try Self.checkDevice(device, source: settings.device.source, server: server)
        return (selection, notice)
    }

    /// Throws when the sound server has no output named `device`, listing the ones it has.
    /// (A server that cannot be asked is left to the player, which reports what it finds.)
    static func checkDevice(_ device: String, source: SettingSource, server: String?) throws {
        guard let outputs = try? AudioRoutes(server: server).outputs() else { return }
        guard !outputs.contains(where: { $0.name == device }) else { return }
        var message = "\(describe(device, source)): the sound server has no such output"
        if outputs.isEmpty {
            message += " (it has none)"
        } else {
            message += "; its outputs are:\n" + outputs.map { "  \($0.isDefault ? "*" : " ") \($0.name)  \($0.description)" }
                .joined(separator: "\n")
        }
        throw PlaybackSetupError(message: message)
    }

    private static func describe(_ device: String, _ source: SettingSource) -> String {
        if case .flag = source { return "--device \(device)" }
        return "the device '\(device)' (\(source))"
    }

    /// Plays `files` as one queue (after the saved queue, from where it was, with `resume`);
    /// items of `library` (by `libraryIDs`) have their plays and skips counted there. `start`:
    /// the index in `files` of the item to start with (first in the shuffled order with
    /// --shuffle). Throws `ExitCode(1)` when any file failed, `128 + signal` when a signal ended
    /// it. The volume, EQ and speed it ended with are remembered for the next run.
    func play(files: [String], problems: [String] = [], resume: Bool = false, start: Int? = nil,
              library: MediaLibrary? = nil, libraryIDs: [String: UInt64] = [:], command: String = "play",
              extraNotice: String? = nil, audioStreams: [String: Int] = [:], video: QueueVideo.Request? = nil) async throws {
        let settings = try effective(command: command, resume: resume)
        var (selection, notice): (OutputSelection, String?)
        do { (selection, notice) = try self.selection(settings) } catch let e as PlaybackSetupError {
            throw CommandFailure(nil, "\(e)")
        }
        var extraNotice = extraNotice
        var video = video
        if let v = video, selection == .nullUntimed || { if case .file = selection { true } else { false } }() {
            // Offline there is no clock to present against: every frame of the video files, in
            // the queue's order, straight from the decoder (the sound renders after, as always).
            video = nil
            let videos = files.filter(VideoPlayback.hasVideo)
            switch v.output {
            case .window:
                if !videos.isEmpty { extraNotice = VideoPlayback.offlineNotice }
            case .null, .file:
                let frames = try VideoPlayback.writeAllFrames(of: videos, to: v.output) {
                    VideoPlayback.queueSubtitle(for: $0, track: v.subtitleTrack)
                }
                if case .file(let out) = v.output {
                    Terminal.write("Video: \(frames) frames written to \(out)\n")
                } else {
                    Terminal.write("Video: \(frames) frames decoded\n")
                }
            }
        }
        if let extraNotice { notice = notice.map { "\($0); \(extraNotice)" } ?? extraNotice }
        var sessionSettings = try settings.sessionSettings(mix: mix, resume: resume, effects: try sound.effects())
        sessionSettings.start = start
        let session = PlaySession(files: files, problems: problems, selection: selection, device: settings.device.value, notice: notice,
                                  settings: sessionSettings, interactive: interactive, library: library, libraryIDs: libraryIDs,
                                  audioStreams: audioStreams, video: video)
        let anyFailed = await session.run()
        do { try Self.settingsStore.save(session.settingsToRemember) } catch {
            Terminal.writeError("\(error); the EQ and speed are not remembered for --resume")
        }
        if let sig = session.interruptedBy { throw ExitCode(128 + sig) }  // the shell convention (130 for Ctrl-C)
        if anyFailed { throw ExitCode(1) }
    }
}

/// A setting that stops `play` before anything plays (exit status 1), such as an output the
/// sound server does not have.
struct PlaybackSetupError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension OutputSelection {
    var isPulse: Bool { if case .pulse = self { true } else { false } }
}

extension EffectiveSettings {
    /// These settings without the config file's device (for an output that is not PulseAudio).
    func droppingDevice() -> EffectiveSettings {
        var e = self
        e.device = Setting(value: nil, source: .default)
        return e
    }
}
