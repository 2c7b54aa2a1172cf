// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// A FLAC file's metadata blocks read without FFmpeg: what ``MediaProbe`` needs of a FLAC file
/// (the stream's parameters, its length, its Vorbis comments and pictures), at a small fraction
/// of the cost of opening FFmpeg's demuxer, and without loading FFmpeg at all (a library scan
/// of a FLAC collection never does).
///
/// The result is what the FFmpeg path makes of the same file, field for field (a test holds
/// them side by side): comments become the dictionary FFmpeg's demuxer builds (keys upper-cased,
/// repeated keys joined with ";", `ALBUMARTIST`, `TRACKNUMBER`, `DISCNUMBER` and `DESCRIPTION`
/// renamed as FFmpeg renames them, empty keys or values and entries without "=" dropped), and
/// pictures are taken or passed over by FFmpeg's rules. Anything this reader does not reproduce
/// exactly gives nil, and the caller uses FFmpeg: a file that does not start with `fLaC` (an
/// ID3v2 tag first), an unknown length, more than two channels or a channel-mask comment,
/// chapter comments, a picture inside the comments, a picture longer than its block, damaged
/// or truncated blocks.
///
/// Threading: a value, made on any thread.
struct FLACHeader {
    var sampleRate: Int
    var channels: Int
    var bitsPerSample: Int
    /// Frames in the stream, from STREAMINFO (never 0 here: 0 means unknown, and gives nil).
    var totalFrames: Int64
    /// The comments as FFmpeg's dictionary holds them: (key, value bytes), in its order.
    var comments: [(key: [UInt8], value: [UInt8])]
    /// The pictures FFmpeg would make attached-picture streams of, in order.
    var pictures: [Picture]

    struct Picture {
        /// The picture type's name as FFmpeg labels the stream ("Cover (front)", …).
        var label: String
        var mimeType: String
        var data: [UInt8]
    }

    /// Reads the blocks of `file`, or nil when FFmpeg must (see the type's description).
    init?(_ file: TagFileReader) {
        var info: (rate: Int, channels: Int, bits: Int, frames: Int64)?
        var comments: [(key: [UInt8], value: [UInt8])] = []
        var pictures: [Picture] = []
        let read = Self.forEachBlock(file) { type, offset, length in
            switch type {
            case 0:  // STREAMINFO: first, once, 34 bytes
                guard info == nil, offset == 8, length == 34, let b = file.read(at: offset, count: 34),
                      let parsed = Self.streamInfo(b) else { return false }
                info = parsed
            case 4:  // VORBIS_COMMENT
                guard let b = file.read(at: offset, count: length), Self.addComments(b, to: &comments) else { return false }
            case 6:  // PICTURE
                guard let b = file.read(at: offset, count: length) else { return false }
                switch Self.picture(b) {
                case .taken(let p): pictures.append(p)
                case .passedOver: break
                case .unsure: return false
                }
            default:
                guard info != nil || type == 0 else { return false }  // STREAMINFO must come first
            }
            return true
        }
        guard read, let info else { return nil }
        comments = Self.renamed(comments)
        if comments.contains(where: { $0.key == Self.channelMaskKey }) { return nil }
        self.sampleRate = info.rate
        self.channels = info.channels
        self.bitsPerSample = info.bits
        self.totalFrames = info.frames
        self.comments = comments
        self.pictures = pictures
    }

    /// Walks `file`'s metadata blocks in order, calling `body` with each block's type, the
    /// offset of its data and its length; false when `file` is not FLAC, a block header cannot
    /// be read, a block runs past the file's end or has the invalid type 127, or `body` returns
    /// false (it stops there).
    static func forEachBlock(_ file: TagFileReader, _ body: (_ type: UInt8, _ offset: Int, _ length: Int) -> Bool) -> Bool {
        guard let magic = file.read(at: 0, count: 4), magic.elementsEqual("fLaC".utf8) else { return false }
        var offset = 4
        var last = false
        while !last {
            guard let header = file.read(at: offset, count: 4) else { return false }
            last = header[0] & 0x80 != 0
            let type = header[0] & 0x7F
            let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            offset += 4
            guard length <= file.size - offset, type != 127, body(type, offset, length) else { return false }
            offset += length
        }
        return true
    }

