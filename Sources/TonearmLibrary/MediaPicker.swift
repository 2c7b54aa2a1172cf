// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// Where a ``MediaPicker`` gets what it shows. ``MediaPicker/LibrarySource`` reads a
/// ``MediaLibrary``; tests may give others.
public protocol MediaPickerSource: Sendable {
    /// The songs a full-text search for `search` finds (every word starts a word of the title,
    /// artist or album, see ``MediaQuery/searchText``), by title; every song for text with no words.
    func songs(matching search: String) throws(TonearmError) -> [MediaItem]
    /// Every song grouped by `grouping` (`.artist`, `.album` or `.genre`), in
    /// ``MediaQuery/collections(in:)`` order.
    func collections(_ grouping: MediaGrouping) throws(TonearmError) -> [MediaItemCollection]
    /// Every playlist with its items in order, by name.
    func playlists() throws(TonearmError) -> [(playlist: MediaPlaylist, items: [MediaItem])]
    /// The smart playlists shown after the playlists, with their items now (none by default).
    func smartPlaylists() throws(TonearmError) -> [(playlist: SmartPlaylist, items: [MediaItem])]
    /// Whether there is nothing at all to pick.
    func isEmpty() throws(TonearmError) -> Bool
}

extension MediaPickerSource {
    public func smartPlaylists() throws(TonearmError) -> [(playlist: SmartPlaylist, items: [MediaItem])] { [] }
}

/// The logic of a media picker (MPMediaPickerController) as a state machine: it takes keys and
/// returns what to do, and owns no terminal, thread or sound, so every rule is tested on its own.
/// A front end (the `tonearm pick` screen) feeds it keys, draws ``rows`` and the rest, and carries
/// out the actions.
///
/// It shows one of the ``View``s (songs, artists, albums, genres, playlists, the selection), and
/// inside a view a stack of levels: an artist opens onto its albums, an album or a playlist onto
/// its songs, a genre onto its albums. Typing filters the rows of the level shown: the songs view
/// searches the library (full text, each word starting a word of the title, artist or album); the
/// other levels keep rows whose words start with each word typed (case and accents ignored). The
/// selection is a list of songs in the order they were picked; it stays across searches, levels
/// and views. Picking a row that stands for a collection picks all its songs.
///
/// Keys (``Key``): text edits the search, except a space when the search is empty or the last key
/// moved rather than typed: then it selects or deselects the highlighted row and moves down.
/// ↑ ↓ page up/down, home and end move (the first ↓ after typing goes from the search to the
/// first row, where the typing left the highlight); → opens the highlighted artist, album, genre
/// or playlist, ← goes back (so does backspace in an empty search); tab and shift-tab change
/// view, keeping the search; select-all selects every row shown (deselects them when all are).
/// Enter picks the selection, or with none the highlighted row; escape and interrupt cancel.
/// A song is selected once, even from a playlist that holds it twice.
///
/// Not thread-safe: a value owned by one task. The source is asked for songs again on each change
/// of the songs view's search; the other views are read once and filtered in memory.
public struct MediaPicker: Sendable {
    /// What the picker shows at the top level.
    public enum View: String, Sendable, Hashable, CaseIterable {
        case songs, artists, albums, genres, playlists
        /// The songs picked so far, in order.
        case selected

        public var title: String {
            switch self {
            case .songs: "Songs"
            case .artists: "Artists"
            case .albums: "Albums"
            case .genres: "Genres"
            case .playlists: "Playlists"
            case .selected: "Selected"
            }
        }
    }

    /// An input.
    public enum Key: Sendable, Hashable {
        /// Typed (or pasted) text; a single space may select instead, see ``MediaPicker``.
        case text(String)
        /// Deletes the last character of the search; in an empty search, goes back.
        case backspace
        /// Deletes the last word of the search.
        case deleteWord
        /// Empties the search.
        case clearSearch
        case up, down, pageUp, pageDown, home, end
        /// Opens the highlighted collection.
        case right
        /// Goes back to the level above.
        case left
        /// The next view.
        case tab
        /// The previous view.
        case backTab
        /// Selects or deselects the highlighted row (whatever the search), and moves down.
        case toggle
        /// Selects every row shown, or deselects them when they all are.
        case selectAll
        case enter
        case escape
        case interrupt
    }

