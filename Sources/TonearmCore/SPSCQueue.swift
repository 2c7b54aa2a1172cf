// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// A bounded, lock-free, single-producer single-consumer queue of plain values, preallocated at
/// creation. `push` and `pop` neither allocate, lock nor wait, so either side may be a realtime
/// thread (the render thread posts its events through one of these).
///
/// Contract: at most one thread pushes and at most one thread pops at a time; which threads those
/// are may change only with a happens-before edge between them (e.g. a driver's start/stop).
public final class SPSCQueue<Element: BitwiseCopyable>: @unchecked Sendable {
    private let capacity: Int
    private let slots: UnsafeMutablePointer<Element>
    private let head = Atomic<Int>(0) // next slot to read; written by the consumer
    private let tail = Atomic<Int>(0) // next slot to write; written by the producer

    /// Creates a queue holding up to `capacity` elements (at least 1).
    public init(capacity: Int) {
        self.capacity = max(1, capacity) + 1
        slots = .allocate(capacity: self.capacity)
    }

    deinit { slots.deallocate() }

    /// Appends `value`; returns false (dropping it) when the queue is full. Producer only.
    @discardableResult
    public func push(_ value: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let next = t + 1 == capacity ? 0 : t + 1
        if next == head.load(ordering: .acquiring) { return false }
        (slots + t).initialize(to: value)
        tail.store(next, ordering: .releasing)
        return true
    }

    /// Removes and returns the oldest value, or nil when empty. Consumer only.
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return nil }
        let value = slots[h]
        head.store(h + 1 == capacity ? 0 : h + 1, ordering: .releasing)
        return value
    }

    /// Whether the queue is empty right now (a hint: the other side may change it at once).
    public var isEmpty: Bool { head.load(ordering: .acquiring) == tail.load(ordering: .acquiring) }
}
