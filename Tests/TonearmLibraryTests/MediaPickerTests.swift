// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmLibrary
import TonearmTestSupport

/// One generated library (LibraryFixtures), scanned once for the whole picker suite and only
/// read by it, with a playlist "Mix" of three entries (one song twice).
enum PickerLibrary {
    static let shared = Task { () throws -> MediaLibrary in
        let dir = try TempDir("picker-library")
        removeAtExit = dir.path
        atexit { if let p = PickerLibrary.removeAtExit { try? FileManager.default.removeItem(atPath: p) } }
        try LibraryFixtures.make(at: dir.file("Music"))
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        try await library.scanToEnd(folders: [dir.file("Music")])
        let songs = try MediaQuery.songs().items(in: library)
        let first = try #require(songs.first { $0.title == "Sæglópur 1-1" })
        let tenth = try #require(songs.first { $0.title == "Lemonade Song 10" })
        try library.createPlaylist(named: "Mix")
        try library.addItems([first.persistentID, tenth.persistentID, first.persistentID], to: "Mix")
        return library
    }
    nonisolated(unsafe) static var removeAtExit: String?

    static func picker(_ view: MediaPicker.View = .songs, search: String = "", pageSize: Int = 20) async throws -> MediaPicker {
        MediaPicker(source: MediaPicker.LibrarySource(library: try await shared.value), view: view, search: search, pageSize: pageSize)
    }
}

/// A source with nothing in it, or one that fails.
struct FakeSource: MediaPickerSource {
    var failure: TonearmError?
    func check() throws(TonearmError) { if let failure { throw failure } }
    func songs(matching search: String) throws(TonearmError) -> [MediaItem] { try check(); return [] }
    func collections(_ grouping: MediaGrouping) throws(TonearmError) -> [MediaItemCollection] { try check(); return [] }
    func playlists() throws(TonearmError) -> [(playlist: MediaPlaylist, items: [MediaItem])] { try check(); return [] }
    func isEmpty() throws(TonearmError) -> Bool { try check(); return true }
}

extension MediaPicker {
    /// Types `text` one character at a time, as keys arrive.
    mutating func type(_ text: String) {
        for c in text { _ = handle(.text(String(c))) }
    }

    mutating func press(_ keys: Key...) {
        for k in keys { _ = handle(k) }
    }

    var titles: [String] { rows.map(\.title) }
}

/// The picker's state machine (MPMediaPickerController's logic) over a real library, without a
/// terminal: typing, browsing, selecting, picking and cancelling.
@Suite struct MediaPickerTests {
    @Test func startsWithEverySongByTitle() async throws {
        let p = try await PickerLibrary.picker()
        #expect(p.view == .songs && p.path == ["Songs"] && p.search.isEmpty && !p.isTyping)
        #expect(p.rows.count == LibraryFixtures.mediaCount, "music, podcasts and audiobooks alike")
        #expect(p.titles.prefix(3) == ["Album One Track 1", "Album One Track 2", "Album One Track 3"])
        #expect(p.rows.allSatisfy { $0.kind == .song && $0.items.count == 1 })
        #expect(p.rows.first?.detail == "The Band — Album One")
        #expect(!p.isLibraryEmpty && p.message == nil && p.cursor == 0 && p.selection.isEmpty)
    }

    @Test func typingNarrowsAndBackspaceWidens() async throws {
        var p = try await PickerLibrary.picker()
        p.type("lemo")
        #expect(p.isTyping && p.search == "lemo")
        #expect(p.rows.count == 10 && p.rows.allSatisfy { $0.title.hasPrefix("Lemonade Song") })
        p.type("nade song 1")
        #expect(p.search == "lemonade song 1", "a space while typing is typed")
        #expect(Set(p.titles) == ["Lemonade Song 1", "Lemonade Song 10"], "each word starts a word: 1 and 10")
        p.type("0")
        #expect(p.titles == ["Lemonade Song 10"])
        p.press(.backspace, .backspace)
        #expect(p.search == "lemonade song " && p.rows.count == 10)
        p.press(.deleteWord)
        #expect(p.search == "lemonade " && p.rows.count == 10)
        p.press(.clearSearch)
        #expect(p.search.isEmpty && p.rows.count == LibraryFixtures.mediaCount)
        p.type("zzz")
        #expect(p.rows.isEmpty && p.message == nil && p.highlighted == nil)
        #expect(p.handle(.enter) == .none, "nothing to pick")
    }

