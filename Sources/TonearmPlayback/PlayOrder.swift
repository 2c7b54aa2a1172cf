// SPDX-License-Identifier: GPL-3.0-or-later

/// How a queue repeats (`MPMusicRepeatMode`).
public enum RepeatMode: String, Sendable, Codable, CaseIterable {
    /// Play the queue once.
    case none
    /// Play the current item again and again.
    case one
    /// Play the whole queue again after its end.
    case all
}

/// How a queue is shuffled (`MPMusicShuffleMode`).
public enum ShuffleMode: String, Sendable, Codable, CaseIterable {
    case off
    /// Every item once, in a random order.
    case songs
    /// Albums in a random order, each album's items in queue order.
    case albums
}

/// The order a queue plays in: a permutation of the item indices, the position of the current
/// item in it, and the repeat and shuffle modes. A plain value: every rule of MPMusicPlayerController
/// (shuffle plays everything once before repeating; un-shuffling keeps the current item; skipping
/// with repeat-one moves on; previous wraps only with repeat-all) lives here and is tested without
/// threads or sound. Deterministic for a given seed, so it can be saved and restored.
public struct PlayOrder: Sendable, Codable, Equatable {
    /// Item indices in play order.
    public private(set) var order: [Int]
    /// Index into ``order`` of the current item.
    public private(set) var position: Int
    public private(set) var repeatMode: RepeatMode
    public private(set) var shuffleMode: ShuffleMode
    /// The album key of each item (for album shuffle), by item index.
    private var albums: [String]
    private var rng: SplitMix64
    /// Each item's priority (MPD's `prio`, 0…255), by item index; nil while every one is 0 (and
    /// in orders saved before priorities). Shuffled by songs, higher priorities play first.
    public private(set) var priorities: [UInt8]?

    /// A queue of `count` items (album keys and priorities optional), starting at item `start`.
    public init(count: Int, albums: [String]? = nil, start: Int = 0, repeatMode: RepeatMode = .none,
                shuffleMode: ShuffleMode = .off, seed: UInt64 = 0x5EED, priorities: [UInt8]? = nil) {
        order = Array(0..<max(0, count))
        self.albums = albums ?? Array(repeating: "", count: max(0, count))
        self.priorities = priorities?.count == max(0, count) && priorities?.contains(where: { $0 != 0 }) == true ? priorities : nil
        position = order.isEmpty ? 0 : min(max(0, start), count - 1)
        self.repeatMode = repeatMode
        self.shuffleMode = .off
        rng = SplitMix64(seed: seed)
        if shuffleMode != .off { setShuffle(shuffleMode) }
    }

    public var count: Int { order.count }

    /// This order with its position at `p` (what a saved position says; clamped).
    func at(position p: Int) -> PlayOrder {
        var copy = self
        copy.position = order.isEmpty ? 0 : min(max(0, p), order.count - 1)
        return copy
    }

    /// The priority of item `index` (0 for an unknown one).
    public func priority(ofItem index: Int) -> UInt8 {
        guard let priorities, priorities.indices.contains(index) else { return 0 }
        return priorities[index]
    }
    /// The current item's index, or nil for an empty queue.
    public var current: Int? { order.isEmpty ? nil : order[position] }

    /// The item that follows the current one when it ends by itself: the same with repeat-one,
    /// the first again after the last with repeat-all, nil at the end otherwise.
    public var nextOnEnd: Int? {
        var copy = self  // the generator is part of the value: advancing later gives the same item
        return copy.advanceOnEnd() ? copy.current : nil
    }

    /// Moves on after the current item ended by itself. False at the end of the queue (the
    /// position stays on the last item). With repeat-all and shuffle, a new shuffle order begins
    /// that does not start with the item just played.
    @discardableResult
    public mutating func advanceOnEnd() -> Bool {
        guard !order.isEmpty else { return false }
        if repeatMode == .one { return true }
        return step(forward: true)
    }

    /// Skips to the next item (repeat-one does not hold it). False at the end without repeat-all.
    @discardableResult
    public mutating func skipToNext() -> Bool {
        guard !order.isEmpty else { return false }
        return step(forward: true)
    }

    /// Skips to the previous item (wrapping to the last only with repeat-all). False at the start.
    @discardableResult
    public mutating func skipToPrevious() -> Bool {
        guard !order.isEmpty else { return false }
        return step(forward: false)
    }

    /// Goes to the first item of the play order.
    public mutating func skipToBeginning() { position = 0 }

