// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Synchronization
import Tonearm

/// Where `play --video-output` sends the picture.
enum VideoOutputChoice: Sendable, Equatable {
    /// Decoded and presented to nothing (for benchmarks).
    case null
    /// Every frame that would be shown, in order, as YUV4MPEG2.
    case file(String)

    static let syntax = "null|file:OUT.y4m"

    init(parsing text: String) throws {
        let lower = text.lowercased()
        if lower == "null" {
            self = .null
        } else if lower.hasPrefix("file:"), text.count > 5 {
            let path = String(text.dropFirst(5))
            guard path.lowercased().hasSuffix(".y4m") else {
                throw ValidationError("--video-output file: writes YUV4MPEG2; the name must end in .y4m, not '\(path)'")
            }
            self = .file(path)
        } else if lower == "window" {
            throw ValidationError("--video-output window: there is no video window yet; use \(Self.syntax)")
        } else {
            throw ValidationError("--video-output must be \(Self.syntax), not '\(text)'")
        }
    }
}

/// `play VIDEO --video-output …`: one video file, its picture to a file or to nothing.
///
/// - Offline (`--output null:untimed` or `file:OUT.wav`): there is no clock to present against
///   (the audio renders as fast as the processor goes), so the picture is not presented at all:
///   the decoder writes every frame, in order, straight to the `.y4m` (none can be dropped, and
///   the two files start at the item's 0 and hold all of it: in sync by construction). The
///   sound then renders as every `play` does. A file without sound writes the picture only.
/// - Real time: a ``Player`` plays the file (``StreamSession``, which already runs one
///   ``Player``) with a renderer on the player: the frames shown, when due against the audio at
///   the speaker; late ones are dropped and counted. The plain progress line carries `A-V` and
///   `dropped`.
enum VideoPlayback {
    /// Decodes every frame of `path`'s video to `choice`; the number of frames.
    static func writeAllFrames(of path: String, to choice: VideoOutputChoice) throws -> Int {
        let decoder = try VideoDecoder(path: path)
        switch choice {
        case .null:
            var n = 0
            while try decoder.nextFrame() != nil { n += 1 }
            return n
        case .file(let out):
            let writer = try Y4MWriter(path: out, frameRate: (decoder.track.frameRateNumerator ?? 0,
                                                               decoder.track.frameRateDenominator ?? 0))
            while let f = try decoder.nextFrame() { try writer.write(f) }
            try writer.close()
            return writer.framesWritten
        }
    }

    /// Whether `path` has sound a player can play.
    static func hasAudio(_ path: String) -> Bool { (try? AudioFile(path: path)) != nil }
}

/// A renderer that writes each frame shown to a `.y4m` (real-time `--video-output file:`), on
/// the presenting thread. A write that fails stops the writing; the error is kept for the end.
final class Y4MRenderer: PlayerVideoRenderer, Sendable {
    private struct State {
        var writer: Y4MWriter?
        var error: String?
    }

    private let state: Mutex<State>

    init(path: String, track: VideoTrackInfo) throws {
        let writer = try Y4MWriter(path: path, frameRate: (track.frameRateNumerator ?? 0, track.frameRateDenominator ?? 0))
        state = Mutex(State(writer: writer))
    }

    func show(_ frame: VideoFrame) {
        state.withLock { s in
            do { try s.writer?.write(frame) } catch {
                s.error = "\(error)"
                s.writer = nil
            }
        }
    }

    /// Closes the file; the error met, if any.
    func finish() -> String? {
        state.withLock { s in
            if let w = s.writer {
                do { try w.close() } catch { s.error = s.error ?? "\(error)" }
                s.writer = nil
            }
            return s.error
        }
    }
}

/// A renderer that shows nothing (`--video-output null`): the video is decoded and presented
/// against the clock, for benchmarks.
final class NullVideoRenderer: PlayerVideoRenderer, Sendable {
    func show(_ frame: VideoFrame) {}
}
