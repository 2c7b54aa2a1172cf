// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
import TonearmTestSupport

/// A library of the given tracks only (LibraryFixtures.write), scanned by `tonearm library scan`
/// into a database of its own, in a temporary folder the test removes.
struct SmallLibrary {
    let dir: TempDir
    let music: String
    let db: String
    let bin: String

    init(_ name: String, _ tracks: [LibraryFixtures.Track]) throws {
        dir = try TempDir(name)
        music = dir.file("Music")
        db = dir.file("library.sqlite")
        bin = try tonearmBinary()
        let base = try LibraryFixtures.baseMP3(in: music)
        for t in tracks { try LibraryFixtures.write(t, base: base, png: [], root: music) }
        let scan = try library(["scan", music, "--quiet"])
        #expect(scan.status == 0, "\(scan.stderr)")
    }

    /// `tonearm library ARGS… --db DB`.
    func library(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let r = try run(bin, ["library"] + args + ["--db", db])
        return (r.status, r.stdout, r.stderr)
    }

    /// The first field of each line of `library ARGS…`'s output (a song's title, an album's name…).
    func names(_ args: String...) throws -> [String] {
        let r = try library(args)
        #expect(r.status == 0, "\(args): \(r.stderr)")
        return r.stdout.split(separator: "\n").map { line in
            String(line.components(separatedBy: "  ").first?.components(separatedBy: " — ").first ?? "")
        }
    }

    /// A track of `album` by `artist` (genre Test, 2020).
    static func track(_ title: String, artist: String = "Someone", album: String = "Record", albumArtist: String? = nil,
                      disc: Int = 1, track: Int = 1) -> LibraryFixtures.Track {
        LibraryFixtures.Track(path: "\(artist)/\(album)/\(disc)-\(track) \(title).mp3", title: title, artist: artist, album: album,
                              albumArtist: albumArtist, genre: "Test", track: track, trackCount: 9, disc: disc, discCount: 2,
                              year: 2020)
    }
}

/// `tonearm library …` as a user runs it, on a generated library.
@Suite struct LibraryCLITests {
    /// `songs --album X` lists the album as `play --album` plays it: by disc, then track, not by
    /// title.
    @Test func songsOfAnAlbumAreListedInDiscAndTrackOrder() throws {
        let lib = try SmallLibrary("library-album-order", [
            SmallLibrary.track("Zeta", disc: 1, track: 1), SmallLibrary.track("Alpha", disc: 1, track: 2),
            SmallLibrary.track("Mu", disc: 2, track: 1), SmallLibrary.track("Beta", disc: 2, track: 2),
            SmallLibrary.track("Gamma", album: "Other", track: 1),
        ])
        defer { lib.dir.remove() }
        #expect(try lib.names("songs", "--album", "RECORD") == ["Zeta", "Alpha", "Mu", "Beta"])
        #expect(try lib.names("songs") == ["Alpha", "Beta", "Gamma", "Mu", "Zeta"], "without --album: by title")
    }

    /// Songs, albums and artists list numbers by value: "Track 2" before "Track 10", "第2号"
    /// before "第10号", in plain and sectioned listings.
    @Test func listingsSortNumbersByValue() throws {
        let lib = try SmallLibrary("library-natural-order", [
            SmallLibrary.track("Track 10", artist: "Band 10", album: "Vol. 10", track: 1),
            SmallLibrary.track("Track 2", artist: "Band 10", album: "Vol. 10", track: 2),
            SmallLibrary.track("第10号", artist: "Band 2", album: "Vol. 2", track: 1),
            SmallLibrary.track("第2号", artist: "Band 2", album: "Vol. 2", track: 2),
        ])
        defer { lib.dir.remove() }
        #expect(try lib.names("songs") == ["第2号", "第10号", "Track 2", "Track 10"])
        #expect(try lib.names("songs", "--sections") == ["[D]", "第2号", "第10号", "[T]", "Track 2", "Track 10"])
        #expect(try lib.names("albums") == ["Vol. 2", "Vol. 10"])
        #expect(try lib.names("artists", "--sections") == ["[B]", "Band 2", "Band 10"])
    }

