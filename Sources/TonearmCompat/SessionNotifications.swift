// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

// AVAudioSession's notifications on NotificationCenter.default, with Apple's userInfo keys and
// values (issue 23): iOS code that observes `AVAudioSession.interruptionNotification` and reads
// `AVAudioSessionInterruptionTypeKey` as a `UInt` runs as it is. They are the session's own
// async sequences (``AudioSession/interruptions``, ``AudioSession/routeChanges``) posted again:
// `AVAudioSession.sharedInstance()` starts posting the shared session's, and
// ``AudioSession/postNotifications()`` any other session's.

extension AudioSession {
    public static let interruptionNotification = Notification.Name("AVAudioSessionInterruptionNotification")
    public static let routeChangeNotification = Notification.Name("AVAudioSessionRouteChangeNotification")

    /// `AVAudioSession.InterruptionType`, as `AVAudioSessionInterruptionTypeKey` holds it.
    public enum InterruptionType: UInt, Sendable {
        case ended = 0
        case began = 1
    }

    /// `AVAudioSession.InterruptionOptions`, as `AVAudioSessionInterruptionOptionKey` holds them.
    public struct InterruptionOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let shouldResume = InterruptionOptions(rawValue: 1)
    }

    /// `AVAudioSession.RouteChangeReason`, as `AVAudioSessionRouteChangeReasonKey` holds it. The
    /// server's default output changing (a user's choice in the desktop's mixer) is
    /// `routeConfigurationChange`.
    public enum RouteChangeReason: UInt, Sendable {
        case unknown = 0, newDeviceAvailable = 1, oldDeviceUnavailable = 2, categoryChange = 3, override = 4,
             wakeFromSleep = 6, noSuitableRouteForCategory = 7, routeConfigurationChange = 8

        init(_ reason: AudioRouteChange.Reason) {
            switch reason {
            case .newDeviceAvailable: self = .newDeviceAvailable
            case .oldDeviceUnavailable: self = .oldDeviceUnavailable
            case .override: self = .override
            case .categoryChange: self = .categoryChange
            case .defaultOutputChanged, .routeConfigurationChange: self = .routeConfigurationChange
            }
        }
    }

    /// Posts this session's interruptions and route changes on `NotificationCenter.default`
    /// from now on, as iOS posts them (the session as the notification's object). Once per
    /// session; the posting ends when the session's streams end (it is released). Connects to
    /// the bus and the sound server (blocks meanwhile); without them nothing is posted.
    public func postNotifications() {
        guard NotificationPosting.shared.begin(self) else { return }
        let interruptions = self.interruptions
        let id = ObjectIdentifier(self)
        Task.detached { [weak self] in
            // Another session made later at the same address posts again.
            defer { NotificationPosting.shared.end(id) }
            for await i in interruptions {
                var info: [AnyHashable: Any] = [:]
                switch i {
                case .began:
                    info[AVAudioSessionInterruptionTypeKey] = InterruptionType.began.rawValue
                case .ended(let resume):
                    info[AVAudioSessionInterruptionTypeKey] = InterruptionType.ended.rawValue
                    info[AVAudioSessionInterruptionOptionKey] = (resume ? InterruptionOptions.shouldResume : []).rawValue
                }
                NotificationCenter.default.post(name: Self.interruptionNotification, object: self, userInfo: info)
            }
        }
        guard let routes = try? self.routeChanges else { return }
        Task.detached { [weak self] in
            for await change in routes {
                var info: [AnyHashable: Any] = [AVAudioSessionRouteChangeReasonKey: RouteChangeReason(change.reason).rawValue]
                // Apple's type: the route before the change (its one output), as an
                // AVAudioSessionRouteDescription.
                if let previous = change.previousRoute {
                    info[AVAudioSessionRouteChangePreviousRouteKey] = AVAudioSessionRouteDescription(outputs: [previous])
                }
                NotificationCenter.default.post(name: Self.routeChangeNotification, object: self, userInfo: info)
            }
        }
    }
}

public let AVAudioSessionInterruptionNotification = AudioSession.interruptionNotification
public let AVAudioSessionRouteChangeNotification = AudioSession.routeChangeNotification
public let AVAudioSessionInterruptionTypeKey = "AVAudioSessionInterruptionTypeKey"
public let AVAudioSessionInterruptionOptionKey = "AVAudioSessionInterruptionOptionKey"
public let AVAudioSessionRouteChangeReasonKey = "AVAudioSessionRouteChangeReasonKey"
public let AVAudioSessionRouteChangePreviousRouteKey = "AVAudioSessionRouteChangePreviousRouteKey"

/// The sessions whose notifications are posted (each once).
final class NotificationPosting: Sendable {
    static let shared = NotificationPosting()
    private let sessions = Mutex<Set<ObjectIdentifier>>([])

    /// True the first time for `session`.
    func begin(_ session: AudioSession) -> Bool { sessions.withLock { $0.insert(ObjectIdentifier(session)).inserted } }

    /// The session's interruptions ended (it was released).
    func end(_ id: ObjectIdentifier) { _ = sessions.withLock { $0.remove(id) } }
}
