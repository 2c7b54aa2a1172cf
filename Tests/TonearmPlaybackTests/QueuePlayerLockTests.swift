// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
import TonearmPlayback
import TonearmTestSupport

/// The queue opens files off its lock: while it waits for a file to open (a slow disk, a network
/// share), every other call on it answers.
@Suite  final class QueuePlayerLockTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("queue-lock") }
    deinit { dir.remove() }

    func tone(_ name: String, _ freq: Int, album: String, seconds: Int) throws -> String {
        let path = dir.file(name)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.3*sin(2*PI*\(freq)*t):s=44100:d=\(seconds)",
                             "-metadata", "album=\(album)", "-c:a", "flac", path])
        return path
    }

    /// A named pipe stands for a file that is slow to open: opening it for reading waits until a
    /// writer comes, and reading it waits until the writer writes. The writer comes at once
    /// (`opened` says that the queue is inside its open) and writes nothing until `release`:
    /// then the real file takes the pipe's place (so that every later open finds the file) and
    /// the pipe gets the whole of it, for a reader already on it.
    final class SlowFile: Sendable {
        let path: String
        let opened = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        init(path: String, content: String) throws {
            self.path = path
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: content)))
            guard mkfifo(path, 0o600) == 0 else { throw TonearmError.invalidState("mkfifo \(path): errno \(errno)") }
            signal(SIGPIPE, SIG_IGN)  // a reader that closed early ends a write with EPIPE, not the process
            Thread.detachNewThread { [self] in
                let fd = open(path, O_WRONLY | O_CLOEXEC)  // waits for the first reader
                opened.signal()
                release.wait()
                rename(content, path)
                bytes.withUnsafeBytes { raw in
                    var done = 0
                    while fd >= 0 && done < raw.count {
                        let n = write(fd, raw.baseAddress! + done, raw.count - done)
                        if n <= 0 { break }
                        done += n
                    }
                }
                if fd >= 0 { close(fd) }
            }
        }
    }

    @Test func theQueueAnswersWhileItOpensTheItemItCrossfadesInto() async throws {
        let a = try tone("a.flac", 440, album: "First", seconds: 3)
        let slow = try SlowFile(path: dir.file("b.flac"), content: try tone("b-content.flac", 660, album: "Second", seconds: 2))
        let out = dir.file("out.wav")
        let q = QueuePlayer(items: [QueueItem(path: a), QueueItem(path: slow.path)], output: { FileOutput(path: out) })
        q.crossfadeDuration = 1
        let events = q.events
        // play() opens the first item and, to plan the crossfade, the second: that open waits.
        Thread.detachNewThread { q.play() }
        slow.opened.wait()
        // The queue is inside the open of the second item now. Its lock must be free.
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            q.volume = 0.5
            _ = q.currentTime
            _ = q.playbackState
            answered.signal()
        }
        // A deadline to tell a held lock (the calls never return while the open waits), not
        // synchronisation: the open goes on either way, so that a failing run ends too.
        let free = answered.wait(timeout: .now() + 10) == .success
        slow.release.signal()
        #expect(free, "the queue held its lock while it opened a file")
        if !free { answered.wait() }
        _ = try await waitForEvent(events, timeout: 60, "the queue to finish") { $0 == .finished }
    }
}
