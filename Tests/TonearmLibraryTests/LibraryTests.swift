// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Testing
import TonearmCore
import TonearmLibrary
import TonearmTestSupport

/// A generated library (LibraryFixtures) scanned into a fresh database per test.
struct LibraryFixture {
    let dir: TempDir
    let root: String
    let library: MediaLibrary

    init() throws {
        dir = try TempDir("library")
        root = dir.file("Music")
        try LibraryFixtures.make(at: root)
        library = try MediaLibrary(path: dir.file("db/library.sqlite"))
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    func item(at relative: String) throws -> MediaItem? {
        try MediaQuery(mediaType: nil).items(in: library).first { $0.path == path(relative) }
    }
}

@Suite struct ScanAndQueryTests {
    @Test func scanAddsEveryMediaFileAndListsTheRestWithReasons() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        var events: [ScanProgress] = []
        let s = try await f.library.scanToEnd(folders: [f.root]) { events.append($0) }
        #expect(s.added == LibraryFixtures.mediaCount)
        #expect(s.updated == 0 && s.moved == 0 && s.removed == 0 && s.unchanged == 0)
        #expect(s.filesRead == LibraryFixtures.mediaCount)
        let total = LibraryFixtures.mediaCount + LibraryFixtures.junk.count
        #expect(events.last == ScanProgress(filesDone: total, filesTotal: total, currentFile: events.last?.currentFile))
        #expect(events.map(\.filesDone) == events.map(\.filesDone).sorted())
        #expect(s.skipped.map(\.path) == LibraryFixtures.junk.keys.map(f.path).sorted())
        for skipped in s.skipped {
            #expect(!skipped.reason.isEmpty)
            #expect(!skipped.reason.hasPrefix(skipped.path))
        }
        let text = try #require(s.skipped.first { $0.path.hasSuffix("notes.txt") })
        #expect(text.reason == "a text file, not media")

        let stats = try f.library.statistics()
        #expect(stats.items == LibraryFixtures.mediaCount)
        #expect(stats.podcasts == 2 && stats.audiobooks == 2)
        #expect(stats.songs == LibraryFixtures.mediaCount - 4)
        #expect(stats.albums == 7, "albums: \(stats.albums)")
        #expect(stats.artworks == 1, "one cover stored for the ten tracks that carry it")
    }

