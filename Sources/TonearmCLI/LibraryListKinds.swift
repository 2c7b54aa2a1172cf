// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Tonearm

/// What `tonearm library songs|albums|…` lists: one row of ``LibraryListing/all`` per kind, and
/// one subcommand per kind (not aliases of one), so that each has its own name in its usage line,
/// help and completions.
struct LibraryListing: Sendable {
    /// The kind, as the command is named: `songs`, `albums`, ….
    let kind: String
    /// What it lists, for the abstract: "songs (title, artist, album, time)", ….
    let what: String
    /// Other names the command answers to.
    var aliases: [String] = []
    /// Whether it lists items (songs, episodes) rather than collections (albums, artists, …).
    var listsItems = false
    /// The query, given whether `--album` was given.
    let query: @Sendable (_ byAlbum: Bool) -> MediaQuery

    static let all: [LibraryListing] = [
        // An album's songs in disc and track order, as `play --album` plays them.
        LibraryListing(kind: "songs", what: "songs (title, artist, album, time)", aliases: ["list"], listsItems: true) {
            $0 ? MediaQuery(groupingType: .album) : .songs()
        },
        LibraryListing(kind: "albums", what: "albums (with their tracks in disc and track order in --json)") { _ in .albums() },
        LibraryListing(kind: "artists", what: "artists (albums and tracks of each)") { _ in .artists() },
        LibraryListing(kind: "genres", what: "genres (albums and tracks of each)") { _ in .genres() },
        LibraryListing(kind: "composers", what: "composers (albums and tracks of each)") { _ in .composers() },
        LibraryListing(kind: "podcasts", what: "podcast episodes", listsItems: true) { _ in .podcasts() },
        LibraryListing(kind: "audiobooks", what: "audiobooks", listsItems: true) { _ in .audiobooks() },
    ]

    static func named(_ kind: String) -> LibraryListing { all.first { $0.kind == kind }! }

    var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: kind,
            abstract: "List the library's \(what).",
            discussion: """
                Filters combine (all must match); case and accents are ignored in --artist.

                Examples:
                  tonearm library \(kind)
                  tonearm library \(kind) --artist 'sigur ros'
                  tonearm library \(kind) --search night --json
                  tonearm library \(kind) --sections
                """,
            aliases: aliases)
    }

    /// The subcommands, in the order of ``all``.
    static let commands: [any ParsableCommand.Type] = [
        LibraryKindListCommand<LibrarySongs>.self, LibraryKindListCommand<LibraryAlbums>.self,
        LibraryKindListCommand<LibraryArtists>.self, LibraryKindListCommand<LibraryGenres>.self,
        LibraryKindListCommand<LibraryComposers>.self, LibraryKindListCommand<LibraryPodcasts>.self,
        LibraryKindListCommand<LibraryAudiobooks>.self,
    ]
}

/// A subcommand's kind: its row of ``LibraryListing/all`` (ArgumentParser needs a type per command).
protocol LibraryListKind: SendableMetatype {
    static var kind: String { get }
}

extension LibraryListKind {
    static var listing: LibraryListing { LibraryListing.named(kind) }
}

/// The list that `library songs` (and `library list`) prints.
typealias LibraryListCommand = LibraryKindListCommand<LibrarySongs>

enum LibrarySongs: LibraryListKind { static let kind = "songs" }
enum LibraryAlbums: LibraryListKind { static let kind = "albums" }
enum LibraryArtists: LibraryListKind { static let kind = "artists" }
enum LibraryGenres: LibraryListKind { static let kind = "genres" }
enum LibraryComposers: LibraryListKind { static let kind = "composers" }
enum LibraryPodcasts: LibraryListKind { static let kind = "podcasts" }
enum LibraryAudiobooks: LibraryListKind { static let kind = "audiobooks" }
