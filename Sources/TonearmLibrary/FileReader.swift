// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import TonearmCodecs
import TonearmCore

/// A file found by the walk: where, how big, when last modified (nanoseconds since 1970).
struct FoundFile: Sendable {
    var path: String
    var size: Int64
    var mtime: Int64
}

/// Everything the library stores about a file, as read from it.
struct ItemFields: Sendable {
    var title: String
    var artist, album, albumArtist, composer, genre: String?
    var trackNumber, trackCount, discNumber, discCount, year: Int?
    var releaseDate: String?
    var duration: Double
    var format: MediaItemFormat
    var mediaType: MediaType
    var isCompilation: Bool
    var bpm: Int?
    var lyrics: String?
    var replayGain: ReplayGain
    var artwork: Artwork?
    var artworkHash: UInt64?
    /// The values of ``Schema/derivedColumns``: the folded keys and sort keys of the names (the
    /// album artist's are the artist's when there is none) and the search key, made on the
    /// reader threads.
    var derived: [String]
}

/// What a reader thread made of one file.
enum ReadOutcome: Sendable {
    /// Opened and read.
    case read(FoundFile, hash: FileHashes, ItemFields)
    /// Only hashed: new at its path with the content of a row whose file is gone (a move), so
    /// its tags are that row's.
    case hashed(FoundFile, hash: FileHashes)
    case skipped(SkippedFile)
}

/// A content hash and the version of ``ContentHash`` that made it, as a row stores them.
struct StoredHash: Hashable, Sendable {
    var version: Int
    var value: UInt64
}

/// A file's content hash, and its version 1 hash when a version 1 row may have moved to it.
struct FileHashes: Sendable {
    var current: UInt64
    var legacy: UInt64?

    /// The stored forms to look a moved row up by: the current version first.
    var candidates: [StoredHash] {
        [StoredHash(version: ContentHash.version, value: current)] + (legacy.map { [StoredHash(version: 1, value: $0)] } ?? [])
    }
}

/// The hashes of the rows whose files are gone (a scan's move candidates).
struct MoveCandidates: Sendable {
    var hashes: Set<StoredHash>
    /// Whether some were made with version 1 (then new files are hashed both ways).
    var hasLegacy: Bool { hashes.contains { $0.version == 1 } }

    func contains(_ h: FileHashes) -> Bool { h.candidates.contains { hashes.contains($0) } }
}

