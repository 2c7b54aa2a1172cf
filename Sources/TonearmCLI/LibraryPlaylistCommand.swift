// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// Runs `body`; its errors are reported by the entry point (`tonearm: …`, exit status 1).
private func reportingErrors(_ command: String, _ body: () throws -> Void) throws {
    try body()
}

private func printPlaylistJSON<T: Encodable>(_ value: T) throws {
    let enc = JSONEncoder()
    enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    enc.dateEncodingStrategy = .iso8601
    Terminal.write(String(decoding: try enc.encode(value), as: UTF8.self) + "\n")
}

private func tracks(_ n: Int) -> String { n == 1 ? "1 track" : "\(n) tracks" }

/// A playlist as `--json` prints it (persistentID as text: JSON numbers lose 64-bit precision).
/// A smart playlist has `"smart": true` and no persistentID or dates.
private struct PlaylistJSON: Encodable {
    var persistentID: String?
    var name: String
    var count: Int
    var smart: Bool
    var dateCreated, dateModified: Date?
    var tracks: [LibraryListCommand.ItemJSON]?

    init(_ p: MediaPlaylist, items: [MediaItem]? = nil) {
        persistentID = String(p.persistentID)
        name = p.name; count = p.count; smart = false; dateCreated = p.dateCreated; dateModified = p.dateModified
        tracks = items?.map(LibraryListCommand.ItemJSON.init)
    }

    init(smart: SmartPlaylist, items: [MediaItem], withTracks: Bool) {
        name = smart.name; count = items.count; self.smart = true
        tracks = withTracks ? items.map(LibraryListCommand.ItemJSON.init) : nil
    }
}

/// `tonearm library playlists [--json]`: every playlist, by name, with its number of tracks, then
/// the standard smart playlists (recently added, most played, top rated, never played) marked
/// "smart".
struct LibraryPlaylistsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlists", abstract: "List the library's playlists and its smart playlists.",
        discussion: """
            Examples:
              tonearm library playlists
              tonearm library playlists --json
            """)

    @Flag(name: .long, help: "Print JSON.")
    var json = false
    @OptionGroup var database: LibraryDatabaseOption

    func run() throws {
        let library = try database.open(command: "playlists")
        try reportingErrors("playlists") {
            let all = try library.playlists()
            let smart = try library.standardSmartPlaylists()
            if json {
                return try printPlaylistJSON(all.map { PlaylistJSON($0) }
                    + smart.map { PlaylistJSON(smart: $0.playlist, items: $0.items, withTracks: false) })
            }
            for p in all { Terminal.write("\(p.name)  [\(tracks(p.count))]\n") }
            for (p, items) in smart { Terminal.write("\(p.name)  [smart, \(tracks(items.count))]\n") }
        }
    }
}

