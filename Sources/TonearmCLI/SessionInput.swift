// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Tonearm
#if canImport(Glibc)
import Glibc
#endif

/// Events a play loop reacts to.
enum SessionEvent: Sendable {
    case key(Key)
    case queue(QueuePlayerEvent)
    case player(PlayerEvent)
    case tick
    /// The system volume of the output in use changed.
    case systemVolume(SystemVolumeState)
    /// A signal asked to quit (SIGINT, SIGTERM, SIGHUP).
    case signalled(Int32)
    /// A remote client (MPRIS) asked for what the session itself owns: the speed, quitting.
    case remote(RemoteBridge.Request)
    /// A key of `tonearm play`'s screen, by name (``PlayKeyDecoder``).
    case keyName(String)
    /// The terminal changed size (SIGWINCH).
    case resized
    /// Ctrl-Z (SIGTSTP): give the terminal back and stop until continued.
    case suspend
    /// SIGCONT: `fg` (or `bg`) after Ctrl-Z.
    case continued
}

/// What feeds a play loop besides its player: quit signals and the terminal's keys.
enum SessionInput {
    /// SIGINT, SIGTERM and SIGHUP become ``SessionEvent/signalled(_:)`` (keep the sources).
    static func installSignalHandlers(_ continuation: AsyncStream<SessionEvent>.Continuation) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { sig in
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { continuation.yield(.signalled(sig)) }
            s.resume()
            return s
        }
    }

    /// A thread that reads standard input and yields the keys it decodes.
    static func startKeyReader(_ continuation: AsyncStream<SessionEvent>.Continuation) -> Thread {
        let t = Thread {
            var decoder = KeyDecoder()
            var byte: UInt8 = 0
            while read(0, &byte, 1) == 1 {
                if let k = decoder.feed(byte) { continuation.yield(.key(k)) }
            }
        }
        t.name = "tonearm.keys"
        t.start()
        return t
    }

    /// Yields ``SessionEvent/tick`` every `interval` (the screen's refresh, not synchronisation).
    static func startTicker(_ continuation: AsyncStream<SessionEvent>.Continuation, every interval: Duration) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)  // screen refresh only
                continuation.yield(.tick)
            }
        }
    }
}

/// A volume set from a key: clamped to 0…1 and kept on the 5 % steps the keys move by.
func volumeStep(_ v: Float) -> Float { max(0, min(1, (v * 20).rounded() / 20)) }
