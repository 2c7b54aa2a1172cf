// SPDX-License-Identifier: GPL-3.0-or-later

/// How `tonearm play` repeats.
enum LoopMode: String, Sendable, CaseIterable {
    case off, one, all

    /// The next mode for the `l` key: off → one → all → off.
    var next: LoopMode {
        switch self {
        case .off: .one
        case .one: .all
        case .all: .off
        }
    }
}

/// The order of `tonearm play`'s list as a plain value: which entry plays, what comes after it,
/// and which entries failed. No threads, no sound: the command carries out what it returns.
struct PlayQueue: Sendable {
    let entries: [String]
    private(set) var index: Int
    var loopMode: LoopMode
    private(set) var failed: Set<Int> = []

    init(entries: [String], loopMode: LoopMode = .off) {
        self.entries = entries
        self.index = 0
        self.loopMode = loopMode
    }

    var current: String? { entries.indices.contains(index) ? entries[index] : nil }

    /// The entry to play after the current one finished by itself (nil: the list is done).
    mutating func advanceAfterFinish() -> Int? {
        switch loopMode {
        case .one: return index
        case .off: return step(+1, wrap: false)
        case .all: return step(+1, wrap: true)
        }
    }

    /// The user's "next": the following entry, wrapping only when looping the list.
    mutating func next() -> Int? { step(+1, wrap: loopMode == .all) }

    /// The user's "previous": the entry before, or the first one again.
    mutating func previous() -> Int? {
        if index > 0 { index -= 1 } else if loopMode == .all { index = entries.count - 1 }
        return index
    }

    /// Marks the current entry as failed and moves on (never loops back into failures only).
    mutating func failCurrent() -> Int? {
        failed.insert(index)
        if failed.count == entries.count { return nil }
        if loopMode == .one { loopMode = .off }
        var candidate = step(+1, wrap: loopMode == .all)
        while let c = candidate, failed.contains(c) {
            candidate = step(+1, wrap: loopMode == .all)
        }
        return candidate
    }

    private mutating func step(_ d: Int, wrap: Bool) -> Int? {
        let n = index + d
        if entries.indices.contains(n) {
            index = n
            return n
        }
        guard wrap, !entries.isEmpty else { return nil }
        index = (n + entries.count) % entries.count
        return index
    }
}
