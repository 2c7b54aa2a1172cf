// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm
import TonearmDaemon

/// The daemon's play counting, a companion of its MPD server (``DaemonOptions/companions``): a
/// ``LibraryPlayRecorder`` on the daemon's player writes each play and skip of a library song
/// into the library (the song's `playCount`, `skipCount` and `lastPlayed` stickers; the web
/// remote's counts), and every count written is told to idling clients as a `sticker` change.
/// Runs until the daemon's graceful shutdown cancels it, then counts the song playing as left by
/// stopping. Without a library (no music folder) it does nothing.
enum DaemonPlayCounts {
    static func run(daemon: MPDDaemon, warn: @escaping @Sendable (String) -> Void) async {
        guard let database = daemon.database as? DaemonDatabase else { return }
        let recorder = LibraryPlayRecorder(player: daemon.player, library: database.responder.library)
        // Ends when the shutdown cancels this task.
        for await record in recorder.records {
            switch record.outcome {
            case .success(.played), .success(.skipped): daemon.hub.post([.sticker])
            case .success(.notCounted): break
            case .failure(let error): warn("the play of song \(record.persistentID) was not counted: \(error)")
            }
        }
        await recorder.finish()
    }
}