    /// STREAMINFO's rate, channels, bits per sample and length; nil for values FFmpeg rejects
    /// or this reader leaves to it (more than two channels, an unknown length).
    private static func streamInfo(_ b: [UInt8]) -> (rate: Int, channels: Int, bits: Int, frames: Int64)? {
        let minBlock = Int(b[0]) << 8 | Int(b[1]), maxBlock = Int(b[2]) << 8 | Int(b[3])
        let rate = Int(b[10]) << 12 | Int(b[11]) << 4 | Int(b[12]) >> 4
        let channels = Int((b[12] >> 1) & 0x07) + 1
        let bits = Int(b[12] & 0x01) << 4 + Int(b[13] >> 4) + 1
        let frames = Int64(b[13] & 0x0F) << 32 | Int64(b[14]) << 24 | Int64(b[15]) << 16 | Int64(b[16]) << 8 | Int64(b[17])
        guard minBlock >= 16, maxBlock >= minBlock, rate > 0, channels <= 2, bits >= 4, frames > 0 else { return nil }
        return (rate, channels, bits, frames)
    }

    /// The keys this reader compares with, as bytes (compared with a `String`'s UTF-8 view, each
    /// cost about 100 instructions a comment).
    private static let channelMaskKey = Array("WAVEFORMATEXTENSIBLE_CHANNEL_MASK".utf8)
    private static let pictureKey = Array("METADATA_BLOCK_PICTURE".utf8)
    private static let chapterPrefix = Array("CHAPTER".utf8)

