// SPDX-License-Identifier: GPL-3.0-or-later
import GRDB

/// The library database's schema, as GRDB migrations (applied in order, each once, in a
/// transaction, when a ``MediaLibrary`` opens the file).
///
/// - `item`: one row per playable file. `id` is the item's persistentID (as a signed 64-bit
///   integer, the SQLite rowid): first derived from the file's content hash, then kept for the
///   row's life, so a moved or re-tagged file keeps it with its play count and rating.
///   `contentHash` is the current content hash (a re-tagged file gets a new one); `path` is
///   unique. The `…Key` columns hold the text folded for case- and accent-insensitive matching
///   (see ``SearchKey``).
/// - `artwork`: cover images by content hash, stored once however many items carry them.
/// - `itemSearch`: an FTS5 index over the folded title, artist and album, kept by triggers
///   (since v8 over `searchKey`).
/// - `playlist` (v2): one row per playlist; `persistentID` is random when it is made and kept
///   through renames; `name` is unique (compared exactly); dates are seconds since 1970.
/// - `playlistItem` (v2): the items of a playlist, in `position` order (0-based, no gaps after a
///   change made through ``MediaLibrary``). Both foreign keys cascade: deleting a playlist deletes
///   its rows, and an item removed from the library (a rescan that finds its file gone) leaves
///   every playlist that held it, the others keeping their order.
/// - v3 recomputes every `…Key` column with ``SearchKey`` version 2 (which spells out "æ", "ø",
///   "ł"…), so a library made before finds "Ágætis" from "agaetis" without a rescan (the FTS
///   index follows through its update trigger), and adds the `…Sort` columns: the ``SortKey``
///   of each name, which listings are ordered by (pinyin for Chinese, articles skipped…) and
///   sections are made from.
/// - v4 (listing indexes): `item_albumOrder` in the album grouping's order replaces
///   `item_albumSort`; `item_mediaType` is gone (it drew every query to a scan
///   of the table).
/// - v5 adds `deferredSchema`, where a first scan keeps the SQL of the indexes it builds at the
///   end (see ``deferListingSchema(_:)``).
/// - v6 records each row's ``ContentHash`` version (`hashVersion`, 1 for the rows before it),
///   so that a file moved after the hash changed is still recognised.
/// - v7 recomputes the `…Sort` columns with numbers in natural order (``SortKey``: "Track 2"
///   before "Track 10").
/// - v8 adds `searchKey` (``SearchIndex``: the folded title, artist and album with each CJK
///   character a word of its own, and the pinyin of Chinese names) and makes `itemSearch` index
///   it instead of the three keys, so that any substring of Chinese text and its pinyin find it.
/// - v9 drops `item_contentHash`: no query looks rows up by content hash (a scan and the
///   watcher read every row's hash once, with the table), and a first scan spent 2.8k
///   instructions a file building it.
enum Schema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1: items, artwork, full-text index") { db in
            try db.execute(sql: """
                \(Schema.firstTables)
                );
                CREATE INDEX item_contentHash ON item(contentHash);
                CREATE INDEX item_artist ON item(artistKey, year, albumKey, discNumber, trackNumber);
                CREATE INDEX item_album ON item(albumKey, albumArtistKey, discNumber, trackNumber);
                CREATE INDEX item_albumArtist ON item(albumArtistKey);
                CREATE INDEX item_genre ON item(genreKey);
                CREATE INDEX item_composer ON item(composerKey);
                CREATE INDEX item_title ON item(titleKey);
                CREATE INDEX item_mediaType ON item(mediaType);
                CREATE VIRTUAL TABLE itemSearch USING fts5(
                    titleKey, artistKey, albumKey,
                    content='item', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
                );
                CREATE TRIGGER item_ai AFTER INSERT ON item BEGIN
                    INSERT INTO itemSearch(rowid, titleKey, artistKey, albumKey)
                    VALUES (new.id, new.titleKey, new.artistKey, new.albumKey);
                END;
                CREATE TRIGGER item_ad AFTER DELETE ON item BEGIN
                    INSERT INTO itemSearch(itemSearch, rowid, titleKey, artistKey, albumKey)
                    VALUES ('delete', old.id, old.titleKey, old.artistKey, old.albumKey);
                END;
                CREATE TRIGGER item_au AFTER UPDATE OF titleKey, artistKey, albumKey ON item BEGIN
                    INSERT INTO itemSearch(itemSearch, rowid, titleKey, artistKey, albumKey)
                    VALUES ('delete', old.id, old.titleKey, old.artistKey, old.albumKey);
                    INSERT INTO itemSearch(rowid, titleKey, artistKey, albumKey)
                    VALUES (new.id, new.titleKey, new.artistKey, new.albumKey);
                END;
                """)
        }
        m.registerMigration("v2: playlists") { db in
            try db.execute(sql: """
                CREATE TABLE playlist (
                    id INTEGER PRIMARY KEY,
                    persistentID INTEGER NOT NULL UNIQUE,
                    name TEXT NOT NULL UNIQUE,
                    dateCreated REAL NOT NULL,
                    dateModified REAL NOT NULL
                );
                CREATE TABLE playlistItem (
                    playlistID INTEGER NOT NULL REFERENCES playlist(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    itemID INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                    PRIMARY KEY (playlistID, position)
                );
                CREATE INDEX playlistItem_item ON playlistItem(itemID);
                """)
        }
        m.registerMigration("v3: search keys spell out æ, ø, ł…; sort keys") { db in
            for column in sortColumns {
                try db.execute(sql: "ALTER TABLE item ADD COLUMN \(column) TEXT NOT NULL DEFAULT ''")
            }
            try recomputeKeys(db, columns: keyColumns + sortColumns)
            try db.execute(sql: """
                CREATE INDEX item_titleSort ON item(titleSort);
                CREATE INDEX item_artistSort ON item(artistSort);
                CREATE INDEX item_albumSort ON item(albumSort);
                CREATE INDEX item_albumArtistSort ON item(albumArtistSort);
                """)
        }
        m.registerMigration("v4: listing indexes") { db in
            // Without statistics SQLite takes any index matching an equality, and
            // item_mediaType matched every query (`mediaType = 'music'`, nearly every row): a
            // listing of one artist's songs read the whole table. item_albumOrder holds the
            // album grouping's order (sort key, folded key, MediaQuery's album identity, then
            // disc, track, title; the expressions must stay those of MediaQuery's ORDER BY to
            // be used), so albums list and group without sorting; item_albumSort is its prefix.
            // An album's songs are still found through item_album (albumKey first).
            try db.execute(sql: """
                DROP INDEX item_mediaType;
                DROP INDEX item_albumSort;
                CREATE INDEX item_albumOrder ON item(
                    albumSort, albumKey, (CASE WHEN isCompilation THEN '' ELSE albumArtistKey END),
                    COALESCE(discNumber, 1), COALESCE(trackNumber, 0), titleSort);
                """)
        }
        m.registerMigration("v5: deferred schema") { db in
            // Indexes and triggers a bulk load dropped, to be made again (see deferListingSchema).
            try db.execute(sql: "CREATE TABLE deferredSchema (name TEXT PRIMARY KEY, sql TEXT NOT NULL)")
        }
        m.registerMigration("v6: content hash version") { db in
            // Rows keep the ContentHash version of their contentHash: 1 for every row so far.
            try db.execute(sql: "ALTER TABLE item ADD COLUMN hashVersion INTEGER NOT NULL DEFAULT 1")
        }
        m.registerMigration("v7: natural order of numbers in sort keys") { db in
            try recomputeKeys(db, columns: sortColumns)
        }
        m.registerMigration("v8: CJK substrings and pinyin in the full-text index") { db in
            // The column filled first, then the index built from it in one pass, then the
            // triggers (an external-content index must be told the values it holds).
            try db.execute(sql: """
                DROP TRIGGER IF EXISTS item_ai;
                DROP TRIGGER IF EXISTS item_ad;
                DROP TRIGGER IF EXISTS item_au;
                DROP TABLE itemSearch;
                DELETE FROM deferredSchema WHERE name = 'item_ai';
                ALTER TABLE item ADD COLUMN searchKey TEXT NOT NULL DEFAULT '';
                """)
            try recomputeKeys(db, columns: ["searchKey"])
            try db.execute(sql: """
                CREATE VIRTUAL TABLE itemSearch USING fts5(
                    searchKey, content='item', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
                );
                INSERT INTO itemSearch(itemSearch) VALUES ('rebuild');
                CREATE TRIGGER item_ai AFTER INSERT ON item BEGIN
                    INSERT INTO itemSearch(rowid, searchKey) VALUES (new.id, new.searchKey);
                END;
                CREATE TRIGGER item_ad AFTER DELETE ON item BEGIN
                    INSERT INTO itemSearch(itemSearch, rowid, searchKey) VALUES ('delete', old.id, old.searchKey);
                END;
                CREATE TRIGGER item_au AFTER UPDATE OF searchKey ON item BEGIN
                    INSERT INTO itemSearch(itemSearch, rowid, searchKey) VALUES ('delete', old.id, old.searchKey);
                    INSERT INTO itemSearch(rowid, searchKey) VALUES (new.id, new.searchKey);
                END;
                """)
        }
        m.registerMigration("v9: no content hash index") { db in
            // Also when a killed first scan deferred it (see deferListingSchema).
            try db.execute(sql: """
                DROP INDEX IF EXISTS item_contentHash;
                DELETE FROM deferredSchema WHERE name = 'item_contentHash';
                """)
        }
        return m
    }

    /// The artwork table and the item table's columns as v1 made them (up to `genreKey`): the
    /// start of v1's migration and of ``finalSchema``, written once.
    static let firstTables = """
        CREATE TABLE artwork (
            hash INTEGER PRIMARY KEY,
            mimeType TEXT NOT NULL,
            data BLOB NOT NULL
        );
        CREATE TABLE item (
            id INTEGER PRIMARY KEY,
            contentHash INTEGER NOT NULL,
            path TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime INTEGER NOT NULL,
            title TEXT NOT NULL,
            artist TEXT,
            album TEXT,
            albumArtist TEXT,
            composer TEXT,
            genre TEXT,
            trackNumber INTEGER,
            trackCount INTEGER,
            discNumber INTEGER,
            discCount INTEGER,
            year INTEGER,
            releaseDate TEXT,
            duration REAL NOT NULL,
            container TEXT NOT NULL,
            codec TEXT NOT NULL,
            sampleRate INTEGER NOT NULL,
            channels INTEGER NOT NULL,
            bitsPerSample INTEGER,
            bitRate INTEGER,
            mediaType TEXT NOT NULL,
            isCompilation INTEGER NOT NULL,
            bpm INTEGER,
            lyrics TEXT,
            trackGain REAL, trackPeak REAL, albumGain REAL, albumPeak REAL,
            artworkHash INTEGER REFERENCES artwork(hash),
            playCount INTEGER NOT NULL DEFAULT 0,
            skipCount INTEGER NOT NULL DEFAULT 0,
            lastPlayedDate REAL,
            rating INTEGER NOT NULL DEFAULT 0,
            dateAdded REAL NOT NULL,
            titleKey TEXT NOT NULL,
            artistKey TEXT NOT NULL,
            albumKey TEXT NOT NULL,
            albumArtistKey TEXT NOT NULL,
            composerKey TEXT NOT NULL,
            genreKey TEXT NOT NULL
        """

    /// The identifiers of ``migrator``'s migrations, in order.
    static let migrationIdentifiers = [
        "v1: items, artwork, full-text index", "v2: playlists", "v3: search keys spell out æ, ø, ł…; sort keys",
        "v4: listing indexes", "v5: deferred schema", "v6: content hash version",
        "v7: natural order of numbers in sort keys", "v8: CJK substrings and pinyin in the full-text index",
        "v9: no content hash index",
    ]

    /// The schema the migrations end with, made at once: the tables (the item table's columns
    /// in the order the migrations leave them, with their defaults), the indexes, the full-text
    /// index and its triggers. A test holds it to a database migrated from v1.
    static let finalSchema = """
        \(Schema.firstTables),
            titleSort TEXT NOT NULL DEFAULT '',
            artistSort TEXT NOT NULL DEFAULT '',
            albumSort TEXT NOT NULL DEFAULT '',
            albumArtistSort TEXT NOT NULL DEFAULT '',
            composerSort TEXT NOT NULL DEFAULT '',
            genreSort TEXT NOT NULL DEFAULT '',
            hashVersion INTEGER NOT NULL DEFAULT 1,
            searchKey TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX item_artist ON item(artistKey, year, albumKey, discNumber, trackNumber);
        CREATE INDEX item_album ON item(albumKey, albumArtistKey, discNumber, trackNumber);
        CREATE INDEX item_albumArtist ON item(albumArtistKey);
        CREATE INDEX item_genre ON item(genreKey);
        CREATE INDEX item_composer ON item(composerKey);
        CREATE INDEX item_title ON item(titleKey);
        CREATE INDEX item_titleSort ON item(titleSort);
        CREATE INDEX item_artistSort ON item(artistSort);
        CREATE INDEX item_albumArtistSort ON item(albumArtistSort);
        CREATE INDEX item_albumOrder ON item(
            albumSort, albumKey, (CASE WHEN isCompilation THEN '' ELSE albumArtistKey END),
            COALESCE(discNumber, 1), COALESCE(trackNumber, 0), titleSort);
        CREATE TABLE playlist (
            id INTEGER PRIMARY KEY,
            persistentID INTEGER NOT NULL UNIQUE,
            name TEXT NOT NULL UNIQUE,
            dateCreated REAL NOT NULL,
            dateModified REAL NOT NULL
        );
        CREATE TABLE playlistItem (
            playlistID INTEGER NOT NULL REFERENCES playlist(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            itemID INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
            PRIMARY KEY (playlistID, position)
        );
        CREATE INDEX playlistItem_item ON playlistItem(itemID);
        CREATE TABLE deferredSchema (name TEXT PRIMARY KEY, sql TEXT NOT NULL);
        CREATE VIRTUAL TABLE itemSearch USING fts5(
            searchKey, content='item', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER item_ai AFTER INSERT ON item BEGIN
            INSERT INTO itemSearch(rowid, searchKey) VALUES (new.id, new.searchKey);
        END;
        CREATE TRIGGER item_ad AFTER DELETE ON item BEGIN
            INSERT INTO itemSearch(itemSearch, rowid, searchKey) VALUES ('delete', old.id, old.searchKey);
        END;
        CREATE TRIGGER item_au AFTER UPDATE OF searchKey ON item BEGIN
            INSERT INTO itemSearch(itemSearch, rowid, searchKey) VALUES ('delete', old.id, old.searchKey);
            INSERT INTO itemSearch(rowid, searchKey) VALUES (new.id, new.searchKey);
        END;
        """

    /// Brings the database to the current schema: a new (empty) database gets ``finalSchema``
    /// at once, recorded as migrated through every migration (GRDB's `grdb_migrations` table,
    /// as its migrator keeps it); any other goes through ``migrator``. Making a new library
    /// this way takes one transaction instead of eight, each followed by GRDB's checks.
    static func prepare(_ writer: some DatabaseWriter) throws {
        let created = try writer.write { db -> Bool in
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 else { return false }
            try db.execute(sql: finalSchema)
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            for id in migrationIdentifiers {
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [id])
            }
            return true
        }
        if !created { try migrator.migrate(writer) }
    }

    /// Drops the item table's indexes (but the path's uniqueness) and the trigger that feeds
    /// the full-text index from new rows, so that a first scan inserts into a bare table; their
    /// SQL is kept in `deferredSchema`, in the same transaction, so that a scan killed before
    /// ``restoreDeferredSchema(_:)`` leaves a database that the next query needing them completes. Called by
    /// the scanner, in a write transaction.
    static func deferListingSchema(_ db: Database) throws {
        let rows = try Row.fetchAll(db, sql: """
            SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'item' AND sql IS NOT NULL
            AND (type = 'index' OR (type = 'trigger' AND name = 'item_ai'))
            """)
        for row in rows {
            let type: String = row["type"], name: String = row["name"], sql: String = row["sql"]
            try db.execute(sql: "INSERT INTO deferredSchema (name, sql) VALUES (?, ?)", arguments: [name, sql])
            try db.execute(sql: "DROP \(type == "index" ? "INDEX" : "TRIGGER") \(name)")
        }
    }

    /// Makes again what ``deferListingSchema(_:)`` dropped, with the full-text index rebuilt from
    /// the rows (sorting once is much faster than growing each index row by row). Does nothing
    /// when nothing is deferred. In a write transaction: at the end of a scan, at the start of a
    /// later one, and before the first query that needs the indexes (a first scan left them, was
    /// killed, or runs in another process).
    static func restoreDeferredSchema(_ db: Database) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT sql FROM deferredSchema")
        guard !rows.isEmpty else { return }
        for row in rows { try db.execute(sql: row["sql"]) }
        try db.execute(sql: "INSERT INTO itemSearch(itemSearch) VALUES ('rebuild')")
        try db.execute(sql: "DELETE FROM deferredSchema")
    }

    /// Whether indexes are deferred (a first scan runs or was killed).
    static func hasDeferredSchema(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM deferredSchema)") ?? false
    }

    /// The folded-key, sort-key and search-key columns, in the order of ``derivedTexts(title:artist:album:albumArtist:composer:genre:)``.
    static let keyColumns = ["titleKey", "artistKey", "albumKey", "albumArtistKey", "composerKey", "genreKey"]
    static let sortColumns = ["titleSort", "artistSort", "albumSort", "albumArtistSort", "composerSort", "genreSort"]
    static let derivedColumns = keyColumns + sortColumns + ["searchKey"]

    /// The values of ``derivedColumns`` for an item's names: ``keyColumns``, ``sortColumns``
    /// (the album artist's falls back to the artist), then the ``SearchIndex`` text.
    static func derivedTexts(title: String?, artist: String?, album: String?, albumArtist: String?,
                             composer: String?, genre: String?) -> [String] {
        let texts = [title, artist, album, albumArtist ?? artist, composer, genre]
        // One array, made at its size (concatenating three cost 2.3k instructions a file).
        var derived: [String] = []
        derived.reserveCapacity(2 * texts.count + 1)
        for text in texts { derived.append(SearchKey.fold(text)) }
        for text in texts { derived.append(SortKey.make(text)) }
        derived.append(SearchIndex.text(keys: derived[0..<3]))
        return derived
    }

    /// Sets `columns` (some of ``derivedColumns``, those the schema has at the time) of every
    /// item from its names.
    static func recomputeKeys(_ db: Database, columns: [String]) throws {
        let positions = columns.map { derivedColumns.firstIndex(of: $0)! }
        let rows = try Row.fetchCursor(db, sql: "SELECT id, title, artist, album, albumArtist, composer, genre FROM item")
        let sets = columns.map { "\($0) = ?" }.joined(separator: ", ")
        let update = try db.makeStatement(sql: "UPDATE item SET \(sets) WHERE id = ?")
        var changes: [(Int64, [String])] = []
        while let row = try rows.next() {
            let texts = derivedTexts(title: row["title"], artist: row["artist"], album: row["album"],
                                     albumArtist: row["albumArtist"], composer: row["composer"], genre: row["genre"])
            changes.append((row["id"], positions.map { texts[$0] }))
        }
        for (id, keys) in changes {
            var arguments = StatementArguments(keys)
            arguments += [id]
            try update.execute(arguments: arguments)
        }
    }
}
