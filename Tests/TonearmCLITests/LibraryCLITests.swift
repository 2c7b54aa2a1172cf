// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
import TonearmTestSupport

/// `tonearm library …` as a user runs it, on a generated library.
@Suite struct LibraryCLITests {
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
        #expect(none.status != 0 && none.stderr.contains("the library has nothing for artist 'nobody at all'"), "\(none.stderr)")
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
