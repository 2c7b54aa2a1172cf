// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

struct ExtractAudioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract-audio",
        abstract: "Extract the audio track of a video, unchanged by default.",
        discussion: """
            The packets are copied without re-encoding (the passthrough preset) into the output's \
            container, chosen by its extension: .m4a, .caf, .mka, .mp4, .aac, .opus, .ogg, … \
            `tonearm info VIDEO` lists the tracks; --track picks one by its number.

            Examples:
              tonearm extract-audio talk.mp4 -o talk.m4a
              tonearm extract-audio film.mkv -o film.opus --track 2
              tonearm extract-audio clip.mov -o clip.mp3 --preset mp3 --force
            """)

    @Argument(help: "The video (or any media file).")
    var video: String

    @Option(name: .shortAndLong, help: "The output file; its extension picks the container.")
    var output: String

    @Option(name: .long, help: "passthrough (default) or a re-encoding preset: apple-m4a, low-quality, medium-quality, highest-quality, lossless, pcm, mp3, opus.")
    var preset = "passthrough"

    @Option(name: .long, help: "The audio track to extract (its number in `tonearm info`).")
    var track: Int?

    @Flag(name: .long, help: "Overwrite the output if it exists.")
    var force = false

    @Flag(name: .long, help: "Leave the cover out (it is carried to MP3, M4A/MP4, FLAC, Ogg and Opus output by default).")
    var noArtwork = false

    func validate() throws {
        _ = try MediaPaths.localInput(video, command: "extract-audio")
        _ = try ExportRunner.preset(preset)
    }

    func run() async throws {
        try Overwrite.check(output, force: force)  // here, not in validate(): reported in the one form
        let session = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: try MediaPaths.localInput(video, command: "extract-audio"))), presetName: try ExportRunner.preset(preset))
        session.outputURL = URL(fileURLWithPath: output)
        session.audioTrackID = track
        session.overwritesExistingFile = force
        session.includesArtwork = !noArtwork
        try await ExportRunner.run(session, output: output)
    }
}
