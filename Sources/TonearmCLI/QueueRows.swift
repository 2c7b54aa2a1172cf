// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm

/// What the queue rows are read from: the queue's items (a copy of all of them: O(n)) and its
/// play order (the value the queue holds: O(1)). ``QueuePlayer`` is one.
protocol QueueRowSource {
    func items() -> [QueueItem]
    var playOrder: PlayOrder { get }
}

extension QueuePlayer: QueueRowSource {}

/// The live screen's queue rows (issue 18), kept between events so that an event costs what it
/// changed, not the queue's length: the rows are built from all the items only when the items
/// or their order changed (``queueChanged()``, or an order that is not the one the rows were
/// built from); otherwise a refresh reads the play order (a value, no copy), moves the current
/// row and builds only the rows that come near the current one or the cursor for the first
/// time (their tags are read then). A session of 1,500 files then builds each row about once,
/// not 1,500 rows for each of its events.
struct QueueRows {
    /// Row → queue index.
    private(set) var rowItems: [Int] = []
    /// The row of the current item (nil: the queue is empty).
    private(set) var current: Int?
    /// Rows built since the start (each is one title, artist and failure looked up): what a
    /// refresh costs, counted for the tests.
    private(set) var rowsBuilt = 0
    /// Times all the items were read from the source (each O(n)).
    private(set) var rebuilds = 0

    /// The items the rows were built from, in queue order.
    private var items: [QueueItem] = []
    /// The play order they were built from (its `order` array shares the queue's storage while
    /// neither changes, so comparing it is O(1) then).
    private var builtOrder: [Int]?
    /// Rows built with their tags read (near the current row or the cursor once).
    private var tagged: [Bool] = []
    private var stale = true
    /// Queue index → row (the inverse of ``rowItems``).
    private var rowOfItem: [Int] = []
    /// Rows to build again at the next refresh (an item that failed: its row says why).
    private var changedRows: Set<Int> = []

    /// Rows from this many before the current row (or the cursor) to `tagsAfter` after it have
    /// their tags read (the screen shows at most a window around them).
    static let tagsBefore = 100, tagsAfter = 200

    /// The items or their order changed (an insert, a removal, a move, shuffle, a failure):
    /// the next refresh builds every row.
    mutating func queueChanged() { stale = true }

    /// The item at queue index `index` has a new row (it failed): only its row is built again.
    mutating func itemChanged(at index: Int) {
        if rowOfItem.indices.contains(index) { changedRows.insert(rowOfItem[index]) } else { stale = true }
    }

    /// Brings `rows` (in play order: what ``ScreenState/queue`` shows) up to date with `source`,
    /// in place (the rows are kept nowhere else, so that changing one copies none).
    /// `row(item, readTags)` makes an item's row (reading its tags when `readTags`); `cursor` is
    /// the row under the cursor; tags are read for the rows near the current one and the cursor
    /// when `readingTags`.
    mutating func refresh(_ rows: inout [ScreenState.QueueRow], from source: some QueueRowSource, cursor: Int?,
                          readingTags: Bool, row: (QueueItem, _ readTags: Bool) -> ScreenState.QueueRow) {
        let order = source.playOrder
        if stale || builtOrder != order.order || rows.count != rowItems.count {
            rebuild(&rows, from: source, order: order, cursor: cursor, readingTags: readingTags, row: row)
            return
        }
        for r in changedRows where r < rows.count {
            rows[r] = row(items[rowItems[r]], tagged[r])
            rowsBuilt += 1
        }
        changedRows = []
        current = items.isEmpty ? nil : (order.count == items.count ? order.position : order.current)
        guard readingTags else { return }
        for range in nearRanges(cursor: cursor) {
            for r in range where !tagged[r] {
                rows[r] = row(items[rowItems[r]], true)
                tagged[r] = true
                rowsBuilt += 1
            }
        }
    }

    /// Every row, from all the items.
    private mutating func rebuild(_ rows: inout [ScreenState.QueueRow], from source: some QueueRowSource, order: PlayOrder, cursor: Int?, readingTags: Bool,
                                  row: (QueueItem, _ readTags: Bool) -> ScreenState.QueueRow) {
        items = source.items()
        rebuilds += 1
        stale = false
        builtOrder = order.order
        rowItems = order.count == items.count ? order.order : Array(items.indices)
        current = items.isEmpty ? nil : (order.count == items.count ? order.position : order.current)
        tagged = Array(repeating: false, count: rowItems.count)
        if readingTags {
            for range in nearRanges(cursor: cursor) {
                for r in range { tagged[r] = true }
            }
        }
        rows = rowItems.indices.map { r in row(items[rowItems[r]], tagged[r]) }
        rowsBuilt += rows.count
        rowOfItem = Array(repeating: 0, count: items.count)
        for (r, i) in rowItems.enumerated() where i < items.count { rowOfItem[i] = r }
        changedRows = []
    }

    /// The rows whose tags are read: around the current row and the cursor.
    private func nearRanges(cursor: Int?) -> [Range<Int>] {
        let n = rowItems.count
        return [current ?? 0, cursor ?? 0].map { max(0, min(n, $0 - Self.tagsBefore))..<max(0, min(n, $0 + Self.tagsAfter)) }
    }
}
