// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import GRDB
import Testing
@testable import TonearmLibrary
import TonearmTestSupport

/// A library file made by an older Tonearm opens in this one: the migrations after v1 add the
/// playlists and recompute the search and sort keys, keeping every row and its counts.
@Suite struct SchemaUpgradeTests {
    @Test func aVersion1LibraryIsUpgradedInPlace() throws {
        let dir = try TempDir("upgrade")
        defer { dir.remove() }
        let path = dir.file("library.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(queue, upTo: "v1: items, artwork, full-text index")
            // A row as version 1 wrote it: the key kept "æ" (the fold of that version).
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO item (id, contentHash, path, size, mtime, title, artist, album, duration, container,
                        codec, sampleRate, channels, mediaType, isCompilation, playCount, rating, dateAdded,
                        titleKey, artistKey, albumKey, albumArtistKey, composerKey, genreKey)
                    VALUES (42, 7, '/music/1.mp3', 100, 1, 'Svefn-g-englar', 'Sigur Rós', 'Ágætis byrjun', 60, 'mp3',
                        'mp3', 44100, 2, 'music', 0, 3, 4, 0,
                        'svefn-g-englar', 'sigur ros', 'agætis byrjun', 'sigur ros', '', '')
                    """)
            }
            #expect(try MediaLibraryProbe.tables(queue).contains("playlist") == false)
        }

        let library = try MediaLibrary(path: path)
        let found = try MediaQuery.songs().filtered(by: .albumTitle("agaetis byrjun")).items(in: library)
        #expect(found.map(\.persistentID) == [42], "the key was recomputed with the new fold")
        #expect(try MediaQuery.search("agaetis").items(in: library).map(\.persistentID) == [42], "and the full-text index")
        let item = try #require(found.first)
        #expect(item.playCount == 3 && item.rating == 4 && item.path == "/music/1.mp3")
        #expect(try MediaQuery.albums().collectionSections(in: library).map(\.title) == ["A"], "sort keys filled")
        // v2's tables are there.
        _ = try library.createPlaylist(named: "Old favourites")
        let list = try library.addItems([42], to: "Old favourites")
        #expect(list.count == 1)
        // Opening again migrates nothing more and keeps everything.
        let again = try MediaLibrary(path: path)
        #expect(try again.items(in: "Old favourites").map(\.persistentID) == [42])
    }
}

enum MediaLibraryProbe {
    static func tables(_ queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
    }
}

/// A library made before v8 gets the CJK and pinyin search key, and its full-text index, on open.
@Suite struct SearchKeyUpgradeTests {
    @Test func aVersion7LibraryFindsChineseBySubstringAndPinyin() throws {
        let dir = try TempDir("upgrade-v7")
        defer { dir.remove() }
        let path = dir.file("library.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(queue, upTo: "v7: natural order of numbers in sort keys")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO item (id, contentHash, path, size, mtime, title, artist, album, duration, container,
                        codec, sampleRate, channels, mediaType, isCompilation, dateAdded,
                        titleKey, artistKey, albumKey, albumArtistKey, composerKey, genreKey)
                    VALUES (7, 7, '/music/1.mp3', 100, 1, '春江花月夜', '陈奕迅', '十年', 60, 'mp3',
                        'mp3', 44100, 2, 'music', 0, 0, '春江花月夜', '陈奕迅', '十年', '陈奕迅', '', '')
                    """)
            }
        }
        let library = try MediaLibrary(path: path)
        #expect(try MediaQuery.search("月").items(in: library).map(\.persistentID) == [7])
        #expect(try MediaQuery.search("chen yi xun").items(in: library).map(\.persistentID) == [7])
        #expect(try MediaQuery.search("春江").items(in: library).map(\.persistentID) == [7], "a prefix as before")
        // The triggers follow later changes.
        try library.write { db in try db.execute(sql: "DELETE FROM item WHERE id = 7") }
        #expect(try MediaQuery.search("月").items(in: library).isEmpty)
    }
}

