// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// The generated library (LibraryFixtures) scanned by `tonearm library scan` into a database
/// of its own, in a temporary folder the test removes.
private struct ScannedLibrary {
    let dir: TempDir
    let db: String
    let bin: String

    init(_ name: String) throws {
        dir = try TempDir(name)
        db = dir.file("library.sqlite")
        bin = try tonearmBinary()
        try LibraryFixtures.make(at: dir.file("Music"))
        let scan = try library(["scan", dir.file("Music"), "--quiet"])
        #expect(scan.status == 0, "\(scan.stderr)")
    }

    /// `tonearm library ARGS… --db DB`.
    func library(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let r = try run(bin, ["library"] + args + ["--db", db])
        return (r.status, r.stdout, r.stderr)
    }
}

/// `tonearm library playlist …`, `playlists` and `rate` as a user runs them.
@Suite struct LibraryPlaylistCLITests {
    @Test func createAddShowExportImportDelete() throws {
        let lib = try ScannedLibrary("library-playlist-cli")
        defer { lib.dir.remove() }
        let dir = lib.dir
        func tonearm(_ args: String...) throws -> (status: Int32, stdout: String, stderr: String) { try lib.library(args) }

        var r = try tonearm("playlist", "create", "Mix")
        #expect(r.status == 0 && r.stdout == "Created playlist 'Mix'\n", "\(r.stderr)")
        r = try tonearm("playlist", "create", "Mix")
        #expect(r.status == 1 && r.stderr.contains("already has a playlist named 'Mix'"))

        r = try tonearm("playlist", "add", "Mix", "--album", "ágætis BYRJUN")
        #expect(r.status == 0 && r.stdout == "Added 8 tracks to 'Mix' (8 tracks in all)\n", "\(r.stdout) \(r.stderr)")
        r = try tonearm("playlist", "add", "Mix", "--search", "lemonade song 10")
        #expect(r.stdout == "Added 1 track to 'Mix' (9 tracks in all)\n", "\(r.stdout)")

        r = try tonearm("playlist", "show", "Mix")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 10, "\(r.stdout)")
        #expect(lines.first?.hasPrefix("Mix  [9 tracks, ") == true)
        #expect(lines[1].hasPrefix("1. Sæglópur 1-1  (Sigur Rós — Ágætis byrjun)"))
        #expect(lines[9].hasPrefix("9. Lemonade Song 10  (Beyoncé — Lemonade)"))

        struct Playlist: Decodable { var name: String; var count: Int; var tracks: [Track]? }
        struct Track: Decodable { var title: String }
        r = try tonearm("playlist", "show", "Mix", "--json")
        let shown = try JSONDecoder().decode(Playlist.self, from: Data(r.stdout.utf8))
        #expect(shown.count == 9 && shown.tracks?.last?.title == "Lemonade Song 10")

        let file = dir.file("mix.xspf")
        r = try tonearm("playlist", "export", "Mix", file)
        #expect(r.status == 0, "\(r.stderr)")
        r = try tonearm("playlist", "import", file, "--name", "Copy")
        #expect(r.stdout == "Imported 9 tracks into 'Copy'\n", "\(r.stdout) \(r.stderr)")
        r = try tonearm("playlist", "show", "Copy", "--json")
        #expect(try JSONDecoder().decode(Playlist.self, from: Data(r.stdout.utf8)).tracks?.map(\.title) == shown.tracks?.map(\.title))

