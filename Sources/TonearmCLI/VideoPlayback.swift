// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Synchronization
import Tonearm
import TonearmKit

/// Where `tonearm play`'s picture goes (`--video-output`).
enum VideoOutputChoice: Sendable, Hashable, CustomStringConvertible {
    /// A ``PlayerView`` window (when a display is there).
    case window
    /// Decoded and timed against the sound, then dropped (the video counterpart of `--output null`).
    case null
    /// Every frame shown, in order, written as YUV4MPEG2 (offline: every frame of the file).
    case file(String)

    static let syntax = "window, null or file:OUT.y4m"

    /// Reads `--video-output`'s value; throws a usage error that says what is accepted.
    init(parsing text: String) throws(ValidationError) {
        switch text {
        case "window": self = .window
        case "null": self = .null
        default:
            guard text.hasPrefix("file:"), text.count > 5 else {
                throw ValidationError("--video-output must be \(Self.syntax), not '\(text)'")
            }
            let path = String(text.dropFirst(5))
            guard path.lowercased().hasSuffix(".y4m") else {
                throw ValidationError("--video-output file: writes YUV4MPEG2; the name must end in .y4m, not '\(path)'")
            }
            self = .file(path)
        }
    }

    var description: String {
        switch self {
        case .window: "window"
        case .null: "null"
        case .file(let path): "file:\(path)"
        }
    }
}

/// What `tonearm play` needs to know about video before it chooses how to play.
enum VideoPlayback {
    /// The containers that may hold video: only these are probed (an audio file costs nothing).
    static let videoExtensions: Set<String> = ["mp4", "m4v", "mov", "mkv", "webm", "ts", "m2ts", "mts", "avi", "ogv",
                                               "mpg", "mpeg", "flv", "wmv", "3gp", "y4m"]

    /// Whether `path` is a local file with a video track (cover art is not video).
    static func hasVideo(_ path: String) -> Bool { !videoTracks(path).isEmpty }

    /// The video tracks of `path` when it is a local file of a container that may hold video;
    /// [] otherwise. (The file's probe is kept for the item that plays it: see `ProbedInputs`.)
    static func videoTracks(_ path: String) -> [VideoTrackInfo] {
        guard mayHaveVideo(path) else { return [] }
        return (try? VideoTrackInfo.tracks(inFileAt: path)) ?? []
    }

    /// Whether `path` is a local file of a container that may hold video (by its name; nothing
    /// is read).
    static func mayHaveVideo(_ path: String) -> Bool {
        !path.contains("://") && videoExtensions.contains(URL(fileURLWithPath: path).pathExtension.lowercased())
            && FileManager.default.fileExists(atPath: path)
    }

