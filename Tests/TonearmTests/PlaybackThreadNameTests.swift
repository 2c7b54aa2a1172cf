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
        let file = dir.file("tone.flac")
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:a", "flac", file])
        let player = MusicPlayer(output: { NullOutput() })
        player.setQueue(with: [QueueItem(path: file)])
        let events = player.events
        player.play()
        var names: Set<String> = []
        for await e in events {
            if case .stateChanged(.playing) = e {
                names = threadNames()
                break
            }
            if case .finished = e { break }
        }
        player.stop()
        #expect(names.isSuperset(of: ["tonearm-decoder", "tonearm-events", "tonearm-null"]), "\(names.sorted())")
    }
}
