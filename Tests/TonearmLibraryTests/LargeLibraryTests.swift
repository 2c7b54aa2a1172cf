// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmLibrary
import TonearmTestSupport

/// The large generated library: the standard one plus 300 tracks by 25 artists named in many
/// scripts (LibraryFixtures.makeLarge), scanned once per test.
@Suite struct LargeLibraryTests {
    let dir: TempDir
    let root: String
    let library: MediaLibrary

    init() async throws {
        dir = try TempDir("large-library")
        root = dir.file("Music")
        try LibraryFixtures.makeLarge(at: root)
        library = try MediaLibrary(path: dir.file("library.sqlite"))
        let s = try await library.scanToEnd(folders: [root])
        #expect(s.added == LibraryFixtures.largeMediaCount)
        #expect(s.skipped.count == LibraryFixtures.junk.count)
    }

    @Test func everyArtistWithItsAlbumsByYearAndTracksInOrder() throws {
        defer { dir.remove() }
        let artists = try MediaQuery.artists().collections(in: library)
        for name in LibraryFixtures.largeArtists {
            let artist = try #require(artists.first { $0.name == name }, "\(name)")
            #expect(artist.count == LibraryFixtures.largeAlbumsPerArtist * LibraryFixtures.largeTracksPerAlbum)
            #expect(artist.albumTitles == ["\(name) III", "\(name) II", "\(name) I"], "albums by year: \(artist.albumTitles)")
            let tracks = artist.items.prefix(LibraryFixtures.largeTracksPerAlbum).map { $0.trackNumber ?? 0 }
            #expect(tracks == Array(1...LibraryFixtures.largeTracksPerAlbum))
        }
        let albums = try MediaQuery.albums().collections(in: library)
        #expect(albums.count == 7 + LibraryFixtures.largeArtists.count * LibraryFixtures.largeAlbumsPerArtist)
        #expect(try MediaQuery.songs().filtered(by: .artist("oystein berg")).items(in: library).count == 12)
        #expect(try MediaQuery.songs().filtered(by: .artist("LUCJA MAZUR")).items(in: library).count == 12)
        #expect(try MediaQuery.search("asgeir tonn").items(in: library).count == 12)
        #expect(try MediaQuery.genres().collections(in: library).contains { $0.name == "Électro" && $0.count == 60 })
        #expect(try MediaQuery.songs().filtered(by: .genre("electro")).items(in: library).count == 60)
    }

    @Test func artistSectionsFollowTheSortRule() throws {
        defer { dir.remove() }
        let query = MediaQuery.artists()
        let artists = try query.collections(in: library)
        let sections = query.sections(ofCollections: artists)
        #expect(sections.first?.range.lowerBound == 0 && sections.last?.range.upperBound == artists.count)
        let titles = sections.map(\.title)
        #expect(titles.count == Set(titles).count, "each section once: \(titles)")
        #expect(titles.last == "#")
        func section(of name: String) -> String? {
            guard let i = artists.firstIndex(where: { $0.name == name }) else { return nil }
            return sections.first { $0.range.contains(i) }?.title
        }
        #expect(section(of: "The Lanterns") == "L" && section(of: "A Quiet Engine") == "Q")
        #expect(section(of: "王菲") == "W" && section(of: "周杰伦") == "Z" && section(of: "陈奕迅") == "C")
        #expect(section(of: "Øystein Berg") == "O" && section(of: "Édith Nova") == "E" && section(of: "Łucja Mazur") == "L")
        #expect(section(of: "Кино Лето") == "К" && section(of: "Ωμέγα") == "Ω")
        #expect(section(of: "かぜのうた") == "か" && section(of: "スピカ") == "さ" && section(of: "별빛") == "ㅂ")
        #expect(section(of: "99 Rivers") == "#")
        let z = try #require(sections.first { $0.title == "Z" })
        #expect(artists[z.range].map(\.name) == ["Zebra Kings", "张学友", "周杰伦", "zulu Static"])

        // Songs by title: the sections cover the listing; an order not by name has none.
        let songs = MediaQuery.songs()
        let items = try songs.items(in: library)
        let songSections = songs.sections(ofItems: items)
        #expect(songSections.reduce(0) { $0 + $1.range.count } == items.count)
        #expect(try songs.sorted(by: .year).itemSections(in: library).isEmpty)
        #expect(try MediaQuery.songs().sorted(by: .artist).itemSections(in: library).contains { $0.title == "ㅎ" })
    }

    @Test func movingAnArtistAndDeletingAnAlbumAreFoundByARescan() async throws {
        defer { dir.remove() }
        let fm = FileManager.default
        let before = try MediaQuery.songs().filtered(by: .artist("王菲")).items(in: library)
        try library.setRating(5, of: before[0].persistentID)
        try fm.createDirectory(atPath: root + "/Elsewhere", withIntermediateDirectories: true)
        try fm.moveItem(atPath: root + "/More/王菲", toPath: root + "/Elsewhere/Faye")
        try fm.removeItem(atPath: root + "/More/Marrow/Marrow II")
        // A truncated copy of a track: a corrupt file in the library.
        let good = try Data(contentsOf: URL(fileURLWithPath: root + "/More/Nightjar/Nightjar I/1.mp3"))
        try good.prefix(10).write(to: URL(fileURLWithPath: root + "/More/Nightjar/Nightjar I/cut.mp3"))

        let s = try await library.scanToEnd(folders: [root])
        #expect(s.moved == 12 && s.removed == 4 && s.added == 0 && s.updated == 0)
        #expect(s.skipped.contains { $0.path.hasSuffix("/cut.mp3") && !$0.reason.isEmpty })
        let after = try MediaQuery.songs().filtered(by: .artist("王菲")).items(in: library)
        #expect(Set(after.map(\.persistentID)) == Set(before.map(\.persistentID)), "moved files keep their identity")
        #expect(after.allSatisfy { $0.path.contains("/Elsewhere/Faye/") })
        #expect(after.first { $0.persistentID == before[0].persistentID }?.rating == 5)
        #expect(try MediaQuery.songs().filtered(by: .albumTitle("Marrow II")).items(in: library).isEmpty)
        #expect(try library.statistics().items == LibraryFixtures.largeMediaCount - 4)
    }
}
