// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the format, tags and tracks of media files.",
        discussion: """
            Every track (audio, video, subtitles, …) is listed with its number, which \
            `extract-audio --track` takes.

            Examples:
              tonearm info song.flac
              tonearm info *.mp3 --json
            """)

    @Argument(help: "Files to describe (or http/https addresses).")
    var files: [String]

    @Flag(name: .long, help: "Print JSON (an array, one object per file).")
    var json = false

    func run() async throws {
        var reports: [FileReport] = []
        var failed = false
        for path in files {
            let local: String
            switch MediaPaths.location(of: path) {
            case .file(let p): local = p
            case .network(let url):
                // Read over the network as `play` does: the format and tags, no track list.
                do {
                    reports.append(FileReport(file: try Self.open(url), requestedPath: path))
                } catch {
                    failed = true
                    if json { reports.append(FileReport(error: "\(error)", path: path)) } else { Terminal.writeError("\(error)") }
                }
                continue
            case .otherURL(let scheme):
                failed = true
                let e = "\(path): info reads files and http(s) addresses, not \(scheme) URLs"
                if json { reports.append(FileReport(error: e, path: path)) } else { Terminal.writeError(e) }
                continue
            }
            let asset = Asset(url: URL(fileURLWithPath: local))
            do {
                let f = try AudioFile(path: local)
                var report = FileReport(file: f, requestedPath: path)
                report.tracks = f.isFLACWithoutPictures
                    ? [Self.flacTrack(f)] : (try? await asset.tracks).map { Self.exact($0, file: f) }
                report.video = Self.videoTracks(local, tracks: report.tracks)
                report.subtitles = Self.subtitleTracks(local, video: report.video)
                reports.append(report)
            } catch {
                if case TonearmError.noAudioTrack = error, let contents = try? await asset.load() {
                    // A video without sound is still media: list what it holds.
                    var report = FileReport(contents: contents, requestedPath: path)
                    report.video = Self.videoTracks(local, tracks: report.tracks)
                    report.subtitles = Self.subtitleTracks(local, video: report.video)
                    reports.append(report)
                    continue
                }
                failed = true
                if json {
                    reports.append(FileReport(error: "\(error)", path: path))
                } else {
                    Terminal.writeProblem(error, command: "info")
                }
            }
        }
        if json {
            try Terminal.writeJSON(reports)
        } else {
            for (i, r) in reports.enumerated() {
                if i > 0 { Terminal.write("\n") }
                Terminal.write(r.text())
            }
        }
        if failed { throw ExitCode(1) }
    }
}

extension InfoCommand {
    /// `tracks` with the decoded track's time range made exact: the container's list (the
    /// asset's) gives what the headers state, which for an MP3 without a Xing frame is an
    /// estimate from the first frame's bit rate, while opening the file has found the exact
    /// length (the same ``AudioFile/length`` as the Length line).
    static func exact(_ tracks: [AssetTrack], file f: AudioFile) -> [AssetTrack] {
        guard f.isLengthKnown else { return tracks }
        return tracks.map { t in
            guard t.trackID == f.audioTrack, t.mediaType == .audio else { return t }
            var exact = t
            exact.timeRange = AssetTimeRange(start: t.timeRange.start, duration: f.duration)
            return exact
        }
    }

    /// The one track of a FLAC file without pictures, as FFmpeg's demuxer lists it (read by the
    /// Swift decoder: listing it through ``Asset`` would load FFmpeg for nothing).
    static func flacTrack(_ f: AudioFile) -> AssetTrack {
        let s = f.fileFormat
        let format = TrackFormatDescription(
            codecName: "flac", codecLongName: "FLAC (Free Lossless Audio Codec)", sampleRate: s.sampleRate,
            channelCount: s.channelCount, channelLayout: s.channelLayout, bitsPerSample: s.bitsPerSample)
        let frames = f.flacStatedFrames
        return AssetTrack(trackID: 0, mediaType: .audio, formatDescription: format,
                          timeRange: AssetTimeRange(start: 0, duration: Double(frames) * 1 / Double(s.sampleRate)))
    }

    /// The video tracks of a local file (codec, sizes, frame rate, rotation, depth, HDR), read
    /// only when the container lists a video track (cover art is not video, and an audio file
    /// costs nothing more); nil when there is none.
    static func subtitleTracks(_ path: String, video: [VideoTrackInfo]?) -> [SubtitleTrackInfo]? {
        guard video != nil, let subs = try? SubtitleTrackInfo.tracks(inFileAt: path), !subs.isEmpty else { return nil }
        return subs
    }

    static func videoTracks(_ path: String, tracks: [AssetTrack]?) -> [VideoTrackInfo]? {
        guard tracks?.contains(where: { $0.mediaType == .video }) == true,
              let video = try? VideoTrackInfo.tracks(inFileAt: path), !video.isEmpty else { return nil }
        return video
    }

