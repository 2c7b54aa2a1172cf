// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Tonearm

/// `tonearm sound FILE…`: plays short files as system sounds (the `event` role, at once), one
/// after another, or all together with `--together`.
struct SoundCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sound",
        abstract: "Play short files (up to 30 s) as system sounds.")

    @Argument(help: "Sound files.")
    var files: [String]

    @Flag(name: .long, help: "Play them all at once (they overlap) instead of one after another.")
    var together = false

    @Flag(name: .long, help: "Play as an alert (also rings the terminal bell).")
    var alert = false

    func run() throws {
        if let notice = OutputSelection.automatic().notice { Terminal.writeError(notice) }
        var failed = false
        var sounds: [SystemSound] = []
        for f in files {
            do {
                sounds.append(try SystemSound(contentsOf: URL(fileURLWithPath: f)))
            } catch {
                Terminal.writeError("\(error)")
                failed = true
            }
        }
        let done = DispatchSemaphore(value: 0)
        func start(_ s: SystemSound) {
            if alert { s.playAlert { done.signal() } } else { s.play { done.signal() } }
        }
        if together {
            sounds.forEach(start)
            for s in sounds { _ = done.wait(timeout: .now() + s.duration + 5) }
        } else {
            for s in sounds {
                start(s)
                _ = done.wait(timeout: .now() + s.duration + 5)
            }
        }
        if failed { throw ExitCode(1) }
    }
}