    @Test func queriesOfEveryKind() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])
        let lib = f.library

        let songs = try MediaQuery.songs().items(in: lib)
        #expect(songs.count == LibraryFixtures.mediaCount - 4)
        #expect(songs.allSatisfy { $0.mediaType == .music })
        let titleOrder = songs.map(\.title) == songs.map(\.title).sorted { SortKey.make($0) < SortKey.make($1) }
        #expect(titleOrder, "songs in SortKey order (Chinese by pinyin among the Latin titles)")
        let q = songs.map(\.title).firstIndex(of: "青花瓷") ?? -1, s = songs.map(\.title).firstIndex(of: "Sæglópur 1-1") ?? -1
        #expect(q >= 0 && q < s, "qīng huā cí before Sæglópur")

        let albums = try MediaQuery.albums().collections(in: lib)
        #expect(albums.compactMap(\.name).sorted() == ["Album One", "Album Two", "Hits 2020", "Lemonade", "叶惠美", "我很忙", "Ágætis byrjun"].sorted())
        let agaetis = try #require(albums.first { $0.name == "Ágætis byrjun" })
        #expect(agaetis.items.map(\.discNumber) == [1, 1, 1, 1, 2, 2, 2, 2])
        #expect(agaetis.items.map(\.trackNumber) == [1, 2, 3, 4, 1, 2, 3, 4])
        #expect(agaetis.albumArtist == "Sigur Rós")
        let lemonade = try #require(albums.first { $0.name == "Lemonade" })
        #expect(lemonade.items.map(\.trackNumber) == Array(1...10))
        #expect(lemonade.representativeItem.trackCount == 10)
        #expect(lemonade.representativeItem.composer == "Beyoncé Knowles")
        let cover = try #require(try lib.artwork(for: lemonade.representativeItem))
        #expect(cover.mimeType == "image/png" && cover.data.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(lemonade.items.allSatisfy { $0.artworkID == lemonade.representativeItem.artworkID })

        let artists = try MediaQuery.artists().collections(in: lib)
        let band = try #require(artists.first { $0.name == "The Band" })
        #expect(band.albumTitles == ["Album Two", "Album One", "Hits 2020"], "an artist's albums by year (1999, 2001, 2020)")
        #expect(band.count == 17, "16 album tracks and one on the compilation")
        #expect(artists.contains { $0.name == "周杰伦" && $0.count == 7 }, "six UTF-16 tags and the GBK one")

        let albumArtists = try MediaQuery.albumArtists().collections(in: lib)
        #expect(albumArtists.contains { $0.name == "Various Artists" && $0.count == 6 })
        #expect(albumArtists.contains { $0.name == "The Band" && $0.count == 16 })

        let compilations = try MediaQuery.compilations().collections(in: lib)
        #expect(compilations.count == 1)
        #expect(compilations.first?.name == "Hits 2020" && compilations.first?.albumArtist == "Various Artists")
        #expect(compilations.first?.items.map(\.trackNumber) == Array(1...6))

        let genres = try MediaQuery.genres().collections(in: lib)
        #expect(genres.first { $0.name == "Pop" }?.count == 17, "Lemonade, the compilation, the ID3v1 genre 13")
        #expect(genres.first { $0.name == "Rock" }?.count == 16)
        #expect(genres.first { $0.name == "Mandopop" }?.count == 6)

        let composers = try MediaQuery.composers().collections(in: lib)
        #expect(composers.first { $0.name == "周杰伦" }?.count == 6)
        #expect(composers.first { $0.name == "Beyoncé Knowles" }?.count == 10)

        let podcasts = try MediaQuery.podcasts().items(in: lib)
        #expect(podcasts.map(\.title) == ["Episode 1", "Episode 2"])
        #expect(podcasts.allSatisfy { $0.mediaType == .podcast })
        let books = try MediaQuery.audiobooks().items(in: lib)
        #expect(books.map(\.title) == ["Chapter 1", "Chapter 2"], "the Audiobooks folder rule")
        #expect(books.first?.format.codec == "flac")

        let gbk = try #require(try f.item(at: LibraryFixtures.gbkPath))
        #expect(gbk.title == "青花瓷" && gbk.artist == "周杰伦" && gbk.albumTitle == "我很忙" && gbk.year == 2007)
        let one = try #require(lemonade.items.first)
        #expect(one.format.codec == "mp3" && one.format.sampleRate > 0 && one.format.channelCount == 1)
        #expect(abs(one.duration - 0.2) < 0.05, "duration \(one.duration)")
        #expect(one.year == 2016 && one.genre == "Pop" && one.playCount == 0 && one.rating == 0)
    }

    @Test func predicatesAreCaseAndAccentInsensitive() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])
        let lib = f.library
        #expect(try MediaQuery.songs().filtered(by: .artist("beyonce")).items(in: lib).count == 11)
        #expect(try MediaQuery.songs().filtered(by: .artist("BEYONCÉ")).items(in: lib).count == 11)
        #expect(try MediaQuery.songs().filtered(by: .artist("ONCE", .contains)).items(in: lib).count == 11)
        #expect(try MediaQuery.songs().filtered(by: .artist("Sigur Ros")).items(in: lib).count == 8)
        #expect(try MediaQuery.songs().filtered(by: .albumTitle("agætis byrjun")).items(in: lib).count == 8)
        #expect(try MediaQuery.songs().filtered(by: .artist("周杰伦")).items(in: lib).count == 7)
        #expect(try MediaQuery.songs().filtered(by: .title("晴天", .contains)).items(in: lib).count == 6)
        let both = MediaQuery.songs().filtered(by: .artist("the band")).filtered(by: .albumTitle("album two"))
        #expect(try both.items(in: lib).map(\.trackNumber) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(try MediaQuery.songs().filtered(by: .genre("rock")).items(in: lib).count == 16)
        #expect(try MediaQuery.songs().filtered(by: .artist("Nobody")).items(in: lib).isEmpty)
        let byYear = try MediaQuery.songs().sorted(by: .year, ascending: false).items(in: lib)
        #expect(byYear.first?.year == 2020 && byYear.last?.year == 1999)
        let id = try #require(byYear.first?.persistentID)
        #expect(try MediaQuery.songs().filtered(by: .persistentID(id)).items(in: lib).map(\.persistentID) == [id])
    }

    @Test func fullTextSearch() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])
        let lib = f.library
        #expect(try MediaQuery.search("beyonce lemon").items(in: lib).count == 10)
        #expect(try MediaQuery.search("Beyoncé").items(in: lib).count == 11)
        #expect(try MediaQuery.search("sigur").items(in: lib).count == 8)
        #expect(try MediaQuery.search("sæglópur").items(in: lib).count == 8)
        #expect(try MediaQuery.search("hit 3").items(in: lib).map(\.title) == ["Hit 3"])
        #expect(try MediaQuery.search("晴天").items(in: lib).count == 6)
        #expect(try MediaQuery.search("tech talk").items(in: lib).count == 2, "search covers podcasts too")
        #expect(try MediaQuery.search("  ").items(in: lib).isEmpty)
        #expect(try MediaQuery.songs().searching("album").filtered(by: .artist("the band")).items(in: lib).count == 16)
    }
}

