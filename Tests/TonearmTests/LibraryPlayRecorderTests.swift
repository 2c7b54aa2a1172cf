// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
import TonearmTestSupport

/// LibraryPlayRecorder on a real MusicPlayer (a real-time null output) and a scanned library: a
/// track skipped at once is a skip, one heard to its end a play with its date, and files that
/// are not in the library are passed over.
@Suite struct LibraryPlayRecorderTests {
    @Test func skipsAndPlaysAreCountedAsTheQueuePlays() async throws {
        let dir = try TempDir("play-recorder")
        defer { dir.remove() }
        let music = dir.file("Music")
        try LibraryFixtures.make(at: music)
        // A 4 s track: skipped as soon as it plays, far before half its length.
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=4", "-c:a", "flac",
                                "-metadata", "title=Long One", "-metadata", "artist=Tester", music + "/long.flac"])
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        _ = try await library.scanToEnd(folders: [music])
        let long = try #require(try MediaQuery.songs().filtered(by: .title("long one")).items(in: library).first)
        let short = try #require(try MediaQuery.songs().filtered(by: .title("hit 1")).items(in: library).first)
        // Not in the library: played, not counted.
        let outside = dir.file("outside.flac")
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=500:duration=0.3", "-c:a", "flac", outside])

        let player = MusicPlayer(output: { NullOutput() })
        player.setQueue(with: [QueueItem(path: long.path, persistentID: long.persistentID),
                               QueueItem(path: short.path, persistentID: short.persistentID),
                               QueueItem(path: outside)])
        let recorder = LibraryPlayRecorder(player: player, library: library)
        let events = player.events
        let before = Date()
        player.play()
        var skipped = false
        for await e in events {
            if !skipped, case .stateChanged(.playing) = e {
                skipped = true
                player.skipToNextItem()
            }
            if case .finished = e { break }
        }
        await recorder.finish()
        var records: [LibraryPlayRecorder.Record] = []
        for await r in recorder.records { records.append(r) }

        #expect(records.map(\.persistentID) == [long.persistentID, short.persistentID], "\(records)")
        #expect(records.first?.outcome == .success(.skipped))
        #expect(records.last?.outcome == .success(.played))
        #expect((records.first?.playedSeconds ?? 9) < 2)
        let l = try #require(try library.item(persistentID: long.persistentID))
        #expect(l.skipCount == 1 && l.playCount == 0 && l.lastPlayedDate == nil)
        let s = try #require(try library.item(persistentID: short.persistentID))
        #expect(s.playCount == 1 && s.skipCount == 0)
        #expect((s.lastPlayedDate ?? .distantPast) >= before.addingTimeInterval(-1))
    }

    /// A daemon shut down before it played anything: `finish()` has no stop to wait for.
    @Test func finishingBeforeAnyPlayEndsAtOnce() async throws {
        let dir = try TempDir("play-recorder-idle")
        defer { dir.remove() }
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        let player = MusicPlayer(output: { NullOutput(untimed: true) })
        let recorder = LibraryPlayRecorder(player: player, library: library)
        try await withDeadline(10, "finish() with nothing played") { await recorder.finish() }
        let records = try await collectUntilFinished(recorder.records)
        #expect(records.isEmpty)
    }

    @Test func itemsPlayedToTheirEndAreCountedAtAnySpeed() async throws {
        let dir = try TempDir("play-recorder-untimed")
        defer { dir.remove() }
        let music = dir.file("Music")
        try LibraryFixtures.make(at: music)
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        _ = try await library.scanToEnd(folders: [music])
        let album = try #require(try MediaQuery.albums().filtered(by: .albumTitle("hits 2020")).collections(in: library).first)
        // Faster than real time: the whole album in a few milliseconds of wall-clock time.
        let player = MusicPlayer(output: { NullOutput(untimed: true) })
        player.setQueue(with: album)
        let recorder = LibraryPlayRecorder(player: player, library: library)
        let events = player.events
        player.play()
        for await e in events { if case .finished = e { break } }
        await recorder.finish()
        var records: [LibraryPlayRecorder.Record] = []
        for await r in recorder.records { records.append(r) }
        #expect(records.map(\.persistentID) == album.items.map(\.persistentID))
        #expect(records.allSatisfy { $0.outcome == .success(.played) })
        let counts = try album.items.map { try library.item(persistentID: $0.persistentID)?.playCount ?? -1 }
        #expect(counts == Array(repeating: 1, count: album.count))
    }
}
