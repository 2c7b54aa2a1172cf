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
        discussion: """
            The library is one SQLite file ($XDG_DATA_HOME/tonearm/library.sqlite unless --db says).

            Examples:
              tonearm library scan ~/Music
              tonearm library albums --artist 'nina simone'
              tonearm library playlist create Favourites
              tonearm play --playlist Favourites
            """,
        subcommands: [LibraryScanCommand.self, LibraryWatchCommand.self] + LibraryListing.commands
            + [LibraryStatsCommand.self, LibraryRateCommand.self, LibraryPlaylistsCommand.self, LibraryPlaylistCommand.self])
}

/// The database option every library command takes.
struct LibraryDatabaseOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The library database (default: the config file's [library] database, else $XDG_DATA_HOME/tonearm/library.sqlite).", valueName: "PATH"))
    var db: String?

    /// The database to open: `--db`, else the config file's (`tonearm --config PATH library …`),
    /// else the default one.
    var path: String { db ?? ConfiguredLibrary.databasePath() }

    /// Opens the library (its error is reported by the entry point: exit status 1).
    func open(command: String) throws -> MediaLibrary {
        try Self.open(path: path)
    }

    static func open(path: String) throws -> MediaLibrary {
        try MediaLibrary(path: path)
    }
}

/// `[FILE…] [--id PID]… [--search TEXT] [--artist X] [--album Y]`: the items of the library a
/// command acts on (every media type), as `playlist add` and `rate` choose them: files of the
/// library by path and items by persistentID, or every item a search and filters find.
struct LibrarySelection: ParsableArguments {
    @Argument(help: ArgumentHelp("Files of the library, by path.", valueName: "FILE"))
    var files: [String] = []
    @Option(name: .long, help: "A persistentID (repeatable), as `songs --json` or `pick --print-ids` print them.")
    var id: [String] = []
    @Option(name: .long, help: "Items the full-text search finds in titles, artists and albums.")
    var search: String?
    @Option(name: .long, help: "Items whose artist or album artist is this (case and accents ignored).")
    var artist: String?
    @Option(name: .long, help: "Items whose album is this.")
    var album: String?

    /// Nothing chosen.
    var isEmpty: Bool { files.isEmpty && id.isEmpty && isQueryEmpty }
    /// No search and no filter.
    var isQueryEmpty: Bool { search == nil && artist == nil && album == nil }

    func validate() throws {
        if !(files.isEmpty && id.isEmpty) && !isQueryEmpty {
            throw ValidationError("give files or --id, or a search and filters, not both")
        }
        for text in id where UInt64(text) == nil {
            throw ValidationError("'\(text)' is not a persistentID (a whole number, as `songs --json` prints it)")
        }
    }

    /// "search 'x', artist 'y'": what was asked for, for messages.
    var description: String {
        [search.map { "search '\($0)'" }, artist.map { "artist '\($0)'" }, album.map { "album '\($0)'" }]
            .compactMap { $0 }.joined(separator: ", ")
    }

    /// The items chosen: the files, then the persistentIDs, in the order given; or an album's in
    /// track order, an artist's by year, album and track, a search's by title.
    /// - Throws: `TonearmError.fileNotFound` for a file that does not exist, `.invalidArgument`
    ///   for a file or persistentID not in the library; `.library`.
    func items(in library: MediaLibrary) throws(TonearmError) -> [MediaItem] {
        if !isQueryEmpty {
            var query = MediaQuery(groupingType: album != nil ? .album : artist != nil ? .artist : .title, mediaType: nil)
            if let artist { query = query.filtered(by: .artistOrAlbumArtist(artist)) }
            if let album { query = query.filtered(by: .albumTitle(album)) }
            if let search { query = query.searching(search) }
            return try query.items(in: library)
        }
        var items: [MediaItem] = []
        for file in files {
            if let item = try library.item(atPath: file) { items.append(item); continue }
            guard FileManager.default.fileExists(atPath: file) else { throw .fileNotFound(path: file) }
            throw .invalidArgument("\(file) is not in the library \(library.path) (scan its folder with `tonearm library scan DIR`)")
        }
        for pid in id.compactMap(UInt64.init) {
            guard let item = try library.item(persistentID: pid) else {
                throw .invalidArgument("no item with persistentID \(pid) in \(library.path)")
            }
            items.append(item)
        }
        return items
    }

    /// ``items(in:)``, which a search and filters must find some of: when they find none,
    /// prints "tonearm library COMMAND: nothing in the library for search '…'" and exits with
    /// status 1.
    func requireItems(in library: MediaLibrary, command: String) throws -> [MediaItem] {
        let items = try items(in: library)
        if items.isEmpty {
            throw CommandFailure(nil, "nothing in the library matches \(description)")
        }
        return items
    }
}

