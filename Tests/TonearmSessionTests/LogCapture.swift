// SPDX-License-Identifier: GPL-3.0-or-later
import Logging
import Synchronization

/// A swift-log handler that keeps each message as "level: message", for tests that check what a
/// component logs (given to it as its `logger`; the process's LoggingSystem stays untouched).
final class LogCapture: Sendable {
    private let kept = Mutex<[String]>([])

    var lines: [String] { kept.withLock { $0 } }

    var logger: Logger {
        Logger(label: "test") { _ in Handler(capture: self) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.kept.withLock { $0.append("\(event.level): \(event.message)") }
        }
    }
}
