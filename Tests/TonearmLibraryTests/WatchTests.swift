// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing
import TonearmCore
@testable import TonearmLibrary
import TonearmTestSupport

/// A folder of tagged MP3s and a library, for watching.
struct WatchFixture {
    let dir: TempDir
    let root: String
    let library: MediaLibrary
    let base: [UInt8]

    init(tracks: [String] = ["one.mp3"]) throws {
        dir = try TempDir("library-watch")
        root = dir.file("Music")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        base = try LibraryFixtures.baseMP3(in: dir.file("tmp"))
        library = try MediaLibrary(path: dir.file("db/library.sqlite"))
        for t in tracks { try write(t) }
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    /// Writes a track (title: the file name) at `relative`, in one go: created, written, closed.
    func write(_ relative: String, title: String? = nil, under folder: String? = nil) throws {
        let name = (relative as NSString).deletingPathExtension
        try LibraryFixtures.write(LibraryFixtures.single(relative, title: title ?? name), base: base, png: [],
                                  root: folder ?? root)
    }

    func item(at relative: String) throws -> MediaItem? {
        try MediaQuery(mediaType: nil).items(in: library).first { $0.path == path(relative) }
    }
}

/// The changes of a watch as they come, for tests to wait on (signalled waits with a deadline).
final class WatchRecorder: Sendable {
    let changes: Watched<[LibraryChange]>
    /// "finished", or the error the stream ended with.
    let end: Watched<String?>
    private let task: Task<Void, Never>

    init(_ stream: AsyncThrowingStream<LibraryChange, any Error>) {
        let changes = Watched<[LibraryChange]>([]), end = Watched<String?>(nil)
        self.changes = changes
        self.end = end
        task = Task {
            do {
                for try await c in stream { changes.update { $0.append(c) } }
                end.update { $0 = "finished" }
            } catch {
                end.update { $0 = "\(error)" }
            }
        }
    }

    /// Waits (20 s at most) until the changes so far satisfy `condition`.
    func wait(until condition: @escaping @Sendable ([LibraryChange]) -> Bool) async -> Bool {
        await changes.wait(timeout: 20, until: condition)
    }

    func waitForEnd() async -> String? {
        _ = await end.wait(timeout: 20) { $0 != nil }
        return end.value
    }

    /// Cancels the consuming task and waits for it.
    func stop() async {
        task.cancel()
        await task.value
    }

    var all: [LibraryChange] { changes.value }
    /// The changes after the initial scan.
    var later: [LibraryChange] { all.filter { $0.cause != .initialScan } }
}

extension Array where Element == LibraryChange {
    var added: [String] { flatMap(\.added) }
    var removed: [String] { flatMap(\.removed) }
    var moved: [LibraryChange.Move] { flatMap(\.moved) }
    var skipped: [SkippedFile] { flatMap(\.skipped) }
    var updated: [String] { flatMap(\.updated) }
}

/// The inotify watches this process holds on `path`'s inode (from /proc/self/fdinfo), and the
/// inotify descriptors holding them.
func inotifyWatches(on path: String) -> (watches: Int, descriptors: Set<String>) {
    var st = stat()
    guard stat(path, &st) == 0 else { return (0, []) }
    let needle = "ino:" + String(UInt64(st.st_ino), radix: 16) + " "
    var watches = 0
    var descriptors: Set<String> = []
    for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fdinfo")) ?? [] {
        guard let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + fd, encoding: .utf8) else { continue }
        let n = info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") && $0.contains(needle) }.count
        if n > 0 {
            watches += n
            descriptors.insert(fd)
        }
    }
    return (watches, descriptors)
}

/// What a descriptor of this process is ("socket:[123]", "anon_inode:inotify"), nil when closed.
func descriptorTarget(_ fd: Int32) -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
}

