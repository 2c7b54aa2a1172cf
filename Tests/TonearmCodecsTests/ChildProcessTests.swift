// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// The tests' helper servers (``ChildProcess``: MPD, PulseAudio, Xvfb, snapserver) inherit
/// nothing of the test process but their standard streams. Foundation's `Pipe` does not set
/// close-on-exec: a server started while another test's `run()` read its child's output held
/// that pipe open for its whole life, the reader never saw the end, and the test run hung.
@Suite struct ChildProcessTests {
    /// The pipe identities (`pipe:[inode]`) among the open descriptors of `pid`.
    static func pipes(of pid: pid_t) -> Set<String> {
        let dir = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return Set(names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(dir)/\($0)") }
            .filter { $0.hasPrefix("pipe:") })
    }

    @Test func aServerStartedBesideAnOpenPipeDoesNotHoldIt() throws {
        let pipe = Pipe()
        defer {
            try? pipe.fileHandleForReading.close()
            try? pipe.fileHandleForWriting.close()
        }
        let ours = Self.pipes(of: getpid())
        let writeEnd = try #require(try? FileManager.default.destinationOfSymbolicLink(
            atPath: "/proc/self/fd/\(pipe.fileHandleForWriting.fileDescriptor)"))
        #expect(ours.contains(writeEnd))
        // `cat` with a lifeline: it reads its standard input (a pipe the object holds) until the
        // object goes, so it is running while its descriptors are looked at.
        let child = try ChildProcess(["cat"], lifeline: true)
        let theirs = Self.pipes(of: child.pid)
        #expect(!theirs.contains(writeEnd), "the child holds the test's pipe: \(theirs)")
        #expect(theirs.count == 1, "only its standard input (the lifeline): \(theirs)")
    }
}