    @Test func caseAndAccentsAreIgnored() async throws {
        var p = try await PickerLibrary.picker()
        p.type("SIGUR ros")
        #expect(p.rows.count == 8 && p.rows.allSatisfy { $0.detail == "Sigur Rós — Ágætis byrjun" })
        p.press(.clearSearch)
        p.type("beyonce")
        #expect(p.rows.count == 11, "Lemonade and a hit on a compilation")
        p.press(.clearSearch)
        p.type("ÆGAETIS")
        #expect(p.rows.isEmpty, "æ is a letter of its own")
        p.press(.clearSearch)
        p.type("ágæt")
        #expect(p.rows.count == 8)
    }

    @Test func chineseTextSearchesAndDeletesByCharacter() async throws {
        var p = try await PickerLibrary.picker()
        p.type("晴天")
        #expect(p.search == "晴天" && p.rows.count == 6 && p.rows.allSatisfy { $0.title.hasPrefix("晴天") })
        p.press(.clearSearch)
        p.type("周杰伦")
        #expect(p.rows.count == 7, "six songs of 叶惠美 and the GBK-tagged 青花瓷")
        #expect(p.titles.contains("青花瓷"))
        p.press(.backspace)
        #expect(p.search == "周杰", "backspace removes one character, not one byte")
        p.press(.tab)
        #expect(p.view == .artists && p.titles == ["周杰伦"], "a word's start matches in the names views too")
        // A combining accent typed after its letter joins it; backspace removes both.
        p.press(.clearSearch)
        p.press(.text("e"), .text("\u{301}"))
        #expect(p.search == "é" && p.search.count == 1)
        p.press(.backspace)
        #expect(p.search.isEmpty)
    }

    @Test func pastedTextIsTypedWithControlCharactersAsSpaces() async throws {
        var p = try await PickerLibrary.picker()
        #expect(p.handle(.text("lemonade\nsong\u{1B}10")) == .redraw)
        #expect(p.search == "lemonade song 10" && p.titles == ["Lemonade Song 10"])
    }

    @Test func browsesArtistThenAlbumThenSongs() async throws {
        var p = try await PickerLibrary.picker()
        #expect(p.handle(.tab) == .redraw)
        #expect(p.view == .artists && p.path == ["Artists"])
        #expect(p.rows.allSatisfy { $0.kind == .artist && $0.opens })
        p.type("band")
        #expect(p.titles == ["The Band"])
        #expect(p.rows[0].detail == "3 albums, 17 tracks", "its two and a song on a compilation")
        #expect(p.handle(.right) == .redraw)
        #expect(p.path == ["Artists", "The Band"] && p.search.isEmpty && !p.isTyping)
        #expect(p.titles == ["Album Two", "Album One", "Hits 2020"], "by year: 1999, 2001, 2020")
        #expect(p.rows.allSatisfy { $0.kind == .album })
        p.press(.down)
        p.press(.right)
        #expect(p.path == ["Artists", "The Band", "Album One"])
        #expect(p.titles == (1...8).map { "Album One Track \($0)" }, "in track order")
        #expect(p.handle(.right) == .none, "a song does not open")
        p.press(.left)
        #expect(p.path == ["Artists", "The Band"] && p.cursor == 1, "back where it was")
        p.press(.backspace)  // an empty search: back
        #expect(p.path == ["Artists"] && p.search == "band" && p.titles == ["The Band"], "the search is kept")
        #expect(p.handle(.left) == .none && p.handle(.backspace) == .redraw)
        #expect(p.search == "ban")
    }

    @Test func genresOpenOntoTheirAlbums() async throws {
        var p = try await PickerLibrary.picker(.genres)
        p.type("pop")
        #expect(p.titles == ["Pop"], "Mandopop's word does not start with pop")
        p.press(.right)
        #expect(p.titles == ["Hits 2020", "Lemonade", "我很忙"], "by title; 我很忙 is ID3v1 genre 13, Pop")
        #expect(p.rows[0].items.count == 6, "a compilation stays one album whatever its artists")
        #expect(p.rows[0].detail == "Various Artists · 2020 · 6 tracks")
        #expect(p.rows[0].items.map(\.trackNumber) == [1, 2, 3, 4, 5, 6])
    }

    @Test func albumsMatchTheirArtistToo() async throws {
        var p = try await PickerLibrary.picker(.albums, search: "sigur")
        #expect(p.isTyping && p.titles == ["Ágætis byrjun"])
        #expect(p.rows[0].items.map(\.discNumber) == [1, 1, 1, 1, 2, 2, 2, 2])
        p.press(.clearSearch)
        p.type("various")
        #expect(p.titles == ["Hits 2020"])
    }

