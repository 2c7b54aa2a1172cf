// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// `tonearm outputs [--json]` lists the sound server's outputs (the default one marked);
/// `tonearm outputs --set NAME` makes one the default. Without a server: an error, exit 1.
struct OutputsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outputs",
        abstract: "List the audio outputs (PulseAudio/PipeWire sinks), or choose the default one.",
        discussion: """
            Examples:
              tonearm outputs
              tonearm outputs --json
              tonearm outputs --set alsa_output.usb-headset.analog-stereo
            """)

    @Flag(name: .long, help: "Print JSON: an object per output.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Make the output NAME the default (see the names in the list).", valueName: "NAME"), completion: Completions.outputs)
    var set: String?

    func validate() throws {
        if let set, set.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--set needs the name of an output")
        }
    }

    func run() throws {
        // Errors (no server; an unknown name, reported with the names there are) go to the
        // entry point: `tonearm: outputs: …`, exit status 1.
        let routes = AudioRoutes()
        do {
            if let set {
                try routes.setDefaultOutput(named: set)
                let now = try routes.currentOutput()
                Terminal.write("Default output: \(now?.name ?? set)\(now.map { " (\($0.description))" } ?? "")\n")
                return
            }
            let outputs = try routes.outputs()
            if json {
                try Terminal.writeJSON(outputs)
                return
            }
            if outputs.isEmpty {
                Terminal.write("No outputs.\n")
                return
            }
            for o in outputs {
                let rate = o.sampleRate == o.sampleRate.rounded() ? String(Int(o.sampleRate)) : String(o.sampleRate)
                Terminal.write("\(o.isDefault ? "*" : " ") \(o.name)  \(o.description)  [\(o.portType.rawValue), \(rate) Hz, \(o.channelCount) ch]\n")
            }
            Terminal.write("(* the default output; change it with `tonearm outputs --set NAME`)\n")
        }
    }
}

/// `tonearm inputs [--json] [--monitors]` lists the sound server's inputs (the default one
/// marked); `tonearm inputs --set NAME` makes one the default. Without a server: an error, exit 1.
struct InputsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inputs",
        abstract: "List the audio inputs (PulseAudio/PipeWire sources), or choose the default one.",
        discussion: """
            The monitors of the outputs (what each plays, recordable as NAME.monitor) are listed \
            with --monitors.

            Examples:
              tonearm inputs
              tonearm inputs --monitors --json
              tonearm inputs --set alsa_input.usb-0d8c_USB_Audio-00.mono-fallback
              tonearm inputs --gain 70
              tonearm inputs --mute --input alsa_input.usb-0d8c_USB_Audio-00.mono-fallback
            """)

    @Flag(name: .long, help: "Print JSON: an object per input.")
    var json = false

    @Flag(name: .long, help: "List the monitors of the outputs too.")
    var monitors = false

    @Option(name: .long, help: ArgumentHelp("Make the input NAME the default (see the names in the list).", valueName: "NAME"), completion: Completions.inputs)
    var set: String?

    @Option(name: .long, help: ArgumentHelp("Set the input's gain (its level in the sound server's mixer), 0-100 %.", valueName: "PERCENT"))
    var gain: Int?

    @Flag(name: .long, help: "Mute the input (it records silence).")
    var mute = false

    @Flag(name: .long, help: "Unmute the input.")
    var unmute = false

    @Option(name: .long, help: ArgumentHelp("The input --gain, --mute and --unmute change (default: the default input).", valueName: "NAME"),
            completion: Completions.inputs)
    var input: String?

    func validate() throws {
        if let set, set.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--set needs the name of an input")
        }
        if let gain, !(0...100).contains(gain) { throw ValidationError("--gain is a percentage from 0 to 100, not \(gain)") }
        if mute && unmute { throw ValidationError("--mute and --unmute exclude each other") }
        if input != nil && gain == nil && !mute && !unmute { throw ValidationError("--input names the input --gain, --mute or --unmute change") }
    }

    func run() throws {
        let routes = AudioRoutes()
        if gain != nil || mute || unmute {
            let control = InputGain(input: input)
            if let gain { try control.setGain(Float(gain) / 100) }
            if mute || unmute { try control.setMuted(mute) }
            let name = try input ?? routes.currentInput()?.name ?? "the default input"
            let percent = Int((try control.gain() * 100).rounded())
            Terminal.write("Input \(name): gain \(percent) %\(try control.isMuted() ? ", muted" : "")\n")
            return
        }
        if let set {
            try routes.setDefaultInput(named: set)
            let now = try routes.currentInput()
            Terminal.write("Default input: \(now?.name ?? set)\(now.map { " (\($0.description))" } ?? "")\n")
            return
        }
        let inputs = try routes.inputs().filter { monitors || $0.monitorOf == nil }
        if json {
            try Terminal.writeJSON(inputs)
            return
        }
        if inputs.isEmpty {
            Terminal.write(monitors ? "No inputs.\n" : "No inputs (the outputs' monitors are listed with --monitors).\n")
            return
        }
        for i in inputs {
            let rate = i.sampleRate == i.sampleRate.rounded() ? String(Int(i.sampleRate)) : String(i.sampleRate)
            let kind = i.monitorOf.map { "monitor of \($0)" } ?? i.portType.rawValue
            Terminal.write("\(i.isDefault ? "*" : " ") \(i.name)  \(i.description)  [\(kind), \(rate) Hz, \(i.channelCount) ch]\n")
        }
        Terminal.write("(* the default input; change it with `tonearm inputs --set NAME`)\n")
    }
}

