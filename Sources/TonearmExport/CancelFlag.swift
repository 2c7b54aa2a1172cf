// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// A flag set once from any thread and polled by an export's worker between packets.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}
