// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmMPDClient

/// `tonearm remote --format`: mpc's song format, rendered as mpc 0.34 renders it (RemoteCLITests
/// compares the two on the same queue).
///
/// `%name%` is a value of the song: a tag MPD knows (`%title%`, `%artist%`, `%album%`,
/// `%albumartist%`, `%track%`, `%date%`, `%genre%`, `%name%`, `%composer%`, `%disc%`, …, in any
/// case), `%file%` its URI, `%time%` its length (`3:20`), `%position%` its place in the queue
/// (from 1), `%id%` its queue id, `%prio%` its priority, `%mtime%`/`%mdate%` when it was
/// modified. A missing value is empty. A name mpc does not know, and a `%` that starts none (`50%
/// off`), are printed as they are. `[…]` is printed only when a value in it was found; `|` ends a
/// part: when a value was found before it, what follows up to the next `|`, `&` or `]` is left out,
/// otherwise what came before is dropped and the next part is tried; `&` joins: when nothing was
/// found before it the part after it is left out, otherwise what follows must find a value again.
/// `\` takes the next character as it is (`\n`, `\t`: a line break, a tab). A `[` without its `]`
/// (or the reverse) is refused (mpc prints something odd: an empty line, or the text without it).
struct RemoteFormat: Sendable, Equatable {
    enum Token: Sendable, Equatable {
        case text(String)
        /// A known value's name, lowercased.
        case field(String)
        case open, close, or, and
    }

    let tokens: [Token]

    /// mpc's default: `[%name%: &[%artist% - ]%title%]|%name%|[%artist% - ]%title%|%file%`.
    static let songDefault = try! RemoteFormat("[%name%: &[%artist% - ]%title%]|%name%|[%artist% - ]%title%|%file%")

    /// The names mpc knows: its own and the tags of libmpdclient 2.20 (Debian 12's).
    static let knownNames: Set<String> = [
        "file", "time", "position", "id", "prio", "mtime", "mdate",
        "artist", "artistsort", "album", "albumsort", "albumartist", "albumartistsort", "title", "track", "name", "genre",
        "date", "originaldate", "composer", "composersort", "performer", "conductor", "work", "ensemble", "movement",
        "movementnumber", "location", "grouping", "comment", "disc", "label", "musicbrainz_artistid", "musicbrainz_albumid",
        "musicbrainz_albumartistid", "musicbrainz_trackid", "musicbrainz_releasetrackid", "musicbrainz_workid",
    ]

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// - Throws: ``Problem`` for a `[` without its `]` or a `]` without its `[`, naming the column.
    init(_ text: String) throws {
        let s = Array(text)
        var tokens: [Token] = []
        var literal = ""
        var open: [Int] = []
        func flush() {
            if !literal.isEmpty { tokens.append(.text(literal)); literal = "" }
        }
        var i = 0
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
                // A name runs to the next % (never across a space); without one, a plain %.
                var j = i + 1
                while j < s.count, s[j] != "%", s[j] != " " { j += 1 }
                guard j < s.count, s[j] == "%", j > i + 1 else {
                    literal.append("%")
                    i += 1
                    continue
                }
                let name = String(s[(i + 1)..<j]).lowercased()
                if Self.knownNames.contains(name) {
                    flush()
                    tokens.append(.field(name))
                } else {
                    literal += String(s[i...j])
                }
                i = j + 1
            case "[", "]", "|", "&":
                flush()
                if c == "[" { open.append(i) }
                if c == "]" {
                    guard open.popLast() != nil else { throw Problem(description: "a ] without its [ at column \(i + 1) of the format") }
                }
                tokens.append(c == "[" ? .open : c == "]" ? .close : c == "|" ? .or : .and)
                i += 1
            default:
                literal.append(c)
                i += 1
            }
        }
        if let first = open.first { throw Problem(description: "a [ without its ] at column \(first + 1) of the format") }
        flush()
        self.tokens = tokens
    }

    /// The song's line (empty when nothing is left of the format, as mpc prints an empty line).
    /// `value(name)` is the value of a known name, nil (or empty) when the song has none.
    func render(_ value: (String) -> String?) -> String {
        var i = 0
        return Self.part(tokens, &i, value) ?? ""
    }

    /// From `i` to the `]` that closes the part (consumed) or the end: nil when a `]` closes a
    /// part in which no value was found.
    private static func part(_ t: [Token], _ i: inout Int, _ value: (String) -> String?) -> String? {
        var out = ""
        var found = false
        while i < t.count {
            let token = t[i]
            i += 1
            switch token {
            case .text(let s): out += s
            case .field(let name):
                if let v = value(name), !v.isEmpty {
                    out += v
                    found = true
                }
            case .open:
                if let s = part(t, &i, value) {
                    out += s
                    found = true
                }
            case .close: return found ? out : nil
            case .or:
                if found { skip(t, &i) } else { out = "" }
            case .and:
                if found { found = false } else { skip(t, &i) }
            }
        }
        return out
    }

    /// Moves `i` to the next `|`, `&` or `]` of this part (not into a nested `[…]`).
    private static func skip(_ t: [Token], _ i: inout Int) {
        var depth = 0
        while i < t.count {
            switch t[i] {
            case .open: depth += 1
            case .close:
                if depth == 0 { return }
                depth -= 1
            case .or, .and:
                if depth == 0 { return }
            default: break
            }
            i += 1
        }
    }

    /// A song's line: its tags, and `file`, `time`, `position`, `id`, `prio`, `mtime`, `mdate`;
    /// control and bidi characters in the song's values are made harmless
    /// (``TextWidth/printable(_:)``), those the format itself asks for (`\\t`, `\\n`) are kept.
    func render(_ song: MPDSong) -> String {
        render { name in
            Self.value(name, of: song).map(TextWidth.printable)
        }
    }

    private static func value(_ name: String, of song: MPDSong) -> String? {
            switch name {
            case "file": return song.file
            case "time": return song.duration.map { RemoteText.clock(Int($0.rounded())) }
            case "position": return song.position.map { String($0 + 1) }
            case "id": return song.id.map(String.init)
            case "prio": return String(song.priority)
            case "mtime", "mdate": return song.lastModified.flatMap { RemoteText.localTime($0, dateOnly: name == "mdate") }
            default: return song.tag(name)
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
            if let current { out += format.render(current) + "\n" }
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

    /// An MPD time (`2026-11-28T10:14:35Z`) in local time as mpc prints it: `%c` (`Sat Nov 28
    /// 10:14:35 2026`) or, `dateOnly`, `%x` (`11/28/26`), in the C locale. Nil when unreadable.
    static func localTime(_ iso: String, dateOnly: Bool) -> String? {
        guard var t = utcSeconds(iso) else { return nil }
        var local = tm()
        guard localtime_r(&t, &local) != nil else { return nil }
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, dateOnly ? "%x" : "%c", &local)
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Seconds since 1970 of an MPD time in UTC, `YYYY-MM-DDTHH:MM:SSZ` (the only form MPD
    /// sends); nil for anything else. Read by hand: no formatter made per song.
    static func utcSeconds(_ iso: String) -> time_t? {
        let b = Array(iso.utf8)
        guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int32? {
            var v: Int32 = 0
            for c in b[from..<from + count] {
                guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
                v = v * 10 + Int32(c - UInt8(ascii: "0"))
            }
            return v
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var t = tm()
        t.tm_year = year - 1900
        t.tm_mon = month - 1
        t.tm_mday = day
        t.tm_hour = hour
        t.tm_min = minute
        t.tm_sec = second
        return timegm(&t)
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