    @Test func playsAnAlbumFromTheLibraryInDiscAndTrackOrder() throws {
        let dir = try TempDir("library-play")
        defer { dir.remove() }
        let music = dir.file("Music"), db = dir.file("library.sqlite")
        try LibraryFixtures.make(at: music)
        let env = ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state")]
        let bin = try tonearmBinary()
        #expect(try run(bin, ["library", "scan", music, "--db", db, "--quiet"], environment: env).status == 0)
        struct Album: Decodable { var name: String?; var tracks: [Track] }
        struct Track: Decodable { var title: String }
        let albums = try run(bin, ["library", "albums", "--json", "--db", db], environment: env)
        let order = try #require(try JSONDecoder().decode([Album].self, from: Data(albums.stdout.utf8))
            .first { $0.name == "Ágætis byrjun" }).tracks.map(\.title)
        // Case and accents ignored, "æ" spelt "ae" too.
        let r = try run(bin, ["play", "--output", "null:untimed", "--plain", "--album", "AGAETIS", "--db", db], environment: env)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let played = r.stdout.split(separator: "\n").filter { $0.hasPrefix("Playing ") }.map { line in
            String(line.split(separator: ": ", maxSplits: 1).last ?? "").components(separatedBy: " [").first ?? ""
        }
        #expect(played.count == 8 && order.count == 8, "\(r.stdout)")
        #expect(zip(played, order).allSatisfy { $0.hasPrefix($1) }, "played \(played), album order \(order)")
        let none = try run(bin, ["play", "--output", "null", "--artist", "nobody at all", "--db", db], environment: env)
        #expect(none.status == 1 && none.stderr == "tonearm: play: nothing in the library matches artist 'nobody at all'\n", "\(none.stderr)")
    }

    @Test func playingAFolderOfLibraryFilesCountsThePlays() throws {
        let dir = try TempDir("library-play-folder")
        defer { dir.remove() }
        let music = dir.file("Music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        for (i, title) in ["Morning", "Evening"].enumerated() {
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(440 + 110 * i):duration=1", "-metadata", "title=\(title)",
                                 "-c:a", "flac", "\(music)/\(i + 1) \(title).flac"])
        }
        // The default library (no --db anywhere).
        let env = ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state")]
        let bin = try tonearmBinary()
        #expect(try run(bin, ["library", "scan", music, "--quiet"], environment: env).status == 0)
        // The folder named as a user would, relative to the current one.
        let r = try run(bin, ["play", "--output", "null:untimed", "--plain", "Music"], environment: env, currentDirectory: dir.path)
        #expect(r.status == 0 && r.stdout.contains("Done: 2 played, 0 failed"), "\(r.stdout) \(r.stderr)")
        struct Counted: Decodable { var title: String; var playCount: Int }
        let songs = try run(bin, ["library", "songs", "--json"], environment: env)
        let counts = try JSONDecoder().decode([Counted].self, from: Data(songs.stdout.utf8))
        #expect(counts.count == 2 && counts.allSatisfy { $0.playCount == 1 }, "\(counts) \(songs.stderr)")
    }

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
        #expect(scan.stdout.contains("\nskipped 3 files: 3 not audio (--verbose lists them)\n"), "\(scan.stdout)")
        #expect(!scan.stdout.contains("notes.txt"), "each file only with --verbose")
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
        // Index letters: The Band under B (the article skipped), 周杰伦 under Z (pinyin), after Sigur Rós.
        let indexed = try run(bin, ["library", "artists", "--sections", "--db", db], environment: env)
        let heads = indexed.stdout.split(separator: "\n").filter { $0.hasPrefix("[") }
        #expect(heads == ["[A]", "[B]", "[S]", "[Z]"], "\(indexed.stdout)")
        #expect(indexed.stdout.contains("[B]\nThe Band  [3 albums, 17 tracks]\nBeyoncé  [2 albums, 11 tracks]\n"), "\(indexed.stdout)")
        struct Section: Decodable { var title: String; var items: [Track] }
        let sectioned = try run(bin, ["library", "songs", "--sections", "--json", "--db", db], environment: env)
        let parts = try JSONDecoder().decode([Section].self, from: Data(sectioned.stdout.utf8))
        #expect(parts.reduce(0) { $0 + $1.items.count } == LibraryFixtures.mediaCount - 4)
        #expect(parts.first { $0.title == "Q" }?.items.map(\.title) == ["青花瓷", "晴天 1", "晴天 2", "晴天 3", "晴天 4", "晴天 5", "晴天 6"])

        let rescan = try run(bin, ["library", "scan", music, "--db", db, "--quiet"], environment: env)
        #expect(rescan.stdout.contains("0 added, 0 updated, 0 moved, 0 removed, \(LibraryFixtures.mediaCount) unchanged"))
        #expect(rescan.stderr.isEmpty)

        let stats = try run(bin, ["library", "stats", "--db", db], environment: env)
        #expect(stats.stdout.contains("podcasts: 2, audiobooks: 2 (\(LibraryFixtures.mediaCount) items)"), "\(stats.stdout)")
        #expect(stats.stdout.contains("Albums: 7"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("data")), "--db given: the default library is not created")
    }

    /// `library scan` leaves a first scan's indexes to the first query that needs them: the
    /// statistics right after it count the bare table right, and the listings and searches after
    /// that (which make them) find what they found when the scan made them (CJK included).
    @Test func statisticsAndSearchesRightAfterAFirstScan() throws {
        let dir = try TempDir("library-cli-first")
        defer { dir.remove() }
        let music = dir.file("Music"), db = dir.file("library.sqlite")
        try LibraryFixtures.make(at: music)
        let bin = try tonearmBinary()
        #expect(try run(bin, ["library", "scan", music, "--db", db, "--quiet"]).status == 0)
        let stats = try run(bin, ["library", "stats", "--db", db])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("podcasts: 2, audiobooks: 2 (\(LibraryFixtures.mediaCount) items)"), "\(stats.stdout)")
        #expect(stats.stdout.contains("Albums: 7"), "\(stats.stdout)")
        let cjk = try run(bin, ["library", "songs", "--search", "青花", "--db", db])
        #expect(cjk.status == 0 && cjk.stdout.split(separator: "\n").count == 1, "\(cjk.stdout) \(cjk.stderr)")
        let found = try run(bin, ["library", "songs", "--search", "sigur", "--db", db])
        #expect(found.stdout.split(separator: "\n").count == 8, "\(found.stdout)")
        #expect(try run(bin, ["library", "stats", "--db", db]).stdout == stats.stdout)
        let artists = try run(bin, ["library", "artists", "--genre", "rock", "--db", db])
        #expect(artists.stdout == "The Band  [2 albums, 16 tracks]\n")
    }

    /// The scan's summary counts skipped files by reason; `--verbose` lists each with its reason.
    @Test func scanSummarisesSkippedFilesByReason() throws {
        let lib = try SmallLibrary("library-skipped", [SmallLibrary.track("Song")])
        defer { lib.dir.remove() }
        try Data("Notes.\n".utf8).write(to: URL(fileURLWithPath: lib.music + "/notes.txt"))
        try Data().write(to: URL(fileURLWithPath: lib.music + "/empty.mp3"))
        try Data([0, 1, 2, 3, 0xFF, 0xFE, 0, 9, 8, 7]).write(to: URL(fileURLWithPath: lib.music + "/noise.mp3"))
        let plain = try lib.library(["scan", lib.music, "--quiet"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains(" 3 skipped\nskipped 3 files: 2 not audio, 1 empty (--verbose lists them)\n"), "\(plain.stdout)")
        let verbose = try lib.library(["scan", lib.music, "--quiet", "--verbose"])
        let lines = verbose.stdout.split(separator: "\n").map(String.init)
        #expect(lines.dropFirst() == ["skipped 3 files: 2 not audio, 1 empty",
                                      "  skipped \(lib.music)/empty.mp3: the file is empty (0 bytes)",
                                      "  skipped \(lib.music)/noise.mp3: not a media file (FFmpeg found no known container format)",
                                      "  skipped \(lib.music)/notes.txt: a text file, not media"], "\(verbose.stdout)")
    }

    /// `--artist` finds album artists too ("Various Artists"), case ignored; Chinese is found by
    /// any part of it and by pinyin; a listing or search that finds nothing says so on stderr
    /// and exits with status 1, and so does `play` (which asks to scan only an empty library).
    @Test func artistsSearchesAndEmptyResults() throws {
        let dir = try TempDir("library-artist-search")
        defer { dir.remove() }
        let music = dir.file("Music"), db = dir.file("library.sqlite")
        try LibraryFixtures.make(at: music)
        let bin = try tonearmBinary()
        let env = ["XDG_DATA_HOME": dir.file("data"), "XDG_STATE_HOME": dir.file("state")]
        func tonearm(_ args: String...) throws -> RunResult { try run(bin, args + ["--db", db], environment: env) }
        #expect(try tonearm("library", "scan", music, "--quiet").status == 0)

        var r = try tonearm("library", "songs", "--artist", "VARIOUS ARTISTS")
        #expect(r.status == 0 && r.stdout.split(separator: "\n").map { $0.prefix(6) } == (1...6).map { "Hit \($0) " }, "\(r.stdout)")
        r = try tonearm("library", "albums", "--artist", "various artists")
        #expect(r.stdout.hasPrefix("Hits 2020 — Various Artists, 2020  [6 tracks, "), "\(r.stdout)")
        r = try tonearm("library", "songs", "--search", "天")
        #expect(r.stdout.split(separator: "\n").count == 6, "any part of Chinese text: \(r.stdout)")
        r = try tonearm("library", "artists", "--search", "zhou jie lun")
        #expect(r.stdout == "周杰伦  [2 albums, 7 tracks]\n", "pinyin: \(r.stdout) \(r.stderr)")

        r = try tonearm("library", "songs", "--artist", "nobody")
        #expect(r.status == 1 && r.stdout.isEmpty && r.stderr == "tonearm: library songs: no songs match artist 'nobody'\n", "\(r.stderr)")
        r = try tonearm("library", "albums", "--search", "chen", "--json")
        #expect(r.status == 1 && r.stdout == "[]\n" && r.stderr.contains("no albums match search 'chen'"), "\(r.stderr)")
        r = try tonearm("library", "audiobooks", "--genre", "rock")
        #expect(r.status == 1 && r.stderr.contains("no audiobooks match genre 'rock'"), "\(r.stderr)")

        for filter in [["--artist", "chen"], ["--search", "chen"]] {
            r = try tonearm("play", "--output", "null", filter[0], filter[1])
            #expect(r.status != 0 && r.stderr.contains("nothing in the library matches \(filter[0].dropFirst(2)) 'chen'"), "\(r.stderr)")
            #expect(!r.stderr.contains("scan"), "the library is scanned: \(r.stderr)")
        }
        let various = try tonearm("play", "--output", "null:untimed", "--plain", "--artist", "various")
        #expect(various.status == 0 && various.stdout.split(separator: "\n").filter { $0.hasPrefix("Playing ") }.count == 6,
                "play --artist finds album artists too: \(various.stdout) \(various.stderr)")
        let empty = try run(bin, ["play", "--output", "null", "--artist", "chen", "--db", dir.file("empty.sqlite")], environment: env)
        #expect(empty.status != 0 && empty.stderr.contains("the library is empty; scan folders into it: tonearm library scan DIR"),
                "\(empty.stderr)")
    }

    @Test func aScanKilledMidwayIsCompletedByTheNext() throws {
        let dir = try TempDir("library-cli-kill")
        defer { dir.remove() }
        let music = dir.file("Music"), db = dir.file("library.sqlite")
        try LibraryFixtures.make(at: music)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try tonearmBinary())
        p.arguments = ["library", "scan", music, "--db", db, "--batch-size", "2"]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        // Kill it as soon as it reports 20 files done (some batches committed, the rest not).
        var seen = ""
        while true {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            let done = seen.split(separator: "\n").compactMap { line -> Int? in
                guard line.hasPrefix("Scanning: ") else { return nil }
                return Int(line.dropFirst(10).prefix { $0.isNumber })
            }.max() ?? 0
            if done >= 20 { kill(p.processIdentifier, SIGKILL); break }
        }
        p.waitUntilExit()
        let rescan = try run(try tonearmBinary(), ["library", "scan", music, "--db", db, "--quiet"])
        #expect(rescan.status == 0, "\(rescan.stderr)")
        let summary = rescan.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let counts = summary.split(separator: ":").last.map(String.init) ?? ""
        let numbers = counts.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber }) }
        #expect(numbers.count == 6, "\(rescan.stdout)")
        if numbers.count == 6 {
            // added + unchanged covers every media file; nothing moved, removed or duplicated.
            #expect(numbers[0] + numbers[4] == LibraryFixtures.mediaCount, "\(rescan.stdout)")
            #expect(numbers[2] == 0 && numbers[3] == 0)
        }
        let stats = try run(try tonearmBinary(), ["library", "stats", "--db", db])
        #expect(stats.stdout.contains("(\(LibraryFixtures.mediaCount) items)"), "\(stats.stdout)")
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
