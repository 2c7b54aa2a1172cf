// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCompat
import TonearmTestSupport

/// AVAudioSession's interruption notification as iOS code observes it (issue 23): two sessions
/// on a private D-Bus bus; the second, exclusive, interrupts the first, whose interruption is
/// posted on NotificationCenter.default with the type under AVAudioSessionInterruptionTypeKey
/// (a UInt that AVAudioSession.InterruptionType reads), and its end with shouldResume.
@Suite(.serialized) struct CompatSessionTests {
    @Test func interruptionsArePostedWithApplesKeys() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = AVAudioSession(identifier: "compat-A", bus: .address(bus.address))
        let b = AVAudioSession(identifier: "compat-B", bus: .address(bus.address))
        try a.setCategory(.playback)
        try b.setCategory(.playback)
        let (posted, sink) = AsyncStream<[UInt]>.makeStream()
        // iOS code: an observer reading the keys' values.
        let observer = NotificationCenter.default.addObserver(forName: AVAudioSession.interruptionNotification, object: a, queue: nil) { note in
            guard let info = note.userInfo, let typeValue = info[AVAudioSessionInterruptionTypeKey] as? UInt,
                  let type = AVAudioSession.InterruptionType(rawValue: typeValue) else { return }
            let options = (info[AVAudioSessionInterruptionOptionKey] as? UInt).map(AVAudioSession.InterruptionOptions.init(rawValue:)) ?? []
            sink.yield([type.rawValue, options.contains(.shouldResume) ? 1 : 0])
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        a.postNotifications()
        try a.setActive(true)
        try b.setActive(true)
        #expect(try await waitForEvent(posted, "the interruption's start") { _ in true } == [AVAudioSession.InterruptionType.began.rawValue, 0])
        try b.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(try await waitForEvent(posted, "its end") { _ in true } == [AVAudioSession.InterruptionType.ended.rawValue, 1])
    }
}
