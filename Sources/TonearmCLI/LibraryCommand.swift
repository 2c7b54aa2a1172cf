// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Glibc
import Tonearm

/// `tonearm library …`: the media library (scan folders into it, list what it holds, counts).
struct LibraryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "library",
        abstract: "Scan folders into the media library, list its songs, albums, artists and genres, and keep playlists.",
        subcommands: [LibraryScanCommand.self, LibraryWatchCommand.self, LibraryListCommand.self, LibraryStatsCommand.self,
                      LibraryRateCommand.self, LibraryPlaylistsCommand.self, LibraryPlaylistCommand.self])
}

/// The database option every library command takes.
struct LibraryDatabaseOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The library database (default: the config file's [library] database, else $XDG_DATA_HOME/tonearm/library.sqlite).", valueName: "PATH"))
    var db: String?

    /// The database to open: `--db`, else the config file's (`tonearm --config PATH library …`),
    /// else the default one.
    var path: String { db ?? ConfiguredLibrary.databasePath() }

    /// Opens the library, or prints the error and exits with status 1.
    func open(command: String) throws -> MediaLibrary {
        do { return try MediaLibrary(path: path) } catch {
            Terminal.writeError("tonearm library \(command): \(error)")
            throw ExitCode(1)
        }
    }
}

/// `--search TEXT --artist X --album Y`: the items of the library a command acts on (every media
/// type), as `playlist add` and `rate` choose them.
struct LibrarySelection: ParsableArguments {
    @Option(name: .long, help: "Items the full-text search finds in titles, artists and albums.")
    var search: String?
    @Option(name: .long, help: "Items whose artist is this (case and accents ignored).")
    var artist: String?
    @Option(name: .long, help: "Items whose album is this.")
    var album: String?

    var isEmpty: Bool { search == nil && artist == nil && album == nil }

    /// "search 'x', artist 'y'": what was asked for, for messages.
    var description: String {
        [search.map { "search '\($0)'" }, artist.map { "artist '\($0)'" }, album.map { "album '\($0)'" }]
            .compactMap { $0 }.joined(separator: ", ")
    }

    /// The items chosen: an album's in track order, an artist's by year, album and track, a
    /// search's by title.
    func items(in library: MediaLibrary) throws(TonearmError) -> [MediaItem] {
        var query = MediaQuery(groupingType: album != nil ? .album : artist != nil ? .artist : .title, mediaType: nil)
        if let artist { query = query.filtered(by: .artist(artist)) }
        if let album { query = query.filtered(by: .albumTitle(album)) }
        if let search { query = query.searching(search) }
        return try query.items(in: library)
    }
}

/// `tonearm library scan DIR… [--db PATH]`: scans, with a progress line (rewritten in place on a
/// terminal, a line every 10% otherwise), then the summary and the skipped files with reasons.
/// A folder that does not exist or a database that cannot be opened: an error, exit status 1.
struct LibraryScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Scan folders (recursively) into the library: new, changed, moved and deleted files.")

    @Argument(help: ArgumentHelp("Folders to scan.", valueName: "DIR"))
    var folders: [String]

    @OptionGroup var database: LibraryDatabaseOption

    @Flag(name: .long, help: "Print no progress, only the summary.")
    var quiet = false

    @Option(name: .long, help: ArgumentHelp("Files written per transaction.", visibility: .hidden))
    var batchSize = 500

    @Option(name: .long, help: ArgumentHelp("Reader threads (default: three per processor, 4 to 8).", visibility: .hidden))
    var readers: Int?

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
        if let readers, readers < 1 { throw ValidationError("--readers must be at least 1") }
    }

    /// The summary line and the skipped files with reasons, as printed after a scan.
    static func report(_ summary: ScanSummary, seconds: Double) -> String {
        "Scanned in \(String(format: "%.2f", seconds)) s: \(summary.added) added, \(summary.updated) updated, "
            + "\(summary.moved) moved, \(summary.removed) removed, \(summary.unchanged) unchanged, "
            + "\(summary.skipped.count) skipped\n"
            + summary.skipped.map { "  skipped \($0.path): \($0.reason)\n" }.joined()
    }

    /// The live progress line on a terminal `width` columns wide: a bar, the files done of the
    /// files found, the percentage, and the file being read (control characters shown as "?"),
    /// cut to fit by its width on screen.
    /// `Scanning [████░░░░░░░░░░░░] 4210/10000  42%  03 - Song.flac`
    static func progressLine(_ p: ScanProgress, width: Int) -> String {
        let fraction = p.filesTotal > 0 ? Double(p.filesDone) / Double(p.filesTotal) : 0
        let barWidth = max(10, min(30, width / 4))
        var line = "Scanning " + LiveScreen.bar(fraction: fraction, width: barWidth)
            + " \(p.filesDone)/\(p.filesTotal)  \(Int(fraction * 100))%"
        if let file = p.currentFile { line += "  " + TextWidth.printable((file as NSString).lastPathComponent) }
        return TextWidth.clip(line, to: max(20, width - 1))
    }

    func run() async throws {
        let library = try database.open(command: "scan")
        let live = isatty(2) == 1 && !quiet
        var lastTenth = -1
        do {
            let start = Date()
            let summary = try await library.scanToEnd(folders: folders, readerThreads: readers, batchSize: batchSize) { p in
                guard !quiet, p.filesTotal > 0 else { return }
                if live {
                    FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.progressLine(p, width: Terminal.width)).utf8))
                } else {
                    let line = "Scanning: \(p.filesDone)/\(p.filesTotal)"
                    let tenth = p.filesDone * 10 / p.filesTotal
                    if tenth != lastTenth {
                        lastTenth = tenth
                        Terminal.writeError(line)
                    }
                }
            }
            if live { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            Terminal.write(Self.report(summary, seconds: Date().timeIntervalSince(start)))
        } catch {
            if live { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            Terminal.writeError("tonearm library scan: \(error)")
            throw ExitCode(1)
        }
    }
}