    /// Adds a VORBIS_COMMENT block's entries as FFmpeg's `ff_vorbis_comment` does; false when
    /// the block is malformed or holds what this reader leaves to FFmpeg.
    ///
    /// The keys are upper-cased as they are read, so that FFmpeg's case-blind comparison of
    /// them (``sameKey(_:_:)``) is plain equality here.
    private static func addComments(_ b: [UInt8], to dict: inout [(key: [UInt8], value: [UInt8])]) -> Bool {
        func le32(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
        guard b.count >= 8 else { return false }
        let vendor = le32(0)
        guard vendor <= b.count - 8 else { return false }
        var p = 4 + vendor
        var count = le32(p)
        p += 4
        // (Room for the entries from the start, at most one for each 4-byte length the block
        // can hold: grown from empty, the list was copied three times for a file's 7 tags.)
        dict.reserveCapacity(dict.count + max(0, min(count, (b.count - p) / 4)))
        while b.count - p >= 4 && count > 0 {
            let length = le32(p)
            p += 4
            guard length <= b.count - p else { return false }  // FFmpeg stops reading here
            let entry = b[p..<(p + length)]
            p += length
            count -= 1
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = entry[entry.startIndex..<equals].map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
            var value = Array(entry[(equals + 1)...])
            guard !key.isEmpty, !value.isEmpty else { continue }
            if key == Self.pictureKey || key.starts(with: Self.chapterPrefix) { return false }
            // A C string: it ends at the first NUL.
            if let nul = value.firstIndex(of: 0) { value.removeSubrange(nul...) }
            if let i = dict.firstIndex(where: { $0.key == key }) {
                // AV_DICT_APPEND: ";" then the value; the entry moves to the end.
                let joined = dict[i].value + [UInt8(ascii: ";")] + value
                dict[i] = dict[dict.count - 1]
                dict.removeLast()
                dict.append((key, joined))
            } else {
                dict.append((key, value))
            }
        }
        return true
    }

    /// The keys FFmpeg renames after reading Vorbis comments (`ff_vorbiscomment_metadata_conv`),
    /// applied in its way: a renamed key replaces an entry it now equals, which moves to the end.
    private static let generic: [(native: [UInt8], generic: [UInt8])] = [
        (Array("ALBUMARTIST".utf8), Array("album_artist".utf8)), (Array("TRACKNUMBER".utf8), Array("track".utf8)),
        (Array("DISCNUMBER".utf8), Array("disc".utf8)), (Array("DESCRIPTION".utf8), Array("comment".utf8)),
    ]

    private static func renamed(_ dict: [(key: [UInt8], value: [UInt8])]) -> [(key: [UInt8], value: [UInt8])] {
        var out: [(key: [UInt8], value: [UInt8])] = []
        out.reserveCapacity(dict.count)
        for (key, value) in dict {
            let name = generic.first { sameKey($0.native, key) }?.generic ?? key
            if let i = out.firstIndex(where: { sameKey($0.key, name) }) {
                out[i] = out[out.count - 1]
                out.removeLast()
            }
            out.append((name, value))
        }
        return out
    }

    /// FFmpeg's key comparison: ASCII letters without regard to case.
    private static func sameKey(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        func upper(_ c: UInt8) -> UInt8 { c >= 0x61 && c <= 0x7A ? c - 0x20 : c }
        return a.count == b.count && zip(a, b).allSatisfy { upper($0) == upper($1) }
    }

    private enum PictureOutcome {
        case taken(Picture)
        /// FFmpeg logs and skips it.
        case passedOver
        /// FFmpeg's handling is not reproduced here (its workaround for a picture longer than
        /// its block): leave the file to FFmpeg.
        case unsure
    }

    /// The MIME types FFmpeg's FLAC demuxer takes a picture for (compared exactly), and the
    /// image type each names: FFmpeg 5.1's list (Debian 12's; "image/webp" came later, and a
    /// test holds this reader against the FFmpeg it runs with).
    private static let pictureTypes: [String: String] = [
        "image/gif": "image/gif", "image/jpeg": "image/jpeg", "image/jpg": "image/jpeg", "image/png": "image/png",
        "image/tiff": "image/tiff", "image/bmp": "image/bmp", "JPG": "image/jpeg",
        "PNG": "image/png",
    ]

    /// ID3v2's picture types, as FFmpeg names them (a type out of range is "Other").
    private static let pictureLabels = [
        "Other", "32x32 pixels 'file icon'", "Other file icon", "Cover (front)", "Cover (back)", "Leaflet page",
        "Media (e.g. label side of CD)", "Lead artist/lead performer/soloist", "Artist/performer", "Conductor",
        "Band/Orchestra", "Composer", "Lyricist/text writer", "Recording Location", "During recording",
        "During performance", "Movie/video screen capture", "A bright coloured fish", "Illustration",
        "Band/artist logotype", "Publisher/Studio logotype",
    ]

    /// A PICTURE block as FFmpeg's `ff_flac_parse_picture` takes it or passes over it.
    private static func picture(_ b: [UInt8]) -> PictureOutcome {
        func be32(_ at: Int) -> Int { Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3]) }
        guard b.count >= 34 else { return .passedOver }
        let type = be32(0)
        let mimeLength = be32(4)
        guard mimeLength > 0, mimeLength < 64 else { return .passedOver }
        guard mimeLength + 24 <= b.count - 8 else { return .passedOver }
        var mimeBytes = Array(b[8..<(8 + mimeLength)])
        if let nul = mimeBytes.firstIndex(of: 0) { mimeBytes.removeSubrange(nul...) }
        let mime = String(decoding: mimeBytes, as: UTF8.self)
        guard let imageType = pictureTypes[mime] else { return .passedOver }
        var p = 8 + mimeLength
        let descLength = be32(p)
        p += 4
        guard descLength <= b.count - p - 20 else { return .passedOver }
        p += descLength + 16
        let length = be32(p)
        p += 4
        guard length > 0, length <= b.count - p else { return .unsure }
        let data = Array(b[p..<(p + length)])
        let label = type < pictureLabels.count ? pictureLabels[type] : pictureLabels[0]
        return .taken(Picture(label: label, mimeType: imageType, data: data))
    }

    /// `TagText.decode(key).lowercased()`: an ASCII key (nearly every one) lower-cased byte by
    /// byte straight into the string's storage, without a string made first and lower-cased
    /// after.
    static func lowercasedKey(_ key: [UInt8]) -> String {
        guard key.allSatisfy({ $0 < 0x80 }) else { return TagText.decode(key).lowercased() }
        return String(unsafeUninitializedCapacity: key.count) { out in
            for i in key.indices { out[i] = key[i] &- 0x41 < 26 ? key[i] | 0x20 : key[i] }
            return key.count
        }
    }

    // MARK: What MediaProbe gives

    /// The stream's format as the FFmpeg path describes it, with the bit rate FFmpeg's
    /// `avformat_find_stream_info` sets (``MediaProbe``'s `HeaderFields.fillBitRate`): the
    /// file's size over the stream's length in microseconds, rounded to nearest.
    func sourceFormat(fileSize: Int) -> SourceFormat {
        let micros = (totalFrames * 1_000_000 + Int64(sampleRate / 2)) / Int64(sampleRate)
        let bitRate = micros > 0 ? Int(Double(fileSize) * 8 * 1_000_000 / Double(micros)) : 0
        return SourceFormat(containerName: "FLAC", formatName: "flac", codecName: "flac", sampleRate: sampleRate,
                            channelCount: channels, bitsPerSample: bitsPerSample, bitRate: bitRate > 0 ? bitRate : nil,
                            channelLayout: channels == 1 ? "mono" : "stereo")
    }

    /// The tags and cover as ``MetadataReader`` makes them from FFmpeg's dictionary, with the
    /// APEv2 and ID3v1 tags at the end of `file`.
    func metadata(file: TagFileReader) -> AudioMetadata {
        var tags = TagSet()
        for (key, value) in comments { tags.add(lowercasedKey: Self.lowercasedKey(key), value: TagText.decode(value)) }
        // The front cover among the pictures, else the first (MetadataReader.attachedPicture).
        let chosen = pictures.first { $0.label.lowercased().contains("front") } ?? pictures.first
        let artwork = chosen.map { p in Artwork(data: p.data, mimeType: MetadataReader.sniffMIME(p.data) ?? p.mimeType) }
        return MetadataReader.finish(tags, file: file, attached: artwork)
    }
}