/// `tonearm library playlist create|add|show|export|import|delete …`: one playlist.
struct LibraryPlaylistCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "Create, fill, show, rename, reorder, export, import or delete a playlist.",
        discussion: """
            Playlists live in the library; `tonearm play --playlist NAME` plays one.

            Examples:
              tonearm library playlist create Favourites
              tonearm library playlist add Favourites --album 'Kind of Blue'
              tonearm library playlist show Favourites
              tonearm library playlist export Favourites favourites.m3u8
            """,
        subcommands: [Create.self, Add.self, Show.self, Rename.self, Remove.self, Move.self, Export.self, Import.self, Delete.self])

    /// `create NAME`: an empty playlist; a name already taken is an error.
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create an empty playlist.",
            discussion: """
                Examples:
                  tonearm library playlist create 'Road trip'
                """)
        @Argument(help: "The playlist's name (unique).") var name: String
        @OptionGroup var database: LibraryDatabaseOption

        func run() throws {
            let library = try database.open(command: "playlist create")
            try reportingErrors("playlist create") {
                let p = try library.createPlaylist(named: name)
                Terminal.write("Created playlist '\(p.name)'\n")
            }
        }
    }

    /// `add NAME [FILE…] [--id PID]… [--search TEXT] [--artist X] [--album Y]`: appends files of
    /// the library (by path) and items by persistentID in the order given, or the items a search
    /// and filters find (every media type), an album's in track order, an artist's by year,
    /// album and track. A file not in the library, or a search that finds nothing: an error.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Append the items that match to a playlist.",
            discussion: """
                Examples:
                  tonearm library playlist add 'Road trip' --artist 'sigur ros'
                  tonearm library playlist add 'Road trip' --search 'night' --album 'Blue'
                """)
        @Argument(help: "The playlist's name.", completion: Completions.playlists) var name: String
        @OptionGroup var selection: LibrarySelection
        @OptionGroup var database: LibraryDatabaseOption

        func validate() throws {
            if selection.isEmpty { throw ValidationError("give files, --id, --search, --artist or --album") }
        }

        func run() throws {
            let library = try database.open(command: "playlist add")
            try reportingErrors("playlist add") {
                let items = try selection.requireItems(in: library, command: "playlist add")
                let p = try library.addItems(items.map(\.persistentID), to: name)
                Terminal.write("Added \(tracks(items.count)) to '\(p.name)' (\(tracks(p.count)) in all)\n")
            }
        }
    }

    /// `show NAME [--json]`: the playlist's items, numbered from 1, in order.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "List a playlist's items in order.",
            discussion: """
                Examples:
                  tonearm library playlist show 'Road trip'
                  tonearm library playlist show 'Top 25 Most Played' --json
                """)
        @Argument(help: "The playlist's name.", completion: Completions.playlists) var name: String
        @Flag(name: .long, help: "Print JSON.") var json = false
        @OptionGroup var database: LibraryDatabaseOption

        func run() throws {
            let library = try database.open(command: "playlist show")
            try reportingErrors("playlist show") {
                guard let playlist = try library.namedPlaylist(name) else { throw TonearmError.playlistNotFound(name: name) }
                let items = try library.items(in: playlist)
                let title: String
                switch playlist {
                case .playlist(let p):
                    if json { return try printPlaylistJSON(PlaylistJSON(p, items: items)) }
                    title = "\(p.name)  [\(tracks(p.count))"
                case .smart(let smart):
                    if json { return try printPlaylistJSON(PlaylistJSON(smart: smart, items: items, withTracks: true)) }
                    title = "\(smart.name)  [smart, \(tracks(items.count))"
                }
                Terminal.write("\(title), \(formatTime(items.reduce(0) { $0 + $1.duration }))]\n")
                for (n, i) in items.enumerated() {
                    let where_ = [i.artist, i.albumTitle].compactMap { $0 }.joined(separator: " — ")
                    Terminal.write("\(n + 1). \(i.title)\(where_.isEmpty ? "" : "  (\(where_))")  \(formatTime(i.duration))\n")
                }
            }
        }
    }

    /// `rename NAME NEW-NAME`: keeps the playlist's persistentID and items.
    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rename", abstract: "Rename a playlist (its items and identity stay).",
            discussion: """
                Examples:
                  tonearm library playlist rename 'Road trip' 'Summer 2026'
                """)
        @Argument(help: "The playlist's name.", completion: Completions.playlists) var name: String
        @Argument(help: "Its new name (unique).") var newName: String
        @OptionGroup var database: LibraryDatabaseOption

        func run() throws {
            let library = try database.open(command: "playlist rename")
            try reportingErrors("playlist rename") {
                let p = try library.renamePlaylist(name, to: newName)
                Terminal.write("Renamed '\(name)' to '\(p.name)'\n")
            }
        }
    }

    /// `remove NAME POSITION`: removes the item at a position as `show` numbers them (from 1).
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove the item at a position (as 'show' numbers them) from a playlist.",
            discussion: """
                Examples:
                  tonearm library playlist remove 'Road trip' 3
                """)
        @Argument(help: "The playlist's name.", completion: Completions.playlists) var name: String
        @Argument(help: "The position, from 1.") var position: Int
        @OptionGroup var database: LibraryDatabaseOption

        func run() throws {
            let library = try database.open(command: "playlist remove")
            try reportingErrors("playlist remove") {
                let items = try library.items(in: name)
                guard items.indices.contains(position - 1) else {
                    throw TonearmError.invalidArgument(
                        "position \(position) is not in playlist '\(name)', which has \(tracks(items.count))")
                }
                let p = try library.removeItem(at: position - 1, from: name)
                Terminal.write("Removed \(position). \(items[position - 1].title) from '\(p.name)' (\(tracks(p.count)) left)\n")
            }
        }
    }

    /// `move NAME FROM TO`: moves an item from one position to another (both from 1).
    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "move", abstract: "Move a playlist's item from one position to another (from 1).",
            discussion: """
                Examples:
                  tonearm library playlist move 'Road trip' 5 1
                """)
        @Argument(help: "The playlist's name.", completion: Completions.playlists) var name: String
        @Argument(help: "The item's position now.") var from: Int
        @Argument(help: "Its new position.") var to: Int
        @OptionGroup var database: LibraryDatabaseOption

        func run() throws {
            let library = try database.open(command: "playlist move")
            try reportingErrors("playlist move") {
                let items = try library.items(in: name)
                for n in [from, to] where !items.indices.contains(n - 1) {
                    throw TonearmError.invalidArgument(
                        "position \(n) is not in playlist '\(name)', which has \(tracks(items.count))")
                }
                _ = try library.moveItem(from: from - 1, to: to - 1, in: name)
                Terminal.write("Moved \(items[from - 1].title) to position \(to) in '\(name)'\n")
            }
        }
    }

    /// `export NAME FILE [--format F]`: writes M3U8, PLS or XSPF (from FILE's extension, or `--format`).
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export", abstract: "Write a playlist to an M3U8, PLS or XSPF file.",
            discussion: """
                Examples:
                  tonearm library playlist export 'Road trip' trip.m3u8
                  tonearm library playlist export 'Road trip' trip.txt --format xspf
                """)
        @Argument(help: "The playlist's name.", completion: Completions.playlists) var name: String
        @Argument(help: ArgumentHelp("The file to write (.m3u8, .m3u, .pls, .xspf).", valueName: "FILE")) var file: String
        @Option(name: .long, help: "m3u, m3u8, pls or xspf (default: from the file's extension).", completion: .list(Completions.playlistFormats)) var format: String?
        @OptionGroup var database: LibraryDatabaseOption

        func validate() throws {
            if let format, PlaylistFormat(fileExtension: format) == nil {
                throw ValidationError("--format is m3u, m3u8, pls or xspf, not '\(format)'")
            }
        }

        func run() throws {
            let library = try database.open(command: "playlist export")
            try reportingErrors("playlist export") {
                try library.exportPlaylist(name, to: URL(fileURLWithPath: file), format: format.flatMap { PlaylistFormat(fileExtension: $0) })
                Terminal.write("Exported '\(name)' to \(file)\n")
            }
        }
    }

    /// `import FILE [--name NAME]`: a new playlist of the file's entries that are library items;
    /// the others are listed ("not in the library: …").
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import", abstract: "Create a playlist from an M3U, PLS or XSPF file.",
            discussion: """
                Examples:
                  tonearm library playlist import trip.m3u8
                  tonearm library playlist import radio.pls --name Radio
                """)
        @Argument(help: ArgumentHelp("The playlist file.", valueName: "FILE")) var file: String
        @Option(name: .long, help: "The new playlist's name (default: the file's title, else its name).") var name: String?
        @OptionGroup var database: LibraryDatabaseOption

        func run() throws {
            let library = try database.open(command: "playlist import")
            try reportingErrors("playlist import") {
                let result = try library.importPlaylist(from: URL(fileURLWithPath: file), named: name)
                Terminal.write("Imported \(tracks(result.playlist.count)) into '\(result.playlist.name)'"
                               + (result.unmatched.isEmpty ? "\n" : ", \(result.unmatched.count) not in the library\n"))
                for e in result.unmatched { Terminal.write("  not in the library: \(e.location)\n") }
            }
        }
    }

    /// `delete NAME`: deletes the playlist (not its items).
    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Delete a playlist (its items stay in the library).",
            discussion: """
                Examples:
                  tonearm library playlist delete 'Road trip'
                """)
        @Argument(help: "The playlist's name.", completion: Completions.playlists) var name: String
        @OptionGroup var database: LibraryDatabaseOption

        func run() throws {
            let library = try database.open(command: "playlist delete")
            try reportingErrors("playlist delete") {
                try library.deletePlaylist(named: name)
                Terminal.write("Deleted playlist '\(name)'\n")
            }
        }
    }
}