    /// Makes item `index` current (its place in the play order). False for an unknown index.
    @discardableResult
    public mutating func jump(toItem index: Int) -> Bool {
        guard let p = order.firstIndex(of: index) else { return false }
        position = p
        return true
    }

    private mutating func step(forward: Bool) -> Bool {
        if forward {
            if position + 1 < order.count { position += 1; return true }
            guard repeatMode == .all else { return false }
            if shuffleMode != .off { reshuffle(avoidingFirst: order[position]) }
            position = 0
            return true
        } else {
            if position > 0 { position -= 1; return true }
            guard repeatMode == .all else { return false }
            position = order.count - 1
            return true
        }
    }

    public mutating func setRepeat(_ mode: RepeatMode) { repeatMode = mode }

    /// Changes the shuffle mode. Shuffling puts the current item first and the rest in a random
    /// order after it; un-shuffling returns to queue order at the current item.
    public mutating func setShuffle(_ mode: ShuffleMode) {
        guard mode != shuffleMode || mode != .off else { return }
        let cur = current
        shuffleMode = mode
        if mode == .off {
            order = Array(0..<order.count)
            position = cur ?? 0
            return
        }
        guard let cur else { return }
        order = shuffled(first: cur)
        position = 0
    }

    /// Starts the queue afresh in `mode`, as a listener starting it: shuffled, a new random
    /// order of every item whose first is `first` when given (for albums, the rest of its album
    /// after it) and random otherwise — not the current item, which ``setShuffle(_:)`` keeps
    /// first when shuffling a queue already under way. Not shuffled, queue order from `first`
    /// (the first item when nil). The position goes to the start of the new order (to `first`).
    /// An unknown `first` counts as nil.
    public mutating func startShuffled(_ mode: ShuffleMode, first: Int? = nil) {
        let first = first.flatMap { order.indices.contains($0) ? $0 : nil }
        shuffleMode = mode
        guard mode != .off else {
            order = Array(0..<order.count)
            position = first ?? 0
            return
        }
        order = shuffled(first: first)
        position = 0
    }

    /// A new random order for a new pass of repeat-all, whose first item is not `previous`
    /// (when there is a choice).
    private mutating func reshuffle(avoidingFirst previous: Int) {
        var o = shuffled(first: nil)
        if o.count > 1, o[0] == previous {
            if shuffleMode == .albums {
                // Rotate to the next album boundary (by one item when there is only one album).
                let i = o.firstIndex(where: { albums[$0] != albums[previous] }) ?? 1
                o = Array(o[i...] + o[..<i])
            } else if shuffleMode == .songs {
                // Within the first priority group (the whole order when no song has one).
                let top = priority(ofItem: o[0])
                let group = o.firstIndex(where: { priority(ofItem: $0) != top }) ?? o.count
                if group > 1 { o.swapAt(0, 1 + Int(rng.next() % UInt64(group - 1))) }
            }
        }
        order = o
    }

    /// A random permutation (songs or whole albums), starting with `first` (and, for albums, the
    /// rest of `first`'s album after it, in queue order).
    private mutating func shuffled(first: Int?) -> [Int] {
        let n = order.count
        switch shuffleMode {
        case .off:
            return Array(0..<n)
        case .songs:
            var rest = (0..<n).filter { $0 != first }
            shuffle(&rest)
            // As MPD: higher priorities first, each priority's songs in a random order (a
            // stable sort of a random order).
            if priorities != nil { rest = stableSortedByPriority(rest) }
            return (first.map { [$0] } ?? []) + rest
        case .albums:
            var groups: [[Int]] = []
            var index: [String: Int] = [:]
            for i in 0..<n {
                if let g = index[albums[i]] { groups[g].append(i) } else {
                    index[albums[i]] = groups.count
                    groups.append([i])
                }
            }
            var firstGroup: [Int] = []
            if let first, let g = index[albums[first]] {
                // The current item's album plays on from it, then the rest of the albums.
                firstGroup = groups[g].filter { $0 >= first }
                groups[g].removeAll { $0 >= first }
                if groups[g].isEmpty { groups.remove(at: g) }
            }
            shuffle(&groups)
            return firstGroup + groups.flatMap { $0 }
        }
    }

    /// `items` ordered by priority, highest first, keeping their order within a priority.
    private func stableSortedByPriority(_ items: [Int]) -> [Int] {
        items.enumerated().sorted { a, b in
            let pa = priority(ofItem: a.element), pb = priority(ofItem: b.element)
            return pa != pb ? pa > pb : a.offset < b.offset
        }.map(\.element)
    }

