// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmPlayback

/// `PlayOrder`: the queue-order rules of MPMusicPlayerController (repeat, shuffle songs and albums,
/// editing the queue while it plays, saving and restoring), as a plain value without sound.
@Suite struct PlayOrderTests {
    // MARK: Helpers

    /// The items played from the current one on, by `advanceOnEnd`, `steps` times.
    private static func play(_ o: inout PlayOrder, steps: Int) -> [Int] {
        var played = [o.current!]
        for _ in 0..<steps {
            let advanced = o.advanceOnEnd()
            #expect(advanced)
            played.append(o.current!)
        }
        return played
    }

    private static func isPermutation(_ a: [Int], of n: Int) -> Bool {
        a.count == n && a.sorted() == Array(0..<n)
    }

    /// The album keys in the order their groups appear in `order`, or nil when an album's items
    /// are split or out of queue order.
    private static func albumSequence(_ order: [Int], albums: [String]) -> [String]? {
        var seq: [String] = []
        for (k, item) in order.enumerated() {
            if k > 0, albums[order[k - 1]] == albums[item] {
                if order[k - 1] > item { return nil }  // within an album: queue order
            } else {
                if seq.contains(albums[item]) { return nil }  // an album came back: split
                seq.append(albums[item])
            }
        }
        return seq
    }

    // MARK: Repeat none

    @Test func repeatNoneWalksTheQueueAndStopsOnTheLast() {
        var o = PlayOrder(count: 4)
        #expect(o.current == 0)
        #expect(o.order == [0, 1, 2, 3])
        var seen = [o.current!]
        while o.advanceOnEnd() { seen.append(o.current!) }
        #expect(seen == [0, 1, 2, 3])
        #expect(o.current == 3)
        #expect(o.position == 3)
        #expect(o.nextOnEnd == nil)
        let advanced = o.advanceOnEnd()
        #expect(!advanced)
        #expect(o.current == 3)
        let skipped = o.skipToNext()
        #expect(!skipped)
        #expect(o.current == 3)
    }

    @Test func repeatNoneNextOnEndPredictsTheFollowingItem() {
        var o = PlayOrder(count: 3, start: 1)
        #expect(o.current == 1)
        #expect(o.nextOnEnd == 2)
        #expect(o.current == 1)  // predicting does not move
        o.advanceOnEnd()
        #expect(o.nextOnEnd == nil)
    }

    @Test func startIsClampedIntoTheQueue() {
        #expect(PlayOrder(count: 3, start: 7).current == 2)
        #expect(PlayOrder(count: 3, start: -2).current == 0)
    }

    // MARK: Repeat one

    @Test func repeatOneHoldsTheItemOnEndButSkippingMovesOn() {
        var o = PlayOrder(count: 3, start: 1, repeatMode: .one)
        #expect(o.nextOnEnd == 1)
        for _ in 0..<5 {
            let advanced = o.advanceOnEnd()
            #expect(advanced)
            #expect(o.current == 1)
        }
        let skipped = o.skipToNext()
        #expect(skipped)
        #expect(o.current == 2)
        #expect(o.nextOnEnd == 2)
        let advanced2 = o.advanceOnEnd()
        #expect(advanced2)
        #expect(o.current == 2)
        let wentBack = o.skipToPrevious()
        #expect(wentBack)
        #expect(o.current == 1)
    }

    @Test func repeatOneOnTheLastItemHoldsItButSkipStopsAtTheEnd() {
        var o = PlayOrder(count: 2, start: 1, repeatMode: .one)
        let advanced = o.advanceOnEnd()
        #expect(advanced)
        #expect(o.current == 1)
        let skipped = o.skipToNext()
        #expect(!skipped)  // repeat-one is not repeat-all
        #expect(o.current == 1)
    }

    // MARK: Repeat all

    @Test func repeatAllWrapsToTheFirst() {
        var o = PlayOrder(count: 3, start: 2, repeatMode: .all)
        #expect(o.nextOnEnd == 0)
        let advanced = o.advanceOnEnd()
        #expect(advanced)
        #expect(o.current == 0)
        #expect(Self.play(&o, steps: 5) == [0, 1, 2, 0, 1, 2])
        o.jump(toItem: 2)
        let skipped = o.skipToNext()
        #expect(skipped)
        #expect(o.current == 0)
    }

