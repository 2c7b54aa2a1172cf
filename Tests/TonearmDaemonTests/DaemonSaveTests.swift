// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmDSP
import TonearmTestSupport
@testable import TonearmDaemon
import TonearmMPDProtocol
@testable import TonearmPlayback
import TonearmRender

/// The daemon saves what changed (issue 20): a song change is the player's place (a small file
/// beside the queue) and nothing of the MPD side, where every change wrote the whole queue
/// twice and the MPD state once. What is saved still resumes where it was.
@Suite(.serialized) final class DaemonSaveTests: @unchecked Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("daemon-save") }
    deinit { dir.remove() }

    static func batch(_ line: String) -> MPDRequestFramer.Batch {
        MPDRequestFramer.Batch(lines: [Array(line.utf8)], mode: .single)
    }

    /// Waits (deadline 30 s) until `done` holds, checking each time the daemon's queue has run
    /// what was queued before (a `ping` through it).
    static func waitUntil(_ daemon: MPDDaemon, _ done: () throws -> Bool) rethrows -> Bool {
        let deadline = DispatchTime.now() + 30
        while DispatchTime.now() < deadline {
            if try done() { return true }
            _ = daemon.executeNow(batch("ping"), client: MPDClientContext(isLocal: true))
        }
        return try done()
    }

    @Test func songChangesWriteThePlaceOnly() throws {
        var paths: [String] = []
        try FileManager.default.createDirectory(atPath: dir.file("music/artist/album"), withIntermediateDirectories: true)
        for i in 0..<40 {
            let p = dir.file("music/artist/album/\(i) a long enough file name for a real queue.flac")
            if i < 4 {
                try Fixtures.tone(path: p, codecArgs: ["-c:a", "flac"], seconds: 5, rate: 8_000, channels: 1)
            } else {
                try FileManager.default.copyItem(atPath: paths[i % 4], toPath: p)
            }
            paths.append(p)
        }
        let store = QueueStateStore(path: dir.file("state/queue.json"))
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, store: store, session: nil),
                               stateFile: dir.file("state/mpd.json"))
        let client = MPDClientContext(isLocal: true)
        for p in paths { #expect(daemon.executeNow(Self.batch("add \"\(p)\""), client: client).text == "OK\n") }
        #expect(daemon.executeNow(Self.batch("play 0"), client: client).text == "OK\n")
        #expect(store.writeCount.bytes > 0)
        let queueBytes = try #require(FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int)
        let before = (store: store.writeCount, mpd: daemon.stateWrites)
        for k in 1...5 {
            #expect(daemon.executeNow(Self.batch("next"), client: client).text == "OK\n")
            #expect(try Self.waitUntil(daemon) { try store.load()?.order.current == k }, "song \(k) saved")
        }
        let after = (store: store.writeCount, mpd: daemon.stateWrites)
        // Five song changes: no MPD-side write, and the player's writes are places, not queues.
        #expect(after.mpd == before.mpd)
        #expect(after.store.files > before.store.files)
        #expect(after.store.bytes - before.store.bytes < (after.store.files - before.store.files) * 300,
                "\(after.store.bytes - before.store.bytes) bytes in \(after.store.files - before.store.files) files; the queue is \(queueBytes)")
        #expect(queueBytes > 3_000)
        // What a restart reads: song 5 of the same queue.
        daemon.shutdown()
        let again = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, store: QueueStateStore(path: store.path), session: nil),
                              stateFile: dir.file("state/mpd.json"))
        #expect(try again.restore())
        #expect(again.player.queue.currentIndex == 5 && again.player.queue.items().count == 40)
        again.shutdown()
    }

    /// The equalizer's preset (`outputset 0 equalizer jazz`) is saved and a restarted daemon's
    /// player has it again.
    @Test func theEqualizerPresetSurvivesARestart() throws {
        let p = dir.file("one.flac")
        try Fixtures.tone(path: p, codecArgs: ["-c:a", "flac"], seconds: 1, rate: 8_000, channels: 1)
        let store = QueueStateStore(path: dir.file("eq-state/queue.json"))
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, store: store, session: nil), stateFile: dir.file("eq-state/mpd.json"))
        let client = MPDClientContext(isLocal: true)
        #expect(daemon.executeNow(Self.batch("add \"\(p)\""), client: client).text == "OK\n")
        #expect(daemon.executeNow(Self.batch("outputset 0 equalizer jazz"), client: client).text == "OK\n")
        #expect(Self.waitUntil(daemon) { (try? String(contentsOfFile: dir.file("eq-state/mpd.json"), encoding: .utf8))?.contains("jazz") == true })
        daemon.shutdown()
        let again = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, store: QueueStateStore(path: store.path), session: nil),
                              stateFile: dir.file("eq-state/mpd.json"))
        #expect(try again.restore())
        #expect(again.executeNow(Self.batch("outputs"), client: client).text.contains("attribute: equalizer=jazz\n"))
        #expect(again.player.queue.eq.bands.map(\.gain) == EQPreset.jazz.gains)
        again.shutdown()
    }

    /// A song's `rangeid` part is saved with the queue: a restarted daemon lists it and plays it.
    @Test func aSongsRangeSurvivesARestart() throws {
        let p = dir.file("two.flac")
        try Fixtures.tone(path: p, codecArgs: ["-c:a", "flac"], seconds: 3, rate: 8_000, channels: 1)
        let store = QueueStateStore(path: dir.file("range-state/queue.json"))
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, store: store, session: nil), stateFile: dir.file("range-state/mpd.json"))
        let client = MPDClientContext(isLocal: true)
        #expect(daemon.executeNow(Self.batch("addid \"\(p)\""), client: client).text == "Id: 1\nOK\n")
        #expect(daemon.executeNow(Self.batch("rangeid 1 0.5:2.25"), client: client).text == "OK\n")
        #expect(Self.waitUntil(daemon) { (try? store.load())??.items.first?.range == PlaybackRange(start: 0.5, end: 2.25) })
        daemon.shutdown()
        let again = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, store: QueueStateStore(path: store.path), session: nil),
                              stateFile: dir.file("range-state/mpd.json"))
        #expect(try again.restore())
        let listed = String(decoding: again.executeNow(Self.batch("playlistinfo"), client: client).data, as: UTF8.self)
        #expect(listed.contains("Range: 0.500-2.250\n") && listed.contains("duration: 1.750\n"), "\(listed)")
        #expect(again.player.queue.items().first?.range == PlaybackRange(start: 0.5, end: 2.25))
        again.shutdown()
    }

    /// A play state a command changed is announced once, with its answer: the player's own
    /// `stateChanged` for it, which comes later through its event stream, raises no second
    /// `player` — a client that connected after `stop` was answered hears nothing of it (a
    /// clean-clone run saw `idle` answer `player` instead of the `mixer` that came next). A change
    /// the player makes by itself is still announced.
    @Test func aCommandsStateChangeIsAnnouncedOnce() throws {
        let p = dir.file("idle.flac")
        try Fixtures.tone(path: p, codecArgs: ["-c:a", "flac"], seconds: 30, rate: 8_000, channels: 1)
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil))
        defer { daemon.shutdown() }
        let client = MPDClientContext(isLocal: true)
        #expect(daemon.executeNow(Self.batch("add \"\(p)\""), client: client).text == "OK\n")
        #expect(daemon.executeNow(Self.batch("play 0"), client: client).text == "OK\n")
        #expect(daemon.executeNow(Self.batch("stop"), client: client).text == "OK\n")
        #expect(daemon.player.playbackState == .stopped)

        let heard = Mutex<[Set<MPDSubsystem>]>([])
        let id = daemon.hub.subscribe { changed in heard.withLock { $0.append(changed) } }
        defer { daemon.hub.unsubscribe(id) }
        // The player's events for the play and the stop, late: nothing new to tell.
        daemon.handlePlayerEventForTesting(.stateChanged(.playing))
        daemon.handlePlayerEventForTesting(.stateChanged(.stopped))
        _ = daemon.executeNow(Self.batch("ping"), client: client)
        #expect(heard.withLock { $0 }.filter { $0.contains(.player) }.isEmpty, "\(heard.withLock { $0 })")

        // An event of a state that is not the player's any more: nothing (the player is stopped).
        daemon.handlePlayerEventForTesting(.stateChanged(.paused))
        #expect(heard.withLock { $0 }.filter { $0.contains(.player) }.isEmpty, "\(heard.withLock { $0 })")

        // A change no MPD command made (MPRIS's Play, here the player's own call): announced once
        // its event comes.
        daemon.player.play()
        #expect(Self.waitUntil(daemon) { heard.withLock { $0 }.contains { $0.contains(.player) } }, "\(heard.withLock { $0 })")
        #expect(daemon.player.playbackState == .playing)
    }
}
