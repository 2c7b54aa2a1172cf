// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm library …` as a user runs it, on a generated library.
@Suite struct LibraryCLITests {
    @Test func scansAFolderAndListsAlbumsAsJSON() throws {
        let dir = try TempDir("library-cli")
        defer { dir.remove() }
        let music = dir.file("Music"), db = dir.file("db/library.sqlite")
        try LibraryFixtures.make(at: music)
        let env = ["XDG_DATA_HOME": dir.file("data")]
        let bin = try tonearmBinary()

        let scan = try run(bin, ["library", "scan", music, "--db", db], environment: env)
        #expect(scan.status == 0, "stderr: \(scan.stderr.suffix(2000))")
        #expect(scan.stdout.contains("\(LibraryFixtures.mediaCount) added, 0 updated, 0 moved, 0 removed, 0 unchanged, 3 skipped"),
                "\(scan.stdout.prefix(2000))")
        #expect(scan.stdout.contains("skipped \(music)/notes.txt: a text file, not media"))
        // Not a terminal: plain progress lines on stderr, ending at the total.
        let total = LibraryFixtures.mediaCount + LibraryFixtures.junk.count
        #expect(scan.stderr.contains("Scanning: \(total)/\(total)"))
        #expect(!scan.stderr.contains("\u{1B}["))

        let albums = try run(bin, ["library", "albums", "--json", "--db", db], environment: env)
        #expect(albums.status == 0, "stderr: \(albums.stderr)")
        struct Album: Decodable {
            var name: String?
            var albumArtist: String?
            var trackCount: Int
            var tracks: [Track]
        }
        struct Track: Decodable { var title: String; var trackNumber: Int?; var discNumber: Int? }
        let list = try JSONDecoder().decode([Album].self, from: Data(albums.stdout.utf8))
        #expect(list.count == 7)
        let agaetis = try #require(list.first { $0.name == "Ágætis byrjun" })
        #expect(agaetis.albumArtist == "Sigur Rós" && agaetis.trackCount == 8)
        #expect(agaetis.tracks.map(\.discNumber) == [1, 1, 1, 1, 2, 2, 2, 2])
        #expect(list.first { $0.name == "Hits 2020" }?.albumArtist == "Various Artists")

        let songs = try run(bin, ["library", "songs", "--artist", "beyonce", "--json", "--db", db], environment: env)
        #expect(songs.status == 0)
        #expect(try JSONDecoder().decode([Track].self, from: Data(songs.stdout.utf8)).count == 11)
        let found = try run(bin, ["library", "songs", "--search", "sigur", "--db", db], environment: env)
        #expect(found.stdout.split(separator: "\n").count == 8, "\(found.stdout)")
        let artists = try run(bin, ["library", "artists", "--genre", "rock", "--db", db], environment: env)
        #expect(artists.stdout == "The Band  [2 albums, 16 tracks]\n")

        let rescan = try run(bin, ["library", "scan", music, "--db", db, "--quiet"], environment: env)
        #expect(rescan.stdout.contains("0 added, 0 updated, 0 moved, 0 removed, \(LibraryFixtures.mediaCount) unchanged"))
        #expect(rescan.stderr.isEmpty)

        let stats = try run(bin, ["library", "stats", "--db", db], environment: env)
        #expect(stats.stdout.contains("podcasts: 2, audiobooks: 2 (\(LibraryFixtures.mediaCount) items)"), "\(stats.stdout)")
        #expect(stats.stdout.contains("Albums: 7"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("data")), "--db given: the default library is not created")
    }

    @Test func errorsNameWhatIsWrong() throws {
        let dir = try TempDir("library-cli-errors")
        defer { dir.remove() }
        let bin = try tonearmBinary()
        let missing = try run(bin, ["library", "scan", dir.file("nope"), "--db", dir.file("l.sqlite")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("\(dir.file("nope")): file not found"), "\(missing.stderr)")
        let unwritable = try run(bin, ["library", "stats", "--db", "/proc/tonearm-cli/l.sqlite"])
        #expect(unwritable.status == 1)
        #expect(unwritable.stderr.contains("cannot create the folder /proc/tonearm-cli"), "\(unwritable.stderr)")
    }
}
