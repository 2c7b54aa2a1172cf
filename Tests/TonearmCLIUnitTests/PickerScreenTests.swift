// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
@testable import TonearmCLI
import TonearmTestSupport

/// A small library for the screen: a long Chinese title, a title with a terminal escape
/// sequence in it, and an album of 30 tracks. Scanned once, only read.
enum ScreenLibrary {
    static let longTitle = "晴天 — 一个很长很长很长很长很长很长很长很长很长很长的标题"
    static let shared = Task { () throws -> MediaLibrary in
        let dir = try TempDir("picker-screen")
        removeAtExit = dir.path
        atexit { if let p = ScreenLibrary.removeAtExit { try? FileManager.default.removeItem(atPath: p) } }
        let root = dir.file("Music")
        let base = try LibraryFixtures.baseMP3(in: root)
        var tracks = [
            LibraryFixtures.Track(path: "周杰伦/叶惠美/1.mp3", title: longTitle, artist: "周杰伦", album: "叶惠美", genre: "Mandopop",
                                  track: 1, trackCount: 1, year: 2003),
            LibraryFixtures.Track(path: "Evil/1.mp3", title: "Evil\u{1B}]0;pwned\u{07}", artist: "Hacker", album: "Escapes",
                                  genre: "Noise", track: 1, trackCount: 1, year: 2024),
        ]
        for n in 1...30 {
            tracks.append(LibraryFixtures.Track(path: "Band/Long Album/\(n).mp3", title: "Track \(n)", artist: "The Band",
                                                album: "Long Album", genre: "Rock", track: n, trackCount: 30, year: 2001))
        }
        for t in tracks { try LibraryFixtures.write(t, base: base, png: [], root: root) }
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        try await library.scanToEnd(folders: [root])
        return library
    }
    nonisolated(unsafe) static var removeAtExit: String?

    static func picker(_ view: MediaPicker.View = .songs) async throws -> MediaPicker {
        MediaPicker(source: MediaPicker.LibrarySource(library: try await shared.value), view: view)
    }
}

struct NoSongs: MediaPickerSource {
    func songs(matching search: String) throws(TonearmError) -> [MediaItem] { [] }
    func collections(_ grouping: MediaGrouping) throws(TonearmError) -> [MediaItemCollection] { [] }
    func playlists() throws(TonearmError) -> [(playlist: MediaPlaylist, items: [MediaItem])] { [] }
    func isEmpty() throws(TonearmError) -> Bool { true }
}

/// A library's songs with no playlists, smart ones included.
struct NoPlaylists: MediaPickerSource {
    let songs: MediaPicker.LibrarySource
    func songs(matching search: String) throws(TonearmError) -> [MediaItem] { try songs.songs(matching: search) }
    func collections(_ grouping: MediaGrouping) throws(TonearmError) -> [MediaItemCollection] { try songs.collections(grouping) }
    func playlists() throws(TonearmError) -> [(playlist: MediaPlaylist, items: [MediaItem])] { [] }
    func isEmpty() throws(TonearmError) -> Bool { try songs.isEmpty() }
}

