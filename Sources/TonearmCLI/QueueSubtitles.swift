// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Tonearm

/// The subtitles of the video items of a `tonearm play` queue: each video draws the `.srt` beside
/// it, or its `--sub-track N`th text track when it has that many; `j` in the video window steps
/// the video now current through its subtitles (mpv's key: the `.srt` beside it, then its text
/// tracks, then none).
///
/// Threading: ``begin(_:)`` on the session's loop, ``cycle()`` from the window's task; the choice
/// is read by the video pipeline's decoding thread before each frame.
final class QueueSubtitles: Sendable {
    private struct Current {
        let choice: SubtitleChoice
        let cycle: [SubtitleSelection]
    }

    /// `--sub-track`: the text track each video draws when it has that many.
    let track: Int?
    private let current = Mutex<Current?>(nil)

    init(track: Int?) {
        self.track = track
    }

    /// The video at `path` became current: its subtitle, as a choice its frames follow.
    func begin(_ path: String) -> SubtitleChoice {
        let choice = SubtitleChoice(VideoPlayback.queueSubtitle(for: path, track: track))
        let tracks = (try? SubtitleTrackInfo.tracks(inFileAt: path)) ?? []
        let cycle = SubtitleSelection.cycle(file: VideoPlayback.subtitleBeside(path), tracks: tracks)
        current.withLock { $0 = Current(choice: choice, cycle: cycle) }
        return choice
    }

    /// `j`: the video now current draws its next subtitle; what to say of it (nil when no video
    /// has been current or it has no subtitles).
    func cycle() -> String? {
        current.withLock { c -> String? in
            guard let c, !c.cycle.isEmpty else { return nil }
            let next = SubtitleSelection.next(after: c.choice.selection, in: c.cycle)
            c.choice.selection = next
            return SubtitleSelection.describe(next, in: c.cycle)
        }
    }
}