        struct Listed: Decodable { var name: String; var count: Int; var smart: Bool }
        r = try tonearm("playlists", "--json")
        let listed = try JSONDecoder().decode([Listed].self, from: Data(r.stdout.utf8))
        #expect(listed.filter { !$0.smart }.map(\.name) == ["Copy", "Mix"], "the library's own first, by name")
        #expect(listed.filter(\.smart).map(\.name) == ["Recently Added", "Top 25 Most Played", "Top Rated", "Never Played"])
        r = try tonearm("playlist", "delete", "Copy")
        #expect(r.status == 0)
        r = try tonearm("playlists")
        let shownLines = r.stdout.split(separator: "\n")
        #expect(shownLines.first == "Mix  [9 tracks]" && shownLines.count == 5, "\(r.stdout)")
        #expect(shownLines.contains("Top 25 Most Played  [smart, 0 tracks]"), "nothing played yet: \(r.stdout)")
        r = try tonearm("playlist", "show", "Copy")
        #expect(r.status == 1 && r.stderr == "tonearm: library playlist show: no playlist named 'Copy' in the media library\n", "\(r.stderr)")
    }

    @Test func rateSongsThenPlayTheTopRated() throws {
        let lib = try ScannedLibrary("library-rate-cli")
        defer { lib.dir.remove() }
        let (dir, db, bin) = (lib.dir, lib.db, lib.bin)
        func tonearm(_ args: String...) throws -> (status: Int32, stdout: String, stderr: String) { try lib.library(args) }
        var r = try tonearm("rate", "4", "--album", "album one")
        #expect(r.status == 0 && r.stdout.split(separator: "\n").count == 8, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.hasPrefix("★★★★☆  Album One Track "), "\(r.stdout)")
        struct Song: Decodable { var persistentID: String; var title: String; var rating: Int }
        r = try tonearm("songs", "--album", "album one", "--json")
        let songs = try JSONDecoder().decode([Song].self, from: Data(r.stdout.utf8))
        #expect(songs.count == 8 && songs.allSatisfy { $0.rating == 4 }, "\(songs)")
        let best = try #require(songs.first { $0.title == "Album One Track 3" })
        r = try tonearm("rate", "5", "--id", best.persistentID)
        #expect(r.status == 0 && r.stdout.hasPrefix("★★★★★  Album One Track 3"), "\(r.stdout) \(r.stderr)")
        let cleared = try #require(songs.first { $0.title == "Album One Track 8" })
        r = try tonearm("rate", "0", "--id", cleared.persistentID)
        #expect(r.status == 0 && r.stdout.hasPrefix("no rating  Album One Track 8"), "\(r.stdout)")

        struct Smart: Decodable { var tracks: [Track] }
        struct Track: Decodable { var title: String }
        r = try tonearm("playlist", "show", "Top Rated", "--json")
        let top = try JSONDecoder().decode(Smart.self, from: Data(r.stdout.utf8)).tracks.map(\.title)
        #expect(top.first == "Album One Track 3" && top.count == 7 && !top.contains("Album One Track 8"), "\(top)")
        let env = ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state")]
        let played = try run(bin, ["play", "--output", "null:untimed", "--plain", "--playlist", "top rated", "--db", db], environment: env)
        #expect(played.status == 0 && played.stdout.split(separator: "\n").filter { $0.hasPrefix("Playing ") }.count == 7,
                "\(played.stdout) \(played.stderr)")

        // Errors say what is wrong; nothing is changed.
        r = try tonearm("rate", "6", "--search", "album")
        #expect(r.status != 0 && r.stderr.contains("a rating is 0 (none) to 5 stars, not 6"), "\(r.stderr)")
        r = try tonearm("rate", "3")
        #expect(r.status != 0 && r.stderr.contains("say what to rate"), "\(r.stderr)")
        r = try tonearm("rate", "3", "--id", "12x")
        #expect(r.status != 0 && r.stderr.contains("'12x' is not a persistentID"), "\(r.stderr)")
        r = try tonearm("rate", "3", "--search", "no such words at all")
        #expect(r.status == 1 && r.stderr == "tonearm: library rate: nothing in the library matches search 'no such words at all'\n", "\(r.stderr)")
        r = try tonearm("rate", "1", "--id", best.persistentID, "--id", "1")
        #expect(r.status == 1 && r.stderr.contains("no item with persistentID 1"), "\(r.stderr)")
        r = try tonearm("songs", "--album", "album one", "--json")
        let after = try JSONDecoder().decode([Song].self, from: Data(r.stdout.utf8))
        #expect(after.first { $0.title == "Album One Track 3" }?.rating == 5, "an unknown id rates none of them")
    }

    /// Playlist names ignore case; `playlist add` and `rate` take files of the library by path
    /// (relative ones from the current folder) and persistentIDs.
    @Test func namesIgnoreCaseAndFilesAndIDsAreAdded() throws {
        let lib = try ScannedLibrary("library-playlist-files")
        defer { lib.dir.remove() }
        let music = lib.dir.file("Music")
        func tonearm(_ args: String...) throws -> (status: Int32, stdout: String, stderr: String) { try lib.library(args) }

        var r = try tonearm("playlist", "create", "mix")
        #expect(r.status == 0, "\(r.stderr)")
        r = try tonearm("playlist", "create", "Mix")
        #expect(r.status == 1 && r.stderr.contains("already has a playlist named 'mix'"), "\(r.stderr)")

        // Files by path, in the order given; then a persistentID.
        r = try tonearm("playlist", "add", "MIX", music + "/Beyoncé/Lemonade/03 Song 3.mp3", music + "/Sigur Rós/Ágætis byrjun/2-1.mp3")
        #expect(r.status == 0 && r.stdout == "Added 2 tracks to 'mix' (2 tracks in all)\n", "\(r.stdout) \(r.stderr)")
        let relative = try run(lib.bin, ["library", "playlist", "add", "Mix", "Lemonade/01 Song 1.mp3", "--db", lib.db],
                               currentDirectory: music + "/Beyoncé")
        #expect(relative.status == 0 && relative.stdout.hasPrefix("Added 1 track to 'mix'"), "\(relative.stderr)")
        struct Song: Decodable { var persistentID: String; var title: String }
        r = try tonearm("songs", "--search", "hit 4", "--json")
        let hit = try #require(try JSONDecoder().decode([Song].self, from: Data(r.stdout.utf8)).first)
        r = try tonearm("playlist", "add", "mix", "--id", hit.persistentID)
        #expect(r.status == 0 && r.stdout == "Added 1 track to 'mix' (4 tracks in all)\n", "\(r.stdout) \(r.stderr)")
        r = try tonearm("playlist", "show", "Mix")
        let titles = r.stdout.split(separator: "\n").dropFirst().map { $0.components(separatedBy: "  ").first ?? "" }
        #expect(titles == ["1. Lemonade Song 3", "2. Sæglópur 2-1", "3. Lemonade Song 1", "4. Hit 4"], "\(r.stdout)")

        // Files that are not in the library, or do not exist: errors, nothing added.
        r = try tonearm("playlist", "add", "mix", music + "/Beyoncé/Lemonade/02 Song 2.mp3", music + "/notes.txt")
        #expect(r.status == 1 && r.stderr.contains("\(music)/notes.txt is not in the library \(lib.db)"), "\(r.stderr)")
        r = try tonearm("playlist", "add", "mix", music + "/nope.mp3")
        #expect(r.status == 1 && r.stderr.contains("\(music)/nope.mp3: file not found"), "\(r.stderr)")
        r = try tonearm("playlist", "add", "mix", music + "/nope.mp3", "--search", "hit")
        #expect(r.status != 0 && r.stderr.contains("give files or --id, or a search and filters, not both"), "\(r.stderr)")
        r = try tonearm("playlist", "add", "mix", "--search", "no such words")
        #expect(r.status == 1 && r.stderr.contains("nothing in the library matches search 'no such words'"), "\(r.stderr)")
        r = try tonearm("playlist", "show", "mix", "--json")
        struct Playlist: Decodable { var count: Int }
        #expect(try JSONDecoder().decode(Playlist.self, from: Data(r.stdout.utf8)).count == 4)

        // rate takes files the same way.
        r = try tonearm("rate", "5", music + "/Beyoncé/Lemonade/02 Song 2.mp3")
        #expect(r.status == 0 && r.stdout.hasPrefix("★★★★★  Lemonade Song 2"), "\(r.stdout) \(r.stderr)")
        r = try tonearm("playlist", "rename", "MIX", "Mix")
        #expect(r.status == 0 && r.stdout == "Renamed 'MIX' to 'Mix'\n", "\(r.stdout) \(r.stderr)")
    }

    @Test func renameRemoveMoveThenPlayThePlaylist() throws {
        let lib = try ScannedLibrary("library-playlist-edit")
        defer { lib.dir.remove() }
        let (dir, db, bin) = (lib.dir, lib.db, lib.bin)
        func tonearm(_ args: String...) throws -> (status: Int32, stdout: String, stderr: String) { try lib.library(args) }
        _ = try tonearm("playlist", "create", "Mix")
        var r = try tonearm("playlist", "add", "Mix", "--album", "album one")
        #expect(r.stdout == "Added 8 tracks to 'Mix' (8 tracks in all)\n", "\(r.stdout) \(r.stderr)")

        r = try tonearm("playlist", "move", "Mix", "8", "1")
        #expect(r.status == 0 && r.stdout == "Moved Album One Track 8 to position 1 in 'Mix'\n", "\(r.stdout) \(r.stderr)")
        r = try tonearm("playlist", "remove", "Mix", "2")
        #expect(r.status == 0 && r.stdout == "Removed 2. Album One Track 1 from 'Mix' (7 tracks left)\n", "\(r.stdout) \(r.stderr)")
        r = try tonearm("playlist", "remove", "Mix", "9")
        #expect(r.status == 1 && r.stderr.contains("position 9 is not in playlist 'Mix', which has 7 tracks"), "\(r.stderr)")
        r = try tonearm("playlist", "move", "Mix", "0", "1")
        #expect(r.status == 1 && r.stderr.contains("position 0 is not in playlist 'Mix'"), "\(r.stderr)")
        r = try tonearm("playlist", "rename", "Mix", "Evening")
        #expect(r.status == 0 && r.stdout == "Renamed 'Mix' to 'Evening'\n")
        r = try tonearm("playlist", "rename", "Nope", "Other")
        #expect(r.status == 1 && r.stderr.contains("no playlist named 'Nope'"))

        struct Playlist: Decodable { var tracks: [Track] }
        struct Track: Decodable { var title: String }
        r = try tonearm("playlist", "show", "Evening", "--json")
        let order = try JSONDecoder().decode(Playlist.self, from: Data(r.stdout.utf8)).tracks.map(\.title)
        let expected = ["Album One Track 8"] + (2...7).map { "Album One Track \($0)" }
        #expect(order == expected)

        // tonearm play --playlist plays it in that order.
        let env = ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state")]
        let played = try run(bin, ["play", "--output", "null:untimed", "--plain", "--playlist", "Evening", "--db", db], environment: env)
        #expect(played.status == 0, "\(played.stderr)")
        let titles = played.stdout.split(separator: "\n").filter { $0.hasPrefix("Playing ") }.map { line in
            String(line.split(separator: ": ", maxSplits: 1).last?.split(separator: " — ").first ?? "")
        }
        #expect(titles == expected, "\(played.stdout)")
        // Each played to its end counts as a play in the library (the one removed was not played).
        struct Counted: Decodable { var title: String; var playCount: Int }
        r = try tonearm("songs", "--album", "album one", "--json")
        let counts = try JSONDecoder().decode([Counted].self, from: Data(r.stdout.utf8))
        #expect(counts.filter { $0.playCount == 1 }.count == 7 && counts.first { $0.title == "Album One Track 1" }?.playCount == 0,
                "\(counts)")
        let missing = try run(bin, ["play", "--output", "null:untimed", "--plain", "--playlist", "Nope", "--db", db], environment: env)
        #expect(missing.status != 0 && missing.stderr.contains("no playlist named 'Nope'"))

        // The smart playlists follow the plays: the seven played are the most played, no longer
        // never played; a smart playlist is shown, exported and played by its name (any case).
        r = try tonearm("playlist", "show", "top 25 most played", "--json")
        struct Smart: Decodable { var name: String; var smart: Bool; var tracks: [Track] }
        let most = try JSONDecoder().decode(Smart.self, from: Data(r.stdout.utf8))
        #expect(most.name == "Top 25 Most Played" && most.smart && Set(most.tracks.map(\.title)) == Set(expected), "\(r.stdout) \(r.stderr)")
        r = try tonearm("playlist", "show", "Never Played")
        #expect(r.status == 0 && r.stdout.hasPrefix("Never Played  [smart, ") && !expected.contains { r.stdout.contains("\($0) ") }
                && r.stdout.contains("Album One Track 1 "), "\(r.stdout)")
        r = try tonearm("playlists")
        #expect(r.stdout.contains("Top 25 Most Played  [smart, 7 tracks]\n"), "\(r.stdout)")
        let m3u = dir.file("most.m3u8")
        r = try tonearm("playlist", "export", "Top 25 most played", m3u)
        #expect(r.status == 0, "\(r.stderr)")
        let exported = try String(contentsOfFile: m3u, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(exported.count == 7, "\(exported)")
        let again = try run(bin, ["play", "--output", "null:untimed", "--plain", "--playlist", "Top 25 Most Played", "--db", db], environment: env)
        #expect(again.status == 0 && again.stdout.split(separator: "\n").filter { $0.hasPrefix("Playing ") }.count == 7,
                "\(again.stdout) \(again.stderr)")
    }
}
