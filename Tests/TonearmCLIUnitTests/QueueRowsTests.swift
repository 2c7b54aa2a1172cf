// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Testing
import Tonearm
@testable import TonearmCLI

/// The play screen's queue rows cost what changed, not the queue's length (issue 18: 1,500
/// tiny files on `null:untimed` spent most of 14.6 s building every row again for each of
/// their events). A real ``QueuePlayer`` (not playing: its order moves as a skip moves it) is
/// read through a source that counts how often all its items are copied; the rows a refresh
/// builds are counted by ``QueueRows/rowsBuilt``. Every figure is counted, none timed.
@Suite struct QueueRowsTests {
    /// Counts the copies of all the items (each O(n)).
    struct CountingSource: QueueRowSource {
        let queue: QueuePlayer
        let copies = Counter()
        func items() -> [QueueItem] {
            copies.value.withLock { $0 += 1 }
            return queue.items()
        }
        var playOrder: PlayOrder { queue.playOrder }
    }

    final class Counter: Sendable {
        let value = Mutex(0)
    }

    /// The rows as the play session makes them: tags read once (here: made up from the path)
    /// and kept; a row whose tags were never read shows what was read of that path, or its name.
    final class Rows {
        var tags: [String: (String, String?)] = [:]
        var failures: [UInt64: String] = [:]
        func row(_ item: QueueItem, _ readTags: Bool) -> ScreenState.QueueRow {
            if readTags, tags[item.path] == nil { tags[item.path] = ("Song " + item.url.lastPathComponent, "Artist") }
            let t = tags[item.path] ?? (item.url.lastPathComponent, nil)
            return ScreenState.QueueRow(title: t.0, artist: t.1, failure: failures[item.persistentID])
        }
        /// What a refresh from nothing shows now (the reference).
        func fresh(_ source: some QueueRowSource, cursor: Int?) -> [ScreenState.QueueRow] {
            var model = QueueRows(), rows: [ScreenState.QueueRow] = []
            model.refresh(&rows, from: source, cursor: cursor, readingTags: true, row: row)
            return rows
        }
    }

    static func queue(_ count: Int) -> QueuePlayer {
        QueuePlayer(items: (0..<count).map { QueueItem(path: "/music/track \($0).flac", persistentID: UInt64($0 + 1)) },
                    output: { NullOutput() })
    }

    /// Playing through the queue item by item builds each row once when listed and once more
    /// when it comes near the current one (its tags read): at most one row per event, for a
    /// queue of 1,500 as for 6,000, and the items are copied once. What is shown is what a
    /// refresh from nothing shows.
    @Test(arguments: [1_500, 6_000])
    func playingThroughTheQueueBuildsAtMostOneRowPerEvent(count: Int) {
        let q = Self.queue(count)
        defer { q.stop() }
        let source = CountingSource(queue: q)
        let make = Rows()
        var model = QueueRows(), rows: [ScreenState.QueueRow] = []
        // Listed before the first sound (file names), then the tags near the current row.
        model.refresh(&rows, from: source, cursor: nil, readingTags: false, row: make.row)
        #expect(model.rowsBuilt == count)
        model.refresh(&rows, from: source, cursor: nil, readingTags: true, row: make.row)
        #expect(model.rowsBuilt == count + QueueRows.tagsAfter)
        #expect(rows == make.fresh(source.queue, cursor: nil))
        var most = 0
        for next in 1..<count {
            q.skipToItem(at: next)
            // Each event of the change (the item changed, the previous one played to its end, …).
            for _ in 0..<3 {
                let before = model.rowsBuilt
                model.refresh(&rows, from: source, cursor: nil, readingTags: true, row: make.row)
                most = max(most, model.rowsBuilt - before)
            }
            #expect(model.current == next)
            if next % 500 == 0 { #expect(rows == make.fresh(source.queue, cursor: nil), "at \(next)") }
        }
        #expect(most <= 1, "a refresh built \(most) rows")
        #expect(model.rowsBuilt == 2 * count, "each row built twice in all")
        #expect(model.rebuilds == 1 && source.copies.value.withLock { $0 } == 1, "the items were copied again")
        #expect(rows == make.fresh(source.queue, cursor: nil))
    }

    /// A failure builds its own row again (saying why), a cursor far away the rows around it; an
    /// edit (the queue says it changed) and a new order (shuffle, even unsaid) build all rows.
    @Test func aFailureTheCursorAndEditsBuildWhatTheyChange() {
        let count = 1_500
        let q = Self.queue(count)
        defer { q.stop() }
        let source = CountingSource(queue: q)
        let make = Rows()
        var model = QueueRows(), rows: [ScreenState.QueueRow] = []
        model.refresh(&rows, from: source, cursor: nil, readingTags: true, row: make.row)
        var built = model.rowsBuilt

        make.failures[11] = "cannot open: invalid data"
        model.itemChanged(at: 10)
        model.refresh(&rows, from: source, cursor: nil, readingTags: true, row: make.row)
        #expect(model.rowsBuilt - built == 1)
        #expect(rows[10].failure == "cannot open: invalid data")
        built = model.rowsBuilt

        // The cursor at row 1,000: its window's rows, once.
        model.refresh(&rows, from: source, cursor: 1_000, readingTags: true, row: make.row)
        #expect(model.rowsBuilt - built == QueueRows.tagsBefore + QueueRows.tagsAfter)
        #expect(rows == make.fresh(source.queue, cursor: 1_000))
        built = model.rowsBuilt
        model.refresh(&rows, from: source, cursor: 1_001, readingTags: true, row: make.row)
        #expect(model.rowsBuilt - built == 1)

        // A move keeps the order's indices (0, 1, 2, …): only the queue's word says it changed.
        q.move(from: 0, to: 5)
        model.queueChanged()
        model.refresh(&rows, from: source, cursor: 1_001, readingTags: true, row: make.row)
        #expect(model.rebuilds == 2)
        #expect(rows == make.fresh(source.queue, cursor: 1_001))
        #expect(rows[5].title == "Song track 0.flac")

        q.remove(at: 3)
        model.refresh(&rows, from: source, cursor: 1_001, readingTags: true, row: make.row)
        #expect(model.rebuilds == 3, "a shorter order is another order")
        #expect(rows.count == count - 1 && rows == make.fresh(source.queue, cursor: 1_001))

        q.shuffleMode = .songs
        model.refresh(&rows, from: source, cursor: 1_001, readingTags: true, row: make.row)
        #expect(model.rebuilds == 4, "a shuffled order is another order")
        #expect(rows == make.fresh(source.queue, cursor: 1_001))
        #expect(model.rowItems == q.playOrder.order)
    }
}
