// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore

/// raiseCurrentThreadPriority: what it grants is what the kernel then reports for the thread
/// (/proc/thread-self/stat), and it changes only the calling thread.
@Suite struct ThreadPriorityTests {
    private struct Seen: Sendable {
        var grant = ThreadPriorityGrant.unchanged
        var policy = -1, rtPriority = -1, nice = 99
    }

    /// Raises a new thread for `request` and returns the grant and what /proc says afterwards.
    private func raised(_ request: ThreadPriorityRequest) -> Seen {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex(Seen())
        let t = Thread {
            let grant = raiseCurrentThreadPriority(request, name: "test")
            let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
            let fields = stat[(stat.lastIndex(of: ")").map { stat.index(after: $0) } ?? stat.startIndex)...]
                .split(separator: " ")
            result.withLock {
                $0.grant = grant
                if fields.count > 38 {
                    $0.policy = Int(fields[38]) ?? -1
                    $0.rtPriority = Int(fields[37]) ?? -1
                    $0.nice = Int(fields[16]) ?? 99
                }
            }
            done.signal()
        }
        t.start()
        done.wait()
        return result.withLock { $0 }
    }

    private var privileged: Bool {
        var rt = rlimit()
        getrlimit(__rlimit_resource_t(14), &rt)  // RLIMIT_RTPRIO (glibc hides it without _GNU_SOURCE)
        return geteuid() == 0 || rt.rlim_cur >= UInt(ThreadPriorityRequest.realtimePriority)
    }

    @Test func theRenderThreadIsRealTimeWhenAllowed() {
        let seen = raised(.render)
        switch seen.grant {
        case .realtime(let p):
            #expect(seen.policy == 2 && seen.rtPriority == Int(p), "policy \(seen.policy) priority \(seen.rtPriority)")
        case .nice(let n):
            #expect(!privileged)
            #expect(seen.policy == 0 && seen.nice == Int(n))
        case .unchanged:
            #expect(!privileged)
        }
        if privileged { #expect(seen.grant == .realtime(priority: ThreadPriorityRequest.realtimePriority)) }
        // The test's own thread is as it was.
        #expect(currentThreadScheduling().realtime == false)
    }

    @Test func theDecoderThreadGetsALowerNiceLevelNotRealTime() {
        let before = currentThreadScheduling().nice
        let seen = raised(.decoder)
        #expect(seen.policy == 0, "policy \(seen.policy)")
        if case .nice(let n) = seen.grant {
            #expect(seen.nice == Int(n) && n < 0)
        } else {
            #expect(!privileged, "\(seen.grant)")
        }
        // The test's own thread is as it was.
        #expect(currentThreadScheduling().nice == before)
    }
}
