// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
import TonearmTestSupport

/// While a MusicPlayer plays to a real-time null output, its threads carry their names in
/// /proc/self/task/*/comm (what ps -L, top -H and the playback benchmark show): the decoder, the
/// event thread and the output's render thread.
@Suite struct PlaybackThreadNameTests {
    /// The names of this process's threads now.
    private func threadNames() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.compactMap { tid in
            (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        })
    }

    @Test func theDecoderEventAndOutputThreadsAreNamedWhilePlaying() async throws {
        let dir = try TempDir("thread-names")
        defer { dir.remove() }
        let files = [dir.file("a.flac"), dir.file("b.flac")]
        for (f, hz) in zip(files, [440, 550]) {
            try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(hz):duration=0.4", "-c:a", "flac", f])
        }
        let player = MusicPlayer(output: { NullOutput() })
        player.setQueue(with: files.map { QueueItem(path: $0) })
        let events = player.events
        player.play()
        var names: Set<String> = []
        var decoders: [ThreadScheduling] = []
        var playing = false
        for await e in events {
            if case .stateChanged(.playing) = e { playing = true }
            // The move to the second item comes from the end of the first, handled on the event
            // thread once the output's thread has rendered it and the decoder decoded it: all
            // three have run (and named themselves) by then, and still run.
            if playing, case .currentItemChanged(1?, _) = e {
                names = threadNames()
                decoders = ThreadScheduling.threads(named: "tonearm-decoder")
                break
            }
            if case .finished = e { break }
        }
        player.stop()
        #expect(names.isSuperset(of: ["tonearm-decoder", "tonearm-events", "tonearm-null"]), "\(names.sorted())")
        // The decoder asked for a lower nice level as it started (not real time).
        if ThreadScheduling.mayRaise {
            #expect(!decoders.isEmpty && decoders.allSatisfy { $0.policy == 0 && $0.nice == -10 }, "\(decoders)")
        }
    }
}
