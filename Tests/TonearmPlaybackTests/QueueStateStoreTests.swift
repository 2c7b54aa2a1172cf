// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// The saved queue's file: saves are atomic and leave no temporary file behind — not when the
/// player is finished right after a change (its own saves still under way), not when a save
/// fails, and the temporaries of processes that were killed are cleaned up.
@Suite  final class QueueStateStoreTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("queue-state") }
    deinit { dir.remove() }

    func tones(_ n: Int) throws -> [String] {
        try (0..<n).map { i in
            let p = dir.file("t\(i).flac")
            try Fixtures.tone(path: p, codecArgs: ["-c:a", "flac"], seconds: 1)
            return p
        }
    }

    func stateFolder() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.file("state")).sorted()
    }

    @Test func finishingSavesOnceMoreAndLaterChangesLeaveNothing() async throws {
        defer { dir.remove() }
        let store = QueueStateStore(path: dir.file("state/queue.json"))
        let music = MusicPlayer(output: { NullOutput() }, store: store)
        let events = music.events
        music.setQueue(withPaths: try tones(3))
        music.queue.skipToItem(at: 1)
        music.finishSaving()
        #expect(try store.load()?.order.current == 1)
        // The player saves on every change, on its own task; once finished, those saves write nothing.
        music.repeatMode = .all
        music.queue.skipToItem(at: 2)
        // The player hands an event on after its save of it: once the skip is out, both were tried.
        _ = try await waitForEvent(events, timeout: 10, "the skip to be handled") {
            if case .currentItemChanged(index: 2, _) = $0 { return true }
            return false
        }
        let saved = try #require(try store.load())
        #expect(saved.order.current == 1 && saved.order.repeatMode == .none)
        // The queue, and its place when a save wrote that alone: no temporary.
        #expect(try stateFolder().filter { $0 != "queue.json.place" } == ["queue.json"])
    }

    @Test func temporariesOfProcessesThatNoLongerRunAreRemoved() throws {
        defer { dir.remove() }
        // A process that has ended: its PID runs no more.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let pid = gone.processIdentifier
        try FileManager.default.createDirectory(atPath: dir.file("state"), withIntermediateDirectories: true)
        // What a process killed in the middle of a save left: one empty, one complete.
        #expect(FileManager.default.createFile(atPath: dir.file("state/.queue.json.\(pid).tmp"), contents: Data()))
        #expect(FileManager.default.createFile(atPath: dir.file("state/.queue.json.\(pid + 1_000_000).tmp"), contents: Data("{}".utf8)))
        // A file of another program's is not ours to remove.
        #expect(FileManager.default.createFile(atPath: dir.file("state/notes.tmp"), contents: Data("x".utf8)))
        let store = QueueStateStore(path: dir.file("state/queue.json"))
        try store.save(SavedQueue(items: [], order: PlayOrder(count: 0), position: 0, volume: 1))
        #expect(try stateFolder() == ["notes.tmp", "queue.json"])
    }

    @Test func aFailedSaveLeavesNoTemporary() throws {
        defer { dir.remove() }
        // The state's name is taken by a folder that holds something: the rename fails.
        try FileManager.default.createDirectory(atPath: dir.file("state/queue.json/x"), withIntermediateDirectories: true)
        let store = QueueStateStore(path: dir.file("state/queue.json"))
        #expect(throws: TonearmError.self) {
            try store.save(SavedQueue(items: [], order: PlayOrder(count: 0), position: 0, volume: 1))
        }
        #expect(try stateFolder() == ["queue.json"])
    }

    @Test func aSaveAfterTheFolderWentMakesItAgain() throws {
        defer { dir.remove() }
        // The folder is made at the first save only; a later save that finds it gone makes it again.
        let store = QueueStateStore(path: dir.file("state/queue.json"))
        try store.save(SavedQueue(items: [], order: PlayOrder(count: 0), position: 1, volume: 1))
        try FileManager.default.removeItem(atPath: dir.file("state"))
        try store.save(SavedQueue(items: [], order: PlayOrder(count: 0), position: 2, volume: 1))
        #expect(try store.load()?.position == 2)
        #expect(try stateFolder() == ["queue.json"])
    }

    @Test func steadyPlaySavesThePositionEveryFiveSeconds() {
        // Changes are saved as they happen; only the position's drift waits for the timer.
        #expect(MusicPlayer.positionSaveInterval == 5)
    }
}

