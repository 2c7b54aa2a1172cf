// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmPlayback

/// MPD's `prio` in the play order (issue 20): shuffled by songs, higher priorities play first —
/// as MPD's queue arranges them (`Queue::SetPriority`, `ShuffleOrderRangeWithPriority`). Plain
/// values, no sound.
@Suite struct PlayOrderPriorityTests {
    /// The items still to come after the current one, in play order.
    private static func upcoming(_ o: PlayOrder) -> [Int] { Array(o.order[(o.position + 1)...]) }

    @Test func aRaisedSongPlaysNextAndTheCurrentOneStays() {
        for seed: UInt64 in 0..<30 {
            var o = PlayOrder(count: 10, start: 4, shuffleMode: .songs, seed: seed)
            let target = Self.upcoming(o).last!
            let set = o.setPriority(10, ofItem: target)
            #expect(set)
            #expect(o.current == 4, "seed \(seed)")
            #expect(o.nextOnEnd == target, "seed \(seed): \(o.order)")
            #expect(o.priorities?[target] == 10)
            // A second one of the same priority joins its group: both before every other.
            let other = Self.upcoming(o).last!
            o.setPriority(10, ofItem: other)
            #expect(Set(Self.upcoming(o).prefix(2)) == [target, other], "seed \(seed): \(o.order)")
            // A higher one goes before them.
            let top = Self.upcoming(o).last!
            o.setPriority(200, ofItem: top)
            #expect(Self.upcoming(o).first == top)
            #expect(Set(Self.upcoming(o).dropFirst().prefix(2)) == [target, other])
            #expect(o.current == 4)
            // Played to the end: every item once, priorities first.
            var played: [Int] = []
            while o.advanceOnEnd() { played.append(o.current!) }
            #expect(played.prefix(3).first == top && Set(played.prefix(3)) == [top, target, other])
            #expect(Set(played).count == 9 && !played.contains(4))
        }
    }

    @Test func shufflingGroupsByPriorityAndShufflesEachGroup() {
        var firsts = Set<[Int]>()
        for seed: UInt64 in 0..<30 {
            var o = PlayOrder(count: 8, start: 0, seed: seed)
            o.setPriority(5, ofItem: 6)
            o.setPriority(5, ofItem: 3)
            o.setPriority(9, ofItem: 7)
            // Not shuffled: queue order, priorities kept.
            #expect(o.order == Array(0..<8) && o.priority(ofItem: 3) == 5)
            o.setShuffle(.songs)
            #expect(o.order.first == 0, "the current item stays first")
            #expect(Self.upcoming(o).first == 7)
            #expect(Set(Self.upcoming(o)[1...2]) == [3, 6], "seed \(seed): \(o.order)")
            firsts.insert(Array(Self.upcoming(o)[1...2]))
        }
        #expect(firsts.count == 2, "within a priority, a random order")
    }

    @Test func anItemAlreadyPlayedComesAgainOnlyWhenRaisedAboveTheCurrentOne() {
        var o = PlayOrder(count: 6, start: 0, shuffleMode: .songs, seed: 3)
        o.advanceOnEnd()
        o.advanceOnEnd()
        let played = o.order[0]
        let cur = o.current!
        let before = o.order
        // Raised, but not above the current item's priority: stays where it was.
        o.setPriority(1, ofItem: cur)
        o.setPriority(1, ofItem: played)
        #expect(o.order == before)
        // Raised above it: comes next.
        o.setPriority(2, ofItem: played)
        #expect(o.current == cur && o.nextOnEnd == played)
        // Lowered: stays (nothing moves the current item).
        o.setPriority(0, ofItem: cur)
        #expect(o.current == cur)
    }

    @Test func withoutACurrentSongTheHighestPriorityPlaysFirst() {
        for seed: UInt64 in 0..<10 {
            var o = PlayOrder(count: 5, shuffleMode: .songs, seed: seed)
            o.setPriority(7, ofItem: 2, afterCurrent: false)
            #expect(o.current == 2 && o.position == 0, "seed \(seed): \(o.order)")
        }
    }

    @Test func editsKeepEachItemsPriority() throws {
        var o = PlayOrder(count: 4, start: 0, shuffleMode: .songs, seed: 1)
        o.setPriority(8, ofItem: 2)
        o.insertItem(at: 0)
        #expect(o.priorities == [0, 0, 0, 8, 0])
        // An item added while shuffled plays after the waiting higher-priority one.
        #expect(Self.upcoming(o).first == 3)
        #expect(Self.upcoming(o)[1] == 0)
        o.moveItem(from: 3, to: 4)
        #expect(o.priorities == [0, 0, 0, 0, 8])
        o.removeItem(at: 4)
        #expect(o.priorities == nil)
        // Saved and read back (a state saved before priorities reads as none).
        o.setPriority(3, ofItem: 1)
        let data = try JSONEncoder().encode(o)
        #expect(try JSONDecoder().decode(PlayOrder.self, from: data) == o)
        var json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        json["priorities"] = nil
        let old = try JSONDecoder().decode(PlayOrder.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(old.priorities == nil && old.order == o.order)
    }

    /// The queue's state machine passes priorities to its order, keeps them when shuffle is
    /// turned on, and a priority that makes another item current (no song played yet) says so.
    @Test func theQueueStateMachineKeepsPrioritiesAcrossShuffle() {
        let items = (0..<6).map { QueueItem(path: "/tmp/p\($0).flac") }
        var m = QueueStateMachine()
        _ = m.handle(.setQueue(items, order: nil, position: 0))
        #expect(m.handle(.setPriority(9, indices: [4], afterCurrent: true)) == [.emit(.queueChanged)])
        #expect(m.handle(.setPriority(9, indices: [4], afterCurrent: true)) == [])
        _ = m.handle(.setShuffle(.songs, albums: [:], seed: 5))
        #expect(m.order.current == 0 && m.order.nextOnEnd == 4)
        var fresh = QueueStateMachine()
        _ = fresh.handle(.setQueue(items, order: nil, position: 0))
        _ = fresh.handle(.setShuffle(.songs, albums: [:], seed: 5))
        let actions = fresh.handle(.setPriority(3, indices: [5], afterCurrent: false))
        #expect(fresh.order.current == 5)
        #expect(actions.contains(.emit(.currentItemChanged(index: 5, item: items[5]))))
    }
}
