// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmMPDClient

/// `tonearm remote --format`: mpc's song format. `%tag%` is a tag of the song (`%title%`,
/// `%artist%`, `%album%`, `%albumartist%`, `%track%`, `%date%`, `%genre%`, `%name%`, any other
/// tag by its name), `%file%` its URI, `%time%` its length (`3:20`), `%position%` its place in
/// the queue (from 1), `%id%` its queue id. `[…]` is left out when a tag in it is missing; `|`
/// gives alternatives (the first whose tags are all there); `&` joins (both must be there);
/// `\` takes the next character as it is (`\n`, `\t`: a line break, a tab).
struct RemoteFormat: Sendable, Equatable {
    indirect enum Node: Sendable, Equatable {
        case text(String)
        case field(String)
        /// Alternatives, each a sequence; a group (`[…]`) may be left out.
        case choice([[Node]], optional: Bool)
    }

    let alternatives: [[Node]]

    /// mpc's default: `[%name%: &[%artist% - ]%title%]|%name%|[%artist% - ]%title%|%file%`.
    static let songDefault = try! RemoteFormat("[%name%: &[%artist% - ]%title%]|%name%|[%artist% - ]%title%|%file%")

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    init(_ text: String) throws {
        var chars = Array(text)
        var i = 0
        alternatives = try Self.parseChoice(&chars, &i, closing: nil)
    }

    private static func parseChoice(_ s: inout [Character], _ i: inout Int, closing: Character?) throws -> [[Node]] {
        var alternatives: [[Node]] = [[]]
        var literal = ""
        func flush() {
            if !literal.isEmpty { alternatives[alternatives.count - 1].append(.text(literal)); literal = "" }
        }
        while i < s.count {
            let c = s[i]
            switch c {
            case "\\":
                i += 1
                guard i < s.count else { literal.append("\\"); continue }
                switch s[i] {
                case "n": literal.append("\n")
                case "t": literal.append("\t")
                default: literal.append(s[i])
                }
                i += 1
            case "%":
                guard let end = s[(i + 1)...].firstIndex(of: "%") else { throw Problem(description: "a % without its closing % in the format") }
                let name = String(s[(i + 1)..<end])
                guard !name.isEmpty else {
                    literal.append("%")
                    i = end + 1
                    continue
                }
                flush()
                alternatives[alternatives.count - 1].append(.field(name.lowercased()))
                i = end + 1
            case "[":
                flush()
                i += 1
                let inner = try parseChoice(&s, &i, closing: "]")
                alternatives[alternatives.count - 1].append(.choice(inner, optional: true))
            case "]":
                guard closing == "]" else { throw Problem(description: "a ] without its [ in the format") }
                flush()
                i += 1
                return alternatives
            case "|":
                flush()
                alternatives.append([])
                i += 1
            case "&":
                // Both sides must be there: within a sequence that is what joining means.
                flush()
                i += 1
            default:
                literal.append(c)
                i += 1
            }
        }
        guard closing == nil else { throw Problem(description: "a [ without its ] in the format") }
        flush()
        return alternatives
    }

    /// The song's line, or nil when no alternative has all its tags (mpc then prints nothing).
    /// As mpc: an alternative is taken when every tag outside its `[…]` is there and it shows
    /// at least one tag (or has none to show: plain text).
    func render(_ value: (String) -> String?) -> String? {
        Self.first(alternatives, value)?.text
    }

    private static func first(_ alternatives: [[Node]], _ value: (String) -> String?) -> (text: String, found: Bool)? {
        for seq in alternatives {
            if let s = sequence(seq, value), s.found || !hasField(seq) { return s }
        }
        return nil
    }

    private static func sequence(_ nodes: [Node], _ value: (String) -> String?) -> (text: String, found: Bool)? {
        var out = ""
        var found = false
        for n in nodes {
            switch n {
            case .text(let t): out += t
            case .field(let name):
                guard let v = value(name) else { return nil }
                out += v
                found = true
            case .choice(let alts, let optional):
                if let s = first(alts, value) {
                    out += s.text
                    found = found || s.found
                } else if !optional { return nil }
            }
        }
        return (out, found)
    }

    private static func hasField(_ nodes: [Node]) -> Bool {
        nodes.contains { n in
            switch n {
            case .text: return false
            case .field: return true
            case .choice(let alts, _): return alts.contains(where: hasField)
            }
        }
    }

