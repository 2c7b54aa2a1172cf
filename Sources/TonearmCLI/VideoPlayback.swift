// SPDX-License-Identifier: GPL-3.0-or-later
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
    /// Every frame shown, in order, written as YUV4MPEG2.
    case file(String)

    static let syntax = "window, null or file:OUT.y4m"

    init?(parsing text: String) {
        switch text {
        case "window": self = .window
        case "null": self = .null
        default:
            guard text.hasPrefix("file:"), text.count > 5 else { return nil }
            self = .file(String(text.dropFirst(5)))
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
    static func hasVideo(_ path: String) -> Bool {
        guard !path.contains("://"), videoExtensions.contains(URL(fileURLWithPath: path).pathExtension.lowercased()),
              FileManager.default.fileExists(atPath: path) else { return false }
        return !((try? VideoTrackInfo.tracks(inFileAt: path)) ?? []).isEmpty
    }

    /// Whether a display is there to open a window on (`DISPLAY` or `WAYLAND_DISPLAY`).
    static var hasDisplay: Bool {
        let env = ProcessInfo.processInfo.environment
        return !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Said once when a video plays without its picture for want of a display.
    static let noDisplayNotice = "no display: playing the sound only"
    /// Said once when videos are queued with other items (a window is for one video file yet).
    static let queueNotice = "videos in a queue play their sound only (one video file at a time opens a window)"
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
        var writer: Y4MWriter
        var error: TonearmError?
    }

    private let state: Mutex<State>

    init(path: String, frameRate: (num: Int, den: Int)) throws(TonearmError) {
        state = Mutex(State(writer: try Y4MWriter(path: path, frameRate: frameRate)))
    }

    func show(_ frame: VideoFrame) {
        state.withLock { s in
            guard s.error == nil else { return }
            do throws(TonearmError) { try s.writer.write(frame) } catch { s.error = error }
        }
    }

    /// Closes the file; the first error met, if any.
    func finish() -> TonearmError? {
        state.withLock { s in
            do throws(TonearmError) { try s.writer.close() } catch { s.error = s.error ?? error }
            return s.error
        }
    }

    var framesWritten: Int { state.withLock { $0.writer.framesWritten } }
}
