// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

extension Playlist {
    /// Writes the playlist to the file at `url`, atomically: the text goes to a temporary file in the
    /// same folder, which is then renamed over `url`, so a reader sees the old file or the new one and
    /// never a partial one (the temporary file is removed if anything fails).
    ///
    /// - Parameters:
    ///   - format: the format; nil takes it from `url`'s extension.
    ///   - base: the folder local paths are written relative to; nil means `url`'s folder. A file
    ///     inside that folder (at any depth) is written relative to it, any other file as an absolute
    ///     path (M3U, PLS) or `file://` URI (XSPF); network URLs as they are.
    ///
    /// Formats: M3U and M3U8 are written as extended M3U in UTF-8 (`#EXTM3U`, `#PLAYLIST:` for the
    /// title, `#EXTINF:seconds,title`); PLS version 2 (`LengthN` rounded to whole seconds, no playlist
    /// title); XSPF version 1 with escaped text and percent-encoded URI references. Names that a line
    /// format cannot carry as they are (a leading `#`, a backslash, leading or trailing spaces, line
    /// breaks) are written as `file://` URIs.
    ///
    /// - Throws: `TonearmError.invalidURL` for a non-file URL; `.invalidArgument` when there is no
    ///   format and the extension names none; `.isDirectory` when `url` is a folder; `.writeFailed`
    ///   when the folder is missing or not writable, or the disk is full.
    public func write(to url: URL, format: PlaylistFormat? = nil, relativeTo base: URL? = nil) throws(TonearmError) {
        guard url.isFileURL else { throw .invalidURL(url.absoluteString) }
        let path = PlaylistPaths.absolute(url.path)
        guard let format = format ?? PlaylistFormat(fileExtension: url.pathExtension) else {
            throw .invalidArgument("\(path): the extension '.\(url.pathExtension)' names no playlist format; give one (m3u, m3u8, pls, xspf)")
        }
        let folder = (path as NSString).deletingLastPathComponent
        let basePath = PlaylistPaths.absolute(base?.path ?? folder)
        let text: String
        switch format {
        case .m3u, .m3u8: text = m3uText(base: basePath)
        case .pls: text = plsText(base: basePath)
        case .xspf: text = xspfText(base: basePath)
        }
        try Self.writeAtomically(Data(text.utf8), to: path)
    }

    /// The playlist as text in `format`, with local paths written relative to `base` (a folder) when
    /// they are inside it. Never throws: this is what `write(to:format:relativeTo:)` writes.
    public func text(format: PlaylistFormat, relativeTo base: URL) -> String {
        let basePath = PlaylistPaths.absolute(base.path)
        return switch format {
        case .m3u, .m3u8: m3uText(base: basePath)
        case .pls: plsText(base: basePath)
        case .xspf: xspfText(base: basePath)
        }
    }

    // MARK: Line formats

    /// A location as one line of M3U or a PLS value.
    private func lineLocation(_ location: PlaylistLocation, base: String) -> String {
        switch location {
        case .remote(let u):
            return u.absoluteString
        case .file(let raw):
            let path = PlaylistPaths.absolute(raw)
            let unsafe = path.contains("\\") || path.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
                || path.split(separator: "/").contains { $0.first == " " || $0.last == " " || $0.first == "\t" || $0.last == "\t" }
            if unsafe { return PlaylistPaths.fileURI(path) }
            guard let rel = PlaylistPaths.relative(path, to: base) else { return path }
            // `#…` would read as a comment, `x://…` as a URL, `~…` as the home folder.
            if rel.hasPrefix("#") || rel.hasPrefix("~") || PlaylistPaths.scheme(of: rel) != nil { return "./" + rel }
            return rel
        }
    }

    private func m3uText(base: String) -> String {
        var out = "#EXTM3U\n"
        if let title { out += "#PLAYLIST:\(PlaylistText.oneLine(title))\n" }
        for e in entries {
            if e.title != nil || e.duration != nil {
                out += "#EXTINF:\(formatSeconds(e.duration)),\(PlaylistText.oneLine(e.title ?? ""))\n"
            }
            out += lineLocation(e.location, base: base) + "\n"
        }
        return out
    }

    private func plsText(base: String) -> String {
        var out = "[playlist]\n"
        for (i, e) in entries.enumerated() {
            let n = i + 1
            out += "File\(n)=\(lineLocation(e.location, base: base))\n"
            if let t = e.title { out += "Title\(n)=\(PlaylistText.oneLine(t))\n" }
            out += "Length\(n)=\(formatSeconds(e.duration.map { $0.rounded() }))\n"
        }
        out += "NumberOfEntries=\(entries.count)\nVersion=2\n"
        return out
    }

    // MARK: XSPF

    private func xspfText(base: String) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">\n"
        if let title { out += "  <title>\(xmlEscape(title))</title>\n" }
        out += "  <trackList>\n"
        for e in entries {
            out += "    <track>\n"
            let location: String
            switch e.location {
            case .remote(let u): location = u.absoluteString
            case .file(let raw):
                let path = PlaylistPaths.absolute(raw)
                location = PlaylistPaths.relative(path, to: base).map(PlaylistPaths.percentEncode)
                    ?? PlaylistPaths.fileURI(path)
            }
            out += "      <location>\(xmlEscape(location))</location>\n"
            if let t = e.title { out += "      <title>\(xmlEscape(t))</title>\n" }
            if let a = e.artist { out += "      <creator>\(xmlEscape(a))</creator>\n" }
            if let a = e.album { out += "      <album>\(xmlEscape(a))</album>\n" }
            if let d = e.duration, d.isFinite, d >= 0, d < 1e12 {
                out += "      <duration>\(Int64((d * 1000).rounded()))</duration>\n"
            }
            out += "    </track>\n"
        }
        out += "  </trackList>\n</playlist>\n"
        return out
    }

    /// Escapes XML's five special characters and drops the control characters XML 1.0 forbids.
    private func xmlEscape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                let v = scalar.value
                if (v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D) || v == 0xFFFE || v == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: Atomic write

    /// Writes `data` to a temporary file beside `path`, flushes it to disk, and renames it over `path`.
    static func writeAtomically(_ data: Data, to path: String) throws(TonearmError) {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue { throw .isDirectory(path: path) }
        let folder = (path as NSString).deletingLastPathComponent
        guard fm.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw .writeFailed(path: path, reason: "the folder \(folder) does not exist")
        }
        let name = (path as NSString).lastPathComponent
        let temp = folder + "/." + name + ".tmp-" + UUID().uuidString.prefix(8)
        do {
            try data.write(to: URL(fileURLWithPath: temp), options: .withoutOverwriting)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temp))
            try handle.synchronize()
            try handle.close()
        } catch {
            try? fm.removeItem(atPath: temp)
            throw .writeFailed(path: path, reason: (error as NSError).localizedDescription)
        }
        if rename(temp, path) != 0 {
            let reason = String(cString: strerror(errno))
            try? fm.removeItem(atPath: temp)
            throw .writeFailed(path: path, reason: reason)
        }
    }
}
