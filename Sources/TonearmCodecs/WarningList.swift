// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import TonearmCore

/// The decode warnings a decoder has met and not handed out yet (at most 1,000: a file damaged
/// throughout does not grow it without end). Shared by the decoders behind ``AudioFile``.
///
/// Threading: `add` on the decoding thread, `take` from any thread.
final class WarningList: Sendable {
    private let list = Mutex<[AudioWarning]>([])

    func add(_ w: AudioWarning) {
        list.withLock { if $0.count < 1000 { $0.append(w) } }
    }

    /// The warnings met since the last call, oldest first.
    func take() -> [AudioWarning] {
        list.withLock { l in
            defer { l.removeAll() }
            return l
        }
    }
}