@Suite struct LibraryWatchTests {
    @Test func aFileWrittenIntoAWatchedFolderIsAddedAndFound() async throws {
        let f = try WatchFixture()
        defer { f.dir.remove() }
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50)))
        #expect(await watch.wait { $0.first?.cause == .initialScan })
        #expect(watch.all.first?.added == [f.path("one.mp3")], "the initial scan")

        try f.write("Brand New.mp3")
        #expect(await watch.wait { $0.added.contains(f.path("Brand New.mp3")) }, "\(watch.all)")
        let change = try #require(watch.all.last)
        #expect(change.cause == .changes && change.added == [f.path("Brand New.mp3")] && change.removed.isEmpty)
        #expect(change.summary.added == 1 && change.summary.filesRead == 1)
        let found = try MediaQuery.songs().searching("brand new").items(in: f.library)
        #expect(found.map(\.path) == [f.path("Brand New.mp3")])
        await watch.stop()
    }

    @Test func aFileCopiedInChunksIsReadOnlyOnceClosed() async throws {
        let f = try WatchFixture()
        defer { f.dir.remove() }
        let long = try LibraryFixtures.longMP3(seconds: 30, in: f.dir.file("tmp"))
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50)))
        #expect(await watch.wait { $0.first?.cause == .initialScan })

        let big = f.path("big.mp3")
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        let out = try #require(FileHandle(forWritingAtPath: big))
        try out.write(contentsOf: long[..<(long.count / 2)])
        // A file written completely after the first half: once its change is applied, the
        // half-written one has been passed over (events come in order).
        try f.write("marker.mp3")
        #expect(await watch.wait { $0.added.contains(f.path("marker.mp3")) }, "\(watch.all)")
        let early = watch.all
        #expect(!early.added.contains(big) && !early.updated.contains(big) && !early.skipped.map(\.path).contains(big), "\(early)")
        #expect(try f.item(at: "big.mp3") == nil)

        try out.write(contentsOf: long[(long.count / 2)...])
        try out.close()
        #expect(await watch.wait { $0.added.contains(big) }, "\(watch.all)")
        let item = try #require(try f.item(at: "big.mp3"))
        #expect(abs(item.duration - 30) < 0.2, "the whole file was read: \(item.duration) s")
        #expect(item.fileSize == Int64(long.count))
        await watch.stop()
    }

    @Test func aDeletedFileIsRemoved() async throws {
        let f = try WatchFixture(tracks: ["one.mp3", "two.mp3"])
        defer { f.dir.remove() }
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50)))
        #expect(await watch.wait { $0.first?.cause == .initialScan })
        let two = try #require(try f.item(at: "two.mp3"))
        try FileManager.default.removeItem(atPath: f.path("two.mp3"))
        #expect(await watch.wait { $0.removed == [f.path("two.mp3")] }, "\(watch.all)")
        #expect(try f.library.item(persistentID: two.persistentID) == nil)
        #expect(try f.item(at: "one.mp3") != nil)
        await watch.stop()
    }

    @Test func renamesAndMovesWithinTheTreeKeepTheItem() async throws {
        let f = try WatchFixture(tracks: ["Album/a.mp3", "Album/b.mp3", "Other/c.mp3"])
        defer { f.dir.remove() }
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50)))
        #expect(await watch.wait { $0.first?.cause == .initialScan })
        let a = try #require(try f.item(at: "Album/a.mp3")), b = try #require(try f.item(at: "Album/b.mp3"))
        #expect(try f.library.recordPlay(of: a.persistentID, playedSeconds: 0.2) == .played)
        try f.library.setRating(5, of: a.persistentID)

        // Renamed in its folder.
        try FileManager.default.moveItem(atPath: f.path("Album/a.mp3"), toPath: f.path("Album/a renamed.mp3"))
        #expect(await watch.wait { $0.moved.contains(.init(from: f.path("Album/a.mp3"), to: f.path("Album/a renamed.mp3"))) },
                "\(watch.all)")
        // Moved to another folder of the tree.
        try FileManager.default.moveItem(atPath: f.path("Album/a renamed.mp3"), toPath: f.path("Other/a.mp3"))
        #expect(await watch.wait { $0.moved.contains(.init(from: f.path("Album/a renamed.mp3"), to: f.path("Other/a.mp3"))) },
                "\(watch.all)")
        // Its folder renamed: every file in it moves.
        try FileManager.default.moveItem(atPath: f.path("Other"), toPath: f.path("Elsewhere"))
        #expect(await watch.wait { $0.moved.contains(.init(from: f.path("Other/a.mp3"), to: f.path("Elsewhere/a.mp3"))) },
                "\(watch.all)")
        #expect(await watch.wait { $0.moved.contains(.init(from: f.path("Other/c.mp3"), to: f.path("Elsewhere/c.mp3"))) })
        // Renamed folder, then a file written into it: watched under its new name.
        try f.write("Elsewhere/d.mp3")
        #expect(await watch.wait { $0.added.contains(f.path("Elsewhere/d.mp3")) }, "\(watch.all)")

        let all = watch.later
        #expect(all.added == [f.path("Elsewhere/d.mp3")] && all.removed.isEmpty, "no move is an add and a remove: \(all)")
        let moved = try #require(try f.item(at: "Elsewhere/a.mp3"))
        #expect(moved.persistentID == a.persistentID && moved.playCount == 1 && moved.rating == 5)
        #expect(try f.item(at: "Album/b.mp3")?.persistentID == b.persistentID)
        #expect(try f.library.statistics().items == 4)
        await watch.stop()
    }

    @Test func aNewFolderIsWatchedAndItsFilesAdded() async throws {
        let f = try WatchFixture()
        defer { f.dir.remove() }
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50)))
        #expect(await watch.wait { $0.first?.cause == .initialScan })
        // Files land at once, likely before the new folders are watched.
        try f.write("New/Deeper/Deepest/x.mp3")
        try f.write("New/y.mp3")
        let first = [f.path("New/Deeper/Deepest/x.mp3"), f.path("New/y.mp3")]
        #expect(await watch.wait { Set($0.added).isSuperset(of: first) }, "\(watch.all)")
        // Now watched: a file written later is seen.
        try f.write("New/Deeper/Deepest/z.mp3")
        #expect(await watch.wait { $0.added.contains(f.path("New/Deeper/Deepest/z.mp3")) }, "\(watch.all)")
        // A folder with files moved in from outside the tree.
        try f.write("Outside/Album/w.mp3", under: f.dir.file("elsewhere"))
        try FileManager.default.moveItem(atPath: f.dir.file("elsewhere/Outside"), toPath: f.path("Inside"))
        #expect(await watch.wait { $0.added.contains(f.path("Inside/Album/w.mp3")) }, "\(watch.all)")
        #expect(watch.later.added.count == 4 && watch.later.removed.isEmpty, "\(watch.all)")
        #expect(try f.library.statistics().items == 5)
        await watch.stop()
    }

    @Test func nonMediaIsSkippedWithTheReasonAndHiddenFilesIgnored() async throws {
        let f = try WatchFixture()
        defer { f.dir.remove() }
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50)))
        #expect(await watch.wait { $0.first?.cause == .initialScan })
        try Data("a shopping list\n".utf8).write(to: URL(fileURLWithPath: f.path("notes.txt")))
        #expect(await watch.wait { !$0.skipped.isEmpty }, "\(watch.all)")
        #expect(watch.all.skipped == [SkippedFile(path: f.path("notes.txt"), reason: "a text file, not media", kind: .notAudio)])
        #expect(watch.all.last?.added == [])

        try f.write(".hidden.mp3")
        try f.write(".Hidden Folder/h.mp3")
        try f.write("after.mp3")
        #expect(await watch.wait { $0.added.contains(f.path("after.mp3")) }, "\(watch.all)")
        #expect(watch.later.added == [f.path("after.mp3")], "hidden files and folders stay out: \(watch.all)")
        await watch.stop()
    }

    @Test func onlyRowsUnderTheChangedPathsAreCompared() async throws {
        let f = try WatchFixture()
        defer { f.dir.remove() }
        // Another folder, scanned, whose file then goes: a full scan would remove its row.
        let other = f.dir.file("Other")
        try f.write("gone.mp3", under: other)
        try await f.library.scanToEnd(folders: [other])
        try FileManager.default.removeItem(atPath: other + "/gone.mp3")

        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50), initialScan: false))
        try f.write("new.mp3")
        #expect(await watch.wait { $0.added.contains(f.path("new.mp3")) }, "\(watch.all)")
        #expect(watch.all.count == 1 && watch.all[0].removed.isEmpty, "\(watch.all)")
        #expect(try MediaQuery.songs().items(in: f.library).contains { $0.path == other + "/gone.mp3" })
        #expect(try f.item(at: "one.mp3") == nil, "no initial scan: the file already there is not read")
        await watch.stop()
    }

    @Test func endingTheIterationClosesTheWatcher() async throws {
        let f = try WatchFixture()
        defer { f.dir.remove() }
        #expect(inotifyWatches(on: f.root).watches == 0)
        do {
            for try await change in try f.library.watch(folders: [f.root]) {
                #expect(change.cause == .initialScan)
                #expect(inotifyWatches(on: f.root).descriptors.count == 1, "one inotify descriptor watches the folder")
                break
            }
        }
        #expect(inotifyWatches(on: f.root).watches == 0, "the stream dropped: the inotify descriptor is closed")

        // Cancelling the iterating task does the same, and closes the wake-up sockets too.
        let (stream, watcher) = try f.library.startWatching(folders: [f.root], debounce: .milliseconds(50), initialScan: true)
        let watch = WatchRecorder(stream)
        #expect(await watch.wait { !$0.isEmpty })
        let sockets = [watcher.wakeRead, watcher.wakeWrite].compactMap(descriptorTarget)
        #expect(sockets.count == 2 && sockets.allSatisfy { $0.hasPrefix("socket:") }, "\(sockets)")
        #expect(inotifyWatches(on: f.root).watches == 1)
        await watch.stop()
        #expect(inotifyWatches(on: f.root).watches == 0)
        let open = Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
            .compactMap { Int32($0) }.compactMap(descriptorTarget))
        #expect(open.isDisjoint(with: sockets), "the socket pair is closed")
        #expect(await watch.waitForEnd() == "finished")
    }

    /// `batches` hears of every batch before and after it is applied — also one that changed
    /// nothing (the same file put back with its modification time), which the stream does not
    /// yield.
    @Test func batchesAreToldBeforeAndAfterEvenWhenNothingChanged() async throws {
        let f = try WatchFixture(tracks: ["one.mp3"])
        defer { f.dir.remove() }
        let (heard, sink) = AsyncStream<LibraryWatchBatch>.makeStream()
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50), initialScan: true) { sink.yield($0) })
        _ = try await waitForEvent(heard, timeout: 20, "the initial scan's start") { $0 == .applying(.initialScan) }
        let first = try await waitForEvent(heard, timeout: 20, "the initial scan's end") { if case .applied = $0 { true } else { false } }
        guard case .applied(let initial) = first else { return }
        #expect(initial.cause == .initialScan && initial.added == [f.path("one.mp3")])
        #expect(await watch.wait { $0.count == 1 })
        // The same bytes with the same modification time renamed over it (one event): a batch
        // that changes nothing.
        var before = stat()
        #expect(stat(f.path("one.mp3"), &before) == 0)
        let copy = f.dir.file("tmp/copy.mp3")
        try Data(contentsOf: URL(fileURLWithPath: f.path("one.mp3"))).write(to: URL(fileURLWithPath: copy))
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, copy, &times, 0) == 0)
        #expect(rename(copy, f.path("one.mp3")) == 0)
        _ = try await waitForEvent(heard, timeout: 20, "the batch's start") { $0 == .applying(.changes) }
        let end = try await waitForEvent(heard, timeout: 20, "the batch's end") { if case .applied = $0 { true } else { false } }
        guard case .applied(let change) = end else { return }
        #expect(change.cause == .changes && change.isEmpty, "\(change)")
        #expect(watch.all.count == 1, "the stream yields no empty batch")
        await watch.stop()
    }

    @Test func aLostEventQueueMeansAFullRescan() async throws {
        let f = try WatchFixture(tracks: ["one.mp3", "two.mp3"])
        defer { f.dir.remove() }
        let (stream, watcher) = try f.library.startWatching(folders: [f.root], debounce: .milliseconds(50), initialScan: false)
        let watch = WatchRecorder(stream)
        try FileManager.default.createDirectory(atPath: f.path("Later"), withIntermediateDirectories: true)
        watcher.simulateOverflow()
        #expect(await watch.wait { $0.contains { $0.cause == .rescan } }, "\(watch.all)")
        let rescan = try #require(watch.all.first { $0.cause == .rescan })
        #expect(rescan.added == [f.path("one.mp3"), f.path("two.mp3")], "files never announced are found: \(rescan)")
        // The folders are watched again after an overflow (new ones among them).
        try f.write("Later/three.mp3")
        #expect(await watch.wait { $0.added.contains(f.path("Later/three.mp3")) }, "\(watch.all)")
        await watch.stop()
    }

    @Test func theWatchLimitIsATypedErrorNamingTheSetting() async throws {
        let f = try WatchFixture(tracks: ["A/one.mp3", "B/two.mp3"])
        defer { f.dir.remove() }
        do {
            _ = try f.library.startWatching(folders: [f.root], debounce: .milliseconds(50), initialScan: false, maxWatches: 2)
            Issue.record("three folders watched with a limit of two")
        } catch {
            guard case .watchFailed(_, .watchLimit(limit: 2)) = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("fs.inotify.max_user_watches"), "\(error)")
        }
        #expect(inotifyWatches(on: f.root).watches == 0, "nothing left open")

        // Reached later, by a new folder: the stream ends with the error.
        let (stream, _) = try f.library.startWatching(folders: [f.root], debounce: .milliseconds(50), initialScan: false, maxWatches: 4)
        let watch = WatchRecorder(stream)
        try FileManager.default.createDirectory(atPath: f.path("C/D"), withIntermediateDirectories: true)
        let end = await watch.waitForEnd()
        #expect(end?.contains("cannot watch for changes") == true && end?.contains("fs.inotify.max_user_watches") == true,
                "\(end ?? "no end")")
        #expect(inotifyWatches(on: f.root).watches == 0)
    }

    @Test func aDeletedWatchedFolderEndsTheWatchAfterRemovingItsItems() async throws {
        let f = try WatchFixture(tracks: ["Sub/one.mp3"])
        defer { f.dir.remove() }
        let watch = WatchRecorder(try f.library.watch(folders: [f.root], debounce: .milliseconds(50)))
        #expect(await watch.wait { $0.first?.cause == .initialScan })
        try FileManager.default.removeItem(atPath: f.root)
        let end = await watch.waitForEnd()
        #expect(end == TonearmError.watchFailed(path: f.root, failure: .folderGone).description, "\(end ?? "no end")")
        #expect(watch.all.removed == [f.path("Sub/one.mp3")], "\(watch.all)")
        #expect(try f.library.statistics().items == 0)
    }

    @Test func argumentsAreChecked() throws {
        let f = try WatchFixture()
        defer { f.dir.remove() }
        #expect(throws: TonearmError.fileNotFound(path: f.path("missing"))) { try f.library.watch(folders: [f.path("missing")]) }
        #expect(throws: TonearmError.invalidArgument("\(f.path("one.mp3")): not a folder")) {
            try f.library.watch(folders: [f.path("one.mp3")])
        }
        #expect(throws: TonearmError.self) { try f.library.watch(folders: [f.root], debounce: .milliseconds(-1)) }
        #expect(throws: TonearmError.invalidArgument("no folder to watch")) { try f.library.watch(folders: []) }
    }
}