@Suite struct IncrementalScanTests {
    @Test func rescansFindAddedChangedMovedAndDeletedFiles() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])

        // Nothing changed: nothing read again.
        let again = try await f.library.scanToEnd(folders: [f.root])
        #expect(again.unchanged == LibraryFixtures.mediaCount)
        #expect(again.filesRead == 0 && again.added == 0 && again.updated == 0 && again.moved == 0 && again.removed == 0)
        #expect(again.skipped.count == LibraryFixtures.junk.count)

        let movedFrom = "Beyoncé/Lemonade/01 Song 1.mp3", movedTo = "Elsewhere/renamed.mp3"
        let changed = "The Band/Album One/1.mp3", deleted = "The Band/Album Two/8.mp3"
        let song = try #require(try f.item(at: movedFrom))
        #expect(try f.library.recordPlay(of: song.persistentID, playedSeconds: 0.15) == .played)
        try f.library.setRating(4, of: song.persistentID)
        let before = try #require(try f.item(at: changed))
        let gone = try #require(try f.item(at: deleted))

        try FileManager.default.createDirectory(atPath: f.path("Elsewhere"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: f.path(movedFrom), toPath: f.path(movedTo))
        try FileManager.default.removeItem(atPath: f.path(deleted))
        let base = try LibraryFixtures.baseMP3(in: f.dir.file("tmp"))
        var retagged = try #require(LibraryFixtures.tracks.first { $0.path == changed })
        retagged.title = "Album One Track 1 (Remastered)"
        try LibraryFixtures.write(retagged, base: base, png: [], root: f.root)
        let added = LibraryFixtures.Track(path: "New Artist/New Album/1.mp3", title: "Brand New", artist: "New Artist",
                                          album: "New Album", genre: "Jazz", track: 1, trackCount: 1, year: 2025)
        try LibraryFixtures.write(added, base: base, png: [], root: f.root)

        let s = try await f.library.scanToEnd(folders: [f.root])
        #expect(s.added == 1 && s.updated == 1 && s.moved == 1 && s.removed == 1)
        #expect(s.unchanged == LibraryFixtures.mediaCount - 3)
        #expect(s.filesRead == 2, "the new and the changed file; the moved one is only hashed")

        let moved = try #require(try f.item(at: movedTo))
        #expect(moved.persistentID == song.persistentID)
        #expect(moved.playCount == 1 && moved.rating == 4 && moved.lastPlayedDate != nil)
        #expect(moved.title == "Lemonade Song 1")
        #expect(try f.item(at: movedFrom) == nil)

        let after = try #require(try f.item(at: changed))
        #expect(after.persistentID == before.persistentID)
        #expect(after.title == "Album One Track 1 (Remastered)")
        #expect(try MediaQuery.search("remastered").items(in: f.library).map(\.persistentID) == [before.persistentID])
        #expect(try MediaQuery.search("album one track 1").items(in: f.library).count == 1)

        #expect(try f.library.item(persistentID: gone.persistentID) == nil)
        #expect(try MediaQuery.songs().filtered(by: .artist("new artist")).items(in: f.library).map(\.title) == ["Brand New"])
        #expect(try f.library.statistics().items == LibraryFixtures.mediaCount)
    }

    @Test func aDuplicateFileGetsItsOwnIdentity() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try FileManager.default.copyItem(atPath: f.path("Sigur Rós/Ágætis byrjun/1-1.mp3"), toPath: f.path("copy.mp3"))
        let s = try await f.library.scanToEnd(folders: [f.root])
        #expect(s.added == LibraryFixtures.mediaCount + 1)
        let a = try #require(try f.item(at: "Sigur Rós/Ágætis byrjun/1-1.mp3"))
        let b = try #require(try f.item(at: "copy.mp3"))
        #expect(a.persistentID != b.persistentID)
    }

    @Test func anInterruptedScanIsCompletedByTheNext() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        // Stop iterating after 24 files. A first scan commits every 4 × batchSize files read (a
        // skipped file is not written), and the progress of a file comes after the commits of
        // the files before it: of the first 23, at most 3 are junk, so at least 20 rows were
        // committed. (With batches of 5, a first commit after 20 rows, the junk among the first
        // 20 files left none committed, unless the writer ran ahead of the break.)
        #expect(LibraryFixtures.junk.count <= 3, "the reasoning above")
        for try await event in try f.library.scan(folders: [f.root], batchSize: 1) {
            if case .progress(let p) = event, p.filesDone >= 24 { break }
        }
        let reopened = try MediaLibrary(path: f.library.path)
        let s = try await reopened.scanToEnd(folders: [f.root])
        #expect(s.unchanged >= 15)
        #expect(s.added + s.unchanged == LibraryFixtures.mediaCount)
        #expect(s.removed == 0 && s.moved == 0)
        #expect(try reopened.statistics().items == LibraryFixtures.mediaCount)
    }
}

