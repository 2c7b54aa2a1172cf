// SPDX-License-Identifier: GPL-3.0-or-later
import Logging
import ServiceLifecycle
import Tonearm
import TonearmDaemon

/// The daemon's play counting, a service beside its MPD server: a ``LibraryPlayRecorder`` on the
/// daemon's player writes each play and skip of a library song into the library (the song's
/// `playCount`, `skipCount` and `lastPlayed` stickers; the web remote's counts), and every count
/// written is told to idling clients as a `sticker` change. Runs until the daemon's graceful
/// shutdown, then counts the song playing as left by stopping. Without a library (no music
/// folder) it only waits for the shutdown.
struct DaemonPlayCounts: Service {
    let daemon: MPDDaemon
    let logger: Logger

    func run() async throws {
        guard let database = daemon.database as? DaemonDatabase else {
            try? await gracefulShutdown()
            return
        }
        let recorder = LibraryPlayRecorder(player: daemon.player, library: database.responder.library)
        for await record in recorder.records.cancelOnGracefulShutdown() {
            switch record.outcome {
            case .success(.played), .success(.skipped): daemon.hub.post([.sticker])
            case .success(.notCounted): break
            case .failure(let error): logger.warning("the play of song \(record.persistentID) was not counted: \(error)")
            }
        }
        await recorder.finish()
    }
}