    /// What the front end does after a key.
    public enum Action: Sendable, Equatable {
        /// Nothing changed.
        case none
        /// Draw again.
        case redraw
        /// The user picked these songs, in order (the picker is done).
        case picked([MediaItem])
        /// The user cancelled (the picker is done).
        case cancelled
    }

    /// One line of the list.
    public struct Row: Sendable, Identifiable {
        public enum Kind: String, Sendable, Hashable {
            case song, artist, album, genre, playlist
        }

        public var kind: Kind
        /// A song's title or a collection's name ("Unknown Artist", … when untagged).
        public var title: String
        /// What tells rows apart: a song's artist and album, an album's artist and year, an
        /// artist's number of albums.
        public var detail: String
        /// The songs the row stands for, in order (a song: itself; an album: disc and track order).
        public var items: [MediaItem]
        /// Unique among the rows of one level.
        public var id: String
        /// The folded words a search is matched against (empty when the source searched).
        var words: [Substring]

        /// Whether → opens it.
        public var opens: Bool { kind != .song }
        /// Seconds of audio.
        public var duration: Double { items.reduce(0) { $0 + $1.duration } }
    }

    /// How much of a row is selected.
    public enum Selection: Sendable, Hashable {
        case none, some, all
    }

    /// What a level shows.
    enum Place: Sendable, Hashable {
        case view(View)
        /// The albums of the row's songs (an artist, a genre), or its songs (an album, a playlist).
        case inside(Row.Kind)
    }

    struct Level: Sendable {
        var place: Place
        var title: String
        /// A level inside a view: every row, unfiltered.
        var all: [Row]
        var search: String
        var cursor = 0
        var top = 0
    }

    public let source: any MediaPickerSource
    private var levels: [Level]
    private var cache: [View: [Row]] = [:]
    /// The rows shown: the level's rows that match its search.
    public private(set) var rows: [Row] = []
    /// The songs selected, in the order they were selected.
    public private(set) var selection: [MediaItem] = []
    private var selectedIDs: Set<UInt64> = []
    /// Whether the last key edited the search (then a space is typed, not a selection).
    public private(set) var isTyping = false
    /// Why the rows are empty when the source failed.
    public private(set) var message: String?
    /// Whether the source has nothing at all (checked when the picker is made).
    public let isLibraryEmpty: Bool
    /// Rows the front end shows at once: page up/down move by it, and ``top`` keeps the
    /// highlighted row within it.
    public var pageSize: Int {
        didSet {
            pageSize = max(1, pageSize)
            scrollToCursor()
        }
    }

    /// A picker over `source`, showing `view` with `search` typed.
    public init(source: any MediaPickerSource, view: View = .songs, search: String = "", pageSize: Int = 20) {
        self.source = source
        self.pageSize = max(1, pageSize)
        var empty = false
        var failure: String?
        do { empty = try source.isEmpty() } catch { failure = "\(error)" }
        isLibraryEmpty = empty
        levels = [Level(place: .view(view), title: view.title, all: [], search: search)]
        isTyping = !search.isEmpty
        refresh()
        if let failure { message = failure }
    }

    // MARK: What to draw

    public var view: View {
        guard case .view(let v) = levels[0].place else { return .songs }
        return v
    }

    /// The titles of the levels shown, from the view down ("Artists", "Beyoncé", "Lemonade").
    public var path: [String] { levels.map(\.title) }
    /// The search text of the level shown.
    public var search: String { levels[levels.count - 1].search }
    /// The index of the highlighted row in ``rows`` (0 when there are none).
    public var cursor: Int { levels[levels.count - 1].cursor }
    /// The first row to show: the highlighted row is always within `top ..< top + pageSize`.
    public var top: Int { levels[levels.count - 1].top }
    /// The highlighted row.
    public var highlighted: Row? { rows.indices.contains(cursor) ? rows[cursor] : nil }
    /// Whether the level shown is inside a view (← goes back).
    public var canGoBack: Bool { levels.count > 1 }

    /// How much of `row` is selected.
    public func selectionState(of row: Row) -> Selection {
        let n = row.items.reduce(0) { $0 + (selectedIDs.contains($1.persistentID) ? 1 : 0) }
        return n == 0 ? .none : n == row.items.count ? .all : .some
    }

    /// Whether `item` is selected.
    public func isSelected(_ item: MediaItem) -> Bool { selectedIDs.contains(item.persistentID) }

    // MARK: Keys