    /// The media at an http(s) `url`, opened as `play` opens it (a stream of unknown length is
    /// read only as far as its header). Throws the network failure (`the server answered 404`,
    /// `not audio (…)`) or the media errors.
    static func open(_ url: URL) throws(TonearmError) -> AudioFile {
        let source = NetworkByteSource(url: url)
        source.start()
        defer { source.cancel() }
        return try AudioFile(byteSource: source, name: url.absoluteString)
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
    /// Every track of the container (audio, video, subtitles, …).
    var tracks: [AssetTrack]?
    /// The video tracks in detail (not cover art); nil when there is none.
    var video: [VideoTrackInfo]?
    /// The subtitle tracks of a video (codec, language, title); nil when there is none.
    var subtitles: [SubtitleTrackInfo]?
    /// Set when the file holds no audio track.
    var note: String?

    struct ArtworkInfo: Encodable { var mimeType: String; var bytes: Int }

    init(error: String, path: String) {
        self.path = path
        self.error = error
    }

    init(contents c: AssetContents, requestedPath: String) {
        path = requestedPath
        container = c.formatLongName.isEmpty ? c.formatName : c.formatLongName
        duration = c.duration
        tracks = c.tracks
        note = "no audio track"
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
        if let n = note {
            lines.append("  Container  \(container ?? "?")")
            lines.append("  Length     \(formatTime(duration ?? 0)) (\(String(format: "%.3f", duration ?? 0)) s)")
            lines.append("  Audio      none (\(n))")
            lines += videoLines()
            lines += subtitleLines()
            lines += trackLines()
            return lines.joined(separator: "\n") + "\n"
        }
        let fmt = describeFormat(codec: codec ?? "?", sampleRate: sampleRate ?? 0, bits: bitsPerSample,
                                 channelLayout: channelLayout ?? "", bitRate: bitRate)
        lines.append("  Container  \(container ?? "?")")
        lines.append("  Format     \(fmt)")
        lines.append("  Length     \(formatTime(duration ?? 0)) (\(frames ?? 0) frames, \(String(format: "%.3f", duration ?? 0)) s)")
        for w in warnings ?? [] { lines.append("  Warning    \(w)") }
        let order = ["title", "artist", "album", "albumArtist", "composer", "genre", "track", "disc", "date",
                     "compilation", "comment", "lyrics", "replayGainTrackGain", "replayGainTrackPeak",
                     "replayGainAlbumGain", "replayGainAlbumPeak"]
        for k in order { if let v = tags?[k] { lines.append("  \(k.rightPadded(10)) \(v.replacingOccurrences(of: "\n", with: " ⏎ "))") } }
        if let a = artwork { lines.append("  Artwork    \(a.mimeType), \(a.bytes) bytes") }
        lines += videoLines()
        lines += subtitleLines()
        lines += trackLines()
        return lines.joined(separator: "\n") + "\n"
    }

    /// `  Video      #0 h264 (High) · 1920×1080 · 29.97 fps · 8-bit yuv420p · rotated 90° → 1080×1920`,
    /// one per video track.
    private func videoLines() -> [String] {
        (video ?? []).map { v in
            var parts = [v.profile.map { "\(v.codecName) (\($0))" } ?? v.codecName, "\(v.codedWidth)×\(v.codedHeight)"]
            if let r = v.frameRate {
                let text = r == r.rounded() ? "\(Int(r))" : String(format: "%.3f", r).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression)
                parts.append("\(text) fps")
            }
            if let d = v.bitDepth { parts.append("\(d)-bit" + (v.pixelFormat.map { " \($0)" } ?? "")) }
            if let h = v.hdrTransfer { parts.append("HDR \(h)") }
            if v.pixelAspectRatio != .square { parts.append("pixel aspect \(v.pixelAspectRatio)") }
            if v.rotation != 0 { parts.append("rotated \(v.rotation)°") }
            if v.rotation != 0 || v.pixelAspectRatio != .square { parts.append("shown \(v.displayWidth)×\(v.displayHeight)") }
            return "  Video      #\(v.trackID) " + parts.joined(separator: " · ")
        }
    }

    /// `  Subtitle   #2 subrip · eng · "English" · default · --sub-track 1`, one per subtitle track
    /// (each with the N that `play --sub-track` takes; bitmap ones said so).
    private func subtitleLines() -> [String] {
        var n = 0
        return (subtitles ?? []).map { t in
            var parts = [t.codecName]
            if let l = t.language { parts.append(l) }
            if let title = t.title { parts.append("\"\(title)\"") }
            if t.isDefault { parts.append("default") }
            if !t.isText { parts.append("bitmap") }
            n += 1
            parts.append("--sub-track \(n)")
            return "  Subtitle   #\(t.trackID) " + parts.joined(separator: " · ")
        }
    }

    /// `  Track 0  audio  aac · 48 kHz · stereo · 128 kb/s · eng · default · 0:00–0:02`, one per track.
    private func trackLines() -> [String] {
        guard let tracks, !tracks.isEmpty else { return [] }
        var out = ["  Tracks"]
        // With several audio tracks each says the number `play --audio-track` takes for it.
        let audio = tracks.filter { $0.mediaType == .audio }.map(\.trackID)
        for t in tracks {
            let f = t.formatDescription
            var parts = [f.codecName]
            if let r = f.sampleRate, r > 0 {
                let khz = Double(r) / 1000
                parts.append(khz == khz.rounded() ? "\(Int(khz)) kHz" : "\((khz * 10).rounded() / 10) kHz")
            }
            if let l = f.channelLayout { parts.append(l) }
            if let b = f.bitsPerSample, b > 0 { parts.append("\(b)-bit") }
            if let w = f.width, let h = f.height, w > 0 { parts.append("\(w)×\(h)") }
            if let b = f.bitRate, b > 0 { parts.append("\(b / 1000) kb/s") }
            if let l = t.language { parts.append(l) }
            if let title = t.title { parts.append("“\(title)”") }
            if t.isDefault { parts.append("default") }
            parts.append("\(formatTime(t.timeRange.start))–\(formatTime(t.timeRange.end))")
            if audio.count > 1, t.mediaType == .audio, let n = audio.firstIndex(of: t.trackID) { parts.append("--audio-track \(n + 1)") }
            out.append("    #\(t.trackID)  \(t.mediaType.rawValue.rightPadded(8)) \(parts.joined(separator: " · "))")
        }
        return out
    }
}