/// `tonearm library scan DIR… [--db PATH]`: scans, with a progress line (rewritten in place on a
/// terminal, a line every 10% otherwise), then the summary and the skipped files with reasons.
/// A folder that does not exist or a database that cannot be opened: an error, exit status 1.
struct LibraryScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Scan folders (recursively) into the library: new, changed, moved and deleted files.",
        discussion: """
            A scan again finds what changed since the last one: new, changed, moved and deleted \
            files. Files that are not media are listed as skipped, with the reason.

            Examples:
              tonearm library scan ~/Music
              tonearm library scan ~/Music ~/Podcasts --quiet
              tonearm library scan /mnt/music --db ~/music.sqlite
            """)

    @Argument(help: ArgumentHelp("Folders to scan.", valueName: "DIR"))
    var folders: [String]

    @OptionGroup var database: LibraryDatabaseOption

    @Flag(name: .long, help: "Print no progress, only the summary.")
    var quiet = false

    @Flag(name: .long, help: "List every skipped file with its reason.")
    var verbose = false

    @Option(name: .long, help: ArgumentHelp("Files written per transaction.", visibility: .hidden))
    var batchSize = 500

    @Option(name: .long, help: ArgumentHelp("Reader threads (default: three per processor, 4 to 8).", visibility: .hidden))
    var readers: Int?

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
        if let readers, readers < 1 { throw ValidationError("--readers must be at least 1") }
    }

    /// The summary line, then the skipped files counted by kind of reason ("skipped 3 files: 2
    /// not audio, 1 unreadable"), and with `verbose` each of them with its reason, as printed
    /// after a scan.
    static func report(_ summary: ScanSummary, seconds: Double, verbose: Bool = true) -> String {
        var text = "Scanned in \(String(format: "%.2f", seconds)) s: \(summary.added) added, \(summary.updated) updated, "
            + "\(summary.moved) moved, \(summary.removed) removed, \(summary.unchanged) unchanged, "
            + "\(summary.skipped.count) skipped\n"
        guard !summary.skipped.isEmpty else { return text }
        let counts = summary.skippedByKind
        // Most first; kinds of equal count in SkipKind's order.
        let kinds = SkipKind.allCases.enumerated().filter { counts[$0.element] != nil }
            .sorted { (counts[$1.element]!, $0.offset) < (counts[$0.element]!, $1.offset) }.map(\.element)
        text += "skipped \(summary.skipped.count == 1 ? "1 file" : "\(summary.skipped.count) files"): "
            + kinds.map { "\(counts[$0]!) \($0.label)" }.joined(separator: ", ")
            + (verbose ? "\n" : " (--verbose lists them)\n")
        if verbose { text += summary.skipped.map { "  skipped \($0.path): \($0.reason)\n" }.joined() }
        return text
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
        try await Self.scan(Arguments(folders: folders, db: database.db, quiet: quiet, verbose: verbose,
                                      batchSize: batchSize, readers: readers))
    }

    /// What the command runs with: its options' values.
    struct Arguments: Equatable {
        var folders: [String]
        var db: String?
        var quiet = false
        var verbose = false
        var batchSize = 500
        var readers: Int?

        /// The arguments after `tonearm` when they are `library scan DIR… [--db PATH] [--quiet]
        /// [--verbose]` — each option at most once, with no `--config` and nothing else — the
        /// common form of the command, which then runs without swift-argument-parser's parse
        /// (about 23 million instructions, a tenth of a 2,000-file scan's; mostly the runtime's
        /// first look-ups of the parser's protocols). Anything else (help, other options, a
        /// value that starts with "-" or is empty, no folder) gives nil and goes through the
        /// parser, which gives the same values for every form taken here
        /// (`ScanCommandLineTests`).
        init?(commandLine arguments: [String]) {
            guard arguments.count >= 3, arguments[0] == "library", arguments[1] == "scan" else { return nil }
            var folders: [String] = []
            var db: String?
            var quiet = false, verbose = false
            var i = 2
            while i < arguments.count {
                let a = arguments[i]
                switch a {
                case "--quiet":
                    guard !quiet else { return nil }
                    quiet = true
                case "--verbose":
                    guard !verbose else { return nil }
                    verbose = true
                case "--db":
                    guard db == nil, i + 1 < arguments.count, Self.isPlainValue(arguments[i + 1]) else { return nil }
                    db = arguments[i + 1]
                    i += 1
                default:
                    guard Self.isPlainValue(a) else { return nil }
                    folders.append(a)
                }
                i += 1
            }
            guard !folders.isEmpty else { return nil }
            self.init(folders: folders, db: db, quiet: quiet, verbose: verbose)
        }

        init(folders: [String], db: String?, quiet: Bool = false, verbose: Bool = false, batchSize: Int = 500, readers: Int? = nil) {
            self.folders = folders
            self.db = db
            self.quiet = quiet
            self.verbose = verbose
            self.batchSize = batchSize
            self.readers = readers
        }

        /// A value the parser takes as it is: not empty, not an option, not the word `help`.
        private static func isPlainValue(_ s: String) -> Bool {
            !s.isEmpty && !s.hasPrefix("-") && s != "help"
        }
    }

    static func scan(_ arguments: Arguments) async throws {
        let (folders, quiet, verbose, batchSize, readers) =
            (arguments.folders, arguments.quiet, arguments.verbose, arguments.batchSize, arguments.readers)
        let path = arguments.db ?? ConfiguredLibrary.databasePath()
        let live = isatty(2) == 1 && !quiet
        var lastTenth = -1
        do {
            let start = Date()
            // A first scan leaves its listing and full-text indexes (recorded in the database)
            // to the first query that needs them: a listing, a search or a later scan makes
            // them; playing a file, counting a play and `library stats` do not wait for them.
            // A new database is built in a temporary file and named when complete (synced once,
            // not 8 times; an interrupted scan leaves none).
            let progress = { (p: ScanProgress) in
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
            let summary: ScanSummary
            // Nothing new, changed or gone: found without opening the library for writing
            // (which writes and waits for the disk; see ``MediaLibrary/scanIfUnchanged(path:folders:readerThreads:progress:)``).
            if let unchanged = MediaLibrary.scanIfUnchanged(path: path, folders: folders, readerThreads: readers, progress: progress) {
                summary = unchanged
            } else if let new = try await MediaLibrary.scanIntoNewDatabase(path: path, folders: folders, readerThreads: readers,
                                                                     batchSize: batchSize, progress: progress) {
                summary = new
            } else {
                summary = try await LibraryDatabaseOption.open(path: path)
                    .scanToEnd(folders: folders, readerThreads: readers, batchSize: batchSize,
                               leavingIndexesForNextUse: true, progress: progress)
            }
            if live { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            Terminal.write(Self.report(summary, seconds: Date().timeIntervalSince(start), verbose: verbose))
        } catch {
            if live { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            throw error
        }
    }
}

/// `tonearm library songs|albums|artists|genres|composers|podcasts|audiobooks [filters] [--json]`.
struct LibraryKindListCommand<Kind: LibraryListKind>: ParsableCommand {
    static var configuration: CommandConfiguration { Kind.listing.configuration }

    @Option(name: .long, help: "Only items whose artist or album artist is this (case and accents ignored).")
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

    func run() throws {
        let listing = Kind.listing
        let kind = listing.kind
        let library = try database.open(command: kind)
        var query = listing.query(album != nil)
        if let artist { query = query.filtered(by: .artistOrAlbumArtist(artist)) }
        if let album { query = query.filtered(by: .albumTitle(album)) }
        if let genre { query = query.filtered(by: .genre(genre)) }
        if let search { query = query.searching(search) }
        do {
            if listing.listsItems {
                let items = try query.items(in: library)
                if items.isEmpty { try nothingFound(kind) }
                if !sections { return try printItems(items[...]) }
                let parts = query.sections(ofItems: items)
                if json { return try printJSON(parts.map { SectionJSON(title: $0.title, items: items[$0.range].map(ItemJSON.init)) }) }
                for part in parts {
                    Terminal.write("[\(part.title)]\n")
                    try printItems(items[part.range])
                }
            } else if json {
                let collections = try query.collections(in: library)
                if collections.isEmpty { try nothingFound(kind) }
                if !sections { return try printJSON(collections.map(CollectionJSON.init)) }
                let parts = query.sections(ofCollections: collections)
                try printJSON(parts.map { SectionJSON(title: $0.title, items: collections[$0.range].map(CollectionJSON.init)) })
            } else {
                // One row per collection from the database, not every item.
                let summaries = try query.collectionSummaries(in: library)
                if summaries.isEmpty { try nothingFound(kind) }
                if !sections { return printCollections(summaries[...], kind: kind) }
                for part in MediaQuery.sections(ofNames: summaries.map(\.name)) {
                    Terminal.write("[\(part.title)]\n")
                    printCollections(summaries[part.range], kind: kind)
                }
            }
        }
    }

    /// What the filters asked for, for messages: "artist 'x', search 'y'"; "" when none.
    private var filterDescription: String {
        [artist.map { "artist '\($0)'" }, album.map { "album '\($0)'" }, genre.map { "genre '\($0)'" },
         search.map { "search '\($0)'" }].compactMap { $0 }.joined(separator: ", ")
    }

    /// An empty listing: says so on stderr ("no songs match artist 'x'", or "the library has no
    /// podcasts" when nothing was filtered; with `--json` an empty array on stdout first) and
    /// exits with status 1.
    private func nothingFound(_ kind: String) throws -> Never {
        if json { Terminal.write("[]\n") }
        let filters = filterDescription
        throw CommandFailure(nil, filters.isEmpty ? "the library has no \(kind)" : "no \(kind) match \(filters)")
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

    private func printJSON<T: Encodable>(_ value: T) throws { try Terminal.writeJSON(value) }

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
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Print what the library holds.",
        discussion: """
            Examples:
              tonearm library stats
              tonearm library stats --json
            """)

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
        }
    }
}
