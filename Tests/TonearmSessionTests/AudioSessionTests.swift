// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmSession
import TonearmTestSupport

/// `AudioSession`: two sessions in this process (told apart by their identifiers) on a private
/// D-Bus bus interrupt, duck and mix each other as their categories say. Every wait is bounded
/// and signalled; "nothing happened" is shown after a barrier — a later signal from the same
/// sender, which the bus delivers in order.
@Suite(.serialized) struct AudioSessionTests {
    typealias Session = AudioSession

    private func session(_ id: String, _ bus: PrivateDBus) -> Session {
        Session(identifier: id, bus: .address(bus.address))
    }

    /// Makes `other` ask for a duck and waits until `ducked` has seen it: every signal `other`
    /// sent before has been handled by then. Leaves `other` active with playback + duckOthers.
    private func barrier(_ other: Session, seenBy ducked: Collected<Session.Ducking>) async throws {
        try other.setCategory(.playback, options: [.duckOthers])
        try other.setActive(true)
        #expect(await ducked.wait { $0 == .duckRequested(level: Session.duckLevel) })
    }

    @Test func anExclusiveSessionInterruptsAndLetsResume() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus)
        #expect(a.isConnectedToBus && b.isConnectedToBus)
        try a.setCategory(.playback)
        try b.setCategory(.playback)
        let events = Collected(a.interruptions)
        try a.setActive(true)
        #expect(a.isActive)
        try b.setActive(true)
        #expect(await events.wait { $0 == .began })
        #expect(!a.isActive)
        try b.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(await events.wait { $0 == .ended(shouldResume: true) })
        #expect(events.all == [.began, .ended(shouldResume: true)])
    }

    @Test func deactivatingWithoutNotifyingEndsWithoutResume() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus)
        try a.setCategory(.playback)
        try b.setCategory(.soloAmbient)
        let aEvents = Collected(a.interruptions), bEvents = Collected(b.interruptions)
        try a.setActive(true)
        try b.setActive(true)
        #expect(await aEvents.wait { $0 == .began })
        try b.setActive(false)
        #expect(await aEvents.wait { $0 == .ended(shouldResume: false) })
        #expect(aEvents.all == [.began, .ended(shouldResume: false)])

        // B active again does not interrupt A, which is inactive; A taking over interrupts B.
        try b.setActive(true)
        try a.setActive(true)
        #expect(await bEvents.wait { $0 == .began })
        #expect(a.isActive && !b.isActive)
        #expect(aEvents.all == [.began, .ended(shouldResume: false)])
    }

    @Test func mixWithOthersIsNotInterrupted() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus)
        try a.setCategory(.playback, options: .mixWithOthers)
        let events = Collected(a.interruptions), ducking = Collected(a.ducking)
        try a.setActive(true)
        try b.setCategory(.playback)
        try b.setActive(true)
        try await barrier(b, seenBy: ducking)
        #expect(events.all.isEmpty)
        #expect(a.isActive)
    }

    @Test func ambientMixesAndIsNeverInterrupted() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus), c = session("C", bus)
        try a.setCategory(.ambient)
        try c.setCategory(.playback)
        let aEvents = Collected(a.interruptions), cEvents = Collected(c.interruptions)
        let aDucking = Collected(a.ducking), cDucking = Collected(c.ducking)
        try a.setActive(true)
        try c.setActive(true)
        // An ambient session activating interrupts nobody either.
        try b.setCategory(.ambient)
        try b.setActive(true)
        try await barrier(b, seenBy: cDucking)
        #expect(cEvents.all.isEmpty && c.isActive)
        // An exclusive one interrupts C but not the ambient A.
        try b.setCategory(.soloAmbient)
        #expect(await cEvents.wait { $0 == .began })
        #expect(await aDucking.wait { $0 == .duckEnded }) // B's re-announcement reached A too
        #expect(aEvents.all.isEmpty && a.isActive)
    }

    @Test func duckOthersDucksAndRestores() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus)
        try a.setCategory(.playback)
        let events = Collected(a.interruptions), ducking = Collected(a.ducking)
        try a.setActive(true)
        try b.setCategory(.playback, mode: .spokenAudio, options: .duckOthers)
        try b.setActive(true)
        #expect(await ducking.wait { $0 == .duckRequested(level: Session.duckLevel) })
        try b.setActive(false)
        #expect(await ducking.wait { $0 == .duckEnded })
        #expect(ducking.all == [.duckRequested(level: Session.duckLevel), .duckEnded])
        #expect(events.all.isEmpty && a.isActive)
    }

    @Test func changingTheCategoryWhileActiveAnnouncesAgain() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus)
        try a.setCategory(.playback)
        let events = Collected(a.interruptions), ducking = Collected(a.ducking)
        try a.setActive(true)
        try b.setCategory(.playback, options: .duckOthers)
        try b.setActive(true)
        #expect(await ducking.wait { $0 == .duckRequested(level: Session.duckLevel) })
        #expect(events.all.isEmpty)
        try b.setCategory(.playback)
        #expect(await events.wait { $0 == .began })
        #expect(await ducking.wait { $0 == .duckEnded })
        #expect(!a.isActive && b.isActive)
    }

    @Test func interruptSpokenAudioInterruptsOnlySpokenAudio() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus), c = session("C", bus)
        try a.setCategory(.playback, mode: .spokenAudio, options: .mixWithOthers)
        try c.setCategory(.playback, options: .mixWithOthers)
        let aEvents = Collected(a.interruptions), cEvents = Collected(c.interruptions), cDucking = Collected(c.ducking)
        try a.setActive(true)
        try c.setActive(true)
        try b.setCategory(.playback, options: .interruptSpokenAudioAndMixWithOthers)
        try b.setActive(true)
        #expect(await aEvents.wait { $0 == .began })
        try await barrier(b, seenBy: cDucking)
        #expect(cEvents.all.isEmpty && c.isActive)
        #expect(!a.isActive)
    }

    @Test func aSessionThatGoesAwayEndsItsInterruption() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus)
        var b: Session? = session("B", bus)
        try a.setCategory(.playback)
        let events = Collected(a.interruptions)
        try a.setActive(true)
        try b?.setActive(true) // soloAmbient by default
        #expect(await events.wait { $0 == .began })
        b = nil // closes its connection without a Deactivated signal
        #expect(await events.wait { $0 == .ended(shouldResume: false) })
        #expect(!a.isActive)
    }

    /// Another process on the bus: `dbus-send` sees the session's name, and its `Activated`
    /// signal interrupts the session; as it exits right after, the interruption ends without resume.
    @Test func anotherProcessSpeaksTheProtocol() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus)
        try a.setCategory(.playback)
        let events = Collected(a.interruptions)
        try a.setActive(true)
        let owner = try bus.client("dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                 "org.freedesktop.DBus.NameHasOwner", "string:org.tonearm.AudioSession.sA"])
        #expect(owner.status == 0 && owner.stdout.contains("boolean true"), "\(owner.stdout) \(owner.stderr)")
        let sent = try bus.client("dbus-send", ["--session", "--type=signal", "/org/tonearm/AudioSession",
                                                "org.tonearm.AudioSession.Activated", "string:other-process", "string:playback",
                                                "string:default", "uint32:0", "double:0.2", "uint64:18446744073709551615"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(await events.wait { $0 == .began })
        #expect(await events.wait { $0 == .ended(shouldResume: false) })
        #expect(!a.isActive)
    }

    /// `setActive(false)` returns once the deactivation is on the bus, as iOS's is synchronous: a
    /// process that deactivates with `notifyOthersOnDeactivation` and exits at once must be heard
    /// as having deactivated (the music it interrupted resumes), not only as gone (which ends the
    /// interruption without resuming). A clean-clone run saw the music stay paused after a video
    /// process ended. Twenty rounds: the bus thread, woken by the activation, is rarely done
    /// before the caller looks, so a deactivation that did not wait would be seen undelivered.
    @Test func aDeactivationIsOnTheBusWhenItReturns() async throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let a = session("A", bus), b = session("B", bus)
        try a.setCategory(.playback)
        try b.setCategory(.playback)
        let events = Collected(a.interruptions)
        for round in 1...20 {
            try a.setActive(true)
            try b.setActive(true)
            #expect(await events.wait(count: 2 * round - 1))
            #expect(events.all.last == .began, "round \(round): \(events.all)")
            try b.setActive(false, options: .notifyOthersOnDeactivation)
            #expect(b.undeliveredAnnouncements == 0, "round \(round)")
            #expect(await events.wait(count: 2 * round))
            #expect(events.all.last == .ended(shouldResume: true), "round \(round): \(events.all)")
        }
    }

    @Test func withoutABusEverythingWorksLocally() async throws {
        for s in [Session(identifier: "local", bus: .none),
                  Session(identifier: "unreachable", bus: .address("unix:path=/nonexistent/tonearm-bus"))] {
            #expect(!s.isConnectedToBus)
            #expect(s.category == .soloAmbient && s.mode == .default && s.categoryOptions.isEmpty && !s.isActive)
            let events = Collected(s.interruptions)
            try s.setCategory(.playback, mode: .moviePlayback, options: .duckOthers)
            try s.setActive(true)
            #expect(s.isActive && s.category == .playback && s.mode == .moviePlayback && s.categoryOptions == .duckOthers)
            #expect(s.streamProperties["media.role"] == "video")
            try s.setActive(false, options: .notifyOthersOnDeactivation)
            #expect(!s.isActive && events.all.isEmpty)
        }
    }

    /// Without a reachable bus, the sessions of one process that have the same `bus` meet in the
    /// process (the hub): interrupt, let resume, duck, and end an interruption when the
    /// interrupting session goes away; a session with `.none`, or with another unreachable bus,
    /// reaches nobody. "Nothing happened" is shown after a barrier: the hub delivers in order.
    @Test func sessionsWithoutABusMeetInTheProcess() async throws {
        let address = "unix:path=/nonexistent/tonearm-hub-\(UUID().uuidString)"
        let a = Session(identifier: "A", bus: .address(address))
        var b: Session? = Session(identifier: "B", bus: .address(address))
        let alone = Session(identifier: "C", bus: .none)
        let elsewhere = Session(identifier: "D", bus: .address(address + "-other"))
        #expect(!a.isConnectedToBus && b?.isConnectedToBus == false)
        try a.setCategory(.playback)
        let events = Collected(a.interruptions), ducking = Collected(a.ducking)
        try a.setActive(true)
        for other in [alone, elsewhere] {
            try other.setCategory(.playback)
            try other.setActive(true)
        }
        let barrier = Session(identifier: "E", bus: .address(address))
        try await self.barrier(barrier, seenBy: ducking)
        #expect(events.all.isEmpty && a.isActive)
        try barrier.setActive(false)
        #expect(await ducking.wait { $0 == .duckEnded })

        try b?.setCategory(.playback, mode: .moviePlayback)
        try b?.setActive(true)
        #expect(await events.wait { $0 == .began })
        #expect(!a.isActive)
        try b?.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(await events.wait { $0 == .ended(shouldResume: true) })
        try a.setActive(true)

        // B takes over again and is released while A is interrupted: the interruption ends,
        // without resuming (as when a process leaves the bus).
        try b?.setActive(true)
        #expect(await events.wait(count: 3))
        #expect(!a.isActive)
        b = nil
        #expect(await events.wait(count: 4))
        #expect(events.all == [.began, .ended(shouldResume: true), .began, .ended(shouldResume: false)])
    }

    @Test func invalidCombinationsAreRefusedAndLogged() throws {
        let logged = LogCapture()
        let s = Session(identifier: "refuse", bus: .none, logger: logged.logger)
        #expect(throws: TonearmError.self) { try s.setCategory(.playback, mode: .voiceChat) }
        #expect(throws: TonearmError.self) { try s.setCategory(.soloAmbient, options: .duckOthers) }
        #expect(throws: TonearmError.self) { try s.setCategory(.ambient, options: .duckOthers) }
        #expect(throws: TonearmError.self) { try s.setCategory(.record, mode: .moviePlayback) }
        #expect(throws: TonearmError.self) { try s.setCategory(.playback, options: .init(rawValue: 8)) }
        #expect(s.category == .soloAmbient && s.mode == .default)
        // Each refusal left a warning that names the call and what the session kept (ported
        // code swallows the error with try?).
        let lines = logged.lines
        #expect(lines.count == 5, "\(lines)")
        #expect(lines.allSatisfy { $0.hasPrefix("warning: setCategory(") && $0.contains("refused") && $0.hasSuffix("the session keeps soloAmbient") }, "\(lines)")
        #expect(lines[1].contains("setCategory(soloAmbient, mode: default, options: 2)"), "\(lines[1])")
        try s.setCategory(.playAndRecord, mode: .videoRecording, options: .mixWithOthers)
        try s.setCategory(.multiRoute, options: .duckOthers)
        #expect(logged.lines.count == 5, "an accepted category logs nothing")
    }

    /// Issue 23 (seed 001's `setCategory(.ambient, mode: .default, options: .mixWithOthers)`):
    /// accepted as iOS accepts it, so the session mixes instead of staying exclusive.
    @Test func ambientWithMixWithOthersIsAcceptedAsOnIOS() throws {
        let logged = LogCapture()
        let s = Session(identifier: "ambient-mix", bus: .none, logger: logged.logger)
        try s.setCategory(.ambient, mode: .default, options: .mixWithOthers)
        #expect(s.category == .ambient && s.categoryOptions == .mixWithOthers)
        #expect(logged.lines.isEmpty)
    }

    @Test func streamPropertiesForEachCategoryAndMode() throws {
        let s = Session(identifier: "props", bus: .none)
        #expect(s.streamProperties == ["media.role": "music", "tonearm.category": "soloAmbient", "tonearm.mode": "default"])
        for category in Session.Category.allCases {
            try s.setCategory(category)
            #expect(s.streamProperties["media.role"] == "music", "\(category)")
            #expect(s.streamProperties["tonearm.category"] == category.rawValue)
        }
        let expected: [(Session.Category, Session.Mode, String)] = [
            (.playback, .spokenAudio, "music"), (.playback, .moviePlayback, "video"),
            (.playAndRecord, .voiceChat, "phone"), (.playAndRecord, .videoChat, "phone"),
            (.playAndRecord, .gameChat, "game"), (.record, .videoRecording, "video"),
            (.playAndRecord, .videoRecording, "video"), (.ambient, .measurement, "production"),
        ]
        for (category, mode, role) in expected {
            try s.setCategory(category, mode: mode)
            let p = s.streamProperties
            #expect(p["media.role"] == role, "\(category) \(mode)")
            #expect(p["tonearm.mode"] == mode.rawValue && p["tonearm.category"] == category.rawValue)
            #expect((p["filter.want"] == "echo-cancel") == (mode == .voiceChat || mode == .videoChat))
            #expect(p == Session.streamProperties(category: category, mode: mode))
        }
        // The shared session is named by the process id (read without connecting to any bus).
        #expect(Session.shared.identifier == String(getpid()) && Session.shared.bus == .session)
        #expect(Set(Session.Mode.allCases.map { Session.streamProperties(category: .playAndRecord, mode: $0)["media.role"]! })
            == ["music", "video", "phone", "game", "production"])
    }
}
