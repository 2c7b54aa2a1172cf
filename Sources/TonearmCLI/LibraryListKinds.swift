// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser

/// What `tonearm library songs|albums|…` lists: one subcommand per kind (not aliases of one),
/// so that each has its own name in its usage line, help and completions.
protocol LibraryListKind: SendableMetatype {
    /// The kind, as the command is named: `songs`, `albums`, ….
    static var kind: String { get }
    /// What it lists, for the abstract: "songs", "albums with their tracks' count", ….
    static var what: String { get }
    /// Other names the command answers to.
    static var aliases: [String] { get }
}

extension LibraryListKind {
    static var aliases: [String] { [] }

    static var configuration: CommandConfiguration {
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
}

/// The list that `library songs` (and `library list`) prints.
typealias LibraryListCommand = LibraryKindListCommand<LibrarySongs>

enum LibrarySongs: LibraryListKind {
    static let kind = "songs"
    static let what = "songs (title, artist, album, time)"
    static var aliases: [String] { ["list"] }
}
enum LibraryAlbums: LibraryListKind {
    static let kind = "albums"
    static let what = "albums (with their tracks in disc and track order in --json)"
}
enum LibraryArtists: LibraryListKind {
    static let kind = "artists"
    static let what = "artists (albums and tracks of each)"
}
enum LibraryGenres: LibraryListKind {
    static let kind = "genres"
    static let what = "genres (albums and tracks of each)"
}
enum LibraryComposers: LibraryListKind {
    static let kind = "composers"
    static let what = "composers (albums and tracks of each)"
}
enum LibraryPodcasts: LibraryListKind {
    static let kind = "podcasts"
    static let what = "podcast episodes"
}
enum LibraryAudiobooks: LibraryListKind {
    static let kind = "audiobooks"
    static let what = "audiobooks"
}
