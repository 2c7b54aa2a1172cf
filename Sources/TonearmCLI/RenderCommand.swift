// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a file offline, as fast as possible, through the equalizer and rate change, to WAV.",
        discussion: """
            The output holds exactly what `tonearm play` would play with the same options.

            Examples:
              tonearm render song.flac -o song-rock.wav --eq rock
              tonearm render talk.mp3 -o fast.wav --rate 1.5 --force
            """)

    @Argument(help: "The input: any format Tonearm plays.")
    var input: String

    @Option(name: .shortAndLong, help: "The output file (.wav, 32-bit float).")
    var output: String

    @OptionGroup var sound: SoundOptions

    @Flag(name: .long, help: "Overwrite the output if it exists.")
    var force = false

    func validate() throws {
        guard output.lowercased().hasSuffix(".wav") else { throw ValidationError("-o: the output must be a .wav file, not '\(output)'") }
    }

    func run() async throws {
        try Overwrite.check(output, force: force)  // here, not in validate(): reported in the one form
        let file = try AudioFile(path: input)
        for w in file.warnings { Terminal.writeProblem(w.description) }
        // Written beside the target and renamed at the end: a failed render leaves nothing.
        let partial = (output as NSString).deletingLastPathComponent.isEmpty
            ? ".\((output as NSString).lastPathComponent).partial.wav"
            : (output as NSString).deletingLastPathComponent + "/.\((output as NSString).lastPathComponent).partial.wav"
        let player = AudioPlayer(file: file, output: { FileOutput(path: partial) })
        try sound.applyEQ(to: player.eq)
        player.effects = try sound.effects().makeNodes()
        if sound.rate != 1 {
            player.enableRate = true
            player.rate = Float(sound.rate)
        }
        let events = player.events
        let duration = file.duration / sound.rate
        let interactive = Terminal.isInteractive
        try player.prepare()
        let started = Date()
        player.play()
        let progress = Task {
            while !Task.isCancelled {
                if interactive {
                    let f = duration > 0 ? min(1, player.currentTime / file.duration) : 0
                    Terminal.write("\r" + LiveScreen.bar(fraction: f, width: 40) + " \(Int(f * 100))% ")
                }
                try? await Task.sleep(for: .milliseconds(100))  // display refresh only
            }
        }
        var ok = false
        for await e in events {
            switch e {
            case .didFinishPlaying(let s):
                ok = s
            case .decodeErrorDidOccur(let p):
                Terminal.writeProblem(p.description)
                continue
            default:
                continue
            }
            break
        }
        progress.cancel()
        if interactive { Terminal.write("\r" + String(repeating: " ", count: 50) + "\r") }
        guard ok, FileManager.default.fileExists(atPath: partial) else {
            try? FileManager.default.removeItem(atPath: partial)
            throw CommandFailure(output, "rendering failed")
        }
        if FileManager.default.fileExists(atPath: output) { try FileManager.default.removeItem(atPath: output) }
        try FileManager.default.moveItem(atPath: partial, toPath: output)
        let secs = Date().timeIntervalSince(started)
        Terminal.write("Rendered \(formatTime(duration)) to \(output) in \(String(format: "%.2f", secs)) s (\(Int(duration / max(secs, 0.001)))× real time)\n")
    }
}
