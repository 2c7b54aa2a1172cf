// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import TonearmCore

extension Playlist {
    /// The largest file `read(from:)` accepts: far beyond any real playlist, small enough that a
    /// media file given by mistake is not loaded whole.
    public static let maximumFileSize = 64 << 20

    /// Reads the playlist file at `url` (a `file:` URL). The format comes from the extension, and from
    /// the content when the extension is missing or wrong. Relative entries are resolved against the
    /// file's folder.
    ///
    /// - Throws: `TonearmError.invalidURL` for a non-file URL; `.fileNotFound`, `.isDirectory`,
    ///   `.notReadable` when the file cannot be read; `.emptyFile` for an empty file whose name is
    ///   not a playlist's; `.invalidPlaylist(path:line:reason:)` when the content is not a playlist or
    ///   is malformed (binary data, malformed XML with the parser's line, PLS without `[playlist]` or
    ///   with bad entry numbers).
    public static func read(from url: URL) throws(TonearmError) -> Playlist {
        guard url.isFileURL else { throw .invalidURL(url.absoluteString) }
        let path = url.path
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDir) else { throw .fileNotFound(path: path) }
        if isDir.boolValue { throw .isDirectory(path: path) }
        let size = ((try? fm.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        if size > maximumFileSize {
            throw .invalidPlaylist(path: path, line: nil, reason: "\(size) bytes is too large for a playlist")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .notReadable(path: path, reason: (error as NSError).localizedDescription)
        }
        let ext = url.pathExtension.isEmpty ? nil : url.pathExtension
        if data.isEmpty && ext.flatMap({ PlaylistFormat(fileExtension: $0) }) == nil {
            throw .emptyFile(path: path)
        }
        guard let format = PlaylistFormat.detect(data: data, fileExtension: ext) else {
            throw .invalidPlaylist(path: path, line: nil, reason: "neither the name nor the content is M3U, PLS or XSPF")
        }
        return try parse(data: data, format: format, baseURL: url.deletingLastPathComponent(), name: path)
    }

    /// Parses playlist bytes.
    ///
    /// - Parameters:
    ///   - format: the format, or nil to detect it from the content (text without a signature is
    ///     taken as plain M3U).
    ///   - baseURL: the folder relative entries are resolved against (the playlist's folder): a file
    ///     URL, or an http(s) URL for a playlist downloaded from there. Nil: the current directory.
    /// - Throws: `TonearmError.invalidPlaylist(path:line:reason:)` when the bytes are not a playlist
    ///   of that format or are malformed; the path in the error is `baseURL`'s, or "playlist".
    public static func parse(data: Data, format: PlaylistFormat? = nil, baseURL: URL? = nil) throws(TonearmError) -> Playlist {
        let name = baseURL.map { $0.isFileURL ? $0.path : $0.absoluteString } ?? "playlist"
        guard let format = format ?? PlaylistFormat.detect(data: data, fileExtension: nil) else {
            throw .invalidPlaylist(path: name, line: nil, reason: "the content is not M3U, PLS or XSPF")
        }
        return try parse(data: data, format: format, baseURL: baseURL, name: name)
    }

    static func parse(data: Data, format: PlaylistFormat, baseURL: URL?, name: String) throws(TonearmError) -> Playlist {
        switch format {
        case .m3u, .m3u8: try parseM3U(data, base: baseURL, name: name)
        case .pls: try parsePLS(data, base: baseURL, name: name)
        case .xspf: try parseXSPF(data, base: baseURL, name: name)
        }
    }

    /// Text of an M3U or PLS file, refused when it is binary.
    private static func text(_ data: Data, name: String) throws(TonearmError) -> [Substring] {
        let lines = PlaylistText.lines(PlaylistText.decode(data).text)
        for (i, line) in lines.enumerated() where !line.looksLikeText {
            throw .invalidPlaylist(path: name, line: i + 1, reason: "binary data, not text")
        }
        return lines
    }

    // MARK: M3U

    private static func parseM3U(_ data: Data, base: URL?, name: String) throws(TonearmError) -> Playlist {
        let lines = try text(data, name: name)
        var playlist = Playlist()
        var pendingTitle: String?
        var pendingDuration: Double?
        for (i, rawLine) in lines.enumerated() {
            let line = PlaylistText.trim(rawLine)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                if line.hasPrefix("#EXTINF:") {
                    (pendingDuration, pendingTitle) = parseEXTINF(line.dropFirst(8))
                } else if line.hasPrefix("#PLAYLIST:") {
                    let t = PlaylistText.trim(line.dropFirst(10))
                    playlist.title = t.isEmpty ? nil : String(t)
                }
                continue  // #EXTM3U, other directives and comments
            }
            guard let location = PlaylistPaths.location(of: line, base: base, isURIReference: false) else {
                throw .invalidPlaylist(path: name, line: i + 1, reason: "'\(line)' is not a usable path or URL")
            }
            playlist.entries.append(PlaylistEntry(location: location, title: pendingTitle,
                                                  duration: pendingDuration, sourceLine: i + 1))
            pendingTitle = nil
            pendingDuration = nil
        }
        return playlist
    }