@Suite struct PlayCountAndErrorTests {
    @Test func playsAndSkipsFollowTheHalfOrFourMinutesRule() async throws {
        let dir = try TempDir("library-plays")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("m"), withIntermediateDirectories: true)
        try TagFixtures.plainMP3(dir.file("m/short.mp3"))
        // Ten minutes of silence: four minutes count as a play, short of half its length.
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-t", "600", "-c:a", "flac", dir.file("m/long.flac")])
        let lib = try MediaLibrary(path: dir.file("library.sqlite"))
        try await lib.scanToEnd(folders: [dir.file("m")])
        let items = try MediaQuery.songs().items(in: lib)
        let short = try #require(items.first { $0.title == "short" }), long = try #require(items.first { $0.title == "long" })
        #expect(abs(long.duration - 600) < 0.01)

        let when = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try lib.recordPlay(of: short.persistentID, playedSeconds: 0.05, at: when) == .skipped)
        var s = try #require(try lib.item(persistentID: short.persistentID))
        #expect(s.skipCount == 1 && s.playCount == 0 && s.lastPlayedDate == nil)
        #expect(try lib.recordPlay(of: short.persistentID, playedSeconds: short.duration / 2, at: when) == .played)
        s = try #require(try lib.item(persistentID: short.persistentID))
        #expect(s.skipCount == 1 && s.playCount == 1 && s.lastPlayedDate == when)

        #expect(try lib.recordPlay(of: long.persistentID, playedSeconds: 239, at: when) == .skipped)
        #expect(try lib.recordPlay(of: long.persistentID, playedSeconds: 240, at: when) == .played)
        let l = try #require(try lib.item(persistentID: long.persistentID))
        #expect(l.playCount == 1 && l.skipCount == 1)

        try lib.setRating(5, of: long.persistentID)
        #expect(try lib.item(persistentID: long.persistentID)?.rating == 5)
        #expect(try MediaQuery.songs().sorted(by: .rating, ascending: false).items(in: lib).first?.persistentID == long.persistentID)
        #expect(throws: TonearmError.invalidArgument("a rating is 0 to 5, not 6")) { try lib.setRating(6, of: long.persistentID) }
        #expect(throws: TonearmError.self) { try lib.recordPlay(of: 42, playedSeconds: 10) }
        #expect(throws: TonearmError.self) { try lib.setRating(3, of: 42) }
    }

    @Test func errorsAreTypedAndClear() throws {
        let dir = try TempDir("library-errors")
        defer { dir.remove() }
        let lib = try MediaLibrary(path: dir.file("library.sqlite"))
        #expect(throws: TonearmError.fileNotFound(path: dir.file("missing"))) { try lib.scan(folders: [dir.file("missing")]) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("plain")))
        #expect(throws: TonearmError.invalidArgument("\(dir.file("plain")): not a folder")) { try lib.scan(folders: [dir.file("plain")]) }

        do {
            _ = try MediaLibrary(path: "/proc/tonearm-test/library.sqlite")
            Issue.record("a library under /proc opened")
        } catch {
            guard case .library(let path, let reason) = error else { Issue.record("\(error)"); return }
            #expect(path == "/proc/tonearm-test/library.sqlite")
            #expect(reason.contains("/proc/tonearm-test"), "\(reason)")
        }
        try Data(String(repeating: "not a database\n", count: 100).utf8).write(to: URL(fileURLWithPath: dir.file("text.sqlite")))
        do {
            _ = try MediaLibrary(path: dir.file("text.sqlite"))
            Issue.record("a text file opened as a library")
        } catch {
            guard case .library(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("not a database"), "\(reason)")
        }
    }

    @Test func theDefaultPathFollowsXDG() {
        // Only reads the environment; the path is not opened.
        let path = MediaLibrary.defaultPath
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            #expect(path == xdg + "/tonearm/library.sqlite")
        } else {
            #expect(path.hasSuffix("/.local/share/tonearm/library.sqlite"))
        }
    }

    @Test func mediaTypeRules() async throws {
        let dir = try TempDir("library-types")
        defer { dir.remove() }
        let base = try LibraryFixtures.baseMP3(in: dir.file("tmp"))
        func track(_ path: String, genre: String) -> LibraryFixtures.Track {
            .init(path: path, title: path, artist: "A", album: "B", genre: genre, track: 1, trackCount: 1, year: 2000)
        }
        for t in [track("podcasts/x.mp3", genre: "Talk"), track("y.mp3", genre: "Audiobook"), track("z.mp3", genre: "Comedy Podcast"),
                  track("w.mp3", genre: "Jazz")] {
            try LibraryFixtures.write(t, base: base, png: [], root: dir.file("m"))
        }
        let lib = try MediaLibrary(path: dir.file("library.sqlite"))
        try await lib.scanToEnd(folders: [dir.file("m")])
        let all = try MediaQuery(mediaType: nil).items(in: lib)
        let types = Dictionary(uniqueKeysWithValues: all.map { ($0.url.lastPathComponent, $0.mediaType) })
        #expect(types == ["x.mp3": .podcast, "y.mp3": .audiobook, "z.mp3": .podcast, "w.mp3": .music])
    }
}

