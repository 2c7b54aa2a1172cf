// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmLibrary
import TonearmMPDLibrary
import TonearmMPDProtocol
import TonearmTestSupport

/// URIs and files: a URI names a song of the library inside the music folder and nothing else —
/// no `..` or `.` part, no absolute path, no file of the library outside the folder.
@Suite struct MPDLibraryURITests {
    struct Fixture {
        let dir: TempDir
        let responder: MPDLibraryResponder
        let music: String
    }

    /// A library holding `music/a/song.flac` and, outside the music folder, `outside/secret.flac`.
    static func fixture() async throws -> Fixture {
        let dir = try TempDir("tonearm-mpduri")
        let music = dir.file("music"), outside = dir.file("outside")
        for folder in [music + "/a", outside] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        for path in [music + "/a/song.flac", outside + "/secret.flac"] {
            try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-metadata", "title=T", path])
        }
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        try await library.scanToEnd(folders: [music, outside])
        return Fixture(dir: dir, responder: try MPDLibraryResponder(library: library, musicRoot: music + "/"), music: music)
    }

    @Test func aURINamesASongInTheMusicFolderOnly() async throws {
        let f = try await Self.fixture()
        let r = f.responder
        #expect(r.musicRoot == f.music)
        #expect(r.filePath(forURI: "a/song.flac") == f.music + "/a/song.flac")
        for uri in ["../outside/secret.flac", "a/../../outside/secret.flac", "./a/song.flac", "a/./song.flac",
                    "/a/song.flac", f.dir.file("outside/secret.flac"), f.music + "/a/song.flac", "a//song.flac",
                    "a/song.flac/", "a", "", "a/nosuch.flac"] {
            #expect(r.filePath(forURI: uri) == nil, "\(uri)")
        }
        // The song outside the folder is in the library but not in MPD's database.
        #expect(try r.songURIs(matching: .compare(.tag(.title), .equal, "T")) == ["a/song.flac"])
        #expect(try r.respond(command: "listall", arguments: []) == "directory: a\nfile: a/song.flac\n")
        #expect(try r.songURIs(under: "a") == ["a/song.flac"])
        #expect(try r.songURIs(under: "") == ["a/song.flac"])
        #expect(throws: MPDAck.self) { try r.songURIs(under: "../outside") }
        for command in ["lsinfo", "listall", "listallinfo", "listfiles"] {
            for uri in ["..", "../outside", "a/../..", "./a"] {
                #expect(throws: MPDAck.self, "\(command) \(uri)") { try r.respond(command: command, arguments: [uri]) }
            }
        }
    }

    /// More music folders (the daemon's later `--music` folders) are top-level folders of the
    /// database under their names; a name the music folder already has is made unique.
    @Test func otherFoldersAreTopLevelFoldersUnderTheirNames() async throws {
        let f = try await Self.fixture()
        defer { f.dir.remove() }
        let outside = f.dir.file("outside")
        try FileManager.default.createDirectory(atPath: f.dir.file("x/a"), withIntermediateDirectories: true)
        let r = try MPDLibraryResponder(library: f.responder.library, musicRoot: f.music, otherFolders: [outside, f.dir.file("x/a")])
        #expect(r.folders.mounts.map(\.name) == ["outside", "a (2)"])
        #expect(try r.respond(command: "listall", arguments: []) == "directory: a\nfile: a/song.flac\ndirectory: outside\nfile: outside/secret.flac\n")
        #expect(r.filePath(forURI: "outside/secret.flac") == outside + "/secret.flac")
        #expect(r.uri(forFilePath: outside + "/secret.flac") == "outside/secret.flac")
        #expect(r.uri(forFilePath: f.dir.file("x/a/new.flac")) == "a (2)/new.flac")
        #expect(try r.songURIs(under: "outside") == ["outside/secret.flac"])
        #expect(try r.respond(command: "listfiles", arguments: ["outside"]).contains("file: secret.flac\n"))
        #expect(r.folders.path(forURI: "outside/sub/x.flac") == outside + "/sub/x.flac")
        #expect(r.folders.path(forURI: "a/song.flac") == f.music + "/a/song.flac")
        #expect(r.folders.all == [f.music, outside, f.dir.file("x/a")])
    }

    @Test func aFileIsAURIOnlyInsideTheMusicFolder() async throws {
        let f = try await Self.fixture()
        let r = f.responder
        #expect(r.uri(forFilePath: f.music + "/a/song.flac") == "a/song.flac")
        #expect(r.uri(forFilePath: f.music + "/a/../a/song.flac") == "a/song.flac")
        #expect(r.uri(forFilePath: f.music + "/../outside/secret.flac") == nil)
        #expect(r.uri(forFilePath: f.dir.file("outside/secret.flac")) == nil)
        // A folder whose name starts with the music folder's is not inside it.
        #expect(r.uri(forFilePath: f.music + "2/x.flac") == nil)
        #expect(r.uri(forFilePath: f.music) == nil)
        #expect(r.uri(forFilePath: "/") == nil)
    }

    @Test func reloadSeesANewScan() async throws {
        let f = try await Self.fixture()
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-metadata", "title=New", f.music + "/a/new.flac"])
        let library = f.responder.library
        try await library.scanToEnd(folders: [f.music])
        #expect(f.responder.filePath(forURI: "a/new.flac") == nil)
        try f.responder.reload()
        #expect(f.responder.filePath(forURI: "a/new.flac") == f.music + "/a/new.flac")
    }
}
