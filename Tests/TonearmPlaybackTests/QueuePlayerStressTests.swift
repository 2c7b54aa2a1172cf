// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmEngine
import TonearmOutput
import TonearmRender
@testable import TonearmPlayback
import TonearmTestSupport

/// One ``QueuePlayer`` driven from 8 threads at once — play, pause, next, previous, seek, insert,
/// remove, shuffle, repeat, volume, stop — while the real-time null output plays. Run under
/// ThreadSanitizer too (scripts/test), which reports any data race between the callers, the
/// executor, the workers that open files and the node's threads. Here they prove that the
/// machine's invariants hold at every call, that the executor carries the actions out in the
/// machine's order (the last event of each kind says what the machine says), and that the queue
/// comes out of it consistent: it stops, lets go of itself, and then plays a queue to its end.
@Suite(.serialized) struct QueuePlayerStressTests {
    static let threads = 8
    static let callsPerThread = 40
    static let burst = 50

    /// A small deterministic generator per thread (SplitMix64), so that a failing run can be read.
    struct Dice {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(n))
        }
    }

    /// The last event of each kind that says where the queue stands.
    struct Last: Sendable {
        var state: PlaybackState?
        var index: Int??
        var volume: Float?
        var repeatMode: RepeatMode?
        var shuffleMode: ShuffleMode?
    }

    @Test func eightThreadsDriveOneQueueAndItStaysConsistent() async throws {
        let dir = try TempDir("queue-stress")
        defer { dir.remove() }
        var items: [QueueItem] = []
        for (i, rate) in [48000, 44100, 48000, 44100, 48000].enumerated() {
            let path = dir.file("t\(i).flac")
            try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: 0.6 + 0.2 * Double(i), rate: rate,
                              freq: 220 * Double(i + 1))
            items.append(QueueItem(path: path))
        }
        let pool = items
        let q = QueuePlayer(items: pool, output: { NullOutput(periodDuration: 0.01) })
        let events = q.events
        let last = Mutex(Last())
        let sentinel: Float = 0.123
        let reader = Task {
            for await e in events {
                let done = last.withLock { l -> Bool in
                    switch e {
                    case .stateChanged(let s): l.state = s
                    case .currentItemChanged(let i, _): l.index = .some(i)
                    case .volumeChanged(let v): l.volume = v
                    case .repeatModeChanged(let m): l.repeatMode = m
                    case .shuffleModeChanged(let m): l.shuffleMode = m
                    default: break
                    }
                    return e == .volumeChanged(sentinel)
                }
                if done { break }
            }
        }

        let broken = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: Self.threads) { t in
            var dice = Dice(state: UInt64(t + 1) &* 0x1234_5678_9ABC)
            for _ in 0..<Self.callsPerThread {
                switch dice.next(14) {
                case 0, 1: q.play()
                case 2: q.pause()
                case 3: q.advanceToNextItem()
                case 4: q.skipToPreviousItem()
                case 5, 6: q.seek(to: Double(dice.next(8)) / 10)
                case 7: q.insert(pool[dice.next(pool.count)], at: dice.next(8))
                case 8: if q.items().count > 3 { q.remove(at: dice.next(8)) }
                case 9: q.shuffleMode = [.off, .songs, .off][dice.next(3)]
                case 10: q.repeatMode = [.none, .all, .one][dice.next(3)]
                case 11: q.volume = Float(dice.next(10)) / 10
                case 12: q.skipToItem(at: dice.next(6))
                default: if dice.next(4) == 0 { q.stop() } else { _ = (q.currentTime, q.playbackState, q.currentIndex) }
                }
                let now = q.invariantViolations()
                if !now.isEmpty { broken.withLock { $0 += now } }
            }
            // A burst of settings from every thread at once, each one reported by an event: they
            // must come out in the order the machine took them (the last one is the setting).
            for i in 0..<Self.burst {
                q.volume = Float((t * Self.burst + i) % 97) / 100
                q.repeatMode = [.none, .all, .one][(t + i) % 3]
            }
        }
        #expect(broken.withLock { $0 }.isEmpty, "invariants broken during the storm: \(broken.withLock { $0 })")
        // Every call has returned: what was carried out agrees with the machine.
        let disagreement = q.renderingDisagreement()
        #expect(disagreement == nil, "\(disagreement ?? "")")

        // The storm is over. stop() returns once everything enqueued before it has been carried
        // out; opens still under way come back stale and change nothing.
        q.stop()
        #expect(q.invariantViolations().isEmpty, "\(q.invariantViolations())")
        #expect(q.playbackState == .stopped)
        #expect(!q.keepsItselfAlive, "a stopped queue still holds itself")
        let count = q.items().count
        #expect(q.playOrder.count == count)
        #expect(q.currentIndex.map { (0..<count).contains($0) } ?? (count == 0))

        // The events came in the machine's order: the last of each kind is what the machine says.
        q.volume = sentinel
        await reader.value
        let seen = last.withLock { $0 }
        #expect(seen.state == nil || seen.state == .stopped, "last state event \(String(describing: seen.state)), state stopped")
        if let index = seen.index { #expect(index == q.currentIndex, "last current-item event \(String(describing: index)), current \(String(describing: q.currentIndex))") }
        if let mode = seen.repeatMode { #expect(mode == q.repeatMode) }
        if let mode = seen.shuffleMode { #expect(mode == q.shuffleMode) }
        #expect(seen.volume == sentinel)

        // And it still plays a queue through to its end, every item once, in order.
        q.repeatMode = .none
        q.setQueue(Array(pool.prefix(2)))
        let collector = eventsUntilFinished(q.events)
        q.play()
        #expect(q.playbackState == .playing)
        let played = await collector.value
        let ended = played.compactMap { e -> Int? in
            if case .itemPlayedToEnd(let i, _) = e { return i }
            return nil
        }
        #expect(ended == [0, 1])
        #expect(q.playbackState == .stopped)
        #expect(q.currentIndex == 0)
        #expect(q.invariantViolations().isEmpty, "\(q.invariantViolations())")
        #expect(!q.keepsItselfAlive)
    }

    /// An output whose first start waits until `release` (after signalling `entered`), and which
    /// says whether it is pulling (started or resumed, not paused or stopped).
    final class GatedOutput: AudioOutputDriver, Sendable {
        let inner = NullOutput(periodDuration: 0.01)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private let state = Mutex((gated: true, running: false))
        var running: Bool { state.withLock { $0.running } }

        var name: String { "gated" }
        var format: AudioFormat { inner.format }
        var isAudible: Bool { false }
        func open(format: AudioFormat) throws { try inner.open(format: format) }
        func start(source: any AudioRenderSource) throws {
            if state.withLock({ s in defer { s.gated = false }; return s.gated }) {
                entered.signal()
                release.wait()
            }
            try inner.start(source: source)
            state.withLock { $0.running = true }
        }
        func pause() {
            inner.pause()
            state.withLock { $0.running = false }
        }
        func resume() {
            inner.resume()
            state.withLock { $0.running = true }
        }
        func stop() {
            inner.stop()
            state.withLock { $0.running = false }
        }
        func close() { inner.close() }
        func setVolume(_ volume: Float) { inner.setVolume(volume) }
        var latency: Double { inner.latency }
        var framesPlayed: Int64 { inner.framesPlayed }
        var underrunCount: Int { inner.underrunCount }
        var events: AsyncStream<AudioOutputEvent> { inner.events }
    }

    /// When every caller carried out its own actions, a pause that came while another caller's
    /// start was still starting the output ran first (the output not started yet: nothing to
    /// pause), and the start then set the output going: the queue said paused and played on.
    /// On the one executor the pause is carried out after the start.
    @Test func aPauseWhileAStartIsCarriedOutIsCarriedOutAfterIt() throws {
        let dir = try TempDir("queue-order")
        defer { dir.remove() }
        let path = dir.file("a.flac")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: 3)
        let output = GatedOutput()
        let q = QueuePlayer(items: [QueueItem(path: path)], output: { output })
        defer { q.stop() }
        let played = DispatchSemaphore(value: 0), paused = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            q.play()
            played.signal()
        }
        output.entered.wait()  // the start is being carried out: the output is starting
        Thread.detachNewThread {
            q.pause()
            paused.signal()
        }
        // Room for the pause to be carried out before the start ends, as it was when each caller
        // carried out its own actions (a deadline, not synchronisation: the checks below hold
        // either way on the executor).
        let early = paused.wait(timeout: .now() + 1) == .success
        output.release.signal()
        played.wait()
        if !early { paused.wait() }
        #expect(q.playbackState == .paused)
        #expect(!output.running, "the output runs while the queue says paused")
        #expect(q.renderingDisagreement() == nil, "\(q.renderingDisagreement() ?? "")")
    }

    /// A start cancelled while its output was opening (stop, then play again) still builds its
    /// runtime once the output answers, and then throws it away. That build used to take the
    /// queue's one equaliser while the next start's engine rendered it: configuring it under the
    /// render thread (ThreadSanitizer, 1 run in 3 of the test above) and, when thrown away,
    /// detaching it from the engine that plays. The equaliser is now the install's.
    @Test func aCancelledStartsOutputNeverTakesTheEqualiserFromThePlayingOne() throws {
        let dir = try TempDir("queue-cancelled-build")
        defer { dir.remove() }
        let path = dir.file("a.flac")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: 3)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let calls = Mutex(0)
        let q = QueuePlayer(items: [QueueItem(path: path)], output: {
            // The first start's output takes until `release`; later ones answer at once.
            if calls.withLock({ c in defer { c += 1 }; return c == 0 }) {
                entered.signal()
                release.wait()
            }
            return NullOutput(periodDuration: 0.01)
        })
        defer { q.stop() }
        let firstReturned = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            q.play()
            firstReturned.signal()
        }
        entered.wait()  // the first start is opening its output
        q.stop()
        q.play()
        #expect(q.playbackState == .playing)
        let playing = q.eq.engine
        #expect(playing != nil)
        release.signal()
        firstReturned.wait()  // the cancelled start has built its runtime and thrown it away
        #expect(q.eq.engine === playing, "the equaliser left the playing engine")
        #expect(q.playbackState == .playing)
        #expect(q.invariantViolations().isEmpty, "\(q.invariantViolations())")
    }
}
