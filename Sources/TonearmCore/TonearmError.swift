// SPDX-License-Identifier: GPL-3.0-or-later

/// Every error Tonearm throws. Each case names the file (or device) concerned and says what is
/// wrong, so that `String(describing: error)` is a message a user can act on — never a bare
/// status code like the OSStatus 1685348671 / 2003334207 that iOS gives.
public enum TonearmError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing exists at the path.
    case fileNotFound(path: String)
    /// The path exists but the process may not read it (or reading failed).
    case notReadable(path: String, reason: String)
    /// The path is a directory where a file was expected.
    case isDirectory(path: String)
    /// The file has no bytes.
    case emptyFile(path: String)
    /// The bytes are not a media container or stream that FFmpeg recognises.
    case notMediaFile(path: String, detail: String)
    /// The container holds no audio stream (for example a video without sound, or an image).
    case noAudioTrack(path: String)
    /// The audio codec cannot be decoded by this build.
    case unsupportedCodec(path: String, codec: String)
    /// The file holds no video stream (a picture attached to an audio file, cover art, is not video).
    case noVideoTrack(path: String)
    /// The stream cannot be decoded at all (every packet failed, or the decoder could not start).
    case decodeFailed(path: String, detail: String)
    /// A URL that is not a local file or is otherwise malformed.
    case invalidURL(String)
    /// An argument out of its range; the text says which and why.
    case invalidArgument(String)
    /// An output driver could not be opened or failed while running.
    case outputUnavailable(driver: String, reason: String)
    /// Writing a file failed (disk full, permission, …).
    case writeFailed(path: String, reason: String)
    /// The operation needs a state the object is not in (for example reading a closed file).
    case invalidState(String)
    /// The file is not a playlist, or not a well-formed one: `line` (1-based) is where the
    /// problem is, when it has one (malformed XML, a PLS entry with a bad number, binary data).
    case invalidPlaylist(path: String, line: Int?, reason: String)
    /// A network source failed: `url` is the address asked for (before redirects), `failure`
    /// says what went wrong and where.
    case network(url: String, failure: NetworkFailure)
    /// The media library's database at `path` cannot be created, opened, read or written
    /// (an unwritable directory, a file that is not a library, a full disk); `reason` says which.
    case library(path: String, reason: String)
    /// The media library has no playlist named `name` (names compare with case and accents ignored).
    case playlistNotFound(name: String)
    /// The media library already has a playlist named `name`: names are unique.
    case playlistExists(name: String)
    /// An export without re-encoding (passthrough) cannot put `codec` audio into a `fileType`
    /// file at `path`; `compatible` lists the file types that can hold it (may be empty).
    case incompatibleFileType(path: String, codec: String, fileType: String, compatible: [String])
    /// The output `path` exists and the export was not allowed to overwrite it.
    case fileExists(path: String)
    /// The export to `path` was cancelled; nothing was left at `path`.
    case exportCancelled(path: String)
    /// This build of FFmpeg has no `encoder` for the export to `path`.
    case encoderUnavailable(path: String, encoder: String)
    /// The file at `path` has no track `track` usable here; `detail` says why (out of range, not audio).
    case noSuchTrack(path: String, track: Int, detail: String)
    /// Watching the folder `path` for changes could not start or stopped; `failure` says why
    /// (a system limit to raise, the folder gone).
    case watchFailed(path: String, failure: WatchFailure)

    public var description: String {
        switch self {
        case .fileNotFound(let p): "\(p): file not found"
        case .notReadable(let p, let r): "\(p): cannot be read (\(r))"
        case .isDirectory(let p): "\(p): is a directory, not a media file"
        case .emptyFile(let p): "\(p): the file is empty (0 bytes)"
        case .notMediaFile(let p, let d): "\(p): not a media file (\(d))"
        case .noAudioTrack(let p): "\(p): has no audio track"
        case .noVideoTrack(let p): "\(p): has no video track"
        case .unsupportedCodec(let p, let c): "\(p): the codec '\(c)' is not supported by this build"
        case .decodeFailed(let p, let d): "\(p): cannot be decoded (\(d))"
        case .invalidURL(let u): "\(u): not a usable URL"
        case .invalidArgument(let s): "invalid argument: \(s)"
        case .outputUnavailable(let d, let r): "output '\(d)' unavailable: \(r)"
        case .writeFailed(let p, let r): "\(p): cannot be written (\(r))"
        case .invalidState(let s): "invalid state: \(s)"
        case .invalidPlaylist(let p, let l?, let r): "\(p), line \(l): not a valid playlist (\(r))"
        case .invalidPlaylist(let p, nil, let r): "\(p): not a valid playlist (\(r))"
        case .network(let u, let f): "\(u): \(f)"
        case .library(let p, let r): "\(p): media library: \(r)"
        case .playlistNotFound(let n): "no playlist named '\(n)' in the media library"
        case .playlistExists(let n): "the media library already has a playlist named '\(n)'"
        case .incompatibleFileType(let p, let c, let t, let ok):
            "\(p): \(c) audio cannot be written to a \(t) file without re-encoding; "
                + (ok.isEmpty ? "no file type can hold it unchanged" : "compatible file types: \(ok.joined(separator: ", "))")
        case .fileExists(let p): "\(p): already exists (not overwritten; allow overwriting to replace it)"
        case .exportCancelled(let p): "\(p): export cancelled; no file written"
        case .encoderUnavailable(let p, let e): "\(p): this FFmpeg build has no '\(e)' encoder"
        case .noSuchTrack(let p, let t, let d): "\(p): no usable track \(t) (\(d))"
        case .watchFailed(let p, let f): "\(p): cannot watch for changes: \(f)"
        }
    }
}

