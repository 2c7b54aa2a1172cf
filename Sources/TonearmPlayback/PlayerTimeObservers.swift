// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization

/// The time observers of a ``Player``: periodic ones (called every interval of playback, and
/// whenever time jumps or playback starts or stops, as `AVPlayer` does) and boundary ones (called
/// when playback crosses one of their times; a seek over a boundary does not call it).
///
/// Timers, not polling: while the player plays, a periodic observer has a repeating dispatch
/// timer, and a boundary observer a one-shot timer armed for the next boundary from the position
/// and the rate (re-armed if it fires early). Nothing runs while the player does not play.
///
/// Threading: the player calls ``update(playing:rate:)`` and ``jumped()`` from its control queue;
/// blocks run on the queue given for each observer.
final class PlayerTimeObservers: @unchecked Sendable {
    /// Mutated only under the observers' lock.
    private final class Observer: @unchecked Sendable {
        enum Kind {
            case periodic(interval: Double, block: @Sendable (Double) -> Void)
            case boundary(times: [Double], block: @Sendable (Double) -> Void)
        }
        let kind: Kind
        let queue: DispatchQueue
        var timer: DispatchSourceTimer?
        /// Boundary observers: the position up to which crossings have been reported.
        var checkedUpTo: Double = -.infinity

        init(kind: Kind, queue: DispatchQueue) {
            self.kind = kind
            self.queue = queue
        }
    }

    private struct State {
        var observers: [UInt64: Observer] = [:]
        var nextID: UInt64 = 1
        var playing = false
        var rate: Float = 1
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Double
    private let defaultQueue = DispatchQueue(label: "tonearm.player.time-observers")

    /// `now` answers where playback is (seconds); it is called on the observers' queues.
    init(now: @escaping @Sendable () -> Double) {
        self.now = now
    }

    deinit {
        for o in state.withLock({ Array($0.observers.values) }) { o.timer?.cancel() }
    }

    func addPeriodic(interval: Double, queue: DispatchQueue?, block: @escaping @Sendable (Double) -> Void) -> TimeObserverToken {
        add(.periodic(interval: max(0.001, interval.isFinite ? interval : 1), block: block), queue: queue)
    }

    func addBoundary(times: [Double], queue: DispatchQueue?, block: @escaping @Sendable (Double) -> Void) -> TimeObserverToken {
        add(.boundary(times: times.filter(\.isFinite).sorted(), block: block), queue: queue)
    }

    private func add(_ kind: Observer.Kind, queue: DispatchQueue?) -> TimeObserverToken {
        let o = Observer(kind: kind, queue: queue ?? defaultQueue)
        let id = state.withLock { s -> UInt64 in
            let id = s.nextID
            s.nextID += 1
            s.observers[id] = o
            o.checkedUpTo = -.infinity
            if s.playing { arm(o, id: id, rate: s.rate) }
            return id
        }
        return TimeObserverToken(id: id)
    }

    func remove(_ token: TimeObserverToken) {
        let o = state.withLock { $0.observers.removeValue(forKey: token.id) }
        o?.timer?.cancel()
    }

    /// Playback started or stopped, or its rate changed. Periodic observers are told the time.
    func update(playing: Bool, rate: Float) {
        let observers = state.withLock { s -> [(UInt64, Observer)] in
            let changed = s.playing != playing || s.rate != rate
            s.playing = playing
            s.rate = rate > 0 ? rate : 1
            guard changed else { return [] }
            for (id, o) in s.observers {
                o.timer?.cancel()
                o.timer = nil
                if playing { arm(o, id: id, rate: s.rate) }
            }
            return Array(s.observers)
        }
        for (_, o) in observers { notifyPeriodic(o) }
    }

    /// Time jumped (a seek landed): periodic observers are told the new time; boundary ones
    /// start over from it (the boundaries jumped over are not reported).
    func jumped() {
        let t = now()
        let observers = state.withLock { s -> [Observer] in
            for (id, o) in s.observers {
                o.checkedUpTo = t
                if case .boundary = o.kind, s.playing {
                    o.timer?.cancel()
                    arm(o, id: id, rate: s.rate)
                }
            }
            return Array(s.observers.values)
        }
        for o in observers { notifyPeriodic(o) }
    }

    private func notifyPeriodic(_ o: Observer) {
        guard case .periodic(_, let block) = o.kind else { return }
        let now = self.now
        o.queue.async { block(now()) }
    }

    /// Starts the observer's timer (none for a boundary observer with no boundary ahead). Lock held.
    private func arm(_ o: Observer, id: UInt64, rate: Float) {
        switch o.kind {
        case .periodic(let interval, let block):
            let now = self.now
            let timer = DispatchSource.makeTimerSource(queue: o.queue)
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(2))
            timer.setEventHandler { block(now()) }
            o.timer = timer
            timer.resume()
        case .boundary(let times, _):
            let t = now()
            if o.checkedUpTo == -.infinity { o.checkedUpTo = t - 0.0005 }
            guard let next = times.first(where: { $0 > o.checkedUpTo }) else { return }
            let wait = max(0, (next - t) / Double(rate))
            let timer = DispatchSource.makeTimerSource(queue: o.queue)
            timer.schedule(deadline: .now() + wait, leeway: .milliseconds(1))
            timer.setEventHandler { [weak self] in self?.boundaryFired(id: id) }
            o.timer = timer
            timer.resume()
        }
    }

    /// A boundary timer fired: report every boundary crossed, then arm for the next one.
    private func boundaryFired(id: UInt64) {
        let t = now()
        let (crossed, block) = state.withLock { s -> ([Double], (@Sendable (Double) -> Void)?) in
            guard let o = s.observers[id], case .boundary(let times, let block) = o.kind, s.playing else { return ([], nil) }
            // Half a millisecond of slack: a timer that fires a hair early still counts.
            let crossed = times.filter { $0 > o.checkedUpTo && $0 <= t + 0.0005 }
            if !crossed.isEmpty { o.checkedUpTo = crossed.last! }
            o.timer?.cancel()
            arm(o, id: id, rate: s.rate)
            return (crossed, block)
        }
        if let block { for c in crossed { block(c) } }
    }
}
