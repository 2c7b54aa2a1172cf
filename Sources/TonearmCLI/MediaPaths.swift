// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// Turns the command line's FILE and DIR arguments into a list of files to play.
enum MediaPaths {
    /// Extensions `play DIR` picks up (anything named on the command line is tried whatever its name).
    static let extensions: Set<String> = [
        "wav", "wave", "rf64", "aif", "aiff", "aifc", "caf", "flac", "mp3", "m4a", "m4b", "aac", "adts",
        "mp4", "mkv", "mka", "webm", "ogg", "oga", "opus", "alac", "wv", "ape", "mp2", "ac3", "dts",
    ]

    /// Files given stay as they are (in order); a directory becomes its media files, recursively,
    /// sorted by path. A path that does not exist is kept, so that playing it reports the error.
    static func expand(_ arguments: [String]) -> [String] {
        var out: [String] = []
        let fm = FileManager.default
        for a in arguments {
            if QueueItem(pathOrURL: a).isRemote {
                out.append(a)  // a network stream, played as it is
                continue
            }
            let path = a.hasPrefix("file://") ? (URL(string: a)?.path ?? a) : a
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
                var found: [String] = []
                if let e = fm.enumerator(atPath: path) {
                    while let rel = e.nextObject() as? String {
                        let ext = (rel as NSString).pathExtension.lowercased()
                        if extensions.contains(ext) { found.append((path as NSString).appendingPathComponent(rel)) }
                    }
                }
                out += found.sorted { $0.localizedStandardCompare($1) == .orderedAscending }
            } else {
                out.append(path)
            }
        }
        return out
    }
}

extension MediaPaths {
    /// Playlist extensions whose entries are played in their place.
    static let playlistExtensions: Set<String> = ["m3u", "m3u8", "pls", "xspf"]

    /// As ``expand(_:)``, with playlists replaced by their entries (`http(s)` entries as network
    /// streams). Missing entries, entries with other schemes and unreadable playlists are
    /// described in `problems` and skipped.
    static func expandWithPlaylists(_ arguments: [String], problems: inout [String]) -> [String] {
        var out: [String] = []
        for path in expand(arguments) {
            guard playlistExtensions.contains((path as NSString).pathExtension.lowercased()) else {
                out.append(path)
                continue
            }
            do {
                let list = try Playlist.read(from: URL(fileURLWithPath: path))
                let checked = list.entriesCheckingFiles()
                for m in checked.missing { problems.append("\(path): \(m)") }
                for e in checked.playable {
                    if e.location.isRemote {
                        let item = QueueItem(url: e.location.url)
                        if item.isRemote {
                            out.append(e.location.url.absoluteString)
                        } else {
                            problems.append("\(path): \(e.location.url.absoluteString): only http and https streams are played; skipped")
                        }
                    } else if let p = e.location.path {
                        out.append(p)
                    }
                }
            } catch {
                problems.append("\(error)")
            }
        }
        return out
    }
}

extension MediaPaths {
    /// What a command-line argument names: a local path (a `file://` URL becomes its path), an
    /// `http(s)` address, or a URL of another scheme.
    enum Location: Equatable {
        case file(String)
        case network(URL)
        case otherURL(scheme: String)
    }

    static func location(of argument: String) -> Location {
        if let url = URL(string: argument), let scheme = url.scheme?.lowercased(), argument.contains("://") {
            switch scheme {
            case "file": return .file(url.path)
            case "http", "https": return .network(url)
            default: return .otherURL(scheme: scheme)
            }
        }
        return .file(argument)
    }

    /// The local path an export command (`convert`, `extract-audio`) reads; a URL is refused
    /// with a message saying the command takes files (not a "file not found" of a mangled path).
    static func localInput(_ argument: String, command: String) throws -> String {
        switch location(of: argument) {
        case .file(let path): return path
        case .network, .otherURL:
            throw ValidationError("\(argument) is a URL: \(command) reads local files only (download it first; tonearm play and tonearm info read http and https)")
        }
    }
}