/// `tonearm library songs|albums|artists|genres|composers|podcasts|audiobooks [filters] [--json]`.
struct LibraryListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List songs, albums, artists, genres, composers, podcasts or audiobooks.",
        aliases: ["songs", "albums", "artists", "genres", "composers", "podcasts", "audiobooks"])

    @Option(name: .long, help: "Only items whose artist is this (case and accents ignored).")
    var artist: String?
    @Option(name: .long, help: "Only items whose album is this.")
    var album: String?
    @Option(name: .long, help: "Only items whose genre is this.")
    var genre: String?
    @Option(name: .long, help: "Full-text search in titles, artists and albums.")
    var search: String?
    @Flag(name: .long, help: "Print JSON.")
    var json = false
    @Flag(name: .long, help: "Group the list under index letters (A–Z, pinyin letters for Chinese, kana rows, Korean initials, #); with --json, an array of {title, items}.")
    var sections = false
    @OptionGroup var database: LibraryDatabaseOption

    /// The kind asked for: the alias the command was called by (`list` alone lists songs).
    static func kind(arguments: [String]) -> String {
        let kinds = ["songs", "albums", "artists", "genres", "composers", "podcasts", "audiobooks"]
        guard let i = arguments.firstIndex(of: "library"), i + 1 < arguments.count,
              kinds.contains(arguments[i + 1]) else { return "songs" }
        return arguments[i + 1]
    }

    func run() throws {
        let kind = Self.kind(arguments: CommandLine.arguments)
        let library = try database.open(command: kind)
        var query: MediaQuery = switch kind {
        case "albums": .albums()
        case "artists": .artists()
        case "genres": .genres()
        case "composers": .composers()
        case "podcasts": .podcasts()
        case "audiobooks": .audiobooks()
        default: .songs()
        }
        if let artist { query = query.filtered(by: .artist(artist)) }
        if let album { query = query.filtered(by: .albumTitle(album)) }
        if let genre { query = query.filtered(by: .genre(genre)) }
        if let search { query = query.searching(search) }
        do {
            if kind == "songs" || kind == "podcasts" || kind == "audiobooks" {
                let items = try query.items(in: library)
                if !sections { return try printItems(items[...]) }
                let parts = query.sections(ofItems: items)
                if json { return try printJSON(parts.map { SectionJSON(title: $0.title, items: items[$0.range].map(ItemJSON.init)) }) }
                for part in parts {
                    Terminal.write("[\(part.title)]\n")
                    try printItems(items[part.range])
                }
            } else if json {
                let collections = try query.collections(in: library)
                if !sections { return try printJSON(collections.map(CollectionJSON.init)) }
                let parts = query.sections(ofCollections: collections)
                try printJSON(parts.map { SectionJSON(title: $0.title, items: collections[$0.range].map(CollectionJSON.init)) })
            } else {
                // One row per collection from the database, not every item.
                let summaries = try query.collectionSummaries(in: library)
                if !sections { return printCollections(summaries[...], kind: kind) }
                for part in MediaQuery.sections(ofNames: summaries.map(\.name)) {
                    Terminal.write("[\(part.title)]\n")
                    printCollections(summaries[part.range], kind: kind)
                }
            }
        } catch let error as TonearmError {
            Terminal.writeError("tonearm library \(kind): \(error)")
            throw ExitCode(1)
        }
    }

    private func printItems(_ items: ArraySlice<MediaItem>) throws {
        if json { return try printJSON(items.map(ItemJSON.init)) }
        var text = ""
        for i in items {
            let where_ = [i.artist, i.albumTitle].compactMap { $0 }.joined(separator: " — ")
            text += "\(i.title)\(where_.isEmpty ? "" : "  (\(where_))")  \(formatTime(i.duration))\n"
        }
        Terminal.write(text)
    }

    private func printCollections(_ collections: ArraySlice<MediaCollectionSummary>, kind: String) {
        var text = ""
        for c in collections {
            let name = c.name ?? "(unknown)"
            switch kind {
            case "albums":
                let year = c.year.map { ", \($0)" } ?? ""
                text += "\(name) — \(c.albumArtist ?? "(unknown)")\(year)  [\(tracks(c.count)), \(formatTime(c.duration))]\n"
            case "artists":
                text += "\(name)  [\(c.albumCount == 1 ? "1 album" : "\(c.albumCount) albums"), \(tracks(c.count))]\n"
            default:
                text += "\(name)  [\(tracks(c.count))]\n"
            }
        }
        Terminal.write(text)
    }

    private func tracks(_ n: Int) -> String { n == 1 ? "1 track" : "\(n) tracks" }

    private func printJSON<T: Encodable>(_ value: T) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        Terminal.write(String(decoding: try enc.encode(value), as: UTF8.self) + "\n")
    }

    /// A section as `--sections --json` prints it.
    struct SectionJSON<Element: Encodable>: Encodable {
        var title: String
        var items: [Element]
    }

    /// An item as `--json` prints it.
    struct ItemJSON: Encodable {
        var persistentID: String
        var path, title: String
        var artist, album, albumArtist, genre: String?
        var trackNumber, discNumber, year: Int?
        var duration: Double
        var mediaType: String
        var codec: String
        var playCount, rating: Int

        init(_ i: MediaItem) {
            persistentID = String(i.persistentID)
            path = i.path; title = i.title; artist = i.artist; album = i.albumTitle; albumArtist = i.albumArtist
            genre = i.genre; trackNumber = i.trackNumber; discNumber = i.discNumber; year = i.year
            duration = i.duration; mediaType = i.mediaType.rawValue; codec = i.format.codec
            playCount = i.playCount; rating = i.rating
        }
    }

    /// An album, artist, genre or composer as `--json` prints it.
    struct CollectionJSON: Encodable {
        var name: String?
        var albumArtist: String?
        var year: Int?
        var trackCount: Int
        var duration: Double
        var tracks: [ItemJSON]

        init(_ c: MediaItemCollection) {
            name = c.name
            albumArtist = c.grouping == .album ? c.albumArtist : nil
            year = c.representativeItem.year
            trackCount = c.count
            duration = c.duration
            tracks = c.items.map(ItemJSON.init)
        }
    }
}

/// `tonearm library stats [--json]`: counts of items, albums, artists, genres; total time and size.
struct LibraryStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Print what the library holds.")

    @Flag(name: .long, help: "Print JSON.")
    var json = false
    @OptionGroup var database: LibraryDatabaseOption

    func run() throws {
        let library = try database.open(command: "stats")
        do {
            let s = try library.statistics()
            if json {
                let enc = JSONEncoder()
                enc.outputFormatting = [.prettyPrinted, .sortedKeys]
                Terminal.write(String(decoding: try enc.encode(s), as: UTF8.self) + "\n")
                return
            }
            Terminal.write("""
                Library: \(library.path)
                Songs: \(s.songs), podcasts: \(s.podcasts), audiobooks: \(s.audiobooks) (\(s.items) items)
                Albums: \(s.albums), artists: \(s.artists), genres: \(s.genres), covers: \(s.artworks)
                Total: \(formatTime(s.totalDuration)), \(String(format: "%.1f", Double(s.totalSize) / 1_048_576)) MiB

                """)
        } catch let error as TonearmError {
            Terminal.writeError("tonearm library stats: \(error)")
            throw ExitCode(1)
        }
    }
}
