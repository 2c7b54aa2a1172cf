// SPDX-License-Identifier: GPL-3.0-or-later

/// Embedded cover art.
public struct Artwork: Sendable, Hashable {
    /// The image bytes as stored in the file.
    public var data: [UInt8]
    /// MIME type, e.g. `image/jpeg` or `image/png` (sniffed from the bytes when the tag omits it).
    public var mimeType: String

    public init(data: [UInt8], mimeType: String) {
        self.data = data
        self.mimeType = mimeType
    }
}

/// ReplayGain values from a file's tags (gain in dB, peak as a linear amplitude).
public struct ReplayGain: Sendable, Hashable, Codable {
    public var trackGain: Double?
    public var trackPeak: Double?
    public var albumGain: Double?
    public var albumPeak: Double?

    public init(trackGain: Double? = nil, trackPeak: Double? = nil,
                albumGain: Double? = nil, albumPeak: Double? = nil) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
    }

    public var isEmpty: Bool { trackGain == nil && trackPeak == nil && albumGain == nil && albumPeak == nil }
}

/// The tags of a media file, normalised across ID3v1/ID3v2, Vorbis comments, MP4 atoms and APE.
/// Every string is valid Unicode: tags stored in Latin-1, GBK or Big5 are converted.
public struct AudioMetadata: Sendable, Hashable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    public var composer: String?
    public var genre: String?
    public var trackNumber: Int?
    public var trackCount: Int?
    public var discNumber: Int?
    public var discCount: Int?
    /// The date as tagged (a year, or a full ISO date).
    public var date: String?
    public var comment: String?
    public var lyrics: String?
    public var isCompilation: Bool?
    public var replayGain: ReplayGain
    public var artwork: Artwork?
    /// Every tag as read (keys lower-cased), for what the named fields do not cover.
    public var rawTags: [String: String]

    public init() {
        replayGain = ReplayGain()
        rawTags = [:]
    }

    /// The year, from `date`: its leading numeric characters when they are four and make a
    /// number.
    public var year: Int? {
        guard let d = date else { return nil }
        // Leading ASCII digits followed by the end or by another ASCII byte end a run of
        // numeric characters (no combining mark can follow): the usual "2001-05-04" is read
        // from its bytes, without walking Characters.
        var value = 0, count = 0
        for byte in d.utf8 {
            if byte >= 0x30 && byte <= 0x39 && count < 5 {
                value = value * 10 + Int(byte - 0x30)
                count += 1
                continue
            }
            if byte < 0x80 && count < 5 { return count == 4 ? value : nil }
            break
        }
        if count < 5 && count == d.utf8.count { return count == 4 ? value : nil }
        let digits = d.prefix(while: { $0.isNumber })
        return digits.count == 4 ? Int(digits) : nil
    }
}
