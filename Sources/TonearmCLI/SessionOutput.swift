// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Tonearm

/// Keeps one output open across the tracks of a `tonearm play` session (used for `file:`, so the
/// WAV holds the whole session rather than the last track). Each player opens, starts, stops and
/// closes its output as usual; this wrapper opens the real driver once and closes it only when
/// the session ends. A track whose format differs from the first is refused with a clear error.
final class SessionOutput: ForwardingOutputDriver, @unchecked Sendable {
    let inner: any AudioOutputDriver
    private let opened = Mutex<AudioFormat?>(nil)

    init(_ inner: any AudioOutputDriver) { self.inner = inner }

    func open(format: AudioFormat) throws {
        let current = opened.withLock { $0 }
        if let current {
            guard current.sampleRate == format.sampleRate, current.channelCount == format.channelCount else {
                throw TonearmError.outputUnavailable(
                    driver: inner.name,
                    reason: "the file holds \(Int(current.sampleRate)) Hz, \(current.channelCount) ch audio; "
                        + "this track is \(Int(format.sampleRate)) Hz, \(format.channelCount) ch "
                        + "(one WAV cannot change format; write tracks of another format to another file)")
            }
            return
        }
        try inner.open(format: format)
        opened.withLock { $0 = format }
    }

    /// Ignored: the session closes the real driver with ``finish()``.
    func close() { inner.stop() }

    /// Closes the real driver (end of the session).
    func finish() {
        inner.close()
    }
}
