// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a file to another format, whole or trimmed, keeping its tags.",
        discussion: """
            The output's extension picks the container; --preset the encoding (default by type: \
            .wav/.aiff → pcm, .flac → lossless, .mp3 → mp3, .opus/.ogg → opus, others → apple-m4a). \
            --start/--end (90, 1:30, 1:02:03.5) trim to the exact sample for PCM and lossless output; a start alone \
            keeps everything from there to the end.

            Examples:
              tonearm convert song.flac -o song.mp3
              tonearm convert live.wav -o intro.flac --start 0 --end 1:30
              tonearm convert live.wav -o rest.flac --start 1:30
              tonearm convert album.m4a -o album.opus --preset opus --force
            """)

    @Argument(help: "The input: any format Tonearm plays.")
    var input: String

    @Option(name: .shortAndLong, help: "The output file; its extension picks the container.")
    var output: String

    @Option(name: .long, help: "passthrough, apple-m4a, low-quality, medium-quality, highest-quality, lossless, pcm, mp3, opus.")
    var preset: String?

    @Option(name: .long, help: "Where to start (seconds, m:ss or h:mm:ss, with decimals).")
    var start: String?

    @Option(name: .long, help: "Where to end (same forms as --start).")
    var end: String?

    @Option(name: .long, help: "The audio track to convert (its number in `tonearm info`).")
    var track: Int?

    @Flag(name: .long, help: "Overwrite the output if it exists.")
    var force = false

    @Flag(name: .long, help: "Leave the cover out (it is carried to MP3, M4A/MP4, FLAC, Ogg and Opus output by default).")
    var noArtwork = false

    func validate() throws {
        _ = try MediaPaths.localInput(input, command: "convert")
        if let p = preset { _ = try ExportRunner.preset(p) }
        for (name, value) in [("--start", start), ("--end", end)] {
            if let v = value, ExportRunner.parseTime(v) == nil {
                throw ValidationError("\(name) must be seconds, m:ss or h:mm:ss, not '\(v)'")
            }
        }
        if let s = start.flatMap(ExportRunner.parseTime), let e = end.flatMap(ExportRunner.parseTime), e <= s {
            throw ValidationError("--end (\(end!)) must be after --start (\(start!))")
        }
    }

    /// The preset a file type gets without --preset.
    static func defaultPreset(for path: String) -> ExportPreset {
        switch ExportFileType(pathExtension: (path as NSString).pathExtension) {
        case .wav, .aiff: .pcm
        case .flac: .lossless
        case .mp3: .mp3
        case .opus, .ogg: .opus
        default: .appleM4A
        }
    }

    func run() async throws {
        try Overwrite.check(output, force: force)  // here, not in validate(): reported in the one form
        let chosen = try preset.map(ExportRunner.preset) ?? Self.defaultPreset(for: output)
        let session = AssetExportSession(asset: Asset(url: URL(fileURLWithPath: try MediaPaths.localInput(input, command: "convert"))), presetName: chosen)
        session.outputURL = URL(fileURLWithPath: output)
        session.audioTrackID = track
        session.overwritesExistingFile = force
        session.includesArtwork = !noArtwork
        if start != nil || end != nil {
            let s = start.flatMap(ExportRunner.parseTime) ?? 0
            // A start alone runs to the end of the input.
            session.timeRange = end.flatMap(ExportRunner.parseTime).map { AssetTimeRange(start: s, end: $0) }
                ?? AssetTimeRange(start: s)
        }
        try await ExportRunner.run(session, output: output)
    }
}