    /// `#EXTINF:<seconds>[ key="value" …],<title>`: the title follows the first comma outside quotes.
    private static func parseEXTINF(_ s: Substring) -> (Double?, String?) {
        var inQuotes = false
        var comma: Substring.Index?
        for i in s.indices {
            if s[i] == "\"" { inQuotes.toggle() }
            if s[i] == ",", !inQuotes { comma = i; break }
        }
        let head = comma.map { s[..<$0] } ?? s
        let title = comma.map { PlaylistText.trim(s[s.index(after: $0)...]) }
        let number = head.prefix(while: { !$0.isWhitespace })
        return (parseSeconds(number), title.flatMap { $0.isEmpty ? nil : String($0) })
    }

    // MARK: PLS

    private static func parsePLS(_ data: Data, base: URL?, name: String) throws(TonearmError) -> Playlist {
        let lines = try text(data, name: name)
        struct Item { var file: String?; var fileLine = 0; var title: String?; var length: Double?; var firstLine: Int }
        var items: [Int: Item] = [:]
        var sawHeader = false
        var inPlaylistSection = false
        for (i, rawLine) in lines.enumerated() {
            let n = i + 1
            let line = PlaylistText.trim(rawLine)
            if line.isEmpty || line.hasPrefix(";") || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inPlaylistSection = line.lowercased() == "[playlist]"
                if inPlaylistSection { sawHeader = true }
                else if !sawHeader {
                    throw .invalidPlaylist(path: name, line: n, reason: "a PLS file starts with [playlist], not \(line)")
                }
                continue
            }
            guard sawHeader else {
                throw .invalidPlaylist(path: name, line: n, reason: "a PLS file starts with [playlist]")
            }
            guard inPlaylistSection else { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw .invalidPlaylist(path: name, line: n, reason: "expected key=value, found '\(line.prefix(60))'")
            }
            let key = PlaylistText.trim(line[..<eq]).lowercased()
            let value = PlaylistText.trim(line[line.index(after: eq)...])
            let field: String
            if key.hasPrefix("file") { field = "file" }
            else if key.hasPrefix("title") { field = "title" }
            else if key.hasPrefix("length") { field = "length" }
            else { continue }  // NumberOfEntries, Version and unknown keys
            let digits = key.dropFirst(field.count)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let index = Int(digits), index >= 1 else {
                let shown = line[..<eq]
                throw .invalidPlaylist(path: name, line: n,
                                       reason: "'\(shown)' needs an entry number of 1 or more (File1, Title1, Length1)")
            }
            var item = items[index] ?? Item(firstLine: n)
            switch field {
            case "file":
                if item.file != nil {
                    throw .invalidPlaylist(path: name, line: n, reason: "File\(index) appears twice (first on line \(item.fileLine))")
                }
                item.file = String(value)
                item.fileLine = n
            case "title":
                item.title = value.isEmpty ? nil : String(value)
            default:
                item.length = parseSeconds(value)
            }
            items[index] = item
        }
        guard sawHeader else {
            throw .invalidPlaylist(path: name, line: nil, reason: "a PLS file starts with [playlist]; this one has no content")
        }
        var playlist = Playlist()
        for index in items.keys.sorted() {
            let item = items[index]!
            guard let file = item.file else {
                throw .invalidPlaylist(path: name, line: item.firstLine,
                                       reason: "Title\(index) or Length\(index) without a File\(index)")
            }
            guard let location = PlaylistPaths.location(of: file, base: base, isURIReference: false) else {
                throw .invalidPlaylist(path: name, line: item.fileLine, reason: "File\(index) '\(file)' is not a usable path or URL")
            }
            playlist.entries.append(PlaylistEntry(location: location, title: item.title, duration: item.length,
                                                  sourceLine: item.fileLine))
        }
        return playlist
    }

    // MARK: XSPF

    private static func parseXSPF(_ data: Data, base: URL?, name: String) throws(TonearmError) -> Playlist {
        // XSPF is UTF-8. Found by fuzzing (scripts/fuzz, FuzzPlaylists): Foundation's XMLParser
        // crashes (in _NSXMLParserStartElementNs) on an element name that is not valid UTF-8, so
        // bytes that are not UTF-8 never reach it. A UTF-16 document (with its BOM) is left to it.
        // A document that declares an 8-bit encoding (ISO-8859-1, windows-1252, US-ASCII) is
        // transcoded to UTF-8 first; one that declares another is refused.
        let utf16 = data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF])
        var data = data
        if !utf16 {
            switch XMLEncoding.declared(in: data) {
            case .unsupported(let label):
                throw .invalidPlaylist(path: name, line: 1, reason: "the XML declaration's encoding '\(label)' is not supported"
                                       + " (UTF-8, UTF-16, ISO-8859-1, windows-1252 or US-ASCII)")
            case .declared(let encoding?) where encoding != .utf8:
                switch encoding.transcode(data) {
                case .success(let utf8): data = utf8
                case .failure(let bad):
                    throw .invalidPlaylist(path: name, line: bad.line, reason: "byte 0x\(String(bad.byte, radix: 16, uppercase: true))"
                                           + " is not text in \(encoding.name), the encoding the XML declaration names")
                }
            case .declared:
                break
            }
        }
        let text = utf16 ? nil : String(validating: data, as: UTF8.self)
        // A processing instruction without data (`<?name?>`) crashes XMLParser too (a null
        // pointer in _NSXMLParserProcessingInstruction; also found by FuzzPlaylists).
        if let text, let pi = text.firstMatch(of: /<\?[^?\s]+\s*\?>/) {
            let line = text[..<pi.range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
            throw .invalidPlaylist(path: name, line: line, reason: "a processing instruction without data (\(pi.output))")
        }
        if !utf16, text == nil {
            // The line of the first byte that is not UTF-8.
            var line = 1
            var decoder = UTF8()
            var bytes = data.makeIterator()
            decoding: while true {
                switch decoder.decode(&bytes) {
                case .scalarValue(let scalar): if scalar == "\n" { line += 1 }
                case .emptyInput, .error: break decoding
                }
            }
            throw .invalidPlaylist(path: name, line: line, reason: "not UTF-8 text (an XSPF playlist is UTF-8)")
        }
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let reader = XSPFReader()
        parser.delegate = reader
        let ok = parser.parse()
        if let problem = reader.problem {
            throw .invalidPlaylist(path: name, line: problem.line, reason: problem.reason)
        }
        if !ok || parser.parserError != nil {
            let code = reader.xmlError?.code ?? (parser.parserError as NSError?)?.code ?? 0
            let line = reader.xmlError?.line ?? parser.lineNumber
            throw .invalidPlaylist(path: name, line: max(1, line), reason: "malformed XML: \(xmlErrorText(code))")
        }
        guard reader.sawRoot else {
            throw .invalidPlaylist(path: name, line: nil, reason: "no <playlist> element")
        }
        var playlist = Playlist(title: reader.title)
        for track in reader.tracks {
            guard let raw = track.location else { continue }  // a track with only an identifier
            guard let location = PlaylistPaths.location(of: raw, base: base, isURIReference: true) else {
                throw .invalidPlaylist(path: name, line: track.line, reason: "<location> '\(raw)' is not a usable URI")
            }
            playlist.entries.append(PlaylistEntry(location: location, title: track.title,
                                                  duration: track.durationMS.map { $0 / 1000 },
                                                  artist: track.creator, album: track.album, sourceLine: track.line))
        }
        return playlist
    }
}

