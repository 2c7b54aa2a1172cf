// SPDX-License-Identifier: GPL-3.0-or-later

/// Real-time tests record what a real PulseAudio server plays. On a loaded machine (a sanitizer
/// run, other suites in parallel) a take can be starved — the server reports an underrun — and
/// then its recording's timeline says nothing about the code under test: a gap or a shift in it
/// is the machine's, not the player's. Such a take is taken again instead of being judged.
///
/// `take` sets up everything it needs afresh (its own server and recording) and returns what it
/// measured with the underruns the output counted. It runs until a take reports none, at most
/// `attempts` times. The result is that take's value, or `nil` when every take was starved — the
/// caller then fails with the counts (a player that always underruns is still caught, it is never
/// judged on a starved recording). Each retake is printed, so a log shows how often it happens.
public func firstUnstarvedTake<T>(_ what: String, attempts: Int = 3,
                                  _ take: (_ attempt: Int) async throws -> (value: T, underruns: Int))
    async rethrows -> (value: T?, underruns: [Int]) {
    var counts: [Int] = []
    for attempt in 1...max(1, attempts) {
        let (value, underruns) = try await take(attempt)
        counts.append(underruns)
        if underruns == 0 { return (value, counts) }
        print("\(what): take \(attempt) was starved (PulseAudio reported \(underruns) underrun(s)); "
              + (attempt < attempts ? "taken again" : "no take left"))
    }
    return (nil, counts)
}
