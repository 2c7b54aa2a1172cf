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
        #expect(try stateFolder() == ["queue.json"])
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
