// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser

@main
struct TonearmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearm",
        abstract: "A music player for Linux: plays files, folders and playlists through PulseAudio/PipeWire.",
        version: "0.1.0",
        subcommands: [PlayCommand.self, PickCommand.self, InfoCommand.self, ExtractAudioCommand.self, ConvertCommand.self, LibraryCommand.self, RenderCommand.self, EQCommand.self, EffectsCommand.self, OutputsCommand.self, VolumeCommand.self, ConfigCommand.self, SoundCommand.self, BenchEQCommand.self, BenchSoundCommand.self, BenchLibraryCommand.self],
        defaultSubcommand: nil
    )

    /// `tonearm --config PATH COMMAND …`: the commands that read the config file take it from here.
    @OptionGroup var config: ConfigOption
}