@Suite struct ListingTests {
    /// Every grouping's summaries say what its collections say, in the same order.
    @Test func summariesMatchCollections() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])
        let queries: [MediaQuery] = [.albums(), .artists(), .albumArtists(), .genres(), .composers(), .compilations(),
                                     .podcasts(), .audiobooks(), .songs(), .artists().filtered(by: .genre("rock")),
                                     MediaQuery(groupingType: .album, mediaType: nil).searching("hit")]
        for q in queries {
            let collections = try q.collections(in: f.library)
            let summaries = try q.collectionSummaries(in: f.library)
            #expect(summaries.count == collections.count, "\(q.groupingType)")
            for (s, c) in zip(summaries, collections) {
                #expect(s.name == c.name, "\(q.groupingType): \(String(describing: s.name)) vs \(String(describing: c.name))")
                #expect(s.albumArtist == (q.groupingType == .album ? c.albumArtist : nil))
                #expect(s.year == c.representativeItem.year)
                #expect(s.representativeID == c.representativeItem.persistentID, "\(q.groupingType) \(String(describing: c.name))")
                #expect(s.count == c.count && s.albumCount == c.albumTitles.count)
                #expect(abs(s.duration - c.duration) < 1e-9)
            }
        }
        let albums = try MediaQuery.albums().collectionSummaries(in: f.library)
        #expect(albums.first { $0.name == "Hits 2020" }?.albumArtist == "Various Artists")
        #expect(albums.first { $0.name == "Ágætis byrjun" }.map { ($0.albumArtist, $0.count, $0.year) }! == ("Sigur Rós", 8, 1999))
    }

    /// The listing queries use indexes: one artist's songs or one album's are found by key,
    /// and albums are read in order, never by scanning and sorting the table.
    @Test func listingsUseIndexes() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])
        let db = try DatabaseQueue(path: f.library.path)
        func plan(_ sql: String) throws -> String {
            try db.read { try Row.fetchAll($0, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }.joined(separator: " | ") }
        }
        let byArtist = try plan("SELECT * FROM item WHERE mediaType = 'music' AND artistKey = 'beyonce' ORDER BY titleKey, artistKey, albumKey")
        #expect(byArtist.contains("USING INDEX item_artist (artistKey=?)"), "\(byArtist)")
        let byAlbum = try plan("SELECT * FROM item WHERE mediaType = 'music' AND albumKey = 'lemonade' ORDER BY titleKey")
        #expect(byAlbum.contains("USING INDEX item_album (albumKey=?)"), "\(byAlbum)")
        // MediaQuery.albums()'s order (sort key, folded key, identity, disc, track, title).
        let albums = try plan("""
            SELECT * FROM item WHERE mediaType = 'music' ORDER BY albumSort, albumKey,
            CASE WHEN isCompilation THEN '' ELSE albumArtistKey END, COALESCE(discNumber, 1), COALESCE(trackNumber, 0), titleSort
            """)
        #expect(albums.contains("item_albumOrder") && !albums.contains("TEMP B-TREE"), "\(albums)")
        // collectionSummaries' one row per album, grouped in that order.
        let summaries = try plan("""
            SELECT count(*), min(COALESCE(discNumber, 1) * 4294967296 + COALESCE(trackNumber, 0)), title FROM item
            WHERE mediaType = 'music' GROUP BY albumSort, albumKey, CASE WHEN isCompilation THEN '' ELSE albumArtistKey END
            ORDER BY albumSort, albumKey, CASE WHEN isCompilation THEN '' ELSE albumArtistKey END
            """)
        #expect(summaries.contains("item_albumOrder") && !summaries.contains("TEMP B-TREE"), "\(summaries)")
    }
}