    /// Carries out `key`; what the front end should do next.
    public mutating func handle(_ key: Key) -> Action {
        switch key {
        case .text(let t):
            if t == " " && (!isTyping || search.isEmpty) { return toggleHighlighted() }
            let typed = String(t.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
            guard !typed.isEmpty else { return .none }
            if search.isEmpty && typed.allSatisfy(\.isWhitespace) { return .none }
            return setSearch(search + typed)
        case .backspace:
            if search.isEmpty { return goBack() }
            return setSearch(String(search.dropLast()))
        case .deleteWord:
            guard !search.isEmpty else { return .none }
            var s = Substring(search)
            while s.last?.isWhitespace == true { s.removeLast() }
            while let c = s.last, !c.isWhitespace { s.removeLast() }
            return setSearch(String(s))
        case .clearSearch:
            guard !search.isEmpty else { return .none }
            return setSearch("")
        case .up: return move(to: cursor - 1)
        case .down:
            // From the search, the first ↓ goes to the list's first row (which Enter would pick).
            if isTyping && cursor == 0 { return move(to: 0) }
            return move(to: cursor + 1)
        case .pageUp: return move(to: cursor - pageSize)
        case .pageDown: return move(to: cursor + pageSize)
        case .home: return move(to: 0)
        case .end: return move(to: rows.count - 1)
        case .right: return open()
        case .left:
            isTyping = false
            return goBack()
        case .tab: return switchView(by: 1)
        case .backTab: return switchView(by: -1)
        case .toggle: return toggleHighlighted()
        case .selectAll: return selectAllShown()
        case .enter:
            if !selection.isEmpty { return .picked(selection) }
            guard let row = highlighted, !row.items.isEmpty else { return .none }
            return .picked(row.items)
        case .escape, .interrupt:
            return .cancelled
        }
    }

    // MARK: Changes

    private mutating func setSearch(_ text: String) -> Action {
        isTyping = true
        levels[levels.count - 1].search = text
        levels[levels.count - 1].cursor = 0
        levels[levels.count - 1].top = 0
        refresh()
        return .redraw
    }

    private mutating func move(to index: Int) -> Action {
        isTyping = false
        guard !rows.isEmpty else { return .redraw }  // the search loses its cursor
        levels[levels.count - 1].cursor = max(0, min(rows.count - 1, index))
        scrollToCursor()
        return .redraw
    }

    private mutating func scrollToCursor() {
        let i = levels.count - 1
        var top = levels[i].top
        let cursor = levels[i].cursor
        if cursor < top { top = cursor }
        if cursor >= top + pageSize { top = cursor - pageSize + 1 }
        top = max(0, min(top, max(0, rows.count - pageSize)))
        levels[i].top = top
    }

    private mutating func open() -> Action {
        isTyping = false
        guard let row = highlighted, row.opens else { return .none }
        let inside: [Row]
        switch row.kind {
        case .artist:
            inside = Self.albumRows(row.items, byYear: true)
        case .genre:
            inside = Self.albumRows(row.items, byYear: false)
        case .album, .playlist:
            // A playlist may hold a song twice: each entry is a row of its own.
            inside = row.items.enumerated().map { Self.songRow($1, id: "\($0)", matching: true) }
        case .song:
            return .none
        }
        levels.append(Level(place: .inside(row.kind), title: row.title, all: inside, search: ""))
        refresh()
        return .redraw
    }

    private mutating func goBack() -> Action {
        guard levels.count > 1 else { return .none }
        levels.removeLast()
        refresh()
        return .redraw
    }

    private mutating func switchView(by step: Int) -> Action {
        let all = View.allCases
        let i = all.firstIndex(of: view) ?? 0
        let next = all[(i + step + all.count) % all.count]
        levels = [Level(place: .view(next), title: next.title, all: [], search: search)]
        refresh()
        return .redraw
    }

    private mutating func toggleHighlighted() -> Action {
        isTyping = false
        guard let row = highlighted else { return .none }
        let index = cursor
        toggle(row.items)
        if view == .selected && levels.count == 1 {
            refresh()  // a deselected song leaves the list; the next one comes under the cursor
            levels[levels.count - 1].cursor = max(0, min(index, rows.count - 1))
            scrollToCursor()
        } else {
            _ = move(to: index + 1)
        }
        return .redraw
    }

    private mutating func selectAllShown() -> Action {
        isTyping = false
        let items = rows.flatMap(\.items)
        guard !items.isEmpty else { return .none }
        toggle(items)
        if view == .selected && levels.count == 1 { refresh() }
        return .redraw
    }

    /// Deselects `items` when all are selected, else selects those that are not (appended in order).
    private mutating func toggle(_ items: [MediaItem]) {
        if items.allSatisfy({ selectedIDs.contains($0.persistentID) }) {
            let ids = Set(items.map(\.persistentID))
            selection.removeAll { ids.contains($0.persistentID) }
            selectedIDs.subtract(ids)
        } else {
            for item in items where selectedIDs.insert(item.persistentID).inserted {
                selection.append(item)
            }
        }
    }

    /// Fills ``rows`` for the level shown and its search, keeping the cursor in range.
    private mutating func refresh() {
        message = nil
        let level = levels[levels.count - 1]
        do {
            switch level.place {
            case .view(.songs):
                // Text with no words (punctuation only) filters nothing, as in the other views.
                let search = Self.words(level.search).isEmpty ? "" : level.search
                rows = try source.songs(matching: search).map { Self.songRow($0, id: String($0.persistentID), matching: false) }
            case .view(.selected):
                rows = Self.filter(selection.map { Self.songRow($0, id: String($0.persistentID), matching: true) }, level.search)
            case .view(let v):
                rows = Self.filter(try cachedRows(v), level.search)
            case .inside:
                rows = Self.filter(level.all, level.search)
            }
        } catch {
            rows = []
            message = "\(error)"
        }
        let i = levels.count - 1
        levels[i].cursor = max(0, min(levels[i].cursor, rows.count - 1))
        scrollToCursor()
    }

    private mutating func cachedRows(_ view: View) throws(TonearmError) -> [Row] {
        if let rows = cache[view] { return rows }
        var made: [Row]
        switch view {
        case .artists:
            made = try source.collections(.artist).map { c in
                let albums = c.albumTitles.count
                return Self.row(.artist, title: c.name ?? "Unknown Artist",
                                detail: "\(albums == 1 ? "1 album" : "\(albums) albums"), \(Self.tracks(c.count))",
                                items: c.items, match: [c.name])
            }
        case .albums:
            made = try source.collections(.album).map(Self.albumRow)
        case .genres:
            made = try source.collections(.genre).map { c in
                Self.row(.genre, title: c.name ?? "Unknown Genre", detail: Self.tracks(c.count), items: c.items, match: [c.name])
            }
        case .playlists:
            made = try source.playlists().map { p in
                var row = Self.row(.playlist, title: p.playlist.name, detail: Self.tracks(p.items.count), items: p.items,
                                   match: [p.playlist.name])
                row.id = "playlist:\(p.playlist.persistentID)"
                return row
            }
            // Then the smart ones that hold something.
            made += try source.smartPlaylists().filter { !$0.items.isEmpty }.map { p in
                var row = Self.row(.playlist, title: p.playlist.name, detail: "smart, " + Self.tracks(p.items.count),
                                   items: p.items, match: [p.playlist.name])
                row.id = "smart:\(p.playlist.name)"
                return row
            }
        case .songs, .selected:
            made = []
        }
        // Rows with the same id (two artists whose names fold alike, say) are told apart.
        var seen: [String: Int] = [:]
        let unique = made.map { r -> Row in
            var r = r
            let n = seen[r.id, default: 0]
            seen[r.id] = n + 1
            if n > 0 { r.id += "#\(n)" }
            return r
        }
        cache[view] = unique
        return unique
    }

    // MARK: Rows

    static func songRow(_ item: MediaItem, id: String, matching: Bool) -> Row {
        let detail = [item.artist, item.albumTitle].compactMap { $0 }.joined(separator: " — ")
        return Row(kind: .song, title: item.title, detail: detail, items: [item], id: "song:\(id)",
                   words: matching ? words([item.title, item.artist, item.albumTitle].compactMap { $0 }.joined(separator: " ")) : [])
    }

    static func albumRow(_ c: MediaItemCollection) -> Row {
        let r = c.representativeItem
        let artist = c.albumArtist ?? "Unknown Artist"
        let detail = [artist, r.year.map(String.init)].compactMap { $0 }.joined(separator: " · ") + " · " + tracks(c.count)
        return row(.album, title: c.name ?? "Unknown Album", detail: detail, items: c.items, match: [c.name, c.albumArtist],
                   key: albumKey(r))
    }

    /// The albums of `items` (an artist's or a genre's songs): by year then title, or by title
    /// then artist; each album's songs in disc and track order.
    static func albumRows(_ items: [MediaItem], byYear: Bool) -> [Row] {
        var order: [String] = []
        var groups: [String: [MediaItem]] = [:]
        for item in items {
            let key = albumKey(item)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(item)
        }
        let albums = order.map { key in
            groups[key]!.sorted {
                ($0.discNumber ?? 1, $0.trackNumber ?? 0, SearchKey.fold($0.title)) < ($1.discNumber ?? 1, $1.trackNumber ?? 0, SearchKey.fold($1.title))
            }
        }.map { MediaItemCollection(items: $0, grouping: .album) }
        let sorted = albums.sorted { a, b in
            let ta = SearchKey.fold(a.name), tb = SearchKey.fold(b.name)
            if byYear {
                let ya = a.representativeItem.year ?? 0, yb = b.representativeItem.year ?? 0
                return ya != yb ? ya < yb : ta < tb
            }
            return ta != tb ? ta < tb : SearchKey.fold(a.albumArtist) < SearchKey.fold(b.albumArtist)
        }
        return sorted.map(albumRow)
    }

    /// An album's identity: its title and, unless a compilation, its artist.
    static func albumKey(_ item: MediaItem) -> String {
        SearchKey.fold(item.albumTitle) + "\u{1}" + (item.isCompilation ? "" : SearchKey.fold(item.albumArtistOrArtist))
    }

    static func row(_ kind: Row.Kind, title: String, detail: String, items: [MediaItem], match: [String?], key: String? = nil) -> Row {
        Row(kind: kind, title: title, detail: detail, items: items, id: "\(kind.rawValue):\(key ?? SearchKey.fold(title))",
            words: words(match.compactMap { $0 }.joined(separator: " ")))
    }

    static func tracks(_ n: Int) -> String { n == 1 ? "1 track" : "\(n) tracks" }

    // MARK: Matching

    /// The folded words of `text`, split as the full-text index splits them.
    static func words(_ text: String) -> [Substring] {
        Substring(SearchKey.fold(text)).split(whereSeparator: { !$0.isLetter && !$0.isNumber })
    }

    /// The rows in which every word of `search` starts a word (all rows for a search with none).
    static func filter(_ rows: [Row], _ search: String) -> [Row] {
        let wanted = words(search)
        guard !wanted.isEmpty else { return rows }
        return rows.filter { row in wanted.allSatisfy { w in row.words.contains { $0.hasPrefix(w) } } }
    }
}

extension MediaPicker {
    /// A ``MediaPickerSource`` over a library: songs through ``MediaQuery`` (full-text search),
    /// artists, albums and genres as its collections, and the library's playlists.
    public struct LibrarySource: MediaPickerSource {
        public let library: MediaLibrary
        /// Only items of this type (nil: music, podcasts and audiobooks alike).
        public let mediaType: MediaType?