    /// A song's line: its tags, and `file`, `time`, `position`, `id`.
    func render(_ song: MPDSong) -> String? {
        render { name in
            switch name {
            case "file": return song.file
            case "time": return song.duration.map { RemoteText.clock(Int($0.rounded())) }
            case "position": return song.position.map { String($0 + 1) }
            case "id": return song.id.map(String.init)
            default: return song.tag(name).flatMap { $0.isEmpty ? nil : $0 }
            }
        }
    }
}

/// What `tonearm remote` prints, as mpc prints it where mpc has the same command.
enum RemoteText {
    /// `3:05`, `62:01` (minutes are not wrapped into hours, as mpc).
    static func clock(_ seconds: Int) -> String {
        let s = max(0, seconds)
        return "\(s / 60):" + (s % 60 < 10 ? "0" : "") + "\(s % 60)"
    }

    /// mpc's status: the song line and the state line while playing or paused, then the options.
    static func status(_ status: MPDStatus, current: MPDSong?, format: RemoteFormat) -> String {
        var out = ""
        if status.state != .stop {
            if let current, let line = format.render(current) { out += TextWidth.printable(line) + "\n" }
            let state = status.state == .play ? "[playing]" : "[paused]"
            let elapsed = status.timeElapsed ?? Int(status.elapsed ?? 0)
            let total = status.timeTotal ?? Int(status.duration ?? 0)
            let percent = total > 0 ? elapsed * 100 / total : 0
            let minutes = String(elapsed / 60)
            out += state.padding(toLength: 10, withPad: " ", startingAt: 0)
                + "#\((status.song ?? 0) + 1)/\(status.playlistLength) "
                + String(repeating: " ", count: max(0, 3 - minutes.count)) + clock(elapsed) + "/" + clock(total)
                + " (\(percent)%)\n"
        }
        if let update = status.updatingDB { out += "Updating DB (#\(update)) ...\n" }
        out += options(status) + "\n"
        if let error = status.error { out += "ERROR: \(error)\n" }
        return out
    }

    /// `volume: 50%   repeat: off   random: off   single: off   consume: off`.
    static func options(_ s: MPDStatus) -> String {
        func mode(_ v: String) -> String { v == "oneshot" ? "once" : (v == "1" ? "on" : "off") }
        func padded(_ v: String) -> String { v.padding(toLength: 4, withPad: " ", startingAt: 0) + "  " }
        let volume = s.volume.map { v in "volume:" + String(repeating: " ", count: max(0, 3 - String(v).count)) + "\(v)%" } ?? "volume: n/a"
        return volume + "   repeat: " + padded(s.repeatMode ? "on" : "off") + "random: " + padded(s.random ? "on" : "off")
            + "single: " + padded(mode(s.single)) + "consume: " + mode(s.consume)
    }

    /// Songs as an aligned table (columns measured in terminal columns, CJK counting two):
    /// the position (from 1, `>` before the current one), title (the file name without one),
    /// artist, album, length. Each text column is at most `maxColumn` wide.
    static func table(_ songs: [MPDSong], currentID: Int?, maxColumn: Int = 32) -> String {
        guard !songs.isEmpty else { return "" }
        struct Row { var mark: String; var pos: String; var cells: [String]; var time: String }
        let rows = songs.enumerated().map { (k, song) -> Row in
            let title = song.title ?? song.name ?? (song.file as NSString).lastPathComponent
            return Row(mark: song.id != nil && song.id == currentID ? ">" : " ", pos: String((song.position ?? k) + 1),
                       cells: [title, song.artist ?? "", song.album ?? ""].map { TextWidth.printable($0) },
                       time: song.duration.map { clock(Int($0.rounded())) } ?? "")
        }
        let posWidth = rows.map(\.pos.count).max() ?? 1
        var widths = [0, 0, 0]
        for r in rows { for c in 0..<3 { widths[c] = min(maxColumn, max(widths[c], TextWidth.of(r.cells[c]))) } }
        let timeWidth = rows.map(\.time.count).max() ?? 0
        var out = ""
        for r in rows {
            var line = r.mark + " " + String(repeating: " ", count: posWidth - r.pos.count) + r.pos
            for c in 0..<3 where widths[c] > 0 { line += "  " + TextWidth.fit(r.cells[c], to: widths[c]) }
            if timeWidth > 0 { line += "  " + String(repeating: " ", count: timeWidth - r.time.count) + r.time }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        return out
    }
}