/// The batching rules, offline: events with their times in, batches out.
@Suite struct ChangeCoalescerTests {
    let t0 = ContinuousClock.now
    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }

    @Test func aBurstIsOneBatchAfterTheQuietPeriod() {
        var c = ChangeCoalescer(debounce: .milliseconds(100), maxDelay: .milliseconds(1000))
        #expect(c.deadline == nil && c.take(at: at(0)) == nil)
        c.add(.closedAfterWriting("/m/a.mp3"), at: at(0))
        c.add(.closedAfterWriting("/m/b.mp3"), at: at(60))
        #expect(c.deadline == at(160))
        #expect(c.take(at: at(159)) == nil)
        c.add(.removed("/m/c.mp3"), at: at(150))
        #expect(c.take(at: at(200)) == nil, "the last event moved the deadline")
        #expect(c.take(at: at(250)) == .init(paths: ["/m/a.mp3", "/m/b.mp3", "/m/c.mp3"]))
        #expect(c.deadline == nil && c.isEmpty)
    }

    @Test func aLongBurstIsAppliedAsItGoes() {
        var c = ChangeCoalescer(debounce: .milliseconds(100), maxDelay: .milliseconds(300))
        for i in 0..<10 { c.add(.closedAfterWriting("/m/\(i).mp3"), at: at(i * 50)) }
        #expect(c.deadline == at(300), "no later than maxDelay after the first event")
        let batch = c.take(at: at(450))
        #expect(batch?.paths.count == 10)
    }

    @Test func filesBeingWrittenWaitForTheirClose() {
        var c = ChangeCoalescer(debounce: .milliseconds(100))
        c.add(.created("/m/big.mp3", isLink: false), at: at(0))
        c.add(.modified("/m/big.mp3"), at: at(10))
        #expect(c.isEmpty && c.deadline == nil, "being written: nothing to apply")
        c.add(.found("/m/New/x.mp3"), at: at(20))
        c.add(.found("/m/New/partial.mp3"), at: at(20))
        c.add(.modified("/m/New/partial.mp3"), at: at(30))
        #expect(c.take(at: at(200)) == .init(paths: ["/m/New/x.mp3"]), "a found file still written to stays out")
        c.add(.closedAfterWriting("/m/big.mp3"), at: at(300))
        c.add(.created("/m/link.mp3", isLink: true), at: at(300))
        #expect(c.take(at: at(400)) == .init(paths: ["/m/big.mp3", "/m/link.mp3"]), "a link is complete at once")
        #expect(c.writing == ["/m/New/partial.mp3"])
        c.add(.removed("/m/New/partial.mp3"), at: at(500))
        #expect(c.writing.isEmpty)
    }

    @Test func theHalvesOfARenameStayTogether() {
        var c = ChangeCoalescer(debounce: .milliseconds(100), maxDelay: .milliseconds(150))
        c.add(.closedAfterWriting("/m/a.mp3"), at: at(0))
        c.add(.movedFrom("/m/b.mp3", cookie: 7, isFolder: false), at: at(140))
        #expect(c.deadline == at(240), "past maxDelay, to wait for the other half")
        c.add(.movedTo("/m/c.mp3", cookie: 7, isFolder: false), at: at(145))
        #expect(c.deadline == at(150))
        #expect(c.take(at: at(150)) == .init(paths: ["/m/a.mp3", "/m/b.mp3", "/m/c.mp3"]))

        // Moved out of the tree: no second half comes; due `debounce` after the first.
        c.add(.movedFrom("/m/d.mp3", cookie: 8, isFolder: false), at: at(1000))
        #expect(c.take(at: at(1100)) == .init(paths: ["/m/d.mp3"]))
    }

    @Test func aFolderMovedWhileAFileInItIsWrittenCarriesThatAlong() {
        var c = ChangeCoalescer(debounce: .milliseconds(100))
        c.add(.created("/m/A/big.mp3", isLink: false), at: at(0))
        c.add(.movedFrom("/m/A", cookie: 3, isFolder: true), at: at(10))
        c.add(.movedTo("/m/B", cookie: 3, isFolder: true), at: at(10))
        c.add(.found("/m/B/big.mp3"), at: at(10))
        c.add(.found("/m/B/done.mp3"), at: at(10))
        #expect(c.writing == ["/m/B/big.mp3"])
        #expect(c.take(at: at(200)) == .init(paths: ["/m/A", "/m/B/done.mp3"]), "the old folder's rows, the new files")
        c.add(.folderRemoved("/m/B"), at: at(300))
        #expect(c.writing.isEmpty)
    }

    @Test func anOverflowIsAFullRescan() {
        var c = ChangeCoalescer(debounce: .milliseconds(100))
        c.add(.modified("/m/big.mp3"), at: at(0))
        c.add(.closedAfterWriting("/m/a.mp3"), at: at(0))
        c.add(.overflow, at: at(50))
        #expect(c.writing.isEmpty, "the close of a file being written may be among the lost events")
        #expect(c.take(at: at(150)) == .init(fullRescan: true))
        #expect(c.isEmpty)
    }

    @Test func aRootGoneEndsWatching() {
        var c = ChangeCoalescer(debounce: .milliseconds(100))
        c.add(.removed("/m/a.mp3"), at: at(0))
        c.add(.rootGone("/m", deleted: true), at: at(10))
        #expect(c.take(at: at(110)) == .init(paths: ["/m/a.mp3", "/m"], rootsGone: ["/m"]))
        c.add(.rootGone("/n", deleted: false), at: at(200))
        #expect(c.take(at: at(300)) == .init(paths: [], rootsGone: ["/n"]), "moved away: its items stay")
    }

    @Test func pathsCoverWhatIsUnderThem() {
        let paths: Set<String> = ["/m/A", "/m/b.mp3"]
        #expect(paths.covers("/m/A") && paths.covers("/m/A/x.mp3") && paths.covers("/m/A/B/y.mp3"))
        #expect(paths.covers("/m/b.mp3"))
        #expect(!paths.covers("/m/AB/x.mp3") && !paths.covers("/m") && !paths.covers("/m/b.mp3.part"))
        #expect(!Set<String>().covers("/m"))
    }
}