    @Test func spaceSelectsAfterMovingAndTypesWhileTyping() async throws {
        var p = try await PickerLibrary.picker()
        p.type("lemonade song")
        #expect(p.rows.count == 10 && p.titles[0] == "Lemonade Song 1")
        p.press(.down)  // from the search to the first row, which stays highlighted
        #expect(!p.isTyping && p.cursor == 0)
        #expect(p.handle(.text(" ")) == .redraw)
        #expect(p.search == "lemonade song" && p.selection.map(\.title) == ["Lemonade Song 1"] && p.cursor == 1)
        p.press(.text(" "))
        #expect(p.selection.map(\.title) == ["Lemonade Song 1", "Lemonade Song 2"], "in natural order: 2 after 1")
        #expect(p.selectionState(of: p.rows[0]) == .all && p.selectionState(of: p.rows[2]) == .none)
        p.press(.up)
        p.press(.text(" "))  // deselects
        #expect(p.selection.map(\.title) == ["Lemonade Song 1"])
        // In an empty search a space always selects; .toggle selects even while typing.
        p.press(.clearSearch)
        #expect(p.isTyping)
        p.press(.text(" "))
        #expect(p.search.isEmpty && p.selection.count == 2)
        p.type("晴天")
        p.press(.toggle)
        #expect(p.selection.map(\.title) == ["Lemonade Song 1", "Album One Track 1", "晴天 1"])
    }

    @Test func selectionStaysAcrossSearchesLevelsAndViewsInPickedOrder() async throws {
        var p = try await PickerLibrary.picker()
        p.type("hit 3")
        p.press(.down, .toggle)
        p.press(.clearSearch)
        p.type("episode 2")
        p.press(.down, .toggle)
        #expect(p.selection.map(\.title) == ["Hit 3", "Episode 2"])
        p.press(.tab, .tab)  // albums, with the search kept
        #expect(p.view == .albums && p.search == "episode 2" && p.rows.isEmpty)
        p.press(.clearSearch)
        p.type("lemonade")
        p.press(.down, .right)  // into the album
        p.press(.down, .down, .toggle)  // its third song
        p.press(.left)
        #expect(p.selectionState(of: p.rows[0]) == .some)
        p.press(.toggle)  // the whole album: its other nine songs, appended in track order
        #expect(p.selection.count == 12)
        #expect(p.selection.map(\.title).prefix(4) == ["Hit 3", "Episode 2", "Lemonade Song 3", "Lemonade Song 1"])
        #expect(p.selection.last?.title == "Lemonade Song 10")
        #expect(p.handle(.enter) == .picked(p.selection), "enter picks the selection, wherever the cursor is")

        // The Selected view lists them in order; deselecting removes the row under the cursor.
        p.press(.clearSearch)
        p.press(.backTab, .backTab, .backTab)
        #expect(p.view == .selected && p.titles == p.selection.map(\.title))
        p.press(.down, .down, .toggle)  // (the first ↓ leaves the search)
        #expect(p.titles.prefix(2) == ["Hit 3", "Lemonade Song 3"] && p.cursor == 1 && p.selection.count == 11)
        p.type("lemonade song 1")
        #expect(Set(p.titles) == ["Lemonade Song 1", "Lemonade Song 10"])
    }