extension FLACHeader {
    /// A FLAC file's Vorbis comments as they are stored (MPD's `readcomments`): each entry's
    /// key as written (not upper-cased) and its value, in the file's order, duplicates kept;
    /// entries without `=` or with an empty key left out. Nil when `file` is not FLAC or its
    /// blocks run past its end.
    static func storedComments(_ file: TagFileReader) -> [(key: String, value: String)]? {
        var out: [(key: String, value: String)] = []
        let read = forEachBlock(file) { type, offset, length in
            if type == 4 {
                guard let b = file.read(at: offset, count: length) else { return false }
                func le32(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
                guard b.count >= 8, le32(0) <= b.count - 8 else { return false }
                var p = 4 + le32(0)
                var count = le32(p)
                p += 4
                while count > 0, b.count - p >= 4 {
                    let n = le32(p)
                    p += 4
                    guard n <= b.count - p else { break }
                    let entry = b[p..<(p + n)]
                    p += n
                    count -= 1
                    guard let equals = entry.firstIndex(of: UInt8(ascii: "=")), equals > entry.startIndex else { continue }
                    out.append((String(decoding: entry[entry.startIndex..<equals], as: UTF8.self),
                                String(decoding: entry[(equals + 1)...], as: UTF8.self)))
                }
            }
            return true
        }
        return read ? out : nil
    }
}

/// The comments (tags) of a file as it stores them, for MPD's `readcomments`.
public enum FileComments {
    /// (key, value) pairs: a FLAC file's Vorbis comments as written (keys in their own case, the
    /// file's order); for other formats the tags the metadata reader finds (keys lower-cased,
    /// sorted by key).
    /// - Throws: ``TonearmError`` when the file cannot be read (naming it).
    public static func read(path: String) throws -> [(key: String, value: String)] {
        if let file = TagFileReader(path: path), let comments = FLACHeader.storedComments(file) { return comments }
        let m = try MetadataReader.readMetadata(path: path)
        return m.rawTags.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    }
}
