// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
import TonearmTestSupport

/// `MusicPlayer.setQueue(with: MediaQuery, in:)` and `setQueue(with: MediaItemCollection)` on a
/// generated, scanned library: the queue is what the library finds, in album order, and keeps
/// the library's persistentIDs.
@Suite struct MusicPlayerLibraryTests {
    @Test func aQueryAndACollectionBecomeTheQueue() async throws {
        let dir = try TempDir("music-library")
        defer { dir.remove() }
        try LibraryFixtures.make(at: dir.file("Music"))
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        _ = try await library.scanToEnd(folders: [dir.file("Music")])
        let query = MediaQuery.albums().filtered(by: .albumTitle("ágætis byrjun"))
        let album = try #require(try query.collections(in: library).first)
        let player = MusicPlayer(output: { NullOutput() })
        #expect(try player.setQueue(with: query, in: library) == album.count)
        let queued = player.queue.items()
        #expect(queued.map(\.path) == album.items.map(\.path))
        #expect(queued.map(\.persistentID) == album.items.map(\.persistentID))
        let songs = try MediaQuery.songs().filtered(by: .artist("beyonce", .contains)).items(in: library)
        #expect(try player.setQueue(with: .songs().filtered(by: .artist("beyonce", .contains)), in: library) == songs.count)
        player.setQueue(with: album)
        #expect(player.queue.items().map(\.persistentID) == album.items.map(\.persistentID))
    }
}
