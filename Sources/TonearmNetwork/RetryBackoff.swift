// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The waits of the network layer: how long before a retry, and how often a source may ask a
/// server at all. Every retry loop of ``NetworkByteSource`` and ``HLSByteSource`` has a bound
/// (its options' attempts) and waits ``delay(attempt:maximum:)`` before each retry.
enum RetryBackoff {
    /// The wait before retry `attempt` (from 1), in seconds: 0.25 s doubling each time up to
    /// `maximum`, times a random factor from 0.5 to 1 (jitter: players that lost the same server
    /// at once do not come back at once). Before the cap, each wait is at least as long as any
    /// the previous attempt could have drawn. Rounded to milliseconds.
    static func delay(attempt: Int, maximum: Double) -> Double {
        let base = min(maximum, 0.25 * pow(2, Double(max(0, attempt - 1))))
        return (base * Double.random(in: 0.5...1) * 1000).rounded() / 1000
    }
}

/// At most `burst` requests in any `window` seconds (a sliding window over the times the latest
/// requests began). One per source, used by its fetch thread only.
struct RequestPacer {
    let burst: Int
    let window: Double
    private var recent: [ContinuousClock.Instant] = []

    init(burst: Int, window: Double) {
        self.burst = max(1, burst)
        self.window = window
    }

    /// How long to wait before the next request may begin (0: now).
    func wait(now: ContinuousClock.Instant = .now) -> Double {
        guard recent.count >= burst else { return 0 }
        let left = recent[recent.count - burst].advanced(by: .seconds(window)) - now
        let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
        return max(0, seconds)
    }

    /// Notes that a request begins now.
    mutating func begin(now: ContinuousClock.Instant = .now) {
        recent.append(now)
        if recent.count > burst { recent.removeFirst(recent.count - burst) }
    }
}