/// Search finds any part of Chinese, Japanese and Korean text (written without spaces between
/// words) and Chinese names from their pinyin.
@Suite struct CJKSearchTests {
    @Test func substringsAndPinyinFindChineseJapaneseAndKorean() async throws {
        let dir = try TempDir("cjk-search")
        defer { dir.remove() }
        let root = dir.file("Music")
        let base = try LibraryFixtures.baseMP3(in: root)
        for (n, (title, artist, album)) in [("春江花月夜", "陈奕迅", "十年"), ("晴天", "周杰伦", "叶惠美"),
                                            ("かぜのうた", "スピカ", "そら"), ("하늘", "별빛", "노래"),
                                            ("Chenille", "Latin Band", "Moon")].enumerated() {
            try LibraryFixtures.write(LibraryFixtures.Track(path: "\(n).mp3", title: title, artist: artist, album: album,
                                                            genre: "Test", track: 1, trackCount: 1, year: 2020),
                                      base: base, png: [], root: root)
        }
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        try await library.scanToEnd(folders: [root])
        func found(_ text: String) throws -> [String] { try MediaQuery.search(text).items(in: library).map(\.title) }

        // Any substring of Chinese text, in order.
        #expect(try found("月") == ["春江花月夜"])
        #expect(try found("花月") == ["春江花月夜"])
        #expect(try found("月花").isEmpty, "the characters must follow one another")
        #expect(try found("奕迅") == ["春江花月夜"], "artists too")
        #expect(try found("陈奕迅 十年") == ["春江花月夜"])
        #expect(try found("天") == ["晴天"])
        // Kana and Hangul likewise.
        #expect(try found("のう") == ["かぜのうた"])
        #expect(try found("늘") == ["하늘"])
        // Pinyin: syllables, joined, a prefix of them, initials; case ignored.
        #expect(try found("chen") == ["Chenille", "春江花月夜"])
        #expect(try found("chen yi xun") == ["春江花月夜"])
        #expect(try found("chenyixun") == ["春江花月夜"])
        #expect(try found("ChenYi") == ["春江花月夜"])
        #expect(try found("cyx") == ["春江花月夜"])
        #expect(try found("zhou jie lun") == ["晴天"])
        #expect(try found("qingtian") == ["晴天"])
        #expect(try found("chun jiang hua yue ye") == ["春江花月夜"])
        // Latin search as before.
        #expect(try found("chenil") == ["Chenille"])
        #expect(try found("moon latin") == ["Chenille"])
    }
}