/// `tonearm volume [0-100|+N|-N|mute|unmute|toggle] [--device NAME]`: prints or changes the
/// system volume (the default output's, or a named output's) and prints the new value.
struct VolumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Print or change the system volume (the output's, not a player's).",
        // One value (the argument is an array only so that `-5` is a value, not an option).
        usage: "tonearm volume [<VALUE>] [--device <NAME>]",
        discussion: """
            With no value, prints the volume. 0-100 sets it, +N / -N changes it by N points, \
            mute / unmute / toggle the mute.

            Examples:
              tonearm volume
              tonearm volume 40
              tonearm volume -5
              tonearm volume toggle --device alsa_output.usb-headset.analog-stereo
            """)

    /// What the command is asked to do.
    enum Change: Equatable {
        case show
        case set(Int)
        case by(Int)
        case mute(Bool)
        case toggleMute

        init(parsing text: String?) throws {
            guard let text else { self = .show; return }
            let t = text.trimmingCharacters(in: .whitespaces).lowercased()
            switch t {
            case "mute": self = .mute(true)
            case "unmute": self = .mute(false)
            case "toggle": self = .toggleMute
            default:
                if let sign = t.first, sign == "+" || sign == "-", let n = Int(t.dropFirst()), n >= 0, n <= 100,
                   t.dropFirst().allSatisfy(\.isNumber) {
                    self = .by(sign == "+" ? n : -n)
                } else if let n = Int(t), t.allSatisfy(\.isNumber), (0...100).contains(n) {
                    self = .set(n)
                } else {
                    throw ValidationError("'\(text)' is not a volume: give 0-100, +N or -N (N up to 100), mute, unmute or toggle")
                }
            }
        }
    }

    // `.allUnrecognized`, so that `-5` is taken as a value and not as an unknown option.
    @Argument(parsing: .allUnrecognized,
              help: ArgumentHelp("0-100, +N, -N, mute, unmute or toggle; none to print the volume.", valueName: "VALUE"))
    var values: [String] = []

    var value: String? { values.first }

    @Option(name: .long, help: ArgumentHelp("The output (sink) whose volume to use; the default output when omitted.", valueName: "NAME"), completion: Completions.outputs)
    var device: String?

    func validate() throws {
        if values.count > 1 { throw ValidationError("give one volume value, not \(values.count): \(values.joined(separator: " "))") }
        _ = try Change(parsing: value)
    }

    static func percent(_ v: Float) -> Int { Int((Double(v) * 100).rounded()) }

    func run() throws {
        let system = SystemVolume(output: device)
        do {
            switch try Change(parsing: value) {
            case .show: break
            case .set(let n): try system.setVolume(Float(n) / 100)
            case .by(let n):
                let now = Self.percent(try system.volume())
                try system.setVolume(Float(min(max(now + n, 0), 100)) / 100)
            case .mute(let on): try system.setMuted(on)
            case .toggleMute: try system.setMuted(!(try system.isMuted()))
            }
            let s = try system.state()
            Terminal.write("\(Self.percent(s.volume))%\(s.isMuted ? " (muted)" : "")  \(s.outputName)\n")
        }
    }
}