/// A save writes what changed (issue 20: the daemon saved its whole state at every song
/// change): a place in the same queue is a small file beside it, read back with its queue;
/// another queue is written whole and a place of the old one no longer counts. No sound.
@Suite final class QueueStateStoreDeltaTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("queue-delta") }
    deinit { dir.remove() }

    static func queue(_ n: Int, at p: Int, seconds: Double = 0, shuffled: Bool = false) -> SavedQueue {
        var o = PlayOrder(count: n, shuffleMode: shuffled ? .songs : .off, seed: 7)
        for _ in 0..<p { o.skipToNext() }
        let items = (0..<n).map { QueueItem(path: "/music/artist \($0 / 10)/album/track \($0).flac") }
        return SavedQueue(items: items, order: o, position: seconds, volume: 0.5)
    }

    @Test func songChangesWriteThePlaceNotTheQueue() throws {
        let store = QueueStateStore(path: dir.file("state/queue.json"))
        try store.save(Self.queue(1_000, at: 0, shuffled: true))
        let full = store.writeCount
        #expect(full.files == 1 && full.bytes > 50_000)
        // 100 song changes, each with its seconds: 100 small files, not 100 queues.
        for p in 1...100 { try store.save(Self.queue(1_000, at: p, seconds: Double(p) / 4, shuffled: true)) }
        let played = store.writeCount
        #expect(played.files - full.files == 100)
        #expect(played.bytes - full.bytes < 100 * 200, "\(played.bytes - full.bytes) bytes for 100 song changes")
        // Nothing changed: nothing written.
        try store.save(Self.queue(1_000, at: 100, seconds: 25, shuffled: true))
        #expect(store.writeCount.files == played.files)
        // What a restart (or a SIGKILL now) reads: the last place, in the saved queue.
        let again = try #require(try QueueStateStore(path: dir.file("state/queue.json")).load())
        #expect(again == Self.queue(1_000, at: 100, seconds: 25, shuffled: true).with(savedAt: again.savedAt))
        #expect(again.order.position == 100 && again.position == 25)
    }

    @Test func anotherQueueIsWrittenWholeAndAnOldPlaceIsIgnored() throws {
        let path = dir.file("state/queue.json")
        let store = QueueStateStore(path: path)
        try store.save(Self.queue(5, at: 0))
        try store.save(Self.queue(5, at: 3, seconds: 9))
        let oldPlace = try #require(FileManager.default.contents(atPath: path + ".place"))
        // A new queue: written whole, at its own place.
        try store.save(Self.queue(4, at: 1, seconds: 2))
        #expect(try #require(try store.load()).order.position == 1)
        // A place file of the old queue (a process killed between the two writes leaves the
        // new queue beside the old place) is not applied to the new queue.
        try oldPlace.write(to: URL(fileURLWithPath: path + ".place"))
        let read = try #require(try QueueStateStore(path: path).load())
        #expect(read.items.count == 4 && read.order.position == 1 && read.position == 2)
        // A queue saved before places were saved apart reads as it is.
        try FileManager.default.removeItem(atPath: path + ".place")
        let old = try JSONEncoder().encode(Self.queue(3, at: 2, seconds: 1))
        try old.write(to: URL(fileURLWithPath: path))
        #expect(try QueueStateStore(path: path).load()?.order.position == 2)
    }
}

extension SavedQueue {
    func with(savedAt date: Date) -> SavedQueue {
        var copy = self
        copy.savedAt = date
        return copy
    }
}
