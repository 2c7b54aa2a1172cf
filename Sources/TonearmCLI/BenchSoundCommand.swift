// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import Tonearm

/// `tonearm bench-sound FILE`: SystemSound's latency, for scripts/bench (hidden).
///
/// Opens one ``SystemSound`` on its default output (PulseAudio, role `event`, a 20 ms buffer)
/// and keeps it — its stream stays open and warm — then prints `ready`. For each line `play` on
/// standard input it plays the sound once and, when the play has been heard to its end, prints
/// `played T0 HANDED END`: `CLOCK_MONOTONIC` nanoseconds (the clock of Python's
/// `time.monotonic_ns`) at the call of `play()`, when the output's write callback handed the
/// first samples of the sound to the server (rendered them and passed them to `pa_stream_write`;
/// 0 if it never did), and when the completion ran. It ends at the end of its input.
struct BenchSoundCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-sound",
        abstract: "Measure the latency of a system sound from play() to its first samples handed to the server.",
        discussion: """
            Reads commands from standard input (scripts/bench drives it).

            Examples:
              tonearm bench-sound click.wav
            """,
        shouldDisplay: false)

    @Argument(help: "A short sound file.")
    var file: String

    func run() throws {
        guard case .pulse = OutputSelection.automatic().selection else {
            throw CommandFailure(nil, "no PulseAudio server answers")
        }
        let probe = FirstSoundProbe()
        let sound = try SystemSound(contentsOf: URL(fileURLWithPath: file),
                                    output: { ProbeOutput(wrapping: try SystemSound.automaticOutput(), probe: probe) })
        emit("ready")
        while let line = readLine() {
            guard line == "play" else { continue }
            let done = DispatchSemaphore(value: 0)
            probe.arm()
            let t0 = monotonicNow()
            sound.play { done.signal() }
            _ = done.wait(timeout: .now() + sound.duration + 5)
            let end = monotonicNow()
            emit("played \(t0) \(probe.firstSoundAt) \(end)")
        }
    }

    /// A line on standard output at once (unbuffered: the script waits for it).
    private func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// When the output first rendered a non-silent sample after ``arm()``. Written by the render
/// thread with atomics only.
final class FirstSoundProbe: Sendable {
    private let armed = Atomic<Bool>(false)
    private let time = Atomic<UInt64>(0)

    /// Forgets the last time and watches for the next non-silent render (call it while silent).
    func arm() {
        time.store(0, ordering: .relaxed)
        armed.store(true, ordering: .releasing)
    }

    /// The `CLOCK_MONOTONIC` nanoseconds of the first non-silent render since ``arm()``; 0 if none yet.
    var firstSoundAt: UInt64 { time.load(ordering: .acquiring) }

    /// Render thread: one look at a rendered buffer. Allocates nothing and takes no lock.
    func observe(_ samples: UnsafeMutablePointer<Float>, count: Int) {
        guard armed.load(ordering: .acquiring) else { return }
        for i in 0..<count where samples[i] != 0 {
            time.store(monotonicNow(), ordering: .releasing)
            armed.store(false, ordering: .relaxed)
            return
        }
    }
}

/// An output driver that is `inner` with a ``FirstSoundProbe`` looking at what its render
/// thread pulls — right before the driver hands it to the server.
final class ProbeOutput: ForwardingOutputDriver, Sendable {
    let inner: any AudioOutputDriver
    let probe: FirstSoundProbe

    init(wrapping inner: any AudioOutputDriver, probe: FirstSoundProbe) {
        self.inner = inner
        self.probe = probe
    }

    func start(source: any AudioRenderSource) throws {
        try inner.start(source: ProbeSource(source, channels: inner.format.channelCount, probe: probe))
    }
}

/// The engine's render source with the probe after it.
private final class ProbeSource: AudioRenderSource {
    let source: any AudioRenderSource
    let channels: Int
    let probe: FirstSoundProbe

    init(_ source: any AudioRenderSource, channels: Int, probe: FirstSoundProbe) {
        self.source = source
        self.channels = channels
        self.probe = probe
    }

    func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int, timing: RenderTiming) -> RenderResult {
        let r = source.render(into: buffer, frameCount: frameCount, timing: timing)
        probe.observe(buffer, count: frameCount * channels)
        return r
    }
}