    @Test func previousFromTheFirstWrapsOnlyWithRepeatAll() {
        for mode in RepeatMode.allCases {
            var o = PlayOrder(count: 3, repeatMode: mode)
            let moved = o.skipToPrevious()
            if mode == .all {
                #expect(moved, "\(mode)")
                #expect(o.current == 2, "\(mode)")
            } else {
                #expect(!moved, "\(mode)")
                #expect(o.current == 0, "\(mode)")
            }
        }
        var o = PlayOrder(count: 3, start: 2)
        let wentBack = o.skipToPrevious()
        #expect(wentBack)
        #expect(o.current == 1)
    }

    @Test func setRepeatChangesTheModeInPlace() {
        var o = PlayOrder(count: 2, start: 1)
        #expect(o.nextOnEnd == nil)
        o.setRepeat(.all)
        #expect(o.repeatMode == .all)
        #expect(o.nextOnEnd == 0)
        o.setRepeat(.one)
        #expect(o.nextOnEnd == 1)
        #expect(o.current == 1)
    }

    // MARK: Shuffle songs

    @Test func shuffleIsAPermutationWithTheCurrentItemFirst() {
        for seed: UInt64 in 0..<20 {
            for start in [0, 3, 7] {
                let o = PlayOrder(count: 8, start: start, shuffleMode: .songs, seed: seed)
                #expect(o.shuffleMode == .songs)
                #expect(Self.isPermutation(o.order, of: 8), "seed \(seed)")
                #expect(o.order.first == start, "seed \(seed)")
                #expect(o.position == 0)
                #expect(o.current == start)
            }
        }
        // Shuffling while playing: the current item stays current and comes first.
        var o = PlayOrder(count: 6, seed: 9)
        o.advanceOnEnd()
        o.advanceOnEnd()
        o.setShuffle(.songs)
        #expect(o.current == 2)
        #expect(o.order.first == 2)
        #expect(Self.isPermutation(o.order, of: 6))
    }

    @Test func shuffleActuallyShuffles() {
        let orders = Set((0..<20 as Range<UInt64>).map { PlayOrder(count: 8, shuffleMode: .songs, seed: $0).order })
        #expect(orders.count > 10)
    }

    @Test func shuffleWithRepeatNonePlaysEveryItemOnceThenStops() {
        for seed: UInt64 in 0..<10 {
            var o = PlayOrder(count: 7, start: 4, shuffleMode: .songs, seed: seed)
            var played = [o.current!]
            while o.advanceOnEnd() { played.append(o.current!) }
            #expect(Self.isPermutation(played, of: 7), "seed \(seed): \(played)")
            #expect(played.first == 4)
            #expect(o.nextOnEnd == nil)
        }
    }

    @Test func shuffleRepeatAllPlaysEachItemOncePerPassWithAFreshOrder() {
        for n in [2, 3, 5, 9] {
            for seed: UInt64 in 0..<15 {
                var o = PlayOrder(count: n, start: n / 2, repeatMode: .all, shuffleMode: .songs, seed: seed)
                let passes = 6
                let played = Self.play(&o, steps: n * passes - 1)
                var passOrders: [[Int]] = []
                for p in 0..<passes {
                    let pass = Array(played[(p * n)..<((p + 1) * n)])
                    #expect(Self.isPermutation(pass, of: n), "n \(n) seed \(seed) pass \(p): \(pass)")
                    if p > 0 {
                        // The new pass does not start with the item just played.
                        #expect(pass.first != played[p * n - 1], "n \(n) seed \(seed) pass \(p)")
                    }
                    passOrders.append(pass)
                }
                if n >= 5 {
                    #expect(Set(passOrders).count > 1, "n \(n) seed \(seed): every pass is the same")
                }
            }
        }
    }

    @Test func nextOnEndPredictsAdvanceAcrossReshuffles() {
        for shuffle in [ShuffleMode.songs, .albums] {
            for seed: UInt64 in 0..<10 {
                var o = PlayOrder(count: 5, albums: ["a", "b", "b", "c", "d"], repeatMode: .all,
                                  shuffleMode: shuffle, seed: seed)
                for step in 0..<40 {
                    let predicted = o.nextOnEnd
                    #expect(predicted != nil)
                    let advanced = o.advanceOnEnd()
                    #expect(advanced)
                    #expect(o.current == predicted, "\(shuffle) seed \(seed) step \(step)")
                }
            }
        }
    }

