// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

struct ThumbnailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Save the picture of a video at given times as PNG.",
        discussion: """
            Each --at (90, 1:30, 1:02:03.5) gives one picture: with one --at it is written to \
            OUT; with several, to OUT with -1, -2, … before its extension, in the order given \
            (thumb.png → thumb-1.png, thumb-2.png). The picture is the frame shown at that time \
            (--keyframe: the key frame at or before it, faster), upright and in its display \
            aspect (rotation and non-square pixels applied), scaled down to fit --size \
            (WxH, Wx or xH; never scaled up).

            Examples:
              tonearm thumbnail film.mkv --at 1:30 -o poster.png
              tonearm thumbnail clip.mp4 --at 0 --at 10 --at 20 -o thumb.png --size 320x
              tonearm thumbnail phone.mov --at 5 -o still.png --size x240 --keyframe
            """)

    @Argument(help: "The video file.")
    var video: String

    @Option(name: .long, help: "A time to take a picture at (seconds, m:ss or h:mm:ss); repeatable.")
    var at: [String] = []

    @Option(name: .shortAndLong, help: "The PNG file to write (numbered -1, -2, … for several --at).")
    var output: String

    @Option(name: .long, help: "The largest size: WxH, Wx or xH (e.g. 320x, x180, 320x180).")
    var size: String?

    @Option(name: .long, help: "The video track (its number in `tonearm info`); default: the best one.")
    var track: Int?

    @Flag(name: .long, help: "Take the key frame at or before each time instead of the exact frame.")
    var keyframe = false

    @Flag(name: .long, help: "Overwrite the outputs if they exist.")
    var force = false

    func validate() throws {
        _ = try MediaPaths.localInput(video, command: "thumbnail")
        if at.isEmpty { throw ValidationError("give at least one --at TIME") }
        for t in at where ExportRunner.parseTime(t) == nil {
            throw ValidationError("--at must be seconds, m:ss or h:mm:ss, not '\(t)'")
        }
        if let size, Self.parseSize(size) == nil {
            throw ValidationError("--size must be WxH, Wx or xH (e.g. 320x), not '\(size)'")
        }
    }

    /// `320x180`, `320x`, `x180` → the maximum size (0: no limit in that direction).
    static func parseSize(_ s: String) -> AssetImageGenerator.Size? {
        let parts = s.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let w = parts[0].isEmpty ? 0 : Int(parts[0])
        let h = parts[1].isEmpty ? 0 : Int(parts[1])
        guard let w, let h, w >= 0, h >= 0, w + h > 0 else { return nil }
        return AssetImageGenerator.Size(width: w, height: h)
    }

    /// The file for picture `index` (from 0) of `count`: OUT itself for one, OUT-N.ext for several.
    static func outputPath(_ output: String, index: Int, count: Int) -> String {
        guard count > 1 else { return output }
        let ns = output as NSString
        let ext = ns.pathExtension
        let base = ext.isEmpty ? output : ns.deletingPathExtension
        return "\(base)-\(index + 1)" + (ext.isEmpty ? "" : ".\(ext)")
    }

    func run() async throws {
        let path = try MediaPaths.localInput(video, command: "thumbnail")
        let outputs = at.indices.map { Self.outputPath(output, index: $0, count: at.count) }
        for o in outputs { try Overwrite.check(o, force: force) }
        let g = try AssetImageGenerator(path: path, track: track)
        g.appliesPreferredTrackTransform = true
        g.maximumSize = size.flatMap(Self.parseSize) ?? .zero
        // Exact: the frame shown at the time; --keyframe: the key frame at or before it.
        g.requestedTimeToleranceBefore = keyframe ? .infinity : 0
        g.requestedTimeToleranceAfter = 0
        for (t, o) in zip(at, outputs) {
            let image = try g.image(at: ExportRunner.parseTime(t) ?? 0)
            try image.writePNG(to: o)
            Terminal.write("Wrote \(o): \(image.width)×\(image.height), the frame at \(String(format: "%.3f", image.time)) s\n")
        }
    }
}
