// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// The values the shell completions offer (`tonearm --generate-completion-script bash|zsh|fish`):
/// fixed lists (EQ presets, repeat modes, …) and, through ArgumentParser's custom completion
/// (the script calls `tonearm ---completion …`), what is there when Tab is pressed: the sound
/// server's outputs and the library's playlists. A custom completion never fails: without a
/// server or a library it offers nothing.
enum Completions {
    static let repeatModes = ["off", "one", "all"]
    static let replayGainModes = ["off", "track", "album"]
    static let outputKinds = ["pulse", "null", "null:untimed"]
    static let pickViews = ["songs", "artists", "albums", "genres", "playlists"]
    static let mediaTypes = ["music", "podcast", "audiobook"]
    static let playlistFormats = ["m3u", "m3u8", "pls", "xspf"]
    static var eqPresets: [String] { EQPreset.all.map(\.name) }

    static var eq: CompletionKind { .list(eqPresets) }
    static var outputs: CompletionKind { .custom(outputNames) }
    static var inputs: CompletionKind { .custom(inputNames) }
    static var playlists: CompletionKind { .custom(playlistNames) }

    /// The sound server's outputs (sinks), by name; none when no server answers within a second.
    @Sendable static func outputNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        ((try? AudioRoutes(timeout: 1).outputs()) ?? []).map(\.name).filter { $0.hasPrefix(prefix) }
    }

    /// The sound server's inputs (sources, monitors included), by name; none when no server
    /// answers within a second.
    @Sendable static func inputNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        ((try? AudioRoutes(timeout: 1).inputs()) ?? []).map(\.name).filter { $0.hasPrefix(prefix) }
    }

    /// The library's playlists (its own, then the standard smart ones), of the library `--db`
    /// names on the command line or the default one; none when there is no library (it is not
    /// created by asking).
    @Sendable static func playlistNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        var db: String?
        if let i = words.firstIndex(of: "--db"), i + 1 < words.count { db = words[i + 1] }
        let path: String = db.map { (s: String) -> String in NSString(string: s).expandingTildeInPath } ?? ConfiguredLibrary.databasePath()
        guard FileManager.default.fileExists(atPath: path), let library = try? MediaLibrary(path: path) else { return [] }
        let own: [String] = (try? library.playlists().map { (p: MediaPlaylist) -> String in p.name }) ?? []
        let smart: [String] = (try? library.standardSmartPlaylists().map { (s: (playlist: SmartPlaylist, items: [MediaItem])) -> String in s.playlist.name }) ?? []
        return (own + smart).filter { (name: String) -> Bool in name.hasPrefix(prefix) }
    }
}