    @Test func nextOnEndDoesNotConsumeRandomness() {
        var a = PlayOrder(count: 4, repeatMode: .all, shuffleMode: .songs, seed: 3)
        var b = a
        for _ in 0..<3 { _ = a.nextOnEnd }  // asked several times at the boundary and elsewhere
        for _ in 0..<12 {
            a.advanceOnEnd()
            b.advanceOnEnd()
            _ = a.nextOnEnd
        }
        #expect(a == b)
    }

    @Test func sameSeedSameOrderDifferentSeedsUsuallyDiffer() {
        func run(_ seed: UInt64) -> [Int] {
            var o = PlayOrder(count: 10, repeatMode: .all, shuffleMode: .songs, seed: seed)
            return Self.play(&o, steps: 35)
        }
        #expect(run(42) == run(42))
        #expect(PlayOrder(count: 10, shuffleMode: .songs, seed: 42) == PlayOrder(count: 10, shuffleMode: .songs, seed: 42))
        let others = (43..<53 as Range<UInt64>).map(run)
        #expect(others.filter { $0 != run(42) }.count >= 9)
    }

    // MARK: Starting shuffled (--shuffle)

    @Test func startingShuffledBeginsWithARandomItem() {
        // Seeds 1…64: each a full permutation from its start, reproducible, and the first item
        // is not always the queue's first (nor any one item).
        var firsts: Set<Int> = []
        for seed in UInt64(1)...64 {
            var o = PlayOrder(count: 8, seed: seed)
            o.startShuffled(.songs)
            #expect(o.position == 0 && o.shuffleMode == .songs)
            #expect(Self.isPermutation(o.order, of: 8))
            var again = PlayOrder(count: 8, seed: seed)
            again.startShuffled(.songs)
            #expect(again == o)
            firsts.insert(o.current!)
            // Then it plays as any shuffle: every item once, and stops.
            var played = [o.current!]
            while o.advanceOnEnd() { played.append(o.current!) }
            #expect(Self.isPermutation(played, of: 8))
        }
        #expect(firsts.count >= 6, "first items over 64 seeds: \(firsts.sorted())")
    }

    @Test func startingShuffledWithAFirstItemPlaysItFirst() {
        for seed in UInt64(1)...16 {
            var o = PlayOrder(count: 6, start: 4, seed: seed)
            o.startShuffled(.songs, first: 2)
            #expect(o.current == 2 && o.order.first == 2 && o.position == 0)
            #expect(Self.isPermutation(o.order, of: 6))
        }
        // An unknown first item counts as none: still every item once.
        var o = PlayOrder(count: 3, seed: 7)
        o.startShuffled(.songs, first: 9)
        #expect(Self.isPermutation(o.order, of: 3))
    }

    @Test func startingShuffledByAlbumsBeginsAnAlbumAtItsFirstItem() {
        let albums = ["A", "A", "A", "B", "B", "C", "C", "C"]
        var firsts: Set<Int> = []
        for seed in UInt64(1)...32 {
            var o = PlayOrder(count: albums.count, albums: albums, seed: seed)
            o.startShuffled(.albums)
            #expect(Self.albumSequence(o.order, albums: albums)?.count == 3, "\(o.order)")
            firsts.insert(o.current!)
        }
        #expect(firsts == [0, 3, 5], "every album's first item starts some orders: \(firsts.sorted())")
    }

    @Test func startingUnshuffledGoesToQueueOrderFromTheFirstItem() {
        var o = PlayOrder(count: 5, start: 3, shuffleMode: .songs, seed: 3)
        o.startShuffled(.off, first: 1)
        #expect(o.order == [0, 1, 2, 3, 4] && o.current == 1 && o.shuffleMode == .off)
        o.startShuffled(.off)
        #expect(o.current == 0)
    }

    @Test func shufflingWhilePlayingStillKeepsTheCurrentItemFirst() {
        // setShuffle (the `s` key, MPRIS Shuffle) is unchanged: the item playing stays first.
        for seed in UInt64(1)...16 {
            var o = PlayOrder(count: 6, start: 3, seed: seed)
            o.setShuffle(.songs)
            #expect(o.order.first == 3 && o.current == 3)
        }
    }

