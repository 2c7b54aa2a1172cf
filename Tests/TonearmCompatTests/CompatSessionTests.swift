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

    /// Headphones unplugged from the sink a session plays to: the route change is posted with
    /// reason `oldDeviceUnavailable` and, under AVAudioSessionRouteChangePreviousRouteKey, an
    /// AVAudioSessionRouteDescription whose output is the headphones ("Headphones"), as seed 001's
    /// handler reads it.
    @Test func anUnplugIsPostedWithThePreviousRouteAsApplesDescription() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let load = try server.pactl("load-module", "module-null-sink", "sink_name=jack", "rate=48000", "channels=2",
                                    "sink_properties=\"device.description=Jack device.form_factor=headphones\"")
        #expect(load.status == 0, "\(load.stderr)")
        _ = try server.pactl("set-default-sink", "jack")
        let session = AVAudioSession(identifier: "compat-routes", bus: .none, pulseServer: server.serverString)
        let (posted, sink) = AsyncStream<(UInt, String?, String?)>.makeStream()
        let observer = NotificationCenter.default.addObserver(forName: AVAudioSession.routeChangeNotification, object: session, queue: nil) { note in
            guard let reason = note.userInfo?[AVAudioSessionRouteChangeReasonKey] as? UInt else { return }
            let previous = (note.userInfo?[AVAudioSessionRouteChangePreviousRouteKey] as? AVAudioSessionRouteDescription)?.outputs.first
            sink.yield((reason, previous?.portType.rawValue, previous?.uid))
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        session.postNotifications()
        _ = try server.cli("update-sink-proplist jack device.form_factor=speaker")
        let unplug = try await waitForEvent(posted, "the unplug") { $0.0 == AVAudioSession.RouteChangeReason.oldDeviceUnavailable.rawValue }
        #expect(unplug.1 == "Headphones" && unplug.2 == "jack")
        #expect(AVAudioSession.Port(.headphones) == .headphones && AVAudioSession.Port(.speaker) == .builtInSpeaker)
    }
}
