// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmRender

extension PulseOutput {
    /// The `pulse` entry of an ``OutputDriverRegistry``: audible, probed with
    /// ``isServerAvailable(server:timeout:)``, made from the request's server, names, role,
    /// device and buffering (``OutputBuffering/short``: a fixed ``shortLatency``;
    /// ``OutputBuffering/steady``: ``shortLatency`` growing to ``steadyLatency`` after a second).
    public static let driverFactory = OutputDriverFactory(
        name: "pulse", isAudible: true,
        probe: { server, timeout in isServerAvailable(server: server, timeout: timeout) },
        make: { r in
            switch r.buffering {
            case .short:
                PulseOutput(server: r.server, applicationName: r.applicationName, streamName: r.streamName,
                            role: r.role, device: r.device)
            case .steady:
                PulseOutput(server: r.server, applicationName: r.applicationName, streamName: r.streamName,
                            role: r.role, device: r.device, targetLatency: steadyLatency, startLatency: shortLatency,
                            growAfter: 1)
            }
        })

    /// Registers PulseAudio in `registry` as `pulse`, so that ``OutputSelection/pulse(server:)``
    /// makes a ``PulseOutput`` and ``OutputSelection/automatic(server:timeout:registry:)`` can
    /// choose it. Call once at start-up (again does no harm). Thread-safe.
    public static func register(in registry: OutputDriverRegistry = .shared) {
        registry.register(driverFactory)
    }
}
