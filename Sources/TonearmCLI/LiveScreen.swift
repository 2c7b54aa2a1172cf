// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Tonearm

/// What the live screen shows, as a plain value.
struct ScreenState: Sendable {
    enum Status: String, Sendable {
        case playing = "▶ Playing", paused = "⏸ Paused", loading = "… Loading", stopped = "■ Stopped"
        /// Waiting for the network (a stream's buffer ran dry or has not filled yet).
        case buffering = "⧗ Buffering"
    }
    var status: Status = .loading
    var title: String = ""
    var artist: String?
    var album: String?
    var albumArtist: String?
    var artwork: Artwork?
    var format: String = ""
    var elapsed: Double = 0
    var duration: Double = 0
    var volume: Float = 1
    /// The volume of the output in use (the system's), when known.
    var systemVolume: SystemVolumeState?
    var repeatMode: RepeatMode = .none
    var shuffleMode: ShuffleMode = .off
    var eq: String = "flat"
    var rate: Float = 1
    var output: String = ""
    var notice: String?
    var message: String?
    var entries: [String] = []
    var index: Int = 0
    var failed: Set<Int> = []
    /// A stream's parts in memory, in seconds (drawn on the progress bar).
    var loaded: [ClosedRange<Double>] = []
    /// A live stream (radio): no duration; the bar shows the buffer instead.
    var isLive = false
    /// Seconds buffered ahead of the playhead (streams).
    var bufferedAhead: Double?
    /// The keys line, when not the queue's.
    var help: String?
}

/// Draws the live screen of `tonearm play` into a string of terminal text: a pure function of
/// the state and the width, so that it is tested without a terminal.
enum LiveScreen {
    static let help = "space pause · ←/→ seek 5 s · ↑/↓ volume · n/p next/prev · r repeat · s shuffle · e EQ · [/] speed · q quit"

    static func render(_ s: ScreenState, width: Int, height: Int = 40) -> String {
        let w = max(40, width)
        var lines: [String] = []
        lines.append(fit(" Tonearm  \(s.status.rawValue)", right: "output: \(s.output) ", width: w))
        if let n = s.notice { lines.append(clip(" ! \(n)", w)) }
        lines.append("")
        lines.append(clip(" Title   \(s.title)", w))
        lines.append(clip(" Artist  \(s.artist ?? "—")", w))
        lines.append(clip(" Album   \(s.album ?? "—")", w))
        lines.append(clip(" Format  \(s.format)", w))
        lines.append("")
        if s.isLive {
            let ahead = s.bufferedAhead.map { String(format: " · %.1f s buffered", $0) } ?? ""
            lines.append(clip(" ● LIVE  \(formatTime(s.elapsed)) played\(ahead)", w))
        } else {
            let times = " \(formatTime(s.elapsed)) / \(formatTime(s.duration))"
            let barWidth = max(10, w - times.count - 4)
            lines.append(" " + progressBar(elapsed: s.elapsed, duration: s.duration, loaded: s.loaded, width: barWidth) + times)
        }
        let vol = Int((s.volume * 100).rounded())
        lines.append(" Volume  " + bar(fraction: Double(s.volume), width: 20) + " \(vol)%   Repeat: \(s.repeatMode.rawValue)   Shuffle: \(s.shuffleMode.rawValue)   EQ: \(s.eq)   Speed: \(String(format: "%.1f", s.rate))×")
        if let sv = s.systemVolume {
            let pct = Int((sv.volume * 100).rounded())
            lines.append(clip(" System  " + bar(fraction: Double(min(1, sv.volume)), width: 20) + " \(pct)%\(sv.isMuted ? " (muted)" : "")   \(sv.outputName)", w))
        }
        lines.append("")
        if let m = s.message { lines.append(clip(" \(m)", w)); lines.append("") }
        if !s.entries.isEmpty {
            lines.append(" Queue (\(s.entries.count)):")
            let room = max(3, height - lines.count - 3)
            let start = max(0, min(s.index - room / 2, s.entries.count - room))
            for i in start..<min(s.entries.count, start + room) {
                let mark = i == s.index ? "▶" : (s.failed.contains(i) ? "✗" : " ")
                lines.append(clip(" \(mark) \(i + 1). \(s.entries[i])", w))
            }
            lines.append("")
        }
        lines.append(clip(" " + (s.help ?? help), w))
        return lines.joined(separator: "\n")
    }

    /// The progress bar of a stream: played cells `█`, cells in memory but not played `▒`, the
    /// rest `░` (without loaded ranges: the plain bar).
    static func progressBar(elapsed: Double, duration: Double, loaded: [ClosedRange<Double>], width: Int) -> String {
        guard !loaded.isEmpty, duration > 0 else { return bar(fraction: duration > 0 ? elapsed / duration : 0, width: width) }
        var cells = ""
        for i in 0..<width {
            let start = Double(i) / Double(width) * duration
            let end = Double(i + 1) / Double(width) * duration
            if end <= elapsed + duration / Double(width) / 2 && start < elapsed {
                cells += "█"
            } else if loaded.contains(where: { $0.lowerBound <= start + 1e-9 && $0.upperBound >= end - 1e-9 }) {
                cells += "▒"
            } else {
                cells += "░"
            }
        }
        return "[" + cells + "]"
    }

    /// `[█████░░░░░]` with `width` cells inside the brackets.
    static func bar(fraction: Double, width: Int) -> String {
        let f = fraction.isFinite ? max(0, min(1, fraction)) : 0
        let filled = Int((f * Double(width)).rounded(.down))
        return "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "]"
    }

    static func clip(_ s: String, _ w: Int) -> String {
        s.count <= w ? s : String(s.prefix(w - 1)) + "…"
    }

    static func fit(_ left: String, right: String, width: Int) -> String {
        let pad = width - left.count - right.count
        return pad >= 1 ? left + String(repeating: " ", count: pad) + right : clip(left + "  " + right, width)
    }
}
