// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the format and tags of media files.")

    @Argument(help: "Files to describe.")
    var files: [String]

    @Flag(name: .long, help: "Print JSON (an array, one object per file).")
    var json = false

    func run() throws {
        var reports: [FileReport] = []
        var failed = false
        for path in files {
            do {
                let f = try AudioFile(path: path.hasPrefix("file://") ? (URL(string: path)?.path ?? path) : path)
                reports.append(FileReport(file: f, requestedPath: path))
            } catch {
                failed = true
                if json {
                    reports.append(FileReport(error: "\(error)", path: path))
                } else {
                    Terminal.writeError("\(error)")
                }
            }
        }
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try enc.encode(reports)
            Terminal.write(String(decoding: data, as: UTF8.self) + "\n")
        } else {
            for (i, r) in reports.enumerated() {
                if i > 0 { Terminal.write("\n") }
                Terminal.write(r.text())
            }
        }
        if failed { throw ExitCode(1) }
    }
}

/// What `tonearm info` prints about one file.
struct FileReport: Encodable {
    var path: String
    var error: String?
    var container: String?
    var codec: String?
    var sampleRate: Int?
    var channels: Int?
    var channelLayout: String?
    var bitsPerSample: Int?
    var bitRate: Int?
    var frames: Int64?
    var duration: Double?
    var warnings: [String]?
    var tags: [String: String]?
    var artwork: ArtworkInfo?

    struct ArtworkInfo: Encodable { var mimeType: String; var bytes: Int }

    init(error: String, path: String) {
        self.path = path
        self.error = error
    }

    init(file f: AudioFile, requestedPath: String) {
        path = requestedPath
        let s = f.fileFormat
        container = s.containerName
        codec = s.codecName
        sampleRate = s.sampleRate
        channels = s.channelCount
        channelLayout = s.channelLayout
        bitsPerSample = s.bitsPerSample
        bitRate = s.bitRate
        frames = f.length
        duration = f.duration
        warnings = f.warnings.isEmpty ? nil : f.warnings.map(\.description)
        let m = f.metadata
        var t: [String: String] = [:]
        func put(_ k: String, _ v: String?) { if let v, !v.isEmpty { t[k] = v } }
        put("title", m.title); put("artist", m.artist); put("album", m.album)
        put("albumArtist", m.albumArtist); put("composer", m.composer); put("genre", m.genre)
        put("track", m.trackNumber.map { n in m.trackCount.map { "\(n)/\($0)" } ?? "\(n)" })
        put("disc", m.discNumber.map { n in m.discCount.map { "\(n)/\($0)" } ?? "\(n)" })
        put("date", m.date); put("comment", m.comment); put("lyrics", m.lyrics)
        put("compilation", m.isCompilation.map { $0 ? "yes" : "no" })
        let rg = m.replayGain
        put("replayGainTrackGain", rg.trackGain.map { String(format: "%.2f dB", $0) })
        put("replayGainTrackPeak", rg.trackPeak.map { String(format: "%.6f", $0) })
        put("replayGainAlbumGain", rg.albumGain.map { String(format: "%.2f dB", $0) })
        put("replayGainAlbumPeak", rg.albumPeak.map { String(format: "%.6f", $0) })
        tags = t
        artwork = m.artwork.map { ArtworkInfo(mimeType: $0.mimeType, bytes: $0.data.count) }
    }

    func text() -> String {
        var lines = ["\(path)"]
        if let e = error { return "\(path): \(e)\n" }
        let fmt = describeFormat(codec: codec ?? "?", sampleRate: sampleRate ?? 0, bits: bitsPerSample,
                                 channelLayout: channelLayout ?? "", bitRate: bitRate)
        lines.append("  Container  \(container ?? "?")")
        lines.append("  Format     \(fmt)")
        lines.append("  Length     \(formatTime(duration ?? 0)) (\(frames ?? 0) frames, \(String(format: "%.3f", duration ?? 0)) s)")
        for w in warnings ?? [] { lines.append("  Warning    \(w)") }
        let order = ["title", "artist", "album", "albumArtist", "composer", "genre", "track", "disc", "date",
                     "compilation", "comment", "lyrics", "replayGainTrackGain", "replayGainTrackPeak",
                     "replayGainAlbumGain", "replayGainAlbumPeak"]
        for k in order { if let v = tags?[k] { lines.append("  \(k.padding(toLength: 10, withPad: " ", startingAt: 0)) \(v.replacingOccurrences(of: "\n", with: " ⏎ "))") } }
        if let a = artwork { lines.append("  Artwork    \(a.mimeType), \(a.bytes) bytes") }
        return lines.joined(separator: "\n") + "\n"
    }
}