/// What an `XMLParser` error code means, in words. On Linux the codes are libxml2's
/// `xmlParserErrors` values, which Apple's `XMLParser.ErrorCode` numbering follows.
private func xmlErrorText(_ code: Int) -> String {
    let text: String? = switch code {
    case 4: "the document is empty"
    case 5: "content after the root element, or the document ends early"
    case 9: "a character XML does not allow"
    case 22, 68: "a bare '&' or '<' (write &amp; or &lt;)"
    case 23: "an entity reference without its ';'"
    case 26, 27: "an undefined entity such as &nbsp;"
    case 73: "a tag is not closed with '>'"
    case 76: "a closing tag does not match its opening tag"
    case 77: "an element is not closed (truncated?)"
    case 85: "elements not closed in order"
    case 86: "content after the root element"
    default: nil
    }
    return text.map { "\($0), XML error \(code)" } ?? "XML error \(code)"
}

/// Collects an XSPF document's playlist title and tracks (used on one thread, for one parse).
private final class XSPFReader: NSObject, XMLParserDelegate {
    struct Track {
        var line: Int
        var location: String?
        var title: String?
        var creator: String?
        var album: String?
        var durationMS: Double?
    }
    var title: String?
    var tracks: [Track] = []
    var sawRoot = false
    var problem: (line: Int, reason: String)?
    /// The first XML error and the line the parser was on when it found it.
    var xmlError: (line: Int, code: Int)?

    private var stack: [String] = []
    private var text = ""
    private var track: Track?

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        if stack.isEmpty {
            if name != "playlist" {
                problem = (parser.lineNumber, "the root element is <\(name)>, not an XSPF <playlist>")
                parser.abortParsing()
            }
            sawRoot = true
        }
        stack.append(name)
        text = ""
        if name == "track", stack.count == 3, stack[1] == "trackList" {
            track = Track(line: parser.lineNumber)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred error: any Error) {
        if xmlError == nil { xmlError = (parser.lineNumber, (error as NSError).code) }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        text += String(decoding: block, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let optional = value.isEmpty ? nil : value
        let depth = stack.count
        if depth == 2, name == "title" {
            title = optional
        } else if depth == 3, name == "track", let t = track {
            tracks.append(t)
            track = nil
        } else if depth == 4, track != nil {
            switch name {
            case "location": if track!.location == nil { track!.location = optional }
            case "title": track!.title = optional
            case "creator": track!.creator = optional
            case "album": track!.album = optional
            case "duration": track!.durationMS = parseSeconds(value)
            default: break
            }
        }
        if !stack.isEmpty { stack.removeLast() }
        text = ""
    }
}