extension TonearmError {
    /// The file path the error is about, when there is one.
    public var path: String? {
        switch self {
        case .fileNotFound(let p), .notReadable(let p, _), .isDirectory(let p), .emptyFile(let p),
             .notMediaFile(let p, _), .noAudioTrack(let p), .noVideoTrack(let p), .unsupportedCodec(let p, _),
             .decodeFailed(let p, _), .writeFailed(let p, _), .invalidPlaylist(let p, _, _), .library(let p, _),
             .incompatibleFileType(let p, _, _, _), .fileExists(let p), .exportCancelled(let p),
             .encoderUnavailable(let p, _), .noSuchTrack(let p, _, _),
             .watchFailed(let p, _):
            p
        default: nil
        }
    }
}

/// Something wrong that did not stop decoding: reported, and playback goes on
/// (the counterpart of `audioPlayerDecodeErrorDidOccur` and of a mislabeled file's warning).
public enum AudioWarning: Sendable, Hashable, CustomStringConvertible {
    /// The file's extension names one format but its content is another (played anyway).
    case extensionMismatch(path: String, extension: String, actualFormat: String)
    /// A packet could not be decoded and was skipped. `packetIndex` counts audio packets from 0;
    /// `framePosition` is where the gap is in the decoded stream.
    case corruptPacket(path: String, packetIndex: Int, framePosition: AudioFramePosition, detail: String)
    /// The stream ended before its header said it would (a truncated file).
    case truncated(path: String, expectedFrames: AudioFramePosition, actualFrames: AudioFramePosition)
    /// Reading stopped partway with an error (the disk or network failed, too many bad packets in
    /// a row): what was read up to `framePosition` played, and the rest of the item is skipped.
    case readFailed(path: String, framePosition: AudioFramePosition, reason: String)

    public var description: String {
        switch self {
        case .extensionMismatch(let p, let e, let a):
            "\(p): named .\(e) but the content is \(a); playing it as \(a)"
        case .corruptPacket(let p, let i, let f, let d):
            "\(p): corrupt audio at packet \(i) (frame \(f)): \(d); skipped"
        case .truncated(let p, let e, let a):
            "\(p): truncated: expected \(e) frames, decoded \(a)"
        case .readFailed(let p, let f, let r):
            "\(p): reading stopped at frame \(f): \(r); the rest is skipped"
        }
    }
}