    /// Whether a display is there to open a window on (`DISPLAY` or `WAYLAND_DISPLAY`).
    static var hasDisplay: Bool {
        let env = ProcessInfo.processInfo.environment
        return !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Said once when a video plays without its picture for want of a display.
    static let noDisplayNotice = "no display: playing the sound only"
    /// Said once when a window is asked for with an output that is not real time.
    static let offlineNotice = "the picture needs a real-time output (not null:untimed or file:): playing the sound only"

    /// Offline (`--output null:untimed` or `file:OUT.wav`), where there is no clock to present
    /// against: decodes every frame of `path`'s video to `choice` (`null` or `file:`), in order,
    /// straight from the decoder (none can be dropped, and with the sound rendered beside it
    /// both start at the item's 0: in sync by construction). The number of frames.
    static func writeAllFrames(of path: String, to choice: VideoOutputChoice, subtitle: SubtitleSelection? = nil) throws -> Int {
        try writeAllFrames(of: [path], to: choice, subtitle: subtitle)
    }

    /// The subtitles to draw over the local video `path`: `file` (`--sub`), its `track`th text
    /// subtitle track (`--sub-track`, 1-based; `noSuchTrack` saying how many it has), else an
    /// `.srt` beside it with the same name, as mpv picks one; nil when there is none.
    static func subtitle(for path: String, file: String?, track: Int?) throws -> SubtitleSelection? {
        if let file {
            guard FileManager.default.isReadableFile(atPath: file) else { throw TonearmError.fileNotFound(path: file) }
            return .file(path: file)
        }
        if let track { return .track(try SubtitleTrackInfo.track(track, inFileAt: path)) }
        return subtitleBeside(path).map { .file(path: $0) }
    }

    /// The `.srt` beside the video `path` with the same name (`film.srt` for `film.mkv`), when
    /// there is one.
    static func subtitleBeside(_ path: String) -> String? {
        let beside = URL(fileURLWithPath: path).deletingPathExtension().appendingPathExtension("srt").path
        return FileManager.default.isReadableFile(atPath: beside) ? beside : nil
    }

    /// The subtitle a video of a queue draws: its `track`th text track (`--sub-track`) when it
    /// has that many, else the `.srt` beside it; nil when neither.
    static func queueSubtitle(for path: String, track: Int?) -> SubtitleSelection? {
        if let track, let t = try? SubtitleTrackInfo.track(track, inFileAt: path) { return .track(t) }
        return subtitleBeside(path).map { .file(path: $0) }
    }

    /// As for one file, for the video files of a queue, one after another
    /// in `paths`' order, into one stream (its frame rate the first video's; a YUV4MPEG2 stream
    /// has one picture size, so videos of another size than the first are refused by the writer).
    static func writeAllFrames(of paths: [String], to choice: VideoOutputChoice, subtitle: SubtitleSelection? = nil) throws -> Int {
        try writeAllFrames(of: paths, to: choice, subtitles: { _ in subtitle })
    }

    /// As above, each video with its own subtitle (`subtitles(path)`, nil: none).
    static func writeAllFrames(of paths: [String], to choice: VideoOutputChoice,
                               subtitles: (String) -> SubtitleSelection?) throws -> Int {
        var writer: Y4MWriter?
        var n = 0
        for path in paths {
            let decoder = try VideoDecoder(path: path)
            decoder.subtitle = subtitles(path)
            switch choice {
            case .null, .window:
                while try decoder.nextFrame() != nil { n += 1 }
            case .file(let out):
                let w = try writer ?? Y4MWriter(path: out, frameRate: (decoder.track.frameRateNumerator ?? 0,
                                                                       decoder.track.frameRateDenominator ?? 0))
                writer = w
                while let f = try decoder.nextFrame() { try w.write(f) }
            }
        }
        try writer?.close()
        return writer?.framesWritten ?? n
    }

    /// The container index of the `n`th audio track (1-based, counting audio tracks only, in
    /// the order `tonearm info` lists the tracks) of the local file `path`, for `--audio-track`.
    /// Throws ``TonearmError/noSuchTrack(path:track:detail:)`` saying how many there are when
    /// there is no such track.
    static func audioStream(_ n: Int, of path: String) async throws(TonearmError) -> Int {
        let audio = try await Asset(url: URL(fileURLWithPath: path)).tracks.filter { $0.mediaType == .audio }
        guard n >= 1, n <= audio.count else {
            let has = audio.count == 1 ? "1 audio track" : "\(audio.count) audio tracks"
            throw .noSuchTrack(path: path, track: n, detail: "--audio-track \(n): the file has \(has)")
        }
        return audio[n - 1].trackID
    }

    /// Whether `path` has sound a player can play.
    static func hasAudio(_ path: String) -> Bool { (try? AudioFile(path: path)) != nil }
}

/// `--video-output null`: takes each frame when due and drops it, counting.
final class NullVideoRenderer: PlayerVideoRenderer {
    private let count = Atomic<Int>(0)
    var framesShown: Int { count.load(ordering: .relaxed) }
    func show(_ frame: VideoFrame) { count.add(1, ordering: .relaxed) }
}

/// `--video-output file:OUT.y4m`: every frame shown, in order, as YUV4MPEG2. The first write
/// error is kept (and said at the end); the frames after it are dropped.
final class Y4MVideoRenderer: PlayerVideoRenderer {
    private struct State {
        var writer: Y4MWriter?
        var error: TonearmError?
    }

    private let state: Mutex<State>
    private let path: String
    /// The stream's frame rate, asked for at the first frame (when the writer is made later).
    private let frameRateOf: (@Sendable () -> (num: Int, den: Int)?)?

    init(path: String, frameRate: (num: Int, den: Int)) throws(TonearmError) {
        self.path = path
        frameRateOf = nil
        state = Mutex(State(writer: try Y4MWriter(path: path, frameRate: frameRate)))
    }

    /// A renderer whose file is made at the first frame, with the rate `frameRate` says then
    /// (a network item's video track is known once it has loaded, before its first frame).
    init(path: String, frameRateAtFirstFrame frameRate: @escaping @Sendable () -> (num: Int, den: Int)?) {
        self.path = path
        frameRateOf = frameRate
        state = Mutex(State(writer: nil))
    }

    func show(_ frame: VideoFrame) {
        state.withLock { s in
            guard s.error == nil else { return }
            do throws(TonearmError) {
                if s.writer == nil { s.writer = try Y4MWriter(path: path, frameRate: frameRateOf?() ?? (num: 25, den: 1)) }
                try s.writer?.write(frame)
            } catch { s.error = error }
        }
    }

    /// Closes the file; the first error met, if any.
    func finish() -> TonearmError? {
        state.withLock { s in
            do throws(TonearmError) { try s.writer?.close() } catch { s.error = s.error ?? error }
            return s.error
        }
    }

    var framesWritten: Int { state.withLock { $0.writer?.framesWritten ?? 0 } }
}
