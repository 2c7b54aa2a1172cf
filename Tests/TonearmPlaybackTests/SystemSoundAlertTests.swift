// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
import TonearmPlayback
import TonearmSession
import TonearmTestSupport

/// `SystemSound.playAlert()`: the sound (through the real-time null output, so "heard to its
/// end" takes the sound's length) and a desktop notification shown by a real server — dunst on
/// an Xvfb display, on a private bus — or, with no server, no bus or a hung server, the bell.
/// Waits are signalled and bounded; the one order checked (the sound is heard before a hung
/// server's timeout) has 0.8 s to spare.
@Suite(.serialized) struct SystemSoundAlertTests {
    /// When the plays' completions ran.
    final class Heard: Sendable {
        let times = Watched<[ContinuousClock.Instant]>([])
        func hit() { times.update { $0.append(.now) } }
        func wait(for count: Int) async -> Bool { await times.wait(timeout: 10) { $0.count >= count } }
    }

    private func makeSound(_ dir: TempDir, _ name: String, seconds: Double, bus: AudioSession.Bus) throws -> SystemSound {
        let path = dir.file(name)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=880:duration=\(seconds)", path])
        return try SystemSound(contentsOf: URL(fileURLWithPath: path), output: { NullOutput() }, notificationBus: bus)
    }

    @Test func anAlertPlaysAndShowsADesktopNotification() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let server = try NotificationServer(bus: bus)
        defer { server.stop() }
        let dir = try TempDir("alert")
        defer { dir.remove() }
        let sound = try makeSound(dir, "chime.wav", seconds: 0.2, bus: .address(bus.address))
        #expect(sound.alertTitle == "chime" && sound.alertBody == "")
        let heard = Heard()

        let first = await sound.playAlert { heard.hit() }.value
        guard case .notification(let id) = first else {
            Issue.record("no notification: \(first)")
            return
        }
        #expect(await heard.wait(for: 1))
        #expect(try server.notifications() == [.init(id: Int(id), appName: "Tonearm", summary: "chime", body: "", category: "")])

        sound.alertTitle = "Tea timer"
        sound.alertBody = "The tea is ready."
        let second = await sound.playAlert { heard.hit() }.value
        guard case .notification(let id2) = second else {
            Issue.record("no notification: \(second)")
            return
        }
        #expect(id2 != id)
        #expect(await heard.wait(for: 2))
        #expect(try server.notifications().last == .init(id: Int(id2), appName: "Tonearm", summary: "Tea timer",
                                                         body: "The tea is ready.", category: ""))
    }

    @Test func withNoServerOrNoBusTheBellRingsInstead() async throws {
        let bus = try PrivateDBus() // nobody owns org.freedesktop.Notifications
        defer { bus.stop() }
        let dir = try TempDir("alert-bell")
        defer { dir.remove() }
        for target in [AudioSession.Bus.address(bus.address), .none, .address("unix:path=\(dir.path)/no-bus")] {
            let sound = try makeSound(dir, "beep.wav", seconds: 0.2, bus: target)
            let heard = Heard()
            let start = ContinuousClock.now
            let delivery = await sound.playAlert { heard.hit() }.value
            // Each is the answer of the bus or of the system, not a timeout.
            #expect(ContinuousClock.now - start < .seconds(SystemSound.alertNotificationTimeout), "\(target)")
            switch (target, delivery) {
            case (.address(bus.address), .bell(.noServer)), (.none, .bell(.noBus)), (.address, .bell(.busUnreachable)): break
            default: Issue.record("\(target): \(delivery)")
            }
            #expect(await heard.wait(for: 1), "\(target): the sound was not heard")
        }
    }

    /// A hung server (dunst stopped with SIGSTOP) keeps the notification waiting for the whole
    /// timeout: the sound does not wait for it, and the bell rings after the timeout.
    @Test func theSoundDoesNotWaitForAHungServer() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let server = try NotificationServer(bus: bus)
        defer { server.stop() }
        let dir = try TempDir("alert-hung")
        defer { dir.remove() }
        let sound = try makeSound(dir, "knock.wav", seconds: 0.2, bus: .address(bus.address))
        let heard = Heard()
        server.freeze()
        let start = ContinuousClock.now
        let delivery = sound.playAlert { heard.hit() }
        let returned = ContinuousClock.now
        #expect(returned - start < .milliseconds(500), "playAlert blocked for \(returned - start)")
        #expect(await heard.wait(for: 1))
        let result = await delivery.value
        let decided = ContinuousClock.now
        #expect(result == .bell(.timedOut(SystemSound.alertNotificationTimeout)))
        let heardAt = try #require(heard.times.value.first)
        #expect(heardAt < decided && heardAt - start < .seconds(SystemSound.alertNotificationTimeout))
        #expect(decided - start >= .seconds(SystemSound.alertNotificationTimeout) && decided - start < .seconds(3))
        server.thaw()
    }
}
