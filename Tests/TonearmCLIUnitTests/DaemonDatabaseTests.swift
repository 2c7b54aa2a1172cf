// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport
@testable import TonearmCLI

/// The daemon's database (its library of the music folder) as `update` and `rescan` change it.
@Suite struct DaemonDatabaseTests {
    /// `rescan` reads every file again, as MPD's does: a tag edited in place, the file's size and
    /// modification time kept, is seen by `rescan` and not by `update`.
    @Test func rescanRereadsFilesUpdateLeaves() async throws {
        let dir = try TempDir("tonearm-daemon-db")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let song = music + "/song.flac"
        try Fixtures.tone(path: song, codecArgs: ["-c:a", "flac", "-metadata", "title=AAAA"], seconds: 0.2, rate: 44_100, channels: 1)
        let database = try await DaemonDatabase.open(musicRoot: music, stateDirectory: dir.file("state"))
        func title() throws -> String? {
            try database.respond(command: "lsinfo", arguments: [], tagTypes: [.title])
                .split(separator: "\n").first { $0.hasPrefix("Title: ") }.map { String($0.dropFirst(7)) }
        }
        #expect(try title() == "AAAA")

        // The title's bytes changed in place; the size and the modification time as they were.
        var before = stat()
        #expect(stat(song, &before) == 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: song)))
        let old = Array("title=AAAA".utf8), new = Array("title=BBBB".utf8)
        let at = try #require((0...(bytes.count - old.count)).first { bytes[$0..<($0 + old.count)].elementsEqual(old) })
        bytes.replaceSubrange(at..<(at + old.count), with: new)
        try Data(bytes).write(to: URL(fileURLWithPath: song))
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, song, &times, 0) == 0)

        #expect(await database.update(uri: "", rescan: false) == false)
        #expect(try title() == "AAAA")
        #expect(await database.update(uri: "", rescan: true) == true)
        #expect(try title() == "BBBB")
    }
}
