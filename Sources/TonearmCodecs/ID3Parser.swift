// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc

/// Random access to the bytes of a file or of an in-memory copy of one, for the tag blocks
/// FFmpeg does not read itself (ID3v1 when an ID3v2 tag is present, APEv2 in MP3).
protocol TagByteSource {
    /// The size in bytes.
    var size: Int { get }
    /// Exactly `count` bytes at `offset`, or nil if the range is outside or reading fails.
    func read(at offset: Int, count: Int) -> [UInt8]?
}

/// A local file opened read-only; the descriptor is closed when the reader is released (when
/// it owns it). Bytes of the file already in memory (its start and its end) are served from
/// there without reading again.
final class TagFileReader: TagByteSource {
    let fd: Int32
    let size: Int
    private let owned: Bool
    /// The file's first `head.count` bytes and its last `tail.count` bytes, already read.
    let head: [UInt8]
    let tail: [UInt8]

    /// Opens `path` for reading; nil if it cannot be opened or is not a regular file.
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { Glibc.close(fd); return nil }
        self.fd = fd
        self.size = Int(st.st_size)
        owned = true
        head = []
        tail = []
    }

    /// Reads `fd`, an open file of `size` bytes, whose first bytes are `head` and last bytes
    /// `tail`; closes it when released if `owned`.
    init(fd: Int32, size: Int, owned: Bool, head: [UInt8] = [], tail: [UInt8] = []) {
        self.fd = fd
        self.size = size
        self.owned = owned
        self.head = head
        self.tail = tail
    }

    deinit { if owned { Glibc.close(fd) } }

    func read(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= size else { return nil }
        if count == 0 { return [] }
        if offset + count <= head.count { return Array(head[offset..<(offset + count)]) }
        let tailStart = size - tail.count
        if offset >= tailStart { return Array(tail[(offset - tailStart)..<(offset - tailStart + count)]) }
        var buf = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = buf.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return buf
    }

    /// Reads up to `count` bytes at `offset` into `buffer`: the number read (0 at the end),
    /// or −errno. May read fewer than asked (up to the end of the bytes in memory).
    func read(into buffer: UnsafeMutableRawPointer, at offset: Int, count: Int) -> Int {
        guard offset < size else { return 0 }
        let tailStart = size - tail.count
        if offset < head.count || offset >= tailStart {
            let (bytes, start) = offset < head.count ? (head, offset) : (tail, offset - tailStart)
            let n = min(count, bytes.count - start)
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + start, byteCount: n) }
            return n
        }
        while true {
            let n = pread(fd, buffer, min(count, tailStart - offset), off_t(offset))
            if n < 0 && errno == EINTR { continue }
            return n < 0 ? -Int(errno) : n
        }
    }
}

/// In-memory file bytes.
struct TagMemorySource: TagByteSource {
    let bytes: [UInt8]
    var size: Int { bytes.count }
    func read(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= size else { return nil }
        return Array(bytes[offset..<(offset + count)])
    }
}

/// An ID3v1 / ID3v1.1 tag: the last 128 bytes of a file, starting "TAG".
///
/// Text fields are decoded with `TagText.decode`, so GBK/Big5/Latin-1 bytes come out readable.
/// Empty fields (all NUL/space) are nil.
struct ID3v1Tag: Equatable {
    var title: String?
    var artist: String?
    var album: String?
    var year: String?
    var comment: String?
    /// ID3v1.1 track number (comment byte 28 is 0 and byte 29 is not).
    var track: Int?
    /// The genre byte (255 = none).
    var genreIndex: UInt8
    /// The genre name for `genreIndex`, for the 80 genres of the original ID3v1 list.
    var genre: String? {
        Int(genreIndex) < ID3v1Tag.genres.count ? ID3v1Tag.genres[Int(genreIndex)] : nil
    }

    /// Parses the 128-byte block; nil unless it starts with "TAG".
    init?(block b: [UInt8]) {
        guard b.count == 128, b[0] == 0x54, b[1] == 0x41, b[2] == 0x47 else { return nil }
        func text(_ r: Range<Int>) -> String? {
            var bytes = Array(b[r])
            if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
            while let last = bytes.last, last == 0x20 { bytes.removeLast() }
            while let first = bytes.first, first == 0x20 { bytes.removeFirst() }
            return bytes.isEmpty ? nil : TagText.decode(bytes)
        }
        title = text(3..<33)
        artist = text(33..<63)
        album = text(63..<93)
        year = text(93..<97)
        if b[125] == 0 && b[126] != 0 {
            comment = text(97..<125)
            track = Int(b[126])
        } else {
            comment = text(97..<127)
            track = nil
        }
        genreIndex = b[127]
    }

    /// Reads the ID3v1 tag at the end of the file, if there is one.
    static func read(_ file: some TagByteSource) -> ID3v1Tag? {
        guard file.size >= 128, let block = file.read(at: file.size - 128, count: 128) else { return nil }
        return ID3v1Tag(block: block)
    }

    /// The original ID3v1 genre list (0–79).
    static let genres = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz",
        "Metal", "New Age", "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno",
        "Industrial", "Alternative", "Ska", "Death Metal", "Pranks", "Soundtrack", "Euro-Techno",
        "Ambient", "Trip-Hop", "Vocal", "Jazz+Funk", "Fusion", "Trance", "Classical", "Instrumental",
        "Acid", "House", "Game", "Sound Clip", "Gospel", "Noise", "AlternRock", "Bass", "Soul",
        "Punk", "Space", "Meditative", "Instrumental Pop", "Instrumental Rock", "Ethnic", "Gothic",
        "Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk", "Eurodance", "Dream",
        "Southern Rock", "Comedy", "Cult", "Gangsta", "Top 40", "Christian Rap", "Pop/Funk",
        "Jungle", "Native American", "Cabaret", "New Wave", "Psychadelic", "Rave", "Showtunes",
        "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro", "Musical",
        "Rock & Roll", "Hard Rock",
    ]
}
