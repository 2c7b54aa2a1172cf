// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// How `play` and `pick` play: the output, volume, repeat, shuffle, crossfade, ReplayGain, the
/// audio session, the sound options and the screen. ``play(files:problems:resume:)`` is the one
/// place that runs a queue of files (``PlaySession``), for both commands.
struct PlaybackOptions: ParsableArguments {
    @Option(name: .long, help: "Where to play: \(OutputSelection.syntax). Default: PulseAudio/PipeWire if a server answers, else null.", completion: .list(Completions.outputKinds))
    var output: String?

    @Option(name: .long, help: "The PulseAudio output (sink) to play to, by name (`tonearm outputs` lists them). Default: the system's default output.", completion: Completions.outputs)
    var device: String?

    @Option(name: .long, help: "Initial volume, 0–100.")
    var volume: Int?

    @Option(name: [.customLong("repeat"), .customLong("loop")], help: "Repeat: off, one (the current item) or all (the queue).", completion: .list(Completions.repeatModes))
    var repeatMode: String?

    @Flag(name: .long, help: "Shuffle the queue: every item once, in a random order from a random first item (play --start FILE names the first).")
    var shuffle = false

    @Option(name: .long, help: "Crossfade between items, in seconds (0: gapless; consecutive tracks of one album always stay gapless).")
    var crossfade: Double = 0

    @Option(name: .long, help: "ReplayGain: off, track or album (album falls back to track).", completion: .list(Completions.replayGainModes))
    var replaygain: String = "off"

    @Option(name: .long, help: "ReplayGain pre-amp in dB.")
    var preamp: Double = 0

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
        guard ReplayGainMode(rawValue: replaygain) != nil else { throw ValidationError("--replaygain must be off, track or album, not '\(replaygain)'") }
        guard (0...30).contains(crossfade) else { throw ValidationError("--crossfade must be between 0 and 30 seconds, not \(crossfade)") }
        guard (-20...20).contains(preamp) else { throw ValidationError("--preamp must be between -20 and +20 dB, not \(preamp)") }
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

    /// The output asked for, else the automatic choice with its notice (nothing will be heard).
    /// Reports a --device that cannot apply.
    func selection() throws -> (OutputSelection, notice: String?) {
        let selection: OutputSelection
        var notice: String?
        if let o = output {
            selection = try OutputSelection(parsing: o)
        } else {
            let auto = OutputSelection.automatic()
            selection = auto.selection
            notice = auto.notice
        }
        if device != nil, case .pulse = selection {} else if let device {
            Terminal.writeError("--device \(device) is ignored: no sound server answered")
        }
        return (selection, notice)
    }

    func settings(resume: Bool) throws -> PlaySession.Settings {
        PlaySession.Settings(
            volume: volume.map { Float($0) / 100 }, repeatMode: repeatMode.flatMap(Self.repeatValue), shuffle: shuffle,
            replayGain: ReplayGainMode(rawValue: replaygain) ?? .off, preamp: preamp, crossfade: crossfade, mix: mix, resume: resume,
            eq: try sound.eqChoice(), rate: Float(sound.rate), effects: try sound.effects())
    }

    /// Plays `files` as one gapless queue (after the saved queue, from where it was, with
    /// `resume`). Throws `ExitCode(1)` when any file failed, `128 + signal` when a signal ended it.
    /// Plays `files` as one queue; items of `library` (by `libraryIDs`) have their plays and
    /// skips counted there.
    /// `start`: the index in `files` of the item to start with (first in the shuffled order
    /// with --shuffle).
    func play(files: [String], problems: [String] = [], resume: Bool = false, start: Int? = nil,
              library: MediaLibrary? = nil, libraryIDs: [String: UInt64] = [:]) async throws {
        let (selection, notice) = try selection()
        var settings = try settings(resume: resume)
        settings.start = start
        let session = PlaySession(files: files, problems: problems, selection: selection, device: device, notice: notice,
                                  settings: settings, interactive: interactive,
                                  library: library, libraryIDs: libraryIDs)
        let anyFailed = await session.run()
        if let sig = session.interruptedBy { throw ExitCode(128 + sig) }  // the shell convention (130 for Ctrl-C)
        if anyFailed { throw ExitCode(1) }
    }
}
