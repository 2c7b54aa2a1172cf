// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization
import TonearmTestSupport
import Testing
@testable import TonearmDaemon
import TonearmMPDProtocol
import TonearmPlayback
import TonearmRender

/// Read-only commands (`status`, `currentsong`, `playlistinfo`…) are answered on the caller's
/// thread — the connection's event loop — without the hop to the command queue and back; edits
/// and command lists still go through the queue, in order.
struct MPDCommandMachineInlineTests {
    static func batch(_ lines: String..., mode: MPDRequestFramer.Mode = .single) -> MPDRequestFramer.Batch {
        MPDRequestFramer.Batch(lines: lines.map { Array($0.utf8) }, mode: mode)
    }

    @Test func readOnlyCommandsRunInlineAndEditsGoToTheQueue() {
        for line in ["status", "currentsong", "ping", "playlistinfo", "playlistinfo 0:5", "playlistid 3", "plchanges 0",
                     "plchangesposid 0", "playlist"] {
            #expect(MPDDaemon.runsInline(Self.batch(line)), "\(line)")
        }
        for line in ["add song.flac", "repeat 1", "play", "statusx", "stats", "clearerror", "idle", "list album",
                     "\"status\"", String(repeating: "s", count: 40)] {
            #expect(!MPDDaemon.runsInline(Self.batch(line)), "\(line)")
        }
        // A command list is one batch on the queue, even of read-only commands.
        #expect(!MPDDaemon.runsInline(Self.batch("status", "currentsong", mode: .list(ok: false))))
    }

    @Test func anInlineStatusIsAnsweredBeforeExecuteReturnsAndSeesEarlierEdits() {
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil))
        let client = MPDClientContext(isLocal: true)
        #expect(daemon.executeNow(Self.batch("repeat 1"), client: client).text == "OK\n")
        let answer = Mutex<String?>(nil)
        daemon.execute(Self.batch("status"), client: client) { result in answer.withLock { $0 = result.text } }
        let text = answer.withLock { $0 }
        #expect(text?.contains("repeat: 1\n") == true)
        #expect(text?.hasSuffix("OK\n") == true)
        #expect(text == daemon.executeNow(Self.batch("status"), client: client).text)
    }

    /// A burst of trim requests is one `malloc_trim` a moment later; nothing is pending after.
    @Test func aBurstOfTrimRequestsIsOneTrimLater() {
        let trimmer = MemoryTrimmer(delay: 0.05)
        let done = DispatchSemaphore(value: 0)
        trimmer.runs.onRun { done.signal() }
        for _ in 0..<100 { trimmer.request() }
        #expect(trimmer.runs.isPending)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(trimmer.runs.count == 1)
        #expect(!trimmer.runs.isPending)
    }

    /// Queue edits ask for a trim; a short read-only answer or a mode change does not.
    @Test func queueEditsAskForATrimAndSmallAnswersDoNot() {
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil))
        let client = MPDClientContext(isLocal: true)
        #expect(daemon.executeNow(Self.batch("status"), client: client).text.hasSuffix("OK\n"))
        #expect(daemon.executeNow(Self.batch("repeat 1"), client: client).text == "OK\n")
        #expect(!daemon.trimmer.runs.isPending && daemon.trimmer.runs.count == 0)
        #expect(daemon.executeNow(Self.batch("add http://127.0.0.1:9/stream.mp3"), client: client).text == "OK\n")
        #expect(daemon.trimmer.runs.isPending)
    }

    /// The player's own changes (a new song, play, stop) ask for a trim too: a song's decoder
    /// and buffers are freed then. `play` is not a queue edit, so the second trim is the event's.
    @Test func playerChangesAskForATrim() async throws {
        let dir = try TempDir("trim")
        defer { dir.remove() }
        let song = dir.file("tone.flac")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=5", song])
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil))
        defer { daemon.player.stop() }
        // Waited for without blocking a thread: the player's events reach the daemon on a task,
        // which a semaphore wait on the cooperative pool starved (a clean-clone run: no second trim).
        let (trims, trimmed) = AsyncStream<Void>.makeStream()
        daemon.trimmer.runs.onRun { trimmed.yield() }
        let client = MPDClientContext(isLocal: true)
        #expect(daemon.executeNow(Self.batch("add \"\(song)\""), client: client).text == "OK\n")
        _ = try await waitForEvent(trims, timeout: 30, "the first trim") { _ in true }
        let before = daemon.trimmer.runs.count
        #expect(daemon.executeNow(Self.batch("play"), client: client).text == "OK\n")
        _ = try await waitForEvent(trims, timeout: 30, "a trim after play") { _ in daemon.trimmer.runs.count > before }
    }
}