    @Test func enterWithNothingSelectedPicksTheHighlightedRow() async throws {
        var p = try await PickerLibrary.picker()
        p.type("sæglópur")
        p.press(.down, .down)
        guard case .picked(let one) = p.handle(.enter) else { Issue.record("not picked"); return }
        #expect(one.map(\.title) == [p.rows[1].title])
        // An album row: the whole album, disc and track order; typing then enter: the top hit.
        var a = try await PickerLibrary.picker(.albums)
        a.type("agætis")
        guard case .picked(let album) = a.handle(.enter) else { Issue.record("not picked"); return }
        #expect(album.map(\.title) == ["Sæglópur 1-1", "Sæglópur 1-2", "Sæglópur 1-3", "Sæglópur 1-4",
                                       "Sæglópur 2-1", "Sæglópur 2-2", "Sæglópur 2-3", "Sæglópur 2-4"])
        #expect(album.allSatisfy { $0.path.hasSuffix(".mp3") && FileManager.default.fileExists(atPath: $0.path) })
    }

    @Test func playlistsOpenOntoTheirEntriesInOrder() async throws {
        var p = try await PickerLibrary.picker(.playlists)
        // The library's own, then the smart ones that hold something (nothing is played or rated).
        let music = try MediaQuery.songs().items(in: try await PickerLibrary.shared.value).count
        #expect(p.titles == ["Mix", "Recently Added", "Never Played"] && p.rows[0].detail == "3 tracks")
        #expect(p.rows[1].detail == "smart, \(music) tracks" && p.rows[2].detail == p.rows[1].detail)
        guard case .picked(let all) = p.handle(.enter) else { Issue.record("not picked"); return }
        #expect(all.map(\.title) == ["Sæglópur 1-1", "Lemonade Song 10", "Sæglópur 1-1"], "entries as they are, twice included")
        p.press(.right)
        #expect(p.path == ["Playlists", "Mix"] && p.titles == ["Sæglópur 1-1", "Lemonade Song 10", "Sæglópur 1-1"])
        p.press(.toggle)
        #expect(p.selection.count == 1 && p.selectionState(of: p.rows[2]) == .all, "a song is selected once")

        // A smart playlist is found by its name and opens onto its songs (never played: by title).
        var q = try await PickerLibrary.picker(.playlists, search: "never")
        #expect(q.titles == ["Never Played"])
        q.press(.down, .right)
        let never = try await PickerLibrary.shared.value.smartPlaylist(.neverPlayed, limit: 1000)
        #expect(q.path == ["Playlists", "Never Played"] && q.titles == never.map(\.title) && never.count == music)
    }

    @Test func selectAllTogglesEveryRowShown() async throws {
        var p = try await PickerLibrary.picker(.songs, search: "album two")
        #expect(p.rows.count == 8)
        #expect(p.handle(.selectAll) == .redraw)
        #expect(p.selection.map(\.title) == (1...8).map { "Album Two Track \($0)" })
        p.press(.clearSearch)
        p.type("album")
        p.press(.selectAll)
        #expect(p.selection.count == 16, "the eight not yet selected are added")
        p.press(.selectAll)
        #expect(p.selection.isEmpty, "all were selected: all are deselected")
    }

    @Test func cancelPicksNothing() async throws {
        var p = try await PickerLibrary.picker()
        p.press(.down, .toggle)
        #expect(p.handle(.escape) == .cancelled)
        #expect(p.handle(.interrupt) == .cancelled)
    }

    @Test func pagesAndKeepsTheHighlightInView() async throws {
        var p = try await PickerLibrary.picker(pageSize: 5)
        let n = p.rows.count
        p.press(.pageDown)
        #expect(p.cursor == 5 && p.top == 1)
        p.press(.pageDown, .pageDown)
        #expect(p.cursor == 15 && p.top == 11)
        p.press(.up, .up, .up, .up, .up)
        #expect(p.cursor == 10 && p.top == 10)
        p.press(.end)
        #expect(p.cursor == n - 1 && p.top == n - 5)
        p.press(.down)
        #expect(p.cursor == n - 1)
        p.pageSize = 10
        #expect(p.top == n - 10)
        p.press(.home)
        #expect(p.cursor == 0 && p.top == 0)
        p.press(.pageUp)
        #expect(p.cursor == 0)
    }

    @Test func tabCyclesTheViewsBothWays() async throws {
        var p = try await PickerLibrary.picker()
        var seen: [MediaPicker.View] = []
        for _ in MediaPicker.View.allCases {
            p.press(.tab)
            seen.append(p.view)
        }
        #expect(seen == [.artists, .albums, .genres, .playlists, .selected, .songs])
        p.press(.backTab)
        #expect(p.view == .selected && p.rows.isEmpty)
        p.type("beyonce")
        p.press(.tab, .tab)
        #expect(p.view == .artists && p.titles == ["Beyoncé"])
    }

    @Test func anEmptyLibrarySaysSoAndPicksNothing() {
        var p = MediaPicker(source: FakeSource())
        #expect(p.isLibraryEmpty && p.rows.isEmpty && p.message == nil)
        #expect(p.handle(.enter) == .none)
        #expect(p.handle(.text(" ")) == .none)
        #expect(p.handle(.right) == .none)
        #expect(p.handle(.selectAll) == .none)
        #expect(p.handle(.down) == .redraw && p.cursor == 0)
        #expect(p.handle(.tab) == .redraw && p.rows.isEmpty)
        #expect(p.handle(.escape) == .cancelled)
    }

    @Test func aSourceThatFailsIsShownNotThrown() {
        var p = MediaPicker(source: FakeSource(failure: .library(path: "/x.sqlite", reason: "disk I/O error")))
        #expect(p.rows.isEmpty)
        #expect(p.message?.contains("disk I/O error") == true, "\(p.message ?? "")")
        p.type("a")
        #expect(p.message?.contains("disk I/O error") == true)
        #expect(p.handle(.interrupt) == .cancelled)
    }
}
