// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

struct VideoFramesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "video-frames",
        abstract: "Decode a file's video to a YUV4MPEG2 (.y4m) file.",
        discussion: """
            Every frame of the video track, in presentation order, as 8-bit 4:2:0 (10-bit and \
            other formats are converted), in YUV4MPEG2, which ffmpeg, mpv and x264 read. \
            Corrupt data is skipped and counted; a warning says so.

            Examples:
              tonearm video-frames clip.mp4 -o clip.y4m
              tonearm video-frames film.mkv -o second.y4m --track 2 --force
            """)

    @Argument(help: "The video file.")
    var video: String

    @Option(name: .shortAndLong, help: "The .y4m file to write.")
    var output: String

    @Option(name: .long, help: "The video track (its number in `tonearm info`); default: the best one.")
    var track: Int?

    @Flag(name: .long, help: "Overwrite the output if it exists.")
    var force = false

    func validate() throws {
        _ = try MediaPaths.localInput(video, command: "video-frames")
    }

    func run() async throws {
        let path = try MediaPaths.localInput(video, command: "video-frames")
        try Overwrite.check(output, force: force)
        let d = try VideoDecoder(path: path, track: track)
        let w = try Y4MWriter(path: output, frameRate: (d.track.frameRateNumerator ?? 0, d.track.frameRateDenominator ?? 0))
        while let f = try d.nextFrame() { try w.write(f) }
        try w.close()
        for warning in d.warnings { Terminal.writeProblem(warning.description) }
        if w.framesWritten == 0 {
            // A YUV4MPEG2 file needs a frame for its header: none is no file.
            try? FileManager.default.removeItem(atPath: output)
            throw TonearmError.decodeFailed(path: path, detail: "no video frame could be decoded")
        }
        Terminal.write("Wrote \(output): \(w.framesWritten) frames, \(d.track.codedWidth)×\(d.track.codedHeight), \(d.track.codecName)\n")
    }
}
