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
}

/// What a reader thread made of one file.
enum ReadOutcome: Sendable {
    /// Opened and read.
    case read(FoundFile, hash: UInt64, ItemFields)
    /// Only hashed: new at its path with the content of a row whose file is gone (a move), so
    /// its tags are that row's.
    case hashed(FoundFile, hash: UInt64)
    case skipped(SkippedFile)
}

/// Reads one file for the scanner. Stateless; called on the scanner's reader threads.
enum FileReader {
    /// Hashes the file and, unless its hash is in `movedHashes` (and `mayBeMove`), opens it with
    /// `AudioFile` to read tags, duration and format. Never throws: failures become `.skipped`.
    static func read(_ file: FoundFile, mayBeMove: Bool, movedHashes: Set<UInt64>) -> ReadOutcome {
        if let reason = cheapRejection(file) { return .skipped(SkippedFile(path: file.path, reason: reason)) }
        let hash: UInt64
        do { hash = try ContentHash.of(path: file.path, size: file.size) } catch {
            return .skipped(SkippedFile(path: file.path, reason: reason(error, file.path)))
        }
        if mayBeMove && movedHashes.contains(hash) { return .hashed(file, hash: hash) }
        switch fields(file) {
        case .success(let f): return .read(file, hash: hash, f)
        case .failure(let why): return .skipped(SkippedFile(path: file.path, reason: why.text))
        }
    }

    /// Opens the file and reads its fields, or says why it is not playable media.
    static func fields(_ file: FoundFile) -> Result<ItemFields, SkipReason> {
        let audio: AudioFile
        do { audio = try AudioFile(path: file.path) } catch {
            return .failure(SkipReason(reason(error, file.path)))
        }
        guard audio.isLengthKnown, audio.length > 0 else { return .failure(SkipReason("no decodable audio")) }
        let m = audio.metadata
        let f = audio.fileFormat
        let name = URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
        let title = m.title.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 } ?? name
        let bpm = (m.rawTags["tbpm"] ?? m.rawTags["bpm"]).flatMap { Double($0) }.map { Int($0.rounded()) }
        let various = ["various artists", "various", "va"].contains(SearchKey.fold(m.albumArtist))
        return .success(ItemFields(
            title: title, artist: m.artist, album: m.album, albumArtist: m.albumArtist, composer: m.composer,
            genre: m.genre, trackNumber: m.trackNumber, trackCount: m.trackCount, discNumber: m.discNumber,
            discCount: m.discCount, year: m.year, releaseDate: m.date, duration: audio.duration,
            format: MediaItemFormat(container: f.containerName, codec: f.codecName, sampleRate: f.sampleRate,
                                    channelCount: f.channelCount, bitsPerSample: f.bitsPerSample, bitRate: f.bitRate),
            mediaType: MediaType.classify(metadata: m, path: file.path),
            isCompilation: m.isCompilation == true || various, bpm: bpm, lyrics: m.lyrics,
            replayGain: m.replayGain, artwork: m.artwork, artworkHash: m.artwork.map { ContentHash.of(bytes: $0.data) }))
    }

    struct SkipReason: Error {
        var text: String
        init(_ text: String) { self.text = text }
    }

    /// A reason without the path the error message starts with.
    static func reason(_ error: any Error, _ path: String) -> String {
        let text = String(describing: error)
        return text.hasPrefix(path + ": ") ? String(text.dropFirst(path.count + 2)) : text
    }

    /// Obvious non-media, found from the first bytes without FFmpeg: empty files and text
    /// (valid UTF-8 with no control characters but tab, CR, LF in the first 512 bytes).
    static func cheapRejection(_ file: FoundFile) -> String? {
        if file.size == 0 { return "the file is empty (0 bytes)" }
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "cannot be read (\(String(cString: strerror(errno))))" }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 512)
        let n = head.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 512) }
        guard n > 0 else { return "cannot be read (\(n < 0 ? String(cString: strerror(errno)) : "no bytes"))" }
        let bytes = head[0..<n]
        let textual = bytes.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        // A multi-byte character may be cut at the end of the window: drop up to 3 bytes.
        let valid = (0...min(3, n - 1)).contains { String(validatingUTF8Bytes: bytes.dropLast($0)) != nil }
        if textual && valid { return "a text file, not media" }
        return nil
    }
}

extension String {
    fileprivate init?(validatingUTF8Bytes bytes: ArraySlice<UInt8>) {
        guard let s = String(validating: bytes, as: UTF8.self) else { return nil }
        self = s
    }
}