    @Test func unshufflingKeepsTheCurrentItemAndReturnsToQueueOrder() {
        for seed: UInt64 in 0..<10 {
            var o = PlayOrder(count: 6, start: 1, shuffleMode: .songs, seed: seed)
            o.advanceOnEnd()
            o.advanceOnEnd()
            let cur = o.current!
            o.setShuffle(.off)
            #expect(o.shuffleMode == .off)
            #expect(o.current == cur)
            #expect(o.order == Array(0..<6))
            #expect(o.position == cur)
            #expect(o.nextOnEnd == (cur + 1 < 6 ? cur + 1 : nil))
        }
        var a = PlayOrder(count: 5, albums: ["x", "x", "y", "y", "z"], start: 3, shuffleMode: .albums, seed: 1)
        a.setShuffle(.off)
        #expect(a.current == 3)
        #expect(a.order == Array(0..<5))
    }

    @Test func shuffleOffWhenAlreadyOffChangesNothing() {
        var o = PlayOrder(count: 4, start: 2, seed: 5)
        let before = o
        o.setShuffle(.off)
        #expect(o == before)
    }

    // MARK: Shuffle albums

    private static let albumKeys = ["A", "A", "B", "B", "B", "C", "D", "D", "E"]

    @Test func albumShuffleKeepsAlbumsTogetherInQueueOrder() {
        var sequences = Set<[String]>()
        for seed: UInt64 in 0..<30 {
            let o = PlayOrder(count: 9, albums: Self.albumKeys, start: 2, shuffleMode: .albums, seed: seed)
            #expect(Self.isPermutation(o.order, of: 9))
            #expect(o.current == 2)
            #expect(Array(o.order.prefix(3)) == [2, 3, 4], "seed \(seed): \(o.order)")
            let seq = Self.albumSequence(o.order, albums: Self.albumKeys)
            #expect(seq != nil, "seed \(seed): \(o.order)")
            #expect(Set(seq ?? []) == ["A", "B", "C", "D", "E"])
            if let seq { sequences.insert(seq) }
        }
        #expect(sequences.count > 5)  // the albums come in a random order
    }

    @Test func albumShuffleStartsTheCurrentAlbumAtTheCurrentItem() {
        for seed: UInt64 in 0..<10 {
            let o = PlayOrder(count: 9, albums: Self.albumKeys, start: 3, shuffleMode: .albums, seed: seed)
            #expect(o.current == 3)
            #expect(Array(o.order.prefix(2)) == [3, 4], "seed \(seed): \(o.order)")
            #expect(Self.isPermutation(o.order, of: 9))
        }
    }

    @Test func albumShuffleGroupsItemsOfAnAlbumSpreadOverTheQueue() {
        let keys = ["A", "B", "A", "C", "B"]
        for seed: UInt64 in 0..<10 {
            let o = PlayOrder(count: 5, albums: keys, start: 3, shuffleMode: .albums, seed: seed)
            #expect(Self.albumSequence(o.order, albums: keys) != nil, "seed \(seed): \(o.order)")
            #expect(o.order.first == 3)
        }
    }

