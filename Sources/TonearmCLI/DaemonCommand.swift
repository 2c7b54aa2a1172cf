// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm
import TonearmDaemon

/// `tonearm daemon`: the music player as a background service, driven over the MPD protocol
/// (mpc, ncmpcpp, any MPD client) on `$XDG_RUNTIME_DIR/tonearm/mpd.sock` and TCP. Runs in the
/// foreground (for a service manager), logs to standard error, ends on SIGTERM or SIGINT.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Play in the background, driven over the MPD protocol (mpc, ncmpcpp, …).",
        discussion: """
            Listens on the Unix socket $XDG_RUNTIME_DIR/tonearm/mpd.sock (always; its clients may \
            add local files) and on TCP (127.0.0.1:6600 by default). One daemon per user: a \
            second one says where the first one is and exits with status 1.

            Examples:
              tonearm daemon
              MPD_HOST=$XDG_RUNTIME_DIR/tonearm/mpd.sock mpc add ~/Music/song.flac
              mpc play
            """)

    @Option(name: .long, help: ArgumentHelp("TCP address to listen on (repeatable; 'none' for none). Default: 127.0.0.1:6600.", valueName: "ADDR:PORT"))
    var listen: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where to play: pulse or null. Default: PulseAudio/PipeWire if a server answers, else null.", valueName: "OUTPUT"))
    var output: String?

    @Option(name: .long, help: ArgumentHelp("A music folder (repeatable): songs are added by their path in it.", valueName: "DIR"))
    var music: [String] = []

    @Option(name: .long, help: ArgumentHelp("The folder of the socket and the lock (default $XDG_RUNTIME_DIR/tonearm).", valueName: "DIR"))
    var runtimeDir: String?

    @Option(name: .long, help: ArgumentHelp("Where the queue, position, volume and modes are kept between runs (default $XDG_STATE_HOME/tonearm/daemon).", valueName: "DIR"))
    var stateDir: String?

    @Flag(name: .long, help: "Log every connection and command problem.")
    var verbose = false

    func validate() throws {
        for l in listen where l != "none" {
            guard case .tcp? = try? MPDListenAddress(parsing: l) else {
                throw ValidationError("--listen '\(l)': expected ADDR:PORT, as in 127.0.0.1:6600")
            }
        }
        if let output {
            let s: OutputSelection
            do { s = try OutputSelection(parsing: output) } catch { throw ValidationError("--output: \(error)") }
            switch s {
            case .pulse, .null: break
            default: throw ValidationError("--output '\(output)': the daemon plays to pulse or null")
            }
        }
    }

    func run() async throws {
        let tcp: [MPDListenAddress]
        if listen.isEmpty {
            tcp = [.tcp(host: "127.0.0.1", port: 6600)]
        } else {
            tcp = try listen.filter { $0 != "none" }.map { try MPDListenAddress(parsing: $0) }
        }
        let selection: OutputSelection
        if let output {
            selection = try OutputSelection(parsing: output)
        } else {
            let auto = OutputSelection.automatic()
            if let notice = auto.notice { FileHandle.standardError.write(Data("tonearm daemon: \(notice)\n".utf8)) }
            selection = auto.selection
        }
        let folders = music.map { URL(fileURLWithPath: ($0 as NSString).expandingTildeInPath).standardizedFileURL.path }
        var options = DaemonOptions(runtimeDirectory: runtimeDir ?? DaemonOptions.defaultRuntimeDirectory, tcp: tcp, output: selection,
                                    musicDirectories: folders, verbose: verbose)
        options.stateDirectory = stateDir ?? DaemonOptions.defaultStateDirectory
        do {
            try await DaemonRunner.run(options)
        } catch let e as DaemonLockError {
            throw ValidationFailure(e.message)
        }
    }
}

/// A failure reported as `tonearm: daemon: MESSAGE`, status 1.
struct ValidationFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
