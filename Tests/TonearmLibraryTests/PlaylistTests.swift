// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmLibrary
import TonearmPlaylists
import TonearmTestSupport

/// Playlists stored in the library, smart playlists, and import / export (the generated library
/// of LibraryFixtures, scanned into a fresh database per test).
@Suite struct PlaylistTests {
    /// The fixture scanned, and its Lemonade songs in track order.
    private func scanned() async throws -> (LibraryFixture, [MediaItem]) {
        let f = try LibraryFixture()
        try await f.library.scanToEnd(folders: [f.root])
        let lemonade = try MediaQuery.albums().filtered(by: .albumTitle("Lemonade")).items(in: f.library)
            .sorted { ($0.trackNumber ?? 0) < ($1.trackNumber ?? 0) }
        #expect(lemonade.count == 10)
        return (f, lemonade)
    }

    @Test func thePlaylistsQueryGivesEachPlaylistAsACollection() async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let lib = f.library
        let ids = songs.map(\.persistentID)
        _ = try lib.createPlaylist(named: "Zed")
        _ = try lib.createPlaylist(named: "Empty")
        _ = try lib.createPlaylist(named: "Alpha")
        try lib.addItems([ids[3], ids[1], ids[3]], to: "Zed")
        let band = try MediaQuery.songs().filtered(by: .artist("the band")).items(in: lib).prefix(2).map(\.persistentID)
        try lib.addItems(band + [ids[0]], to: "Alpha")

