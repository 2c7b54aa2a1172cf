// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
import TonearmSession
import TonearmTestSupport

/// `AudioRoutes` against a private PulseAudio server with several null sinks.
@Suite(.serialized) struct AudioRoutesTests {
    @Test func listsTheOutputsWithTheDefaultAndPortTypes() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("phones", description: "Phones", properties: "device.form_factor=headphones")
        try server.loadNullSink("bt", description: "Speaker_BT", properties: "device.bus=bluetooth bluetooth.protocol=a2dp_sink")
        try server.loadNullSink("usbdac", description: "USB_DAC", properties: "device.bus=usb")
        try server.loadNullSink("remote", description: "Remote", properties: "tunnel.remote.server=tcp:192.0.2.1")
        let routes = AudioRoutes(server: server.serverString)
        let outputs = try routes.outputs()
        #expect(outputs.map(\.name) == ["test_null", "phones", "bt", "usbdac", "remote"])
        #expect(outputs.filter(\.isDefault).map(\.name) == ["test_null"])
        let byName = Dictionary(uniqueKeysWithValues: outputs.map { ($0.name, $0) })
        #expect(byName["test_null"]?.description == "TestNull")
        #expect(byName["test_null"]?.portType == .unknown)
        #expect(byName["phones"]?.portType == .headphones)
        #expect(byName["bt"]?.portType == .bluetoothA2DP)
        #expect(byName["usbdac"]?.portType == .usb)
        #expect(byName["remote"]?.portType == .network)
        #expect(byName["phones"]?.sampleRate == 48_000)
        #expect(byName["phones"]?.channelCount == 2)
        #expect(byName["phones"]?.monitorSource == "phones.monitor")
        #expect(try routes.currentOutput()?.name == "test_null")
        #expect(try routes.currentOutput()?.isDefault == true)
    }

    /// The inputs: microphones and line ins with their port types from the sources'
    /// properties, the monitors naming their outputs, the default marked and changed; the
    /// session's available inputs (no monitors) and its preferred input; `tonearm inputs`.
    @Test func listsTheInputsWithTheDefaultPortTypesAndMonitors() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadInput("mic", description: "Built-in_Mic", properties: "device.form_factor=internal")
        try server.loadInput("headset", description: "Headset", properties: "device.form_factor=headset")
        try server.loadInput("usbmic", description: "USB_Mic", properties: "device.bus=usb device.form_factor=microphone")
        try server.loadInput("btmic", description: "BT", properties: "device.bus=bluetooth")
        try server.loadInput("line", description: "Line", properties: "device.form_factor=none")
        let routes = AudioRoutes(server: server.serverString)
        let inputs = try routes.inputs()
        let byName = Dictionary(uniqueKeysWithValues: inputs.map { ($0.name, $0) })
        #expect(Set(inputs.map(\.name)) == ["test_null.monitor", "mic", "headset", "usbmic", "btmic", "line"], "\(inputs.map(\.name))")
        #expect(byName["test_null.monitor"]?.portType == .monitor && byName["test_null.monitor"]?.monitorOf == "test_null")
        #expect(byName["mic"]?.portType == .builtInMic && byName["mic"]?.monitorOf == nil && byName["mic"]?.description == "Built-in_Mic")
        #expect(byName["headset"]?.portType == .headsetMic)
        #expect(byName["usbmic"]?.portType == .usbAudio)
        #expect(byName["btmic"]?.portType == .bluetoothHFP)
        #expect(byName["line"]?.portType == .unknown)
        #expect(byName["mic"]?.sampleRate == 48_000 && byName["mic"]?.channelCount == 1)
        let defaultName = try server.pactl("get-default-source").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(inputs.filter(\.isDefault).map(\.name) == [defaultName])
        #expect(try routes.currentInput()?.name == defaultName)
        try routes.setDefaultInput(named: "usbmic")
        #expect(try server.pactl("get-default-source").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "usbmic")
        #expect(try routes.currentInput()?.name == "usbmic" && routes.currentInput()?.isDefault == true)
        #expect(throws: TonearmError.invalidArgument("no input named 'nope'; inputs: \(inputs.map(\.name).joined(separator: ", "))")) {
            try routes.setDefaultInput(named: "nope")
        }

        let session = AudioSession(identifier: "inputs-test", bus: .none, pulseServer: server.serverString)
        #expect(try Set(session.availableInputs.map(\.name)) == ["mic", "headset", "usbmic", "btmic", "line"], "no monitors")
        #expect(session.preferredInput == nil)
        let headset = try #require(byName["headset"])
        try session.setPreferredInput(headset)
        #expect(session.preferredInput?.name == "headset" && session.preferredInput?.portType == .headsetMic)
        #expect(throws: TonearmError.self) { try session.setPreferredInput(AudioInputRoute(name: "gone", description: "", index: 0, isDefault: false, portType: .unknown, sampleRate: 48_000, channelCount: 1)) }
        #expect(session.preferredInput?.name == "headset", "a refused input leaves the preferred one")
        try session.setPreferredInput(nil)
        #expect(session.preferredInput == nil)

        let tonearm = try tonearmBinary()
        // The gain and mute of an input from the command line (the default one, or --input).
        let gain = try run(tonearm, ["inputs", "--gain", "55", "--input", "line"], environment: server.environment)
        #expect(gain.status == 0 && gain.stdout == "Input line: gain 55 %\n", "\(gain.stdout)\(gain.stderr)")
        #expect(try server.pactl("get-source-volume", "line").stdout.contains("55%"))
        let muted = try run(tonearm, ["inputs", "--mute"], environment: server.environment)
        #expect(muted.status == 0 && muted.stdout.hasPrefix("Input usbmic: gain ") && muted.stdout.hasSuffix(", muted\n"), "\(muted.stdout)\(muted.stderr)")
        #expect(try server.pactl("get-source-mute", "usbmic").stdout.contains("yes"))
        let list = try run(tonearm, ["inputs"], environment: server.environment)
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("* usbmic") && $0.contains("usbAudio, 48000 Hz, 1 ch") }, "\(list.stdout)")
        #expect(lines.contains { $0.hasPrefix("  headset") && $0.contains("headsetMic") })
        #expect(!list.stdout.contains("test_null.monitor"), "monitors only with --monitors")
        let json = try run(tonearm, ["inputs", "--json", "--monitors"], environment: server.environment)
        let decoded = try JSONDecoder().decode([AudioInputRoute].self, from: Data(json.stdout.utf8))
        #expect(decoded.first { $0.name == "test_null.monitor" }?.monitorOf == "test_null", "\(json.stdout)")
        let set = try run(tonearm, ["inputs", "--set", "mic"], environment: server.environment)
        #expect(set.status == 0 && set.stdout.contains("Default input: mic (Built-in_Mic)"), "\(set.stdout)\(set.stderr)")
        let bad = try run(tonearm, ["inputs", "--set", "nope"], environment: server.environment)
        #expect(bad.status == 1 && bad.stderr.contains("no input named 'nope'"), "\(bad.stderr)")
    }

    @Test func aTunnelSinkIsANetworkOutput() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let routes = AudioRoutes(server: server.serverString)
        let changes = Collected(try routes.changes)
        // A real network sink: a tunnel back to the same server's test_null. The module creates
        // its sink once its own connection is up, after load-module returns: wait for the event.
        let r = try server.pactl("load-module", "module-tunnel-sink-new", "server=\(server.serverString)",
                                 "sink=test_null", "sink_name=tunnel_out")
        try #require(r.status == 0, "module-tunnel-sink-new: \(r.stderr)")
        #expect(await changes.wait { $0.reason == .newDeviceAvailable && $0.route?.name == "tunnel_out" })
        #expect(changes.all.first { $0.route?.name == "tunnel_out" }?.route?.portType == .network)
        let tunnel = try routes.outputs().first { $0.name == "tunnel_out" }
        #expect(tunnel?.portType == .network)
    }

    @Test func setDefaultOutputRoundTripsThroughPactl() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("phones", description: "Phones")
        let routes = AudioRoutes(server: server.serverString)
        try routes.setDefaultOutput(named: "phones")
        #expect(try server.pactl("get-default-sink").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "phones")
        #expect(try routes.currentOutput()?.name == "phones")
        try server.pactl("set-default-sink", "test_null")
        #expect(try routes.currentOutput()?.name == "test_null")
        #expect(try routes.outputs().filter(\.isDefault).map(\.name) == ["test_null"])

        do {
            try routes.setDefaultOutput(named: "no_such_output")
            Issue.record("an unknown output was accepted")
        } catch let TonearmError.invalidArgument(message) {
            #expect(message.contains("no_such_output"))
            #expect(message.contains("test_null") && message.contains("phones"))
        }
        #expect(try server.pactl("get-default-sink").stdout.contains("test_null"))
    }

    @Test func movesAPlayingStreamToAnotherOutputWithoutLosingAudio() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("route_b", description: "RouteB")
        let recA = try server.startRecording(ofSink: "test_null", to: "\(server.directory)/a.wav")
        let recB = try server.startRecording(ofSink: "route_b", to: "\(server.directory)/b.wav")
        let out = PulseOutput(server: server.serverString, streamName: "move test")
        try out.open(format: .interleavedFloat(sampleRate: 48_000, channels: 2))
        defer { out.close() }
        let events = Collected(out.events)
        let source = CounterSource()
        try out.start(source: source)
        #expect(await waitUntilPlayed(out, atLeast: 24_000, pulling: source))

        let routes = AudioRoutes(server: server.serverString)
        #expect(try routes.moveStreams(to: "route_b") == 1)
        #expect(await events.wait { $0 == .moved(deviceName: "route_b") })
        let afterMove = out.framesPlayed
        #expect(await waitUntilPlayed(out, atLeast: afterMove + 48_000, pulling: source))
        // The same stream, never restarted: on route_b now, its clock still counting.
        let inputs = try server.pactl("list", "short", "sink-inputs").stdout.split(separator: "\n")
        let sinkB = try server.pactl("list", "short", "sinks").stdout.split(separator: "\n")
            .first { $0.split(separator: "\t").dropFirst().first == "route_b" }?.split(separator: "\t").first
        #expect(inputs.count == 1)
        #expect(inputs.first?.split(separator: "\t").dropFirst().first == sinkB)
        #expect(out.framesPlayed > afterMove + 48_000 - 1)
        #expect(try routes.moveStreams(ofProcess: getpid() + 100_000, to: "test_null") == 0)
        out.stop()
        recA.stop()
        recB.stop()

        func heard(_ path: String) throws -> [Int] {
            let w = try readWAV(path)
            return (0..<w.frameCount).compactMap { CounterSource.decode(w.channels[0][$0], w.channels[1][$0]) }
        }
        let onA = try heard(recA.path), onB = try heard(recB.path)
        try #require(!onA.isEmpty && !onB.isEmpty, "heard \(onA.count) frames on A, \(onB.count) on B")
        // A heard the start, B the rest: B begins where A ended (no restart from frame 0).
        #expect(onA.first! < 4_800, "A began at frame \(onA.first!)")
        #expect(onB.first! > 20_000, "B began at frame \(onB.first!): the stream restarted")
        // A second at least — less what the recorder, stopped by SIGINT, still had in flight (it
        // reads the monitor 20 ms at a time: up to 960 frames; under load 47,672 were seen).
        #expect(onB.count >= 48_000 - 960, "B heard \(onB.count) frames")
        // Within each output the frames run in order, without a gap.
        for (name, frames) in [("A", onA), ("B", onB)] {
            let jumps = zip(frames, frames.dropFirst()).filter { $1 != $0 + 1 }
            #expect(jumps.isEmpty, "\(name) jumps: \(jumps.prefix(5))")
        }
        // Across the move: what neither heard is at most 5 ms. Some frames are heard on both:
        // PulseAudio rewinds what the old sink had rendered ahead but not played and renders it
        // again on the new one, but a null sink's monitor has already delivered what it rendered,
        // so the A recording holds those frames too (a real device drops them). That overlap is
        // bounded by the old sink's render-ahead (20 ms here, parecord's latency): allow 50 ms.
        let lastA = onA.last!, firstB = onB.first!
        let lost = max(0, firstB - lastA - 1), repeated = max(0, lastA - firstB + 1)
        #expect(lost <= 240, "\(lost) frames lost in the move (A ended at \(lastA), B began at \(firstB))")
        #expect(repeated <= 2_400, "\(repeated) frames heard on both outputs")
        print("move: A heard frames \(onA.first!)...\(lastA), B \(firstB)...\(onB.last!): lost \(lost), repeated \(repeated)")
    }

    @Test func changesReportOutputsAppearingVanishingAndTheDefault() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let routes = AudioRoutes(server: server.serverString)
        let changes = Collected(try routes.changes)

        let module = try server.loadNullSink("hot_plug", description: "HotPlug", properties: "device.form_factor=headphones")
        #expect(await changes.wait { $0.reason == .newDeviceAvailable && $0.route?.name == "hot_plug" })
        #expect(changes.all.first { $0.reason == .newDeviceAvailable }?.route?.portType == .headphones)

        try server.pactl("set-default-sink", "hot_plug")
        #expect(await changes.wait {
            $0.reason == .defaultOutputChanged && $0.route?.name == "hot_plug" && $0.previousRoute?.name == "test_null"
        })

        try routes.setDefaultOutput(named: "test_null")
        #expect(await changes.wait { $0.reason == .override && $0.route?.name == "test_null" })

        try server.pactl("set-sink-volume", "hot_plug", "40%") // not a route change
        try server.pactl("unload-module", module)
        #expect(await changes.wait {
            $0.reason == .oldDeviceUnavailable && $0.previousRoute?.name == "hot_plug" && $0.previousRoute?.portType == .headphones
        })
        #expect(!changes.all.contains { $0.reason == .routeConfigurationChange })
        #expect(!changes.all.contains { $0.reason == .categoryChange })
    }

    /// The session's route changes: the server's, and `categoryChange` when the category or mode
    /// changes (not when it is set to what it is); `currentRoute` is the default output.
    @Test func aSessionReportsCategoryChangesAmongItsRouteChanges() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("phones", description: "Phones", properties: "device.form_factor=headphones")
        try server.pactl("set-default-sink", "phones")
        let session = AudioSession(identifier: "routes", bus: .none, pulseServer: server.serverString)
        #expect(try session.currentRoute?.name == "phones")
        #expect(try session.currentRoute?.portType == .headphones)
        let changes = Collected(try session.routeChanges)

        try session.setCategory(.playback)
        #expect(await changes.wait { $0.reason == .categoryChange })
        let change = try #require(changes.all.first)
        #expect(change.route?.name == "phones" && change.previousRoute?.name == "phones")
        #expect(change.route?.portType == .headphones)

        try session.setCategory(.playback) // the same again: no change
        try session.setCategory(.playback, mode: .spokenAudio)
        #expect(await changes.wait(count: 2))
        // The server's own changes come through the same stream, after the session's.
        let module = try server.loadNullSink("hot_plug", description: "HotPlug")
        #expect(await changes.wait { $0.reason == .newDeviceAvailable && $0.route?.name == "hot_plug" })
        try server.pactl("unload-module", module)
        #expect(await changes.wait { $0.reason == .oldDeviceUnavailable && $0.previousRoute?.name == "hot_plug" })
        #expect(changes.all.map(\.reason) == [.categoryChange, .categoryChange, .newDeviceAvailable, .oldDeviceUnavailable])
    }

    /// Headphones unplugged from a sink's jack (the sink stays, its kind changes) are an
    /// `oldDeviceUnavailable` whose previous route is the headphones and whose route is the same
    /// sink as speakers; plugged in again, a `newDeviceAvailable`.
    @Test func unpluggingHeadphonesFromASinkIsAnOldDeviceUnavailable() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("jack", description: "Jack", properties: "device.form_factor=headphones")
        let changes = Collected(try AudioRoutes(server: server.serverString).changes)
        try server.cli("update-sink-proplist jack device.form_factor=speaker")
        #expect(await changes.wait { $0.reason == .oldDeviceUnavailable })
        let unplug = try #require(changes.all.first)
        #expect(unplug.previousRoute?.name == "jack" && unplug.previousRoute?.portType == .headphones)
        #expect(unplug.route?.name == "jack" && unplug.route?.portType == .speaker)
        try server.cli("update-sink-proplist jack device.form_factor=headphones")
        #expect(await changes.wait { $0.reason == .newDeviceAvailable && $0.route?.portType == .headphones })
        #expect(changes.all.map(\.reason) == [.oldDeviceUnavailable, .newDeviceAvailable])
    }

    @Test func aSessionWithoutAServerSaysSo() throws {
        let session = AudioSession(identifier: "nowhere", bus: .none, pulseServer: "unix:/nonexistent/native")
        #expect(throws: TonearmError.self) { _ = try session.currentRoute }
        #expect(throws: TonearmError.self) { _ = try session.routeChanges }
        try session.setCategory(.playback) // the session itself works without a server
        #expect(session.category == .playback)
    }

    @Test func removingTheDefaultOutputReportsItAndTheNewDefault() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("other", description: "Other")
        let routes = AudioRoutes(server: server.serverString)
        let changes = Collected(try routes.changes)
        let module = try #require(try server.nullSinkModuleIndex())
        try server.pactl("unload-module", module)
        #expect(await changes.wait { $0.reason == .oldDeviceUnavailable && $0.previousRoute?.name == "test_null" })
        #expect(await changes.wait { $0.reason == .defaultOutputChanged && $0.route?.name == "other" && $0.route?.isDefault == true })
        #expect(try routes.currentOutput()?.name == "other")
    }

    @Test func theChangeStreamEndsWhenTheServerGoes() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let stream = try AudioRoutes(server: server.serverString).changes
        let ended = Watched(false)
        let task = Task { for await _ in stream {}; ended.update { $0 = true } }
        defer { task.cancel() }
        server.stop()
        #expect(await ended.wait(timeout: 5) { $0 })
    }

    @Test func withoutAServerEveryCallSaysSoInTime() throws {
        let dir = try TempDir("routes")
        defer { dir.remove() }
        let missing = "unix:\(dir.path)/no-such-socket"
        let routes = AudioRoutes(server: missing, timeout: 1)
        let t0 = ContinuousClock.now
        for call in [{ _ = try routes.outputs() }, { _ = try routes.currentOutput() },
                     { try routes.setDefaultOutput(named: "x") }, { _ = try routes.moveStreams(to: "x") },
                     { _ = try routes.changes }] as [() throws -> Void] {
            do {
                try call()
                Issue.record("a call succeeded without a server")
            } catch let TonearmError.outputUnavailable(_, reason) {
                #expect(reason.contains(missing), "\(reason)")
            }
        }
        #expect(ContinuousClock.now - t0 < .seconds(5))
    }

    @Test func tonearmOutputsListsAndSets() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("phones", description: "Phones", properties: "device.form_factor=headphones")
        let tonearm = try tonearmBinary()
        let list = try run(tonearm, ["outputs"], environment: server.environment)
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("* test_null") && $0.contains("TestNull") })
        #expect(lines.contains { $0.hasPrefix("  phones") && $0.contains("headphones") })

        let json = try run(tonearm, ["outputs", "--json"], environment: server.environment)
        #expect(json.status == 0)
        let decoded = try JSONDecoder().decode([AudioOutputRoute].self, from: Data(json.stdout.utf8))
        #expect(decoded.map(\.name) == ["test_null", "phones"])
        #expect(decoded.first?.isDefault == true)

        let set = try run(tonearm, ["outputs", "--set", "phones"], environment: server.environment)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("phones"))
        #expect(try server.pactl("get-default-sink").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "phones")

        let bad = try run(tonearm, ["outputs", "--set", "nope"], environment: server.environment)
        #expect(bad.status == 1, "an output that is not there is a failure, not a usage error")
        #expect(bad.stderr.contains("no output named 'nope'") && bad.stderr.contains("test_null, phones"))

        let none = try run(tonearm, ["outputs"], environment: ["PULSE_SERVER": "unix:\(server.directory)/no-such-socket"])
        #expect(none.status == 1)
        #expect(none.stderr.contains("cannot connect to the sound server"), "\(none.stderr)")
    }
}