/// `tonearm pick`'s screen, drawn as text without a terminal.
@Suite struct PickerScreenTests {
    /// A line without its colour and video codes.
    static func plain(_ line: String) -> String { line.replacing(/\x1B\[[0-9;]*m/, with: "") }

    static func render(_ p: MediaPicker, width: Int = 80, height: Int = 24, verb: String = "play") -> [String] {
        var p = p
        p.pageSize = PickerScreen.pageSize(height: height)
        return PickerScreen.render(p, width: width, height: height, verb: verb, libraryPath: "/music/library.sqlite")
    }

    @Test func everyLineFitsAndTheScreenHasItsHeight() async throws {
        var states: [MediaPicker] = []
        var p = try await ScreenLibrary.picker()
        states.append(p)
        for c in "晴天 一个" { _ = p.handle(.text(String(c))) }
        states.append(p)
        var a = try await ScreenLibrary.picker(.artists)
        _ = a.handle(.right)
        _ = a.handle(.toggle)
        states.append(a)
        _ = a.handle(.right)
        _ = a.handle(.end)
        states.append(a)
        for state in states {
            for width in [1, 20, 33, 41, 61, 80, 132] {
                for height in [1, 3, 7, 24, 50] {
                    let lines = Self.render(state, width: width, height: height)
                    #expect(lines.count == height, "\(width)×\(height)")
                    for line in lines {
                        let plain = Self.plain(line)
                        #expect(!plain.contains("\u{1B}"), "only colour codes: \(plain.debugDescription)")
                        #expect(TextWidth.of(plain) <= max(20, width) - 1, "\(width)×\(height): '\(plain)'")
                    }
                }
            }
        }
    }

    @Test func showsTheViewsTheSearchWhereAndWhatEnterDoes() async throws {
        var p = try await ScreenLibrary.picker()
        var lines = Self.render(p).map(Self.plain)
        #expect(lines[0].hasPrefix(" Songs   Artists   Albums   Genres   Playlists   Selected "))
        #expect(lines[1].trimmingCharacters(in: .whitespaces) == "Search:")
        #expect(lines[2].hasPrefix(" Songs ") && lines[2].hasSuffix("1 of 32 "))
        #expect(lines[3].hasPrefix("▸  Evil?]0;pwned?  Hacker — Escapes"), "a tag's escape sequence is not drawn: \(lines[3])")
        #expect(lines[22].trimmingCharacters(in: .whitespaces) == "Enter: play this song")
        #expect(lines[23].hasPrefix(" ↑↓ move  space select  ^A all  →/← open/back  Tab view  Enter play  Esc cancel"), "\(lines[23])")
        let eighty = Self.plain(PickerScreen.help(verb: "print", width: 79))
        #expect(eighty.trimmingCharacters(in: .whitespaces) == "space select  ^A all  →/← open/back  Tab view  Enter print  Esc cancel",
                "80 columns: the arrows go first")
        #expect(TextWidth.of(eighty) == 79)
        // A narrow terminal keeps what is needed most.
        #expect(Self.plain(PickerScreen.help(verb: "print", width: 40)) == " space select  Enter print  Esc cancel  ")
        #expect(Self.plain(PickerScreen.help(verb: "play", width: 10)) == " Enter pl…")

        for c in "晴" { _ = p.handle(.text(String(c))) }
        lines = Self.render(p, width: 60).map(Self.plain)
        #expect(lines[1].hasPrefix(" Search: 晴▏"))
        #expect(lines[2].hasSuffix("1 of 1 "))
        // The long title is cut by columns, and the length stays on the right.
        #expect(lines[3].hasPrefix("▸  晴天 — 一个很长") && lines[3].contains("…") && lines[3].hasSuffix(" 0:00  "), "\(lines[3])")
        #expect(TextWidth.of(lines[3]) == 59)

        var a = try await ScreenLibrary.picker(.albums)
        for c in "long" { _ = a.handle(.text(String(c))) }
        lines = Self.render(a, verb: "queue").map(Self.plain)
        #expect(lines[3].hasPrefix("▸  Long Album  The Band · 2001 · 30 tracks") && lines[3].hasSuffix(" 0:07 ›"), "\(lines[3])")
        #expect(lines[22].trimmingCharacters(in: .whitespaces) == "Enter: queue this album's 30 songs")
        _ = a.handle(.down)  // from the search to the list
        _ = a.handle(.text(" "))
        lines = Self.render(a).map(Self.plain)
        #expect(lines[0].contains(" Selected (30) "))
        #expect(lines[3].hasPrefix("▸✓ Long Album"))
        #expect(lines[22].trimmingCharacters(in: .whitespaces) == "30 selected, 0:07 · Enter: play them")
    }

    @Test func theHighlightIsReverseVideoOnlyInTheList() async throws {
        var p = try await ScreenLibrary.picker()
        _ = p.handle(.text("t"))
        #expect(!Self.render(p)[3].contains("\u{1B}[7m"), "while typing only ▸ marks the row Enter takes")
        _ = p.handle(.down)
        #expect(Self.render(p)[3].hasPrefix("\u{1B}[7m▸"))
        #expect(!Self.render(p)[4].contains("\u{1B}[7m"))
    }

    @Test func scrollsWithTheHighlight() async throws {
        var p = try await ScreenLibrary.picker(.albums)  // Escapes, Long Album, 叶惠美
        _ = p.handle(.down)
        _ = p.handle(.right)  // Long Album: 30 tracks, 10 rows shown
        p.pageSize = PickerScreen.pageSize(height: 15)
        _ = p.handle(.end)
        let lines = Self.render(p, height: 15).map(Self.plain)
        #expect(lines[2].hasPrefix(" Albums › Long Album") && lines[2].hasSuffix("30 of 30 "))
        #expect(lines[3].hasPrefix("   Track 21") && lines[12].hasPrefix("▸  Track 30"))
    }

    @Test func saysWhyThereIsNothing() async throws {
        let empty = Self.render(MediaPicker(source: NoSongs())).map(Self.plain)
        #expect(empty[3].hasPrefix(" The library is empty: /music/library.sqlite"))
        #expect(empty[4].hasPrefix(" Scan folders into it first: tonearm library scan DIR"))
        var p = try await ScreenLibrary.picker()
        for c in "zzz" { _ = p.handle(.text(String(c))) }
        var lines = Self.render(p).map(Self.plain)
        #expect(lines[3].hasPrefix(" Nothing matches “zzz”."))
        #expect(lines[4].hasPrefix(" Each word must start a word of a title, artist or album (Chinese, Japanese"))
        p = try await ScreenLibrary.picker(.selected)
        lines = Self.render(p).map(Self.plain)
        #expect(lines[3].hasPrefix(" Nothing selected yet: space selects the highlighted row."))
        // No playlists of its own: the smart ones that hold something are still there.
        p = try await ScreenLibrary.picker(.playlists)
        lines = Self.render(p).map(Self.plain)
        #expect(lines[3].hasPrefix("▸  Recently Added  smart, 32 tracks") && lines[4].hasPrefix("   Never Played  smart, 32 tracks"),
                "\(lines[3...4])")
        let source = MediaPicker.LibrarySource(library: try await ScreenLibrary.shared.value)
        p = MediaPicker(source: NoPlaylists(songs: source), view: .playlists)
        #expect(Self.render(p).map(Self.plain)[3].hasPrefix(" No playlists: tonearm library playlist create NAME"))
    }
}
