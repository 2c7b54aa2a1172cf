// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCore

/// Reads a media file's tags into an `AudioMetadata`.
///
/// Sources, in priority order (the first source that has a field wins):
/// 1. the container's tags as FFmpeg exposes them — ID3v2.3/2.4 (MP3, AIFF, WAV), Vorbis
///    comments (FLAC, Ogg Vorbis, Opus: the Ogg ones live on the audio stream), MP4/M4A atoms,
///    APE tags in APE/WavPack, RIFF INFO, and ID3v1 when FFmpeg read it (MP3 without ID3v2);
/// 2. with a `path`, an APEv2 tag at the end of the file (FFmpeg ignores it in MP3);
/// 3. with a `path`, the ID3v1 tag in the file's last 128 bytes, read directly (FFmpeg skips it
///    when an ID3v2 tag is present).
///
/// Every string goes through `TagText`, so GBK, Big5 and Latin-1 text — whether FFmpeg passed
/// it through as raw bytes or misdecoded it as Latin-1 — comes out as readable Unicode.
/// `rawTags` holds every key from every source, lower-cased (first source wins on duplicates).
/// Artwork: the front cover among the attached-picture streams (else the first), else a
/// `METADATA_BLOCK_PICTURE`/`COVERART` Vorbis comment FFmpeg left as text, else an APE cover.
public enum MetadataReader {
    /// Opens the file at `path` with FFmpeg, reads its tags and closes it.
    ///
    /// - Throws: `TonearmError.fileNotFound`, `.isDirectory`, `.emptyFile`, `.notReadable`,
    ///   `.notMediaFile` (FFmpeg cannot open or probe it), `.noAudioTrack` (media without
    ///   sound, such as an image); each names `path`.
    public static func readMetadata(path: String) throws -> AudioMetadata {
        var st = stat()
        if stat(path, &st) != 0 {
            let e = errno
            if e == ENOENT || e == ENOTDIR { throw TonearmError.fileNotFound(path: path) }
            throw TonearmError.notReadable(path: path, reason: String(cString: strerror(e)))
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw TonearmError.isDirectory(path: path) }
        if (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0 { throw TonearmError.emptyFile(path: path) }
        if access(path, R_OK) != 0 {
            throw TonearmError.notReadable(path: path, reason: String(cString: strerror(errno)))
        }

        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        InputOpenCounter.noteOpen(path)
        let openResult = avformat_open_input(&ctx, path, nil, nil)
        guard openResult >= 0, let fc = ctx else {
            if openResult == tonearm_averror(EACCES) {
                throw TonearmError.notReadable(path: path, reason: ffmpegMessage(openResult))
            }
            throw TonearmError.notMediaFile(path: path, detail: ffmpegMessage(openResult))
        }
        defer { avformat_close_input(&ctx) }
        InputOpenCounter.noteProbe(path)
        let infoResult = avformat_find_stream_info(fc, nil)
        guard infoResult >= 0 else {
            throw TonearmError.notMediaFile(path: path, detail: ffmpegMessage(infoResult))
        }
        let audio = av_find_best_stream(fc, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard audio >= 0 else { throw TonearmError.noAudioTrack(path: path) }
        return read(formatContext: fc, audioStreamIndex: audio, path: path)
    }

    /// The tags of an input `AudioFile` has opened: as `read(formatContext:audioStreamIndex:path:data:)`
    /// with the best audio stream. `data` is the file's bytes when it was opened from memory
    /// (then `path`, only a name hint, is not read).
    static func read(formatContext fc: UnsafeMutablePointer<AVFormatContext>, path: String?,
                     data: [UInt8]?) -> AudioMetadata {
        let audio = av_find_best_stream(fc, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        return read(formatContext: fc, audioStreamIndex: audio, path: data == nil ? path : nil, data: data)
    }

    /// Reads the tags of an opened input (`avformat_open_input` done; stream info optional).
    /// Does no I/O through FFmpeg (its read position is untouched). With `data` (the whole file
    /// in memory) or else a `path`, reads the end of the file directly for APEv2/ID3v1.
    /// `audioStreamIndex` may be negative (no stream tags then).
    static func read(formatContext fc: UnsafeMutablePointer<AVFormatContext>, audioStreamIndex: Int32,
                     path: String?, data: [UInt8]? = nil) -> AudioMetadata {
        let source: (any TagByteSource)? = if let data { TagMemorySource(bytes: data) }
            else if let path { TagFileReader(path: path) } else { nil }
        return read(formatContext: fc, audioStreamIndex: audioStreamIndex, file: source)
    }

    /// As `read(formatContext:audioStreamIndex:path:data:)`, with the file's bytes (for
    /// APEv2/ID3v1 at its end) read from `file`.
    static func read(formatContext fc: UnsafeMutablePointer<AVFormatContext>, audioStreamIndex: Int32,
                     file source: (any TagByteSource)?) -> AudioMetadata {
        var tags = TagSet()
        tags.add(dictionary: fc.pointee.metadata)
        let streamCount = Int(fc.pointee.nb_streams)
        if audioStreamIndex >= 0, Int(audioStreamIndex) < streamCount,
           let st = fc.pointee.streams[Int(audioStreamIndex)] {
            tags.add(dictionary: st.pointee.metadata)
        }

        return finish(tags, file: source, attached: attachedPicture(fc))
    }

    /// The part of reading tags that needs no FFmpeg, shared with the native readers
    /// (``FLACHeader``): `tags` as the container gave them, then APEv2 and ID3v1 at the end of
    /// `file` (ranked as the type's description says), the named fields, and the artwork: the
    /// container's `attached` picture, else one left in the comments, else an APE cover.
    static func finish(_ containerTags: TagSet, file source: (any TagByteSource)?, attached: Artwork?) -> AudioMetadata {
        var tags = containerTags
        var apeCovers: [(key: String, data: [UInt8])] = []
        if let file = source {
            let v1 = ID3v1Tag.read(file)
            if let v1 {
                // FFmpeg reads ID3v1 itself when there is no ID3v2; such values rank below APE.
                tags.remove(key: "title", ifValue: v1.title)
                tags.remove(key: "artist", ifValue: v1.artist)
                tags.remove(key: "album", ifValue: v1.album)
                tags.remove(key: "date", ifValue: v1.year)
                tags.remove(key: "comment", ifValue: v1.comment)
                tags.remove(key: "track", ifValue: v1.track.map(String.init))
                tags.remove(key: "genre", ifValue: v1.genre)
            }
            if let ape = APETag.read(file) {
                for (k, v) in ape.items { tags.add(key: k, value: v) }
                apeCovers = ape.covers
            }
            if let v1 {
                tags.add(key: "title", value: v1.title)
                tags.add(key: "artist", value: v1.artist)
                tags.add(key: "album", value: v1.album)
                tags.add(key: "date", value: v1.year)
                tags.add(key: "comment", value: v1.comment)
                tags.add(key: "track", value: v1.track.map(String.init))
                tags.add(key: "genre", value: v1.genre)
            }
        }

        var m = build(from: tags)
        m.artwork = attached
            ?? pictureFromComments(tags)
            ?? apeArtwork(apeCovers)
        return m
    }

    // MARK: - Fields

    /// Maps normalised tags onto the named fields. Each field is the first of its keys (in
    /// ``TagSet/Field``'s order) that has a value, which the set found as the tags went in.
    static func build(from tags: TagSet) -> AudioMetadata {
        var m = AudioMetadata()
        m.rawTags = tags.values
        m.title = tags[.title]
        m.artist = tags[.artist]
        m.album = tags[.album]
        m.albumArtist = tags[.albumArtist]
        m.composer = tags[.composer]
        m.genre = tags[.genre]
        m.date = tags[.date]
        m.comment = tags[.comment]

        let track = tags[.track].map(parseNumberPair)
        m.trackNumber = track?.0
        m.trackCount = track?.1 ?? tags[.trackTotal].flatMap { parseNumberPair($0).0 }
        let disc = tags[.disc].map(parseNumberPair)
        m.discNumber = disc?.0
        m.discCount = disc?.1 ?? tags[.discTotal].flatMap { parseNumberPair($0).0 }

        m.lyrics = tags[.lyrics]
            ?? (tags.hasNumberedLyrics
                ? tags.values.keys.filter { $0.hasPrefix("lyrics-") }.sorted().lazy.compactMap { tags.first($0) }.first
                : nil)
        m.isCompilation = tags[.compilation].flatMap(parseBool)

        var rg = ReplayGain()
        rg.trackGain = tags[.trackGain].flatMap(parseDecibels)
        rg.trackPeak = tags[.trackPeak].flatMap(parseDecibels)
        rg.albumGain = tags[.albumGain].flatMap(parseDecibels)
        rg.albumPeak = tags[.albumPeak].flatMap(parseDecibels)
        // Opus R128 gains: Q7.8 dB relative to −23 LUFS; ReplayGain's reference is 5 dB louder.
        if rg.trackGain == nil, let q = tags[.r128TrackGain].flatMap({ Int($0) }) {
            rg.trackGain = Double(q) / 256 + 5
        }
        if rg.albumGain == nil, let q = tags[.r128AlbumGain].flatMap({ Int($0) }) {
            rg.albumGain = Double(q) / 256 + 5
        }
        m.replayGain = rg
        return m
    }

    /// "3/12" → (3, 12); "03" → (3, nil); " 3 of 12 " → (3, 12); "A1" → (nil, nil).
    static func parseNumberPair(_ s: String) -> (Int?, Int?) {
        plainNumberPair(s) ?? generalNumberPair(s)
    }

    /// ``parseNumberPair(_:)`` of any text.
    static func generalNumberPair(_ s: String) -> (Int?, Int?) {
        let trimmed = s.trimmingWhitespace()
        let words = trimmed.lowercased().split(separator: " ")
        let normalized = words.count == 3 && words[1] == "of" ? "\(words[0])/\(words[2])" : trimmed
        let parts = normalized.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        func int(_ p: Substring) -> Int? {
            let t = String(p).trimmingWhitespace()
            guard !t.isEmpty, t.count <= 9, t.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(t)
        }
        return (int(parts[0]), parts.count > 1 ? int(parts[1]) : nil)
    }

    /// ``parseNumberPair(_:)`` of the usual forms, "7" and "3/12" — ASCII digits with at most
    /// one "/" — read from the bytes; nil for any other text, which takes the general path (it
    /// lower-cased, split and trimmed each tag, and looked at each digit as a `Character`:
    /// about 4,000 instructions a file's track number).
    static func plainNumberPair(_ s: String) -> (Int?, Int?)? {
        var first = 0, second = 0, firstDigits = 0, secondDigits = 0, slashes = 0
        for b in s.utf8 {
            if b == UInt8(ascii: "/") {
                slashes += 1
                if slashes > 1 { return nil }
            } else if b >= 0x30 && b <= 0x39 {
                if slashes == 0 {
                    firstDigits += 1
                    if firstDigits <= 9 { first = first * 10 + Int(b - 0x30) }
                } else {
                    secondDigits += 1
                    if secondDigits <= 9 { second = second * 10 + Int(b - 0x30) }
                }
            } else {
                return nil
            }
        }
        // Each part: 1 to 9 digits, else nil (as the general path's `int`).
        let a = (1...9).contains(firstDigits) ? first : nil
        return (a, slashes == 1 && (1...9).contains(secondDigits) ? second : nil)
    }

    /// A number from a gain/peak tag: "-6.50 dB", "+1.2 dB", "−3,1 dB", "0.988525" → Double.
    /// The leading number is taken (sign, digits, one '.' or ',' decimal separator, optional
    /// exponent); units and other trailing text are ignored. nil if there is no number.
    static func parseDecibels(_ s: String) -> Double? {
        var t = s.trimmingWhitespace()
        t = t.replacingAll("\u{2212}", with: "-")   // U+2212 MINUS SIGN
        var out = ""
        var seenDigit = false, seenPoint = false, seenExp = false
        for (i, c) in t.enumerated() {
            if (c == "-" || c == "+") && (i == 0 || out.last == "e") { out.append(c); continue }
            if c.isASCII && c.isNumber { out.append(c); seenDigit = true; continue }
            if (c == "." || c == ","), !seenPoint, !seenExp { out.append("."); seenPoint = true; continue }
            if (c == "e" || c == "E"), seenDigit, !seenExp { out.append("e"); seenExp = true; continue }
            if c == " " && out.count == 1 && (out == "-" || out == "+") { continue }   // "- 6.5 dB"
            break
        }
        while let last = out.last, last == "e" || last == "-" || last == "+" || last == "." { out.removeLast() }
        guard seenDigit, let v = Double(out), v.isFinite else { return nil }
        return v
    }

    /// "1", "true", "yes" → true; "0", "false", "no" → false; otherwise nil.
    static func parseBool(_ s: String) -> Bool? {
        switch s.trimmingWhitespace().lowercased() {
        case "1", "true", "yes", "y": true
        case "0", "false", "no", "n": false
        default: Int(s.trimmingWhitespace()).map { $0 != 0 }
        }
    }

    // MARK: - Artwork

    /// The attached-picture streams' image: the one labelled as front cover, else the first.
    private static func attachedPicture(_ fc: UnsafeMutablePointer<AVFormatContext>) -> Artwork? {
        var first: Artwork? = nil
        for i in 0..<Int(fc.pointee.nb_streams) {
            guard let st = fc.pointee.streams[i],
                  st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0,
                  let data = st.pointee.attached_pic.data, st.pointee.attached_pic.size > 0 else { continue }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(st.pointee.attached_pic.size)))
            let codec = st.pointee.codecpar?.pointee.codec_id ?? AV_CODEC_ID_NONE
            let art = Artwork(data: bytes, mimeType: mimeType(of: bytes, codec: codec))
            let label = st.pointee.metadata.flatMap { av_dict_get($0, "comment", nil, 0) }
                .flatMap { $0.pointee.value }.map { String(cString: $0).lowercased() } ?? ""
            if label.contains("front") { return art }
            if first == nil { first = art }
        }
        return first
    }

    /// A FLAC picture block or legacy COVERART left in the Vorbis comments as base64 text.
    private static func pictureFromComments(_ tags: TagSet) -> Artwork? {
        if let b64 = tags[.pictureBlock], let block = base64Decode(b64),
           let art = parseFLACPicture(block) {
            return art
        }
        if let b64 = tags[.coverArt], let bytes = base64Decode(b64), !bytes.isEmpty {
            return Artwork(data: bytes, mimeType: sniffMIME(bytes) ?? tags[.coverArtMIME] ?? "application/octet-stream")
        }
        return nil
    }

    private static func apeArtwork(_ covers: [(key: String, data: [UInt8])]) -> Artwork? {
        guard let c = covers.first(where: { $0.key.contains("front") }) ?? covers.first, !c.data.isEmpty
        else { return nil }
        return Artwork(data: c.data, mimeType: sniffMIME(c.data) ?? "application/octet-stream")
    }

    /// Parses a FLAC METADATA_BLOCK_PICTURE body (big-endian lengths).
    static func parseFLACPicture(_ b: [UInt8]) -> Artwork? {
        var p = 0
        func u32() -> Int? {
            guard p + 4 <= b.count else { return nil }
            defer { p += 4 }
            return Int(b[p]) << 24 | Int(b[p + 1]) << 16 | Int(b[p + 2]) << 8 | Int(b[p + 3])
        }
        guard u32() != nil, let mimeLen = u32(), p + mimeLen <= b.count else { return nil }
        let mime = String(decoding: b[p..<(p + mimeLen)], as: UTF8.self)
        p += mimeLen
        guard let descLen = u32(), p + descLen <= b.count else { return nil }
        p += descLen
        for _ in 0..<4 { guard u32() != nil else { return nil } }
        guard let len = u32(), len > 0, p + len <= b.count else { return nil }
        let data = Array(b[p..<(p + len)])
        return Artwork(data: data, mimeType: sniffMIME(data) ?? (mime.isEmpty ? "application/octet-stream" : mime))
    }

    /// The MIME type from the image's magic bytes, else from FFmpeg's codec id.
    static func mimeType(of bytes: [UInt8], codec: AVCodecID) -> String {
        if let m = sniffMIME(bytes) { return m }
        switch codec {
        case AV_CODEC_ID_MJPEG, AV_CODEC_ID_LJPEG, AV_CODEC_ID_JPEGLS: return "image/jpeg"
        case AV_CODEC_ID_PNG: return "image/png"
        case AV_CODEC_ID_GIF: return "image/gif"
        case AV_CODEC_ID_BMP: return "image/bmp"
        case AV_CODEC_ID_TIFF: return "image/tiff"
        case AV_CODEC_ID_WEBP: return "image/webp"
        default: return "application/octet-stream"
        }
    }

    /// JPEG, PNG, GIF, BMP, WebP or TIFF by signature; nil for anything else.
    public static func sniffMIME(_ b: [UInt8]) -> String? {
        func starts(_ sig: [UInt8], at o: Int = 0) -> Bool {
            b.count >= o + sig.count && Array(b[o..<(o + sig.count)]) == sig
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "image/tiff" }
        if starts(Array("BM".utf8)) && b.count > 14 { return "image/bmp" }
        return nil
    }

    /// Standard or URL-safe base64, whitespace ignored, padding optional; nil on other bytes.
    static func base64Decode(_ s: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count * 3 / 4)
        var acc: UInt32 = 0, bits = 0
        for c in s.utf8 {
            let v: UInt32
            switch c {
            case 0x41...0x5A: v = UInt32(c - 0x41)
            case 0x61...0x7A: v = UInt32(c - 0x61 + 26)
            case 0x30...0x39: v = UInt32(c - 0x30 + 52)
            case 0x2B, 0x2D: v = 62
            case 0x2F, 0x5F: v = 63
            case 0x3D, 0x20, 0x0A, 0x0D, 0x09: continue
            default: return nil
            }
            acc = (acc << 6) | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((acc >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }

    private static func ffmpegMessage(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        tonearm_av_strerror(code, &buf, buf.count)
        return String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Tags from several sources, keys lower-cased, values charset-repaired; the first value for a
/// key wins (later sources only fill gaps). Empty values are ignored.
///
/// The named fields are found as the tags go in: each key that names a ``Field`` (one of its
/// spellings in ``Field/keys``) is looked up once in ``fieldKeys`` when it is added, and the
/// field keeps the value of its highest-ranked spelling so far. Reading a field is then an
/// array access, not a lookup of each of its spellings (a FLAC's fields were 43 dictionary
/// lookups, each hashing a `String`: a quarter of reading a file's tags in a library scan).
struct TagSet {
    /// (Room for a file's usual tags from the start: growing from empty rehashed them three times.)
    private(set) var values: [String: String] = Dictionary(minimumCapacity: 16)
    /// For each ``Field`` (by raw value): the rank of the spelling it holds (its index in
    /// ``Field/keys``) and that value, untrimmed.
    private var found: [(rank: Int, value: String)?] = Array(repeating: nil, count: Field.allCases.count)
    /// Whether some key begins with "lyrics-" (lyrics in a language: "lyrics-eng").
    private(set) var hasNumberedLyrics = false

    /// The named fields and the keys that spell each, first ranked first (lower-case).
    enum Field: Int, CaseIterable {
        case title, artist, album, albumArtist, composer, genre, date, comment
        case track, trackTotal, disc, discTotal, lyrics, compilation
        case trackGain, trackPeak, albumGain, albumPeak, r128TrackGain, r128AlbumGain
        case pictureBlock, coverArt, coverArtMIME

        var keys: [String] {
            switch self {
            case .title: ["title", "tit2", "©nam"]
            case .artist: ["artist", "tpe1", "©art", "author"]
            case .album: ["album", "talb", "©alb"]
            case .albumArtist: ["album_artist", "albumartist", "album artist", "album-artist", "tpe2", "aart"]
            case .composer: ["composer", "tcom", "©wrt"]
            case .genre: ["genre", "tcon", "©gen"]
            case .date: ["date", "year", "tdrc", "tyer", "©day", "originaldate", "original_date"]
            case .comment: ["comment", "description", "©cmt"]
            case .track: ["track", "tracknumber", "trck", "trkn"]
            case .trackTotal: ["tracktotal", "totaltracks", "track_total", "total_tracks"]
            case .disc: ["disc", "discnumber", "disk", "tpos"]
            case .discTotal: ["disctotal", "totaldiscs", "disc_total", "total_discs"]
            case .lyrics: ["lyrics", "unsyncedlyrics", "unsynced lyrics", "unsynced_lyrics", "©lyr", "uslt"]
            case .compilation: ["compilation", "tcmp", "cpil", "itunescompilation"]
            case .trackGain: ["replaygain_track_gain"]
            case .trackPeak: ["replaygain_track_peak"]
            case .albumGain: ["replaygain_album_gain"]
            case .albumPeak: ["replaygain_album_peak"]
            case .r128TrackGain: ["r128_track_gain"]
            case .r128AlbumGain: ["r128_album_gain"]
            case .pictureBlock: ["metadata_block_picture"]
            case .coverArt: ["coverart"]
            case .coverArtMIME: ["coverartmime"]
            }
        }
    }

    /// Every spelling of a field: the field and the spelling's rank (``SpellingTable``).
    static let fieldKeys = SpellingTable()

    /// The spellings of the fields by their UTF-8 bytes, in an open-addressed table of a
    /// power-of-two size hashed with FNV-1a, the spellings' bytes in one buffer: looking a key
    /// up is about a hundred instructions, where a `[String: …]` look-up hashed the key with
    /// SipHash (about 300, a second time for every tag after ``values``'s).
    struct SpellingTable: Sendable {
        /// Each spelling: where its bytes are in ``bytes``, its field and its rank.
        private struct Entry: Sendable {
            var start: Int, count: Int
            var field: Field, rank: Int
        }
        private let bytes: [UInt8]
        private let entries: [Entry]
        /// Index into ``entries``, or -1.
        private let slots: [Int]
        private let mask: Int

        init() {
            var bytes: [UInt8] = [], entries: [Entry] = []
            for field in Field.allCases {
                for (rank, key) in field.keys.enumerated() {
                    entries.append(Entry(start: bytes.count, count: key.utf8.count, field: field, rank: rank))
                    bytes += key.utf8
                }
            }
            var size = 1
            while size < 4 * entries.count { size *= 2 }
            var slots = Array(repeating: -1, count: size)
            bytes.withUnsafeBufferPointer { all in
                for (n, e) in entries.enumerated() {
                    let key = UnsafeBufferPointer(rebasing: all[e.start..<(e.start + e.count)])
                    var i = Self.hash(key) & (size - 1)
                    while slots[i] >= 0 {
                        let held = entries[slots[i]]
                        precondition(!all[held.start..<(held.start + held.count)].elementsEqual(key),
                                     "\(String(decoding: key, as: UTF8.self)) spells two fields")
                        i = (i + 1) & (size - 1)
                    }
                    slots[i] = n
                }
            }
            self.bytes = bytes
            self.entries = entries
            self.slots = slots
            self.mask = size - 1
        }

        private static func hash(_ key: UnsafeBufferPointer<UInt8>) -> Int {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in key { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            return Int(truncatingIfNeeded: h ^ (h >> 29))
        }

        /// The field `key` (lower-case) spells and its rank, or nil.
        subscript(key: String) -> (field: Field, rank: Int)? {
            if let found = key.utf8.withContiguousStorageIfAvailable({ self[$0] }) { return found }
            return Array(key.utf8).withUnsafeBufferPointer { self[$0] }
        }

        private subscript(key: UnsafeBufferPointer<UInt8>) -> (field: Field, rank: Int)? {
            bytes.withUnsafeBufferPointer { all in
                var i = Self.hash(key) & mask
                while true {
                    let n = slots[i]
                    guard n >= 0 else { return nil }
                    let e = entries[n]
                    if e.count == key.count
                        && (key.isEmpty || memcmp(all.baseAddress! + e.start, key.baseAddress!, key.count) == 0) {
                        return (e.field, e.rank)
                    }
                    i = (i + 1) & mask
                }
            }
        }
    }

    /// Adds every entry of an FFmpeg dictionary (values decoded with `TagText.decode`).
    mutating func add(dictionary: OpaquePointer?) {
        guard let dictionary else { return }
        var e: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let entry = av_dict_get(dictionary, "", e, AV_DICT_IGNORE_SUFFIX) {
            e = entry
            guard let k = entry.pointee.key, let v = entry.pointee.value else { continue }
            let key = TagText.decode(UnsafeRawBufferPointer(start: k, count: strlen(k)))
            let value = TagText.decode(UnsafeRawBufferPointer(start: v, count: strlen(v)))
            add(key: key, value: value)
        }
    }

    mutating func add(key: String, value: String?) {
        add(lowercasedKey: key.lowercased(), value: value)
    }

    /// ``add(key:value:)`` with the key lower-cased already (as `lowercased()` does it).
    mutating func add(lowercasedKey k: String, value: String?) {
        guard let value, !value.trimmingWhitespace().isEmpty else { return }
        // One lookup to find the key absent and to add it.
        guard Self.addIfAbsent(&values[k], value) else { return }
        if let (field, rank) = Self.fieldKeys[k] {
            if let held = found[field.rawValue], held.rank < rank { return }
            found[field.rawValue] = (rank, value)
        } else if k.utf8.starts(with: "lyrics-".utf8) {
            hasNumberedLyrics = true
        }
    }

    private static func addIfAbsent(_ slot: inout String?, _ value: String) -> Bool {
        guard slot == nil else { return false }
        slot = value
        return true
    }

    /// Removes `key` if its value is `value` (nil `value`: does nothing).
    mutating func remove(key: String, ifValue value: String?) {
        guard let value, values[key] == value else { return }
        values[key] = nil
        guard let (field, rank) = Self.fieldKeys[key], found[field.rawValue]?.rank == rank else { return }
        // The field falls back to its next spelling that has a value.
        found[field.rawValue] = nil
        for (r, k) in field.keys.enumerated() {
            if let v = values[k] { found[field.rawValue] = (r, v); break }
        }
    }

    /// The field's value, whitespace-trimmed: that of the first of its keys that has one.
    subscript(field: Field) -> String? { found[field.rawValue]?.value.trimmingWhitespace() }

    /// The value of `key` (lower-case), whitespace-trimmed.
    func first(_ key: String) -> String? { values[key]?.trimmingWhitespace() }
}

extension String {
    /// Without leading/trailing spaces, tabs, newlines and NULs.
    fileprivate func trimmingWhitespace() -> String {
        // Most tags: printable ASCII at both ends, nothing to trim. (The ends read from the
        // contiguous bytes: `utf8.last` through the collection's generic path cost about 170
        // instructions a tag.)
        let ends = utf8.withContiguousStorageIfAvailable { b in b.isEmpty ? nil : (b[0], b[b.count - 1]) }
            ?? utf8.first.map { ($0, utf8.last!) }
        if let (f, l) = ends, (0x21...0x7E).contains(f), (0x21...0x7E).contains(l) { return self }
        let isWS: (Character) -> Bool = { $0.isWhitespace || $0 == "\u{0}" }
        guard let start = firstIndex(where: { !isWS($0) }) else { return "" }
        let end = lastIndex(where: { !isWS($0) })!
        return String(self[start...end])
    }

    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