/// `artistOrAlbumArtist`: "Various Artists" finds a compilation's tracks, an artist finds their
/// own tracks and those on compilations; case and accents ignored; by index.
@Suite struct ArtistOrAlbumArtistTests {
    @Test func findsAlbumArtistsToo() async throws {
        let f = try LibraryFixture()
        defer { f.dir.remove() }
        try await f.library.scanToEnd(folders: [f.root])
        let lib = f.library
        #expect(try MediaQuery.songs().filtered(by: .artist("various artists")).items(in: lib).isEmpty)
        let various = try MediaQuery.songs().filtered(by: .artistOrAlbumArtist("VARIOUS ARTISTS")).items(in: lib)
        #expect(various.map(\.title) == (1...6).map { "Hit \($0)" })
        #expect(try MediaQuery.songs().filtered(by: .artistOrAlbumArtist("beyonce")).items(in: lib).count == 11)
        #expect(try MediaQuery.songs().filtered(by: .artistOrAlbumArtist("various", .contains)).items(in: lib).count == 6)
        #expect(try MediaQuery.albums().filtered(by: .artistOrAlbumArtist("various artists")).collections(in: lib).map(\.name) == ["Hits 2020"])

        let db = try DatabaseQueue(path: lib.path)
        let plan = try await db.read { db in
            try Row.fetchAll(db, sql: """
                EXPLAIN QUERY PLAN SELECT * FROM item WHERE mediaType = 'music' AND (artistKey = 'x' OR albumArtistKey = 'x')
                ORDER BY titleSort
                """).map { $0["detail"] as String }.joined(separator: " | ")
        }
        #expect(plan.contains("item_artist") && plan.contains("item_albumArtist"), "each side by its index: \(plan)")
    }
}
