// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
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
}
