// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Tonearm

/// What the live screen shows, as a plain value.
struct ScreenState: Sendable {
    enum Status: String, Sendable { case playing = "▶ Playing", paused = "⏸ Paused", loading = "… Loading", stopped = "■ Stopped" }
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
        let times = " \(formatTime(s.elapsed)) / \(formatTime(s.duration))"
        let barWidth = max(10, w - times.count - 4)
        lines.append(" " + bar(fraction: s.duration > 0 ? s.elapsed / s.duration : 0, width: barWidth) + times)
        let vol = Int((s.volume * 100).rounded())
        lines.append(" Volume  " + bar(fraction: Double(s.volume), width: 20) + " \(vol)%   Repeat: \(s.repeatMode.rawValue)   Shuffle: \(s.shuffleMode.rawValue)   EQ: \(s.eq)   Speed: \(String(format: "%.1f", s.rate))×")
        if let sv = s.systemVolume {
            let pct = Int((sv.volume * 100).rounded())
            lines.append(clip(" System  " + bar(fraction: Double(min(1, sv.volume)), width: 20) + " \(pct)%\(sv.isMuted ? " (muted)" : "")   \(sv.outputName)", w))
        }
        lines.append("")
        if let m = s.message { lines.append(clip(" \(m)", w)); lines.append("") }
        lines.append(" Queue (\(s.entries.count)):")
        let room = max(3, height - lines.count - 3)
        let start = max(0, min(s.index - room / 2, s.entries.count - room))
        for i in start..<min(s.entries.count, start + room) {
            let mark = i == s.index ? "▶" : (s.failed.contains(i) ? "✗" : " ")
            lines.append(clip(" \(mark) \(i + 1). \(s.entries[i])", w))
        }
        lines.append("")
        lines.append(clip(" " + help, w))
        return lines.joined(separator: "\n")
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