    @Test func albumShuffleRepeatAllKeepsAlbumsTogetherEveryPass() {
        for seed: UInt64 in 0..<20 {
            var o = PlayOrder(count: 9, albums: Self.albumKeys, start: 0, repeatMode: .all,
                              shuffleMode: .albums, seed: seed)
            let played = Self.play(&o, steps: 9 * 4 - 1)
            for p in 0..<4 {
                let pass = Array(played[(p * 9)..<((p + 1) * 9)])
                #expect(Self.isPermutation(pass, of: 9), "seed \(seed) pass \(p)")
                #expect(Self.albumSequence(pass, albums: Self.albumKeys) != nil, "seed \(seed) pass \(p): \(pass)")
                if p > 0 { #expect(pass.first != played[p * 9 - 1], "seed \(seed) pass \(p)") }
            }
        }
    }

    @Test func albumShuffleOfSingleItemAlbumsDoesNotRepeatTheLastItemFirst() {
        for seed: UInt64 in 0..<30 {
            var o = PlayOrder(count: 3, albums: ["a", "b", "c"], repeatMode: .all, shuffleMode: .albums, seed: seed)
            let played = Self.play(&o, steps: 3 * 5 - 1)
            for p in 1..<5 {
                #expect(played[p * 3] != played[p * 3 - 1], "seed \(seed): \(played)")
                #expect(Self.isPermutation(Array(played[(p * 3)..<((p + 1) * 3)]), of: 3))
            }
        }
    }

    @Test func albumShuffleOfASingleAlbumDoesNotRepeatTheLastItemFirst() {
        // One album (no album keys given): started at item 1, the first pass is 1, 2, 0 and ends
        // on the album's first item; the next pass must not play it again straight away.
        var o = PlayOrder(count: 3, start: 1, repeatMode: .all, shuffleMode: .albums)
        let played = Self.play(&o, steps: 3 * 4 - 1)
        #expect(Array(played.prefix(3)) == [1, 2, 0])
        for k in 1..<played.count {
            #expect(played[k] != played[k - 1], "\(played)")
        }
        for p in 0..<4 {
            #expect(Self.isPermutation(Array(played[(p * 3)..<((p + 1) * 3)]), of: 3), "\(played)")
        }
    }

    @Test func switchingFromSongsToAlbumsKeepsTheCurrentItem() {
        var o = PlayOrder(count: 9, albums: Self.albumKeys, start: 5, shuffleMode: .songs, seed: 8)
        o.setShuffle(.albums)
        #expect(o.shuffleMode == .albums)
        #expect(o.current == 5)
        #expect(o.order.first == 5)
        #expect(Self.albumSequence(o.order, albums: Self.albumKeys) != nil)
    }

    // MARK: Jumping

    @Test func jumpGoesToTheItemsPlaceInThePlayOrder() {
        var o = PlayOrder(count: 6, shuffleMode: .songs, seed: 11)
        let order = o.order
        let jumped = o.jump(toItem: 4)
        #expect(jumped)
        #expect(o.current == 4)
        let p = order.firstIndex(of: 4)!
        #expect(o.position == p)
        #expect(o.order == order)  // jumping does not reshuffle
        #expect(o.nextOnEnd == (p + 1 < 6 ? order[p + 1] : nil))
        let jumped2 = o.jump(toItem: 6)
        #expect(!jumped2)
        let jumped3 = o.jump(toItem: -1)
        #expect(!jumped3)
        #expect(o.current == 4)

        var q = PlayOrder(count: 4)
        let jumped4 = q.jump(toItem: 3)
        #expect(jumped4)
        #expect(q.current == 3)
        #expect(q.nextOnEnd == nil)
    }

    @Test func skipToBeginningGoesToTheFirstOfThePlayOrder() {
        var o = PlayOrder(count: 5, start: 3)
        o.skipToBeginning()
        #expect(o.current == 0)
        var s = PlayOrder(count: 5, start: 3, shuffleMode: .songs, seed: 2)
        let first = s.order[0]
        s.advanceOnEnd()
        s.advanceOnEnd()
        s.skipToBeginning()
        #expect(s.position == 0)
        #expect(s.current == first)
        #expect(first == 3)
    }

    // MARK: Editing the queue

    @Test func insertBeforeTheCurrentItemWhileNotShuffledShiftsIt() {
        var o = PlayOrder(count: 5, start: 2)
        o.insertItem(at: 1)
        #expect(o.count == 6)
        #expect(o.order == Array(0..<6))
        #expect(o.current == 3)  // the same item, now at index 3
        #expect(o.nextOnEnd == 4)

        var at = PlayOrder(count: 5, start: 2)
        at.insertItem(at: 2)  // at the current item's index: it moves up
        #expect(at.current == 3)
        #expect(at.nextOnEnd == 4)
    }

    @Test func insertAfterTheCurrentItemWhileNotShuffledPlaysInQueueOrder() {
        var o = PlayOrder(count: 5, start: 2)
        o.insertItem(at: 3)
        #expect(o.current == 2)
        #expect(o.nextOnEnd == 3)  // the new item
        var end = PlayOrder(count: 3, start: 2)
        end.insertItem(at: 99)  // clamped to the end
        #expect(end.count == 4)
        #expect(end.current == 2)
        #expect(end.nextOnEnd == 3)
    }

    @Test func insertWhileShuffledPlaysTheNewItemNext() {
        for seed: UInt64 in 0..<10 {
            var o = PlayOrder(count: 6, start: 3, shuffleMode: .songs, seed: seed)
            o.advanceOnEnd()
            let cur = o.current!
            let before = o.order
            o.insertItem(at: 0)
            #expect(o.count == 7)
            #expect(Self.isPermutation(o.order, of: 7))
            #expect(o.current == cur + 1)  // the same item, moved up by one
            #expect(o.nextOnEnd == 0)
            // The rest keep their order.
            #expect(o.order.filter { $0 != 0 } == before.map { $0 + 1 })
            o.advanceOnEnd()
            #expect(o.current == 0)
        }
    }

    @Test func insertIntoAnEmptyQueueMakesItCurrent() {
        for shuffle in ShuffleMode.allCases {
            var o = PlayOrder(count: 0, shuffleMode: shuffle)
            o.insertItem(at: 0, album: "x")
            #expect(o.count == 1, "\(shuffle)")
            #expect(o.current == 0, "\(shuffle)")
            o.insertItem(at: 1)
            #expect(o.count == 2)
            #expect(o.current == 0)
            #expect(o.nextOnEnd == 1)
        }
    }

    @Test func removeAnItemBeforeTheCurrentOne() {
        var o = PlayOrder(count: 5, start: 3)
        o.removeItem(at: 1)
        #expect(o.count == 4)
        #expect(o.order == Array(0..<4))
        #expect(o.current == 2)  // the same item, now at index 2
        #expect(o.nextOnEnd == 3)

        var s = PlayOrder(count: 5, start: 3, shuffleMode: .songs, seed: 4)
        s.advanceOnEnd()
        s.advanceOnEnd()
        let cur = s.current!
        let before = s.order
        let earlier = before[0]  // already played
        s.removeItem(at: earlier)
        #expect(Self.isPermutation(s.order, of: 4))
        #expect(s.current == (cur > earlier ? cur - 1 : cur))
        #expect(s.order == before.filter { $0 != earlier }.map { $0 > earlier ? $0 - 1 : $0 })
    }

    @Test func removeAnItemAfterTheCurrentOne() {
        var o = PlayOrder(count: 5, start: 1)
        o.removeItem(at: 2)
        #expect(o.current == 1)
        #expect(o.nextOnEnd == 2)  // the old item 3
    }

    @Test func removeTheCurrentItemMakesTheNextCurrent() {
        var o = PlayOrder(count: 5, start: 2)
        o.removeItem(at: 2)
        #expect(o.count == 4)
        #expect(o.current == 2)  // the old item 3
        #expect(o.position == 2)

        var s = PlayOrder(count: 5, start: 1, shuffleMode: .songs, seed: 6)
        s.advanceOnEnd()
        let cur = s.current!
        let next = s.nextOnEnd!
        s.removeItem(at: cur)
        #expect(s.current == (next > cur ? next - 1 : next))
        #expect(Self.isPermutation(s.order, of: 4))
    }

    @Test func removeTheCurrentItemAtTheEndMakesThePreviousCurrent() {
        var o = PlayOrder(count: 4, start: 3)
        o.removeItem(at: 3)
        #expect(o.count == 3)
        #expect(o.current == 2)

        var s = PlayOrder(count: 4, shuffleMode: .songs, seed: 7)
        while s.advanceOnEnd() {}
        let last = s.current!
        let previous = s.order[2]
        s.removeItem(at: last)
        #expect(s.position == 2)
        #expect(s.current == (previous > last ? previous - 1 : previous))
    }

    @Test func removeTheLastRemainingItemLeavesAnEmptyOrder() {
        for shuffle in ShuffleMode.allCases {
            var o = PlayOrder(count: 1, shuffleMode: shuffle)
            o.removeItem(at: 0)
            #expect(o.count == 0)
            #expect(o.current == nil)
            let advanced = o.advanceOnEnd()
            #expect(!advanced)
            #expect(o.nextOnEnd == nil)
        }
    }

    @Test func removeAnUnknownItemChangesNothing() {
        var o = PlayOrder(count: 3, start: 1)
        let before = o
        o.removeItem(at: 3)
        o.removeItem(at: -1)
        #expect(o == before)
    }

    @Test func moveKeepsTheCurrentItemCurrentWhenNotShuffled() {
        var o = PlayOrder(count: 5, start: 1)
        o.moveItem(from: 1, to: 3)  // the current item itself
        #expect(o.current == 3)
        #expect(o.order == Array(0..<5))
        #expect(o.nextOnEnd == 4)

        var b = PlayOrder(count: 5, start: 1)
        b.moveItem(from: 0, to: 4)  // from before it to after it
        #expect(b.current == 0)
        #expect(b.nextOnEnd == 1)  // the old item 2

        var c = PlayOrder(count: 5, start: 1)
        c.moveItem(from: 3, to: 0)  // from after it to before it
        #expect(c.current == 2)
        #expect(c.nextOnEnd == 3)  // the old item 2

        var d = PlayOrder(count: 5, start: 1)
        d.moveItem(from: 3, to: 4)  // elsewhere
        #expect(d.current == 1)
        #expect(d.nextOnEnd == 2)
    }

    @Test func moveKeepsTheCurrentItemAndTheOrderWhenShuffled() {
        for seed: UInt64 in 0..<10 {
            for (from, to) in [(0, 4), (4, 0), (1, 3), (2, 2)] {
                var o = PlayOrder(count: 5, start: 2, shuffleMode: .songs, seed: seed)
                o.advanceOnEnd()
                let cur = o.current!
                let next = o.nextOnEnd!
                let position = o.position
                func remap(_ i: Int) -> Int {
                    if i == from { return to }
                    if from < to, i > from, i <= to { return i - 1 }
                    if to < from, i >= to, i < from { return i + 1 }
                    return i
                }
                let expected = o.order.map(remap)
                o.moveItem(from: from, to: to)
                #expect(o.position == position)
                #expect(o.current == remap(cur))
                #expect(o.nextOnEnd == remap(next))
                #expect(o.order == expected)
                #expect(Self.isPermutation(o.order, of: 5))
            }
        }
    }

    @Test func moveKeepsAlbumKeysWithTheirItems() {
        // Item 0 (album "A") moves to the end; an album shuffle afterwards still groups it with
        // nothing but itself, and the two "B" items (now 0 and 1) stay together.
        var o = PlayOrder(count: 3, albums: ["A", "B", "B"], start: 1)
        o.moveItem(from: 0, to: 2)
        #expect(o.current == 0)
        o.setShuffle(.albums)
        #expect(Array(o.order.prefix(2)) == [0, 1], "\(o.order)")
        #expect(o.order.last == 2)
    }

    // MARK: Saving and restoring

    @Test func codableRoundTripRestoresTheValueAndItsFuture() throws {
        for shuffle in ShuffleMode.allCases {
            var o = PlayOrder(count: 7, albums: ["a", "a", "b", "c", "c", "c", "d"], start: 2,
                              repeatMode: .all, shuffleMode: shuffle, seed: 77)
            for _ in 0..<9 { o.advanceOnEnd() }  // past a reshuffle
            let data = try JSONEncoder().encode(o)
            var restored = try JSONDecoder().decode(PlayOrder.self, from: data)
            #expect(restored == o, "\(shuffle)")
            #expect(restored.order == o.order)
            #expect(restored.position == o.position)
            #expect(restored.repeatMode == .all)
            #expect(restored.shuffleMode == shuffle)
            // The generator was saved: both go on the same way, across later reshuffles too.
            let a = Self.play(&o, steps: 30)
            let b = Self.play(&restored, steps: 30)
            #expect(a == b, "\(shuffle)")
        }
    }

    // MARK: Empty

    @Test func anEmptyOrderDoesNothingAndDoesNotCrash() {
        for repeatMode in RepeatMode.allCases {
            for shuffle in ShuffleMode.allCases {
                var o = PlayOrder(count: 0, start: 3, repeatMode: repeatMode, shuffleMode: shuffle)
                #expect(o.count == 0)
                #expect(o.current == nil)
                #expect(o.nextOnEnd == nil)
                let advanced = o.advanceOnEnd()
                #expect(!advanced)
                let skipped = o.skipToNext()
                #expect(!skipped)
                let wentBack = o.skipToPrevious()
                #expect(!wentBack)
                let jumped = o.jump(toItem: 0)
                #expect(!jumped)
                o.skipToBeginning()
                o.setShuffle(.songs)
                o.setShuffle(.albums)
                o.setShuffle(.off)
                o.setRepeat(.all)
                o.removeItem(at: 0)
                o.moveItem(from: 0, to: 1)
                #expect(o.current == nil)
                let advanced2 = o.advanceOnEnd()
                #expect(!advanced2)
            }
        }
        #expect(PlayOrder(count: -3).current == nil)
    }
}
