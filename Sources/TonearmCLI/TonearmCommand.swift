// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Tonearm

@main
struct TonearmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearm",
        abstract: "A music player for Linux: plays files, folders and playlists through PulseAudio/PipeWire.",
        discussion: """
            Plays local files (any format FFmpeg reads), playlists and network streams gaplessly, \
            keeps a media library of your folders, and shows what plays on a live screen or in \
            plain lines. Every error is one line on standard error, `tonearm: <what failed>: \
            <why>`; the exit status is 0 on success, 1 for a failure and 64 for a usage error.

            Examples:
              tonearm play ~/Music/Album                   # a folder, as one gapless queue
              tonearm library scan ~/Music                 # the media library
              tonearm play --artist 'nina simone' --shuffle
              tonearm pick                                 # choose songs in the terminal
              tonearm outputs                              # the sound server's outputs
            """,
        version: "0.1.0",
        subcommands: [PlayCommand.self, PickCommand.self, InfoCommand.self, ExtractAudioCommand.self, ConvertCommand.self, ThumbnailCommand.self, VideoFramesCommand.self, LibraryCommand.self, RenderCommand.self, EQCommand.self, EffectsCommand.self, OutputsCommand.self, InputsCommand.self, VolumeCommand.self, RecordCommand.self, ConfigCommand.self, SoundCommand.self, InstallExtrasCommand.self, BenchEQCommand.self, BenchSoundCommand.self, BenchLibraryCommand.self, DaemonCommand.self, RemoteClientCommand.self],
        defaultSubcommand: nil
    )

    /// `tonearm --config PATH COMMAND …`: the commands that read the config file take it from here.
    @OptionGroup var config: ConfigOption

    /// Registers the drivers the program plays and captures through (at start-up, before any
    /// command runs): the engine and the players know only the registries. Output: null and
    /// file are built in, PulseAudio is registered here. Input (an engine's `inputNode`):
    /// PulseAudio's, whose shared session is made only when an engine opens its input
    /// (`tonearm record` records through AudioRecorder, which needs no registry; whatever taps an
    /// engine's input — the seed ports, a command to come — finds it here). Loads nothing.
    static func registerDrivers() {
        PulseOutput.register()
        InputDriverRegistry.shared.register { PulseInput() }
    }

    /// The entry point: parses and runs the command, and reports every error in one form
    /// (``ErrorReport``): usage errors with status 64, failures with 1, help with 0.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Before any task leaves the main actor: the daemon's tasks on a thread pool of its own, so
        // that libdispatch's once-a-second pool monitor is never started (``DaemonCommand/prepare(arguments:)``).
        DaemonCommand.prepare(arguments: arguments)
        registerDrivers()
        // `play VIDEO`: FFmpeg's libraries load on a thread of their own while the arguments are
        // parsed and the settings read (a FLAC file, which may not need them, does not start this).
        if PlayCommand.namesVideo(arguments) { FFmpegLibraries.loadInBackground() }
        var status: Int32 = 0
        do {
            // The common `library scan DIR… [--db PATH] [--quiet] [--verbose]` without the parser
            // (see ``LibraryScanCommand/Arguments/init(commandLine:)``).
            if let scan = LibraryScanCommand.Arguments(commandLine: arguments) {
                try await LibraryScanCommand.scan(scan)
                Glibc.exit(0)
            }
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            status = ErrorReport(arguments: arguments).report(error)
        }
        Glibc.exit(status)
    }
}