        public init(library: MediaLibrary, mediaType: MediaType? = nil) {
            self.library = library
            self.mediaType = mediaType
        }

        public func songs(matching search: String) throws(TonearmError) -> [MediaItem] {
            var query = MediaQuery(groupingType: .title, mediaType: mediaType)
            if !MediaPicker.words(search).isEmpty { query = query.searching(search) }
            return try query.items(in: library)
        }

        public func collections(_ grouping: MediaGrouping) throws(TonearmError) -> [MediaItemCollection] {
            try MediaQuery(groupingType: grouping, mediaType: mediaType).collections(in: library)
        }

        public func playlists() throws(TonearmError) -> [(playlist: MediaPlaylist, items: [MediaItem])] {
            var result: [(playlist: MediaPlaylist, items: [MediaItem])] = []
            for p in try library.playlists() {
                var items = try library.items(in: p.name)
                if let mediaType { items = items.filter { $0.mediaType == mediaType } }
                result.append((p, items))
            }
            return result
        }

        /// ``MediaLibrary/standardSmartPlaylists()`` (music only: none for podcasts and audiobooks).
        public func smartPlaylists() throws(TonearmError) -> [(playlist: SmartPlaylist, items: [MediaItem])] {
            guard mediaType == nil || mediaType == .music else { return [] }
            return try library.standardSmartPlaylists()
        }

        public func isEmpty() throws(TonearmError) -> Bool {
            let s = try library.statistics()
            switch mediaType {
            case nil: return s.items == 0
            case .music: return s.songs == 0
            case .podcast: return s.podcasts == 0
            case .audiobook: return s.audiobooks == 0
            }
        }
    }
}