/// v9 drops `item_contentHash` (no query used it): from a library made before, and from the
/// deferred schema of a first scan killed before it made its indexes.
@Suite struct ContentHashIndexUpgradeTests {
    @Test(arguments: [false, true]) func aVersion8LibraryLosesTheContentHashIndex(killedFirstScan: Bool) throws {
        let dir = try TempDir("upgrade-v8")
        defer { dir.remove() }
        let path = dir.file("library.sqlite")
        func indexes() throws -> [String] {
            try DatabaseQueue(path: path).read {
                try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'item'")
                    + String.fetchAll($0, sql: "SELECT name FROM deferredSchema")
            }
        }
        do {
            let queue = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(queue, upTo: "v8: CJK substrings and pinyin in the full-text index")
            if killedFirstScan { try queue.write(Schema.deferListingSchema) }
            try queue.close()
        }
        #expect(try indexes().contains("item_contentHash"))
        let library = try MediaLibrary(path: path)
        let after = try indexes()
        #expect(!after.contains("item_contentHash"))
        #expect(after.contains("item_artist") && after.contains("item_albumOrder"), "the others are kept (or made): \(after)")
        #expect(try library.statistics().items == 0)
    }
}

/// A new library is made at the last schema at once, not through the migrations: it must be
/// the schema the migrations end with, table by table, column by column, index by index.
@Suite struct NewLibrarySchemaTests {
    /// Everything that describes a database's schema but where and in what order its pages
    /// are: every table's columns (`table_xinfo`), foreign keys, indexes (`index_xinfo`, with
    /// uniqueness and origin) and the SQL of indexes, triggers and virtual tables (blanks
    /// collapsed), and the migrations recorded.
    static func describe(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            func squeezed(_ sql: String?) -> String {
                (sql ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
            }
            var lines: [String] = []
            let objects = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
            for object in objects {
                let type: String = object["type"], name: String = object["name"], table: String = object["tbl_name"]
                lines.append("\(type) \(name) on \(table)" + (type == "table" && !squeezed(object["sql"]).hasPrefix("CREATE VIRTUAL")
                    ? "" : ": " + squeezed(object["sql"])))
                if type == "table" {
                    for column in try Row.fetchAll(db, sql: "SELECT * FROM pragma_table_xinfo(?)", arguments: [name]) {
                        lines.append("  column \(column)")
                    }
                    for key in try Row.fetchAll(db, sql: "SELECT * FROM pragma_foreign_key_list(?)", arguments: [name]) {
                        lines.append("  foreign key \(key)")
                    }
                    for index in try Row.fetchAll(db, sql: "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?) ORDER BY name", arguments: [name]) {
                        lines.append("  index \(index)")
                        let indexName: String = index["name"]
                        for part in try Row.fetchAll(db, sql: "SELECT * FROM pragma_index_xinfo(?)", arguments: [indexName]) {
                            lines.append("    \(part)")
                        }
                    }
                }
            }
            let migrations = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
            lines.append("migrations: \(migrations)")
            return lines
        }
    }

    @Test func aNewLibraryHasTheSchemaTheMigrationsEndWith() throws {
        let dir = try TempDir("new-schema")
        defer { dir.remove() }
        let migrated = dir.file("migrated.sqlite")
        do {
            let queue = try DatabaseQueue(path: migrated)
            try Schema.migrator.migrate(queue)
            try queue.close()
        }
        let made = dir.file("new.sqlite")
        _ = try MediaLibrary(path: made)
        let expected = try Self.describe(migrated), got = try Self.describe(made)
        #expect(expected.count > 100)
        #expect(got == expected, "\(zip(got, expected).first { $0 != $1 }.map { "\($0) ≠ \($1)" } ?? "counts \(got.count), \(expected.count)")")
        #expect(Schema.migrator.migrations == Schema.migrationIdentifiers)
        // Made at once: the item table was created with every column (the migrations add
        // seven with ALTER TABLE, which appends them to the table's SQL).
        let itemSQL = try DatabaseQueue(path: made).read {
            try String.fetchOne($0, sql: "SELECT sql FROM sqlite_master WHERE name = 'item'")
        }
        #expect(itemSQL?.contains(", titleSort") == false)
        // Opened again, nothing is migrated and the library works.
        let library = try MediaLibrary(path: made)
        #expect(try Self.describe(made) == expected)
        _ = try library.createPlaylist(named: "Works")
        #expect(try library.statistics().items == 0)
    }

    /// A library file that is not empty (here: made by v1) goes through the migrations.
    @Test func aLibraryWithTablesIsMigratedNotRemade() throws {
        let dir = try TempDir("old-schema")
        defer { dir.remove() }
        let path = dir.file("library.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(queue, upTo: "v2: playlists")
            try queue.close()
        }
        _ = try MediaLibrary(path: path)
        let reference = dir.file("reference.sqlite")
        do {
            let queue = try DatabaseQueue(path: reference)
            try Schema.migrator.migrate(queue)
            try queue.close()
        }
        #expect(try Self.describe(path) == Self.describe(reference))
    }
}