/// Reads one file for the scanner. Stateless; called on the scanner's reader threads.
enum FileReader {
    /// Hashes the file and, unless its hash is in `movedHashes` (and `mayBeMove`), reads its
    /// tags, duration and format (``fields(_:opened:)``). The file is opened once; the bytes
    /// read for the hash (the first and last 64 KiB) serve the text check and the headers.
    /// Never throws: failures become `.skipped`. `cold`: fired when the file's first bytes
    /// are not all in memory (see ``ColdStart``).
    static func read(_ file: FoundFile, mayBeMove: Bool, moves: MoveCandidates, cold: ColdStart? = nil) -> ReadOutcome {
        func skip(_ reason: String, _ kind: SkipKind) -> ReadOutcome { .skipped(SkippedFile(path: file.path, reason: reason, kind: kind)) }
        if file.size == 0 { return skip("the file is empty (0 bytes)", .empty) }
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return skip("cannot be read (\(String(cString: strerror(errno))))", .unreadable) }
        defer { close(fd) }
        let head: [UInt8], hash: UInt64, tail: [UInt8]
        do {
            head = try ContentHash.read(fd: fd, path: file.path, at: 0, count: Int(min(file.size, Int64(ContentHash.window))), probe: cold)
            guard !head.isEmpty else { return skip("cannot be read (no bytes)", .unreadable) }
            if let reason = textRejection(head.prefix(512)) { return skip(reason, .notAudio) }
            (hash, tail) = try ContentHash.of(fd: fd, path: file.path, size: file.size, head: head)
        } catch {
            if case .notReadable(_, let why) = error { return skip("cannot be read (\(why))", .unreadable) }
            return skip(reason(error, file.path), SkipKind(error))
        }
        // The old hash only when a row of the old version may have moved here.
        let hashes = FileHashes(current: hash, legacy: mayBeMove && moves.hasLegacy
                                    ? ContentHash.legacy(size: file.size, head: head, tail: tail) : nil)
        if mayBeMove && moves.contains(hashes) { return .hashed(file, hash: hashes) }
        switch fields(file, opened: (fd, head, tail)) {
        case .success(let f): return .read(file, hash: hashes, f)
        case .failure(let why): return .skipped(SkippedFile(path: file.path, reason: why.text, kind: why.kind))
        }
    }

    /// Reads the file's fields from its headers (``MediaProbe``: no decoding), or says why it is
    /// not playable media. When the headers do not state the duration (ADTS AAC, say), the file
    /// is opened with `AudioFile`, which decodes to find it. `opened`: the file open, with its
    /// first and last bytes already read.
    static func fields(_ file: FoundFile, opened: (fd: Int32, head: [UInt8], tail: [UInt8])? = nil) -> Result<ItemFields, SkipReason> {
        let m: AudioMetadata, f: SourceFormat, duration: Double
        do {
            let probe = if let opened {
                try MediaProbe(path: file.path, fd: opened.fd, size: file.size, head: opened.head, tail: opened.tail)
            } else {
                try MediaProbe(path: file.path)
            }
            if let d = probe.duration {
                (m, f, duration) = (probe.metadata, probe.fileFormat, d)
            } else {
                let audio = try AudioFile(path: file.path)
                guard audio.isLengthKnown, audio.length > 0 else { return .failure(SkipReason("no decodable audio", .undecodable)) }
                (m, f, duration) = (audio.metadata, audio.fileFormat, audio.duration)
            }
        } catch {
            return .failure(SkipReason(reason(error, file.path), SkipKind(error)))
        }
        // No title, or one of blanks only (tab and Zs: CharacterSet.whitespaces): the file's name.
        let blank: (String) -> Bool = { $0.unicodeScalars.allSatisfy { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator } }
        let title = m.title.flatMap { blank($0) ? nil : $0 }
            ?? URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
        let bpm = (m.rawTags["tbpm"] ?? m.rawTags["bpm"]).flatMap { Double($0) }.map { Int($0.rounded()) }
        let derived = Schema.derivedTexts(title: title, artist: m.artist, album: m.album, albumArtist: m.albumArtist,
                                          composer: m.composer, genre: m.genre)
        let genreKey = derived[5]
        let various = m.albumArtist != nil && ["various artists", "various", "va"].contains(derived[3])
        return .success(ItemFields(
            title: title, artist: m.artist, album: m.album, albumArtist: m.albumArtist, composer: m.composer,
            genre: m.genre, trackNumber: m.trackNumber, trackCount: m.trackCount, discNumber: m.discNumber,
            discCount: m.discCount, year: m.year, releaseDate: m.date, duration: duration,
            format: MediaItemFormat(container: f.containerName, codec: f.codecName, sampleRate: f.sampleRate,
                                    channelCount: f.channelCount, bitsPerSample: f.bitsPerSample, bitRate: f.bitRate),
            mediaType: MediaType.classify(metadata: m, path: file.path, genreKey: genreKey),
            isCompilation: m.isCompilation == true || various, bpm: bpm, lyrics: m.lyrics,
            replayGain: m.replayGain, artwork: m.artwork, artworkHash: m.artwork.map { ContentHash.of(bytes: $0.data) },
            derived: derived))
    }

    struct SkipReason: Error {
        var text: String
        var kind: SkipKind
        init(_ text: String, _ kind: SkipKind) {
            self.text = text
            self.kind = kind
        }
    }

    /// A reason without the path the error message starts with.
    static func reason(_ error: any Error, _ path: String) -> String {
        let text = String(describing: error)
        return text.hasPrefix(path + ": ") ? String(text.dropFirst(path.count + 2)) : text
    }

    /// Text (valid UTF-8 with no control characters but tab, CR, LF in the first 512 bytes):
    /// obvious non-media, found without FFmpeg.
    static func textRejection(_ bytes: ArraySlice<UInt8>) -> String? {
        let textual = bytes.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard textual else { return nil }
        // A multi-byte character may be cut at the end of the window: drop up to 3 bytes.
        let valid = (0...min(3, bytes.count - 1)).contains { String(validatingUTF8Bytes: bytes.dropLast($0)) != nil }
        return valid ? "a text file, not media" : nil
    }
}

extension String {
    fileprivate init?(validatingUTF8Bytes bytes: ArraySlice<UInt8>) {
        guard let s = String(validating: bytes, as: UTF8.self) else { return nil }
        self = s
    }
}