        let lists = try MediaQuery.playlists().collections(in: lib)
        #expect(lists.map(\.name) == ["Alpha", "Zed"], "by name; an empty playlist has no collection")
        #expect(lists.map { $0.playlist?.name } == ["Alpha", "Zed"])
        #expect(lists[1].items.map(\.persistentID) == [ids[3], ids[1], ids[3]], "in the playlist's order, repeats kept")
        #expect(try MediaQuery.playlists().items(in: lib).count == 6)
        // Predicates narrow each playlist's items.
        let beyonce = try MediaQuery.playlists().filtered(by: .artist("beyonce")).collections(in: lib)
        #expect(beyonce.map(\.name) == ["Alpha", "Zed"] && beyonce[0].items.map(\.persistentID) == [ids[0]])
        let searched = try MediaQuery.playlists().searching("album").collections(in: lib)
        #expect(searched.map(\.name) == ["Alpha"] && searched[0].count == 2)
        #expect(try MediaQuery.playlists().collectionSections(in: lib).map(\.title) == ["A", "Z"])
    }

    @Test func createRenameAddRemoveMoveDelete() async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let lib = f.library
        #expect(try lib.playlists().isEmpty)

        let created = try lib.createPlaylist(named: "  Road Trip ")
        #expect(created.name == "Road Trip" && created.count == 0)
        #expect(created.dateCreated == created.dateModified)
        let ids = songs.map(\.persistentID)

        var p = try lib.addItems([ids[2], ids[0], ids[1]], to: "Road Trip")
        #expect(p.count == 3)
        p = try lib.addItems([ids[0]], to: "Road Trip")
        #expect(p.count == 4, "an item may appear twice")
        #expect(try lib.items(in: "Road Trip").map(\.persistentID) == [ids[2], ids[0], ids[1], ids[0]])

        try lib.moveItem(from: 0, to: 3, in: "Road Trip")
        #expect(try lib.items(in: "Road Trip").map(\.persistentID) == [ids[0], ids[1], ids[0], ids[2]])
        try lib.moveItem(from: 3, to: 1, in: "Road Trip")
        #expect(try lib.items(in: "Road Trip").map(\.persistentID) == [ids[0], ids[2], ids[1], ids[0]])
        p = try lib.removeItem(at: 3, from: "Road Trip")
        #expect(p.count == 3)
        #expect(try lib.items(in: "Road Trip").map(\.persistentID) == [ids[0], ids[2], ids[1]])

        let renamed = try lib.renamePlaylist("Road Trip", to: "Summer")
        #expect(renamed.persistentID == created.persistentID)
        #expect(renamed.count == 3 && renamed.dateCreated == created.dateCreated)
        #expect(try lib.playlist(named: "Road Trip") == nil)
        #expect(try lib.items(in: "Summer").map(\.persistentID) == [ids[0], ids[2], ids[1]])

        try lib.createPlaylist(named: "Another")
        #expect(try lib.playlists().map(\.name) == ["Another", "Summer"])

        // The order is in the database: another MediaLibrary on the same file sees it.
        let reopened = try MediaLibrary(path: lib.path)
        #expect(try reopened.items(in: "Summer").map(\.persistentID) == [ids[0], ids[2], ids[1]])
        #expect(try reopened.playlist(named: "Summer")?.persistentID == created.persistentID)

        try lib.deletePlaylist(named: "Summer")
        #expect(try lib.playlists().map(\.name) == ["Another"])
        #expect(try lib.item(persistentID: ids[0]) != nil, "deleting a playlist keeps its items in the library")
    }

    @Test func errorsAreTyped() async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let lib = f.library
        try lib.createPlaylist(named: "Mix")
        try lib.createPlaylist(named: "Other")
        #expect(throws: TonearmError.playlistExists(name: "Mix")) { try lib.createPlaylist(named: "Mix") }
        #expect(throws: TonearmError.playlistExists(name: "Other")) { try lib.renamePlaylist("Mix", to: "Other") }
        #expect(throws: TonearmError.playlistNotFound(name: "Nope")) { try lib.items(in: "Nope") }
        #expect(throws: TonearmError.playlistNotFound(name: "Nope")) { try lib.deletePlaylist(named: "Nope") }
        #expect(throws: TonearmError.playlistNotFound(name: "Nope")) { try lib.addItems([songs[0].persistentID], to: "Nope") }
        #expect(throws: TonearmError.playlistNotFound(name: "Nope")) { try lib.renamePlaylist("Nope", to: "Yes") }
        #expect(throws: TonearmError.playlistNotFound(name: "Nope")) { try lib.removeItem(at: 0, from: "Nope") }
        #expect(throws: TonearmError.invalidArgument("a playlist's name cannot be empty")) { try lib.createPlaylist(named: "  ") }
        #expect(throws: TonearmError.self) { try lib.removeItem(at: 0, from: "Mix") }
        #expect(throws: TonearmError.self) { try lib.moveItem(from: 0, to: 0, in: "Mix") }
        // An unknown item: nothing is added, not even the known ones before it.
        #expect(throws: TonearmError.invalidArgument("no item with persistentID 42 in \(lib.path)")) {
            try lib.addItems([songs[0].persistentID, 42], to: "Mix")
        }
        #expect(try lib.playlist(named: "Mix")?.count == 0)
        #expect(throws: TonearmError.fileNotFound(path: f.dir.file("none.m3u8"))) {
            try lib.importPlaylist(from: URL(fileURLWithPath: f.dir.file("none.m3u8")))
        }
    }

    /// Names ignore case and accents, as the smart playlists' do: "mix" finds "Mix", and "MIX"
    /// cannot be made beside it (the error names the one that exists).
    @Test func namesIgnoreCaseAndAccents() async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let lib = f.library
        let mix = try lib.createPlaylist(named: "Mix")
        #expect(throws: TonearmError.playlistExists(name: "Mix")) { try lib.createPlaylist(named: "mix") }
        #expect(throws: TonearmError.playlistExists(name: "Mix")) { try lib.createPlaylist(named: " MÏX ") }
        #expect(try lib.playlist(named: "mix")?.persistentID == mix.persistentID)
        try lib.addItems([songs[0].persistentID], to: "MIX")
        #expect(try lib.items(in: "mix").map(\.persistentID) == [songs[0].persistentID])
        #expect(try lib.namedPlaylist("mIx") == .playlist(try #require(try lib.playlist(named: "Mix"))))
        // A change of case alone is a rename; another playlist's name in other case is taken.
        #expect(try lib.renamePlaylist("mix", to: "MIX").name == "MIX")
        try lib.createPlaylist(named: "Other")
        #expect(throws: TonearmError.playlistExists(name: "MIX")) { try lib.renamePlaylist("other", to: "mix") }
        // A playlist of the library's own hides the smart one of that name, whatever its case.
        try lib.createPlaylist(named: "top rated")
        #expect(try lib.namedPlaylist("Top Rated")?.name == "top rated")
        #expect(try !lib.standardSmartPlaylists().contains { $0.playlist == .topRated })
        try lib.deletePlaylist(named: "TOP RATED")
        #expect(try lib.playlists().map(\.name) == ["MIX", "Other"])
        // Listed in the listings' order: case ignored, numbers by value.
        for name in ["mix 10", "Mix 2", "alpha"] { try lib.createPlaylist(named: name) }
        #expect(try lib.playlists().map(\.name) == ["alpha", "MIX", "Mix 2", "mix 10", "Other"])
    }

    @Test func aRescanThatRemovesAFileDropsItFromPlaylists() async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let lib = f.library
        let ids = songs.map(\.persistentID)
        try lib.createPlaylist(named: "A")
        try lib.createPlaylist(named: "B")
        try lib.addItems([ids[0], ids[1], ids[2], ids[1], ids[3]], to: "A")
        try lib.addItems([ids[1]], to: "B")
        try FileManager.default.removeItem(atPath: songs[1].path)
        let s = try await lib.scanToEnd(folders: [f.root])
        #expect(s.removed == 1)
        #expect(try lib.items(in: "A").map(\.persistentID) == [ids[0], ids[2], ids[3]])
        #expect(try lib.playlist(named: "A")?.count == 3)
        #expect(try lib.playlist(named: "B")?.count == 0)
        // Edits after the cascade see the compacted order.
        try lib.moveItem(from: 2, to: 0, in: "A")
        try lib.addItems([ids[4]], to: "A")
        #expect(try lib.items(in: "A").map(\.persistentID) == [ids[3], ids[0], ids[2], ids[4]])
    }

    @Test func smartPlaylists() async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let lib = f.library
        let music = try MediaQuery.songs().items(in: lib)
        #expect(try lib.smartPlaylist(.mostPlayed).isEmpty)
        #expect(try lib.smartPlaylist(.topRated).isEmpty)
        #expect(try lib.smartPlaylist(.neverPlayed, limit: 1000).count == music.count)
        #expect(try lib.smartPlaylist(.neverPlayed, limit: 5).count == 5)

        let a = songs[0], b = songs[1], c = songs[2]
        for _ in 0..<3 { try lib.recordPlay(of: a.persistentID, playedSeconds: a.duration) }
        try lib.recordPlay(of: b.persistentID, playedSeconds: b.duration)
        try lib.recordPlay(of: c.persistentID, playedSeconds: 0) // a skip is not a play
        #expect(try lib.smartPlaylist(.mostPlayed).map(\.persistentID) == [a.persistentID, b.persistentID])
        #expect(try lib.smartPlaylist(.mostPlayed, limit: 1).map(\.persistentID) == [a.persistentID])
        let never = try lib.smartPlaylist(.neverPlayed, limit: 1000).map(\.persistentID)
        #expect(never.count == music.count - 2 && never.contains(c.persistentID) && !never.contains(a.persistentID))

        try lib.setRating(4, of: a.persistentID)
        try lib.setRating(5, of: c.persistentID)
        try lib.setRating(3, of: songs[3].persistentID)
        #expect(try lib.smartPlaylist(.topRated).map(\.persistentID) == [c.persistentID, a.persistentID],
                "four stars and up, best first; three is not top rated")
        // Several at once: all or none.
        let unknown = (1...UInt64.max).first { id in !music.contains { $0.persistentID == id } }!
        #expect(throws: TonearmError.invalidArgument("no item with persistentID \(unknown) in \(lib.path)")) {
            try lib.setRating(4, of: [b.persistentID, unknown])
        }
        #expect(try lib.smartPlaylist(.topRated).map(\.persistentID) == [c.persistentID, a.persistentID], "nothing rated")
        #expect(throws: TonearmError.self) { try lib.setRating(6, of: [b.persistentID]) }

        let recent = try lib.smartPlaylist(.recentlyAdded(days: 1), limit: 1000)
        #expect(recent.count == music.count, "everything was added just now")
        #expect(try lib.smartPlaylist(.recentlyAdded(days: 30), now: Date().addingTimeInterval(60 * 86_400)).isEmpty)
        #expect(try lib.smartPlaylist(.recentlyAdded(days: nil), limit: 3).count == 3)
        #expect(throws: TonearmError.self) { try lib.smartPlaylist(.topRated, limit: 0) }

        // The standard ones are asked for by name, case and accents ignored; a playlist of the
        // library's own with the same name comes first.
        #expect(SmartPlaylist.standard.map(\.name) == ["Recently Added", "Top 25 Most Played", "Top Rated", "Never Played"])
        #expect(SmartPlaylist(named: " top rated ") == .topRated)
        #expect(SmartPlaylist(named: "Top Ratéd") == .topRated)
        #expect(SmartPlaylist(named: "Top") == nil)
        #expect(try lib.items(inPlaylistOrSmartPlaylist: "TOP RATED").map(\.persistentID) == [c.persistentID, a.persistentID])
        #expect(try lib.items(inPlaylistOrSmartPlaylist: "Top 25 Most Played").count == 2)
        _ = try lib.createPlaylist(named: "Top Rated")
        try lib.addItems([b.persistentID], to: "Top Rated")
        #expect(try lib.items(inPlaylistOrSmartPlaylist: "Top Rated").map(\.persistentID) == [b.persistentID])
        #expect(throws: TonearmError.playlistNotFound(name: "Nope")) { try lib.items(inPlaylistOrSmartPlaylist: "Nope") }
    }

    @Test(arguments: [PlaylistFormat.m3u8, .pls, .xspf])
    func exportAndImportKeepTheOrder(format: PlaylistFormat) async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let lib = f.library
        let chinese = try MediaQuery.songs().filtered(by: .artist("周杰伦")).items(in: lib)
        let order = [songs[5], chinese[0], songs[0], songs[5], songs[9]].map(\.persistentID)
        try lib.createPlaylist(named: "Mixed")
        try lib.addItems(order, to: "Mixed")
        let file = URL(fileURLWithPath: f.dir.file("out/mixed.\(format.fileExtension)"))
        try FileManager.default.createDirectory(atPath: f.dir.file("out"), withIntermediateDirectories: true)
        try lib.exportPlaylist("Mixed", to: file)
        let written = try Playlist.read(from: file)
        #expect(written.entries.map(\.location.path) == [songs[5], chinese[0], songs[0], songs[5], songs[9]].map(\.path))

        let imported = try lib.importPlaylist(from: file, named: "Back")
        #expect(imported.unmatched.isEmpty)
        #expect(imported.playlist.name == "Back" && imported.playlist.count == 5)
        #expect(try lib.items(in: "Back").map(\.persistentID) == order)
        #expect(throws: TonearmError.playlistExists(name: "Back")) { try lib.importPlaylist(from: file, named: "Back") }
    }

    @Test func importReportsEntriesThatMatchNothing() async throws {
        let (f, songs) = try await scanned()
        defer { f.dir.remove() }
        let file = f.dir.file("list.m3u")
        let text = """
            #EXTM3U
            \(songs[3].path)
            Music/nowhere.mp3
            http://radio.example/stream
            \(f.root)/Beyoncé/Lemonade/../Lemonade/01 Song 1.mp3

            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let imported = try f.library.importPlaylist(from: URL(fileURLWithPath: file))
        #expect(imported.playlist.name == "list", "named after the file")
        #expect(try f.library.items(in: "list").map(\.persistentID) == [songs[3].persistentID, songs[0].persistentID])
        #expect(imported.unmatched.map(\.location.description) == [f.dir.file("Music/nowhere.mp3"), "http://radio.example/stream"])
    }
}
