// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Tonearm

/// `tonearm sound FILE…`: plays short files as system sounds (the `event` role, at once), one
/// after another, or all together with `--together`; with `--alert`, as alerts (each also shows
/// a desktop notification, or rings the terminal bell where none can be shown).
struct SoundCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sound",
        abstract: "Play short files (up to 30 s) as system sounds.",
        discussion: """
        With --alert each sound also shows a desktop notification through \
        org.freedesktop.Notifications on the session bus (DBUS_SESSION_BUS_ADDRESS, else \
        $XDG_RUNTIME_DIR/bus), titled with the file's name (without its extension) unless --title is given. Where there \
        is no bus or no notification server, or it does not answer within a second, the terminal \
        bell rings instead.

        Examples:
          tonearm sound click.wav
          tonearm sound a.wav b.wav --together
          tonearm sound done.oga --alert --title 'Backup' --body 'Finished'
        """)

    @Argument(help: "Sound files.")
    var files: [String]

    @Flag(name: .long, help: "Play them all at once (they overlap) instead of one after another.")
    var together = false

    @Flag(name: .long, help: "Play as an alert: also show a desktop notification, or ring the terminal bell where none can be shown.")
    var alert = false

    @Option(name: .long, help: ArgumentHelp("The alert notification's title (default: the file's name without its extension).", valueName: "TEXT"))
    var title: String?

    @Option(name: .long, help: ArgumentHelp("The alert notification's body text.", valueName: "TEXT"))
    var body: String?

    func validate() throws {
        if !alert && (title != nil || body != nil) {
            throw ValidationError("--title and --body go with --alert")
        }
    }

    func run() throws {
        var failed = false
        var sounds: [SystemSound] = []
        for f in files {
            do {
                sounds.append(try SystemSound(contentsOf: URL(fileURLWithPath: f)))
            } catch {
                Terminal.writeProblem(error, command: "sound")
                failed = true
            }
        }
        // Said only when there is something to play (after the files' own errors).
        if !sounds.isEmpty, let notice = OutputSelection.automatic().notice { Terminal.writeError(notice) }
        let done = DispatchSemaphore(value: 0)
        let delivered = DispatchSemaphore(value: 0)
        func start(_ s: SystemSound) {
            guard alert else {
                s.play { done.signal() }
                return
            }
            if let title { s.alertTitle = title }
            if let body { s.alertBody = body }
            let delivery = s.playAlert { done.signal() }
            Task {
                _ = await delivery.value
                delivered.signal()
            }
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
        // The notifications (or bells) are decided within their timeout; exiting sooner would
        // cut a call in flight.
        if alert {
            for _ in sounds { _ = delivered.wait(timeout: .now() + SystemSound.alertNotificationTimeout + 5) }
        }
        if failed { throw ExitCode(1) }
    }
}