    private mutating func shuffle<T>(_ a: inout [T]) {
        guard a.count > 1 else { return }
        for i in stride(from: a.count - 1, to: 0, by: -1) {
            let j = Int(rng.next() % UInt64(i + 1))
            a.swapAt(i, j)
        }
    }

    // MARK: Editing the queue

    /// Item `index` was inserted into the queue (items at `index` and after moved up by one). It
    /// plays in queue order when not shuffled, and when shuffled right after the current item —
    /// after those of a higher priority (``setPriority(_:ofItem:afterCurrent:)``) that wait.
    public mutating func insertItem(at index: Int, album: String = "") {
        let i = min(max(0, index), order.count)
        albums.insert(album, at: i)
        priorities?.insert(0, at: i)
        let wasEmpty = order.isEmpty
        order = order.map { $0 >= i ? $0 + 1 : $0 }
        if shuffleMode == .off {
            order = Array(0..<(order.count + 1))
            if !wasEmpty, i <= position { position += 1 }
        } else if wasEmpty {
            order.insert(i, at: 0)
        } else {
            let after = (position + 1..<order.count).first { priority(ofItem: order[$0]) == 0 } ?? order.count
            order.insert(i, at: after)
        }
    }

    /// Sets item `index`'s priority (MPD's `prio`). Shuffled by songs, the order changes as
    /// MPD's queue does (its `Queue::SetPriority`): an item still to come whose priority changed
    /// moves to the start of its priority's group among the items after the current one (before
    /// every item of a lower priority), at a random place in that group; an item already played
    /// comes again only when its priority was raised above the current item's. The current
    /// item stays current and is not moved. `afterCurrent` false (no song was played yet — MPD
    /// has no current song) arranges the whole order, and its first item becomes current.
    /// Not shuffled, only the priority is kept. False for an unknown index or no change.
    @discardableResult
    public mutating func setPriority(_ priority: UInt8, ofItem index: Int, afterCurrent: Bool = true) -> Bool {
        guard order.indices.contains(index) else { return false }
        let old = self.priority(ofItem: index)
        guard old != priority else { return false }
        var all = priorities ?? Array(repeating: 0, count: order.count)
        all[index] = priority
        priorities = all.contains(where: { $0 != 0 }) ? all : nil
        guard shuffleMode == .songs, let o = order.firstIndex(of: index) else { return true }
        let cur = current
        let after = afterCurrent ? position : -1
        if after >= 0 {
            if o == after { return true }
            if o < after {
                // Played already: again only when raised above the current item's priority.
                guard priority > old, priority > self.priority(ofItem: order[after]) else { return true }
            }
        }
        let before = (after + 1..<order.count).first { $0 != o && self.priority(ofItem: order[$0]) <= priority } ?? order.count
        let target = before > o ? before - 1 : before
        order.insert(order.remove(at: o), at: target)
        // A random place in its priority's group.
        let group = (target..<order.count).first { self.priority(ofItem: order[$0]) != priority } ?? order.count
        if group - target > 1 { order.swapAt(target, target + Int(rng.next() % UInt64(group - target))) }
        if afterCurrent, let cur, let p = order.firstIndex(of: cur) { position = p } else if !afterCurrent { position = 0 }
        return true
    }

    /// Item `index` was removed from the queue. When it was current, the item after it becomes
    /// current (or the one before, at the end).
    public mutating func removeItem(at index: Int) {
        guard let p = order.firstIndex(of: index) else { return }
        albums.remove(at: index)
        priorities?.remove(at: index)
        if priorities?.contains(where: { $0 != 0 }) == false { priorities = nil }
        order.remove(at: p)
        order = order.map { $0 > index ? $0 - 1 : $0 }
        if p < position { position -= 1 }
        if position >= order.count { position = max(0, order.count - 1) }
    }

    /// Item `from` moved to index `to` in the queue (the others shifted).
    public mutating func moveItem(from: Int, to: Int) {
        guard from != to, order.indices.contains(from), order.indices.contains(to) else { return }
        let cur = current
        let album = albums.remove(at: from)
        albums.insert(album, at: to)
        if var p = priorities {
            p.insert(p.remove(at: from), at: to)
            priorities = p
        }
        func remap(_ i: Int) -> Int {
            if i == from { return to }
            if from < to, i > from, i <= to { return i - 1 }
            if to < from, i >= to, i < from { return i + 1 }
            return i
        }
        if shuffleMode == .off {
            position = cur.map(remap) ?? 0
        } else {
            order = order.map(remap)
        }
    }
}

/// A small deterministic random generator (SplitMix64), so a shuffle order can be saved and
/// replayed.
struct SplitMix64: Sendable, Codable, Equatable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
