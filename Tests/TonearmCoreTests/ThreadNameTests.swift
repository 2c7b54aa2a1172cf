// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore

/// nameCurrentThread: the name the kernel shows for the thread (/proc/thread-self/comm), cut to
/// 15 bytes, never inside a UTF-8 character.
@Suite struct ThreadNameTests {
    /// Runs `name` on a new thread and returns what /proc says its name is.
    private func comm(afterNaming name: String) -> String {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex("")
        let t = Thread {
            nameCurrentThread(name)
            let text = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            result.withLock { $0 = text.trimmingCharacters(in: .newlines) }
            done.signal()
        }
        t.start()
        done.wait()
        return result.withLock { $0 }
    }

    @Test func aShortNameIsKept() {
        #expect(comm(afterNaming: "tonearm-null") == "tonearm-null")
    }

    @Test func aLongNameIsCutTo15Bytes() {
        // Foundation's Thread.name of such a name is refused by the kernel (ERANGE).
        #expect(comm(afterNaming: "tonearm.player-node-events") == "tonearm.player-")
    }

    @Test func aCutNeverSplitsACharacter() {
        // Eight two-byte characters are 16 bytes: seven fit.
        #expect(comm(afterNaming: "éééééééé") == "ééééééé")
        #expect(comm(afterNaming: "abcdefghijklmn€") == "abcdefghijklmn")
    }
}
