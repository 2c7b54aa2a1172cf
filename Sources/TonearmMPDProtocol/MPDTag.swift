// SPDX-License-Identifier: GPL-3.0-or-later

/// MPD's tag types (`tagtypes` of MPD 0.23, in its order), named as MPD names them; a name in a
/// request is found in any case.
public enum MPDTag: String, Sendable, Hashable, CaseIterable {
    case artist = "Artist", artistSort = "ArtistSort", album = "Album", albumSort = "AlbumSort"
    case albumArtist = "AlbumArtist", albumArtistSort = "AlbumArtistSort", title = "Title", track = "Track"
    case name = "Name", genre = "Genre", date = "Date", originalDate = "OriginalDate"
    case composer = "Composer", composerSort = "ComposerSort", performer = "Performer", conductor = "Conductor"
    case work = "Work", movement = "Movement", movementNumber = "MovementNumber", ensemble = "Ensemble"
    case location = "Location", grouping = "Grouping", disc = "Disc", label = "Label"
    case musicBrainzArtistID = "MUSICBRAINZ_ARTISTID", musicBrainzAlbumID = "MUSICBRAINZ_ALBUMID"
    case musicBrainzAlbumArtistID = "MUSICBRAINZ_ALBUMARTISTID", musicBrainzTrackID = "MUSICBRAINZ_TRACKID"
    case musicBrainzReleaseTrackID = "MUSICBRAINZ_RELEASETRACKID", musicBrainzWorkID = "MUSICBRAINZ_WORKID"

    private static let byLowercaseName: [String: MPDTag] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue.lowercased(), $0) })

    /// The tag named `name` in any case, or nil.
    public init?(name: String) {
        guard let t = Self.byLowercaseName[name.lowercased()] else { return nil }
        self = t
    }
}

/// A time given to `modified-since`: seconds since 1970 (an integer, read first, as MPD's
/// `ParseTimeStamp` does: `2020` is 2020 s) or ISO 8601 — `YYYY-MM`, `YYYY-MM-DD`, with
/// `THH:MM[:SS]` and `Z` or `±HH[:MM]` (UTC without it).
enum MPDTimestamp {
    static func parse(_ s: String) throws(MPDFilterError) -> Int64 {
        if let v = MPDArguments.wholeInteger(s) { return v }
        if let v = iso8601(Array(s.utf8)) { return v }
        throw MPDFilterError("Failed to parse date")
    }

    /// Days from 1970-01-01 to the date (proleptic Gregorian).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func iso8601(_ b: [UInt8]) -> Int64? {
        var i = 0
        func digits(_ n: Int) -> Int64? {
            guard i + n <= b.count else { return nil }
            var v: Int64 = 0
            for k in i..<(i + n) {
                guard b[k] >= 48, b[k] <= 57 else { return nil }
                v = v * 10 + Int64(b[k] - 48)
            }
            i += n
            return v
        }
        func take(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let year = digits(4) else { return nil }
        var month: Int64 = 1, day: Int64 = 1, seconds: Int64 = 0
        if take("-") {
            guard let m = digits(2), (1...12).contains(m) else { return nil }
            month = m
            if take("-") {
                guard let d = digits(2), (1...31).contains(d) else { return nil }
                day = d
                if take("T") {
                    guard let h = digits(2), h < 24, take(":"), let mi = digits(2), mi < 60 else { return nil }
                    seconds = h * 3600 + mi * 60
                    if take(":") {
                        guard let s = digits(2), s < 61 else { return nil }
                        seconds += s
                    }
                    if take("Z") {
                    } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                        let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
                        i += 1
                        guard let oh = digits(2), oh < 24 else { return nil }
                        var offset = oh * 3600
                        if take(":") {
                            guard let om = digits(2), om < 60 else { return nil }
                            offset += om * 60
                        }
                        seconds -= sign * offset
                    }
                }
            }
        }
        guard i == b.count else { return nil }
        return days(year: year, month: month, day: day) * 86_400 + seconds
    }
}

/// An audio format as MPD writes it: `RATE:FORMAT:CHANNELS` — `44100:16:2`, `48000:f:2`,
/// `dsd64:2`; in a mask (`=~`) any of the three may be `*`.
public struct MPDAudioFormat: Sendable, Hashable {
    /// nil: any (a mask's `*`).
    public var sampleRate: Int?
    /// "8", "16", "24", "32", "f" or "dsd"; nil: any.
    public var format: String?
    public var channels: Int?

    public init(sampleRate: Int?, format: String?, channels: Int?) {
        self.sampleRate = sampleRate
        self.format = format
        self.channels = channels
    }

    public var text: String {
        "\(sampleRate.map(String.init) ?? "*"):\(format ?? "*"):\(channels.map(String.init) ?? "*")"
    }

    static func parse(_ s: String, mask: Bool) throws(MPDFilterError) -> MPDAudioFormat {
        var rest = Substring(s)
        var f = MPDAudioFormat(sampleRate: nil, format: nil, channels: nil)
        if rest.hasPrefix("dsd") {
            let digits = rest.dropFirst(3).prefix { $0.isASCII && $0.isNumber }
            guard let n = Int(digits), n > 0 else { throw MPDFilterError("Failed to parse the sample rate") }
            f.sampleRate = n * 44_100 / 8
            f.format = "dsd"
            rest = rest.dropFirst(3 + digits.count)
            guard rest.first == ":" else { throw MPDFilterError("Channel count missing") }
            rest = rest.dropFirst()
        } else {
            if mask, rest.first == "*" {
                rest = rest.dropFirst()
            } else {
                guard let (v, after) = MPDArguments.strtol(rest.utf8) else { throw MPDFilterError("Failed to parse the sample rate") }
                guard v > 0, v < 1 << 30 else { throw MPDFilterError("Invalid sample rate: \(v)") }
                f.sampleRate = Int(v)
                rest = Substring(after)
            }
            guard rest.first == ":" else { throw MPDFilterError("Sample format missing") }
            rest = rest.dropFirst()
            if mask, rest.first == "*" {
                rest = rest.dropFirst()
            } else if rest.first == "f" {
                f.format = "f"
                rest = rest.dropFirst()
            } else if rest.hasPrefix("dsd") {
                f.format = "dsd"
                rest = rest.dropFirst(3)
            } else {
                guard let (v, after) = MPDArguments.strtol(rest.utf8) else { throw MPDFilterError("Failed to parse the sample format") }
                guard [8, 16, 24, 32].contains(v) else { throw MPDFilterError("Invalid sample format: \(v)") }
                f.format = String(v)
                rest = Substring(after)
            }
            guard rest.first == ":" else { throw MPDFilterError("Channel count missing") }
            rest = rest.dropFirst()
        }
        if mask, rest.first == "*" {
            rest = rest.dropFirst()
        } else {
            guard let (v, after) = MPDArguments.strtol(rest.utf8) else { throw MPDFilterError("Failed to parse the channel count") }
            guard v >= 1, v <= 8 else { throw MPDFilterError("Invalid channel count: \(v)") }
            f.channels = Int(v)
            rest = Substring(after)
        }
        guard rest.isEmpty else { throw MPDFilterError("Extra data after channel count: \(rest)") }
        return f
    }
}
