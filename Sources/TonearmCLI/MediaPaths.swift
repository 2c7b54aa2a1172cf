// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

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
