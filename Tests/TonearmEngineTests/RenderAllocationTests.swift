// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmEngine
import TonearmTestSupport

/// The render path's contract, measured: while a real render thread (the null output's, in real
/// time) plays, the control plane changes the graph, moves an equaliser, seeks and lets an item
/// end — and the render thread allocates nothing, frees nothing, takes no pthread lock and never
/// waits inside its render calls. ``RenderProbe`` counts on the render thread only (thread-local
/// counters behind the test executable's own malloc and lock calls). In a ThreadSanitizer build
/// (which owns malloc) nothing is counted, and the same scenarios run for TSan to watch.
@Suite(.serialized)
final class RenderAllocationTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("render-alloc") }
    deinit { dir.remove() }

    /// An engine on a null output with 5 ms periods (many render calls), counted by `probe`.
    func makeEngine(_ probe: RenderProbe) -> AudioEngine {
        AudioEngine(output: { ProbingOutput(NullOutput(periodDuration: 0.005), probe: probe) })
    }

    /// A FLAC tone of `seconds`, read by a real decoder.
    func flac(_ name: String, seconds: Double = 2) throws -> AudioFile {
        let path = dir.file(name)
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: seconds, rate: 48000)
        return try AudioFile(path: path)
    }

    /// What the probe counted, with where the first offence happened when there was one.
    func expectClean(_ probe: RenderProbe, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        probe.disarm()
        let c = probe.counts
        #expect(c.calls > 0, "no render call was counted", sourceLocation: sourceLocation)
        guard RenderProbe.isAvailable else { return }  // a sanitizer build: nothing counted
        #expect(c.isClean, "\(what): \(c)\n\(probe.firstOffences)",
                sourceLocation: sourceLocation)
    }

    @Test func aGraphChangedASeekAndAnItemEndAllocateLockAndWaitForNothingOnTheRenderThread() throws {
        let probe = RenderProbe(skippingFirst: 20)
        let e = makeEngine(probe)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        defer { e.stop() }
        let file = try flac("graph.flac")
        try p.scheduleFile(file)
        p.play()
        #expect(probe.waitUntilCounting())

        // The graph changes under the running render thread: a mixer is put in between, a second
        // player comes and goes, volume and pan move.
        let m = AudioMixerNode()
        e.attach(m)
        try e.connect(p, to: m, format: nil)
        try e.connect(m, to: e.mainMixerNode, format: nil)
        let q = AudioPlayerNode()
        e.attach(q)
        try e.connect(q, to: m, format: nil)
        p.volume = 0.5
        p.pan = -0.5
        m.outputVolume = 0.8
        e.detach(q)

        // A seek (stop + segment + play, as a player does) lands, and its item plays to its end.
        let ended = DispatchSemaphore(value: 0)
        p.stop()
        try p.scheduleSegment(file, startingFrame: 48_000, frameCount: 12_000, completionHandler: { _ in ended.signal() })
        p.play()
        #expect(ended.wait(timeout: .now() + 10) == .success, "the segment did not end")
        // One more change after the end, rendered before the probe stops: the graph goes back.
        try e.connect(p, to: e.mainMixerNode, format: nil)
        let rendered = DispatchSemaphore(value: 0)
        let click = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 480)!
        click.frameLength = 480
        p.scheduleBuffer(click, completionHandler: { _ in rendered.signal() })
        #expect(rendered.wait(timeout: .now() + 10) == .success, "the buffer after the change did not play")
        expectClean(probe, "graph change, seek and item end")
    }

    /// player → EQ → main mixer on a probed engine, playing a 3 s FLAC, counting.
    func playThroughAnEqualiser(_ probe: RenderProbe) throws -> (AudioEngine, AudioPlayerNode, AudioUnitEQ) {
        let e = makeEngine(probe)
        let p = AudioPlayerNode()
        let eq = AudioUnitEQ(preset: .flat)
        e.attach(p)
        e.attach(eq)
        try e.connect(p, to: eq, format: nil)
        try e.connect(eq, to: e.mainMixerNode, format: nil)
        try e.start()
        try p.scheduleFile(try flac("eq.flac", seconds: 3))
        p.play()
        #expect(probe.waitUntilCounting())
        return (e, p, eq)
    }

    /// A tap on the main mixer and one on the equaliser: the render thread copies each node's
    /// output into the tap's ring and wakes its thread, allocating, freeing, locking and waiting
    /// for nothing; the taps' threads get their buffers.
    @Test func tapsCopyOnTheRenderThreadWithoutAllocating() async throws {
        let probe = RenderProbe(skippingFirst: 20)
        let (e, _, eq) = try playThroughAnEqualiser(probe)
        defer { e.stop() }
        let mixed = Watched(0), equalised = Watched(0)
        try e.mainMixerNode.installTap(onBus: 0, bufferSize: 1_024, format: nil) { _, _ in mixed.update { $0 += 1 } }
        try eq.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in equalised.update { $0 += 1 } }
        #expect(await mixed.wait(timeout: 10) { $0 >= 10 })
        #expect(await equalised.wait(timeout: 10) { $0 >= 20 })
        e.mainMixerNode.removeTap(onBus: 0)
        eq.removeTap(onBus: 0)
        expectClean(probe, "taps")
    }

    /// Waits until a short buffer scheduled now has been rendered: what was changed before has
    /// reached the render thread.
    func renderOnce(_ p: AudioPlayerNode) {
        let rendered = DispatchSemaphore(value: 0)
        let click = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 480)!
        click.frameLength = 480
        p.scheduleBuffer(click, options: .interrupts, completionHandler: { _ in rendered.signal() })
        #expect(rendered.wait(timeout: .now() + 10) == .success, "a buffer scheduled after the changes did not play")
    }

    /// Every move recompiles the plan and asks every node to get ready to render — the equaliser
    /// too, while it renders. `EQKernel.configure` copies the `Equalizer` the render thread is
    /// mutating (issue 17): should the copy be alive at the moment the render thread writes into
    /// its arrays, that write copies them — an allocation there. The window is a few hundred
    /// nanoseconds per move and was not hit here; the EQ split closes it.
    @Test
    func anEqualiserMovedWhileRenderingAllocatesNothingOnTheRenderThread() throws {
        let probe = RenderProbe(skippingFirst: 20)
        let (e, p, eq) = try playThroughAnEqualiser(probe)
        defer { e.stop() }
        // Out of the chain and back, behind a mixer, again and again.
        let m = AudioMixerNode()
        e.attach(m)
        for i in 0..<50 {
            if i.isMultiple(of: 2) {
                try e.connect(p, to: m, format: nil)
                try e.connect(m, to: eq, format: nil)
            } else {
                try e.connect(p, to: eq, format: nil)
            }
            try e.connect(eq, to: e.mainMixerNode, format: nil)
        }
        renderOnce(p)
        expectClean(probe, "EQ moved")
    }

    /// Its sliders move: the changes go through a lock-free queue, and the render thread applies
    /// them. Found (debug build) and fixed: `EQDSP.filterType` built `EQFilterType.allCases` (an
    /// array) per message; `eq.bands[i].x = v` through the observed `bands` property copied the
    /// array (now `Equalizer.updateBand(at:_:)`, in place); `bands.indices` fetched a witness
    /// table under the runtime's lock. 199 allocations and 20 locks → 13 and 14. The rest (found
    /// with gdb, a breakpoint on `swift_getCanonicalPrespecializedGenericMetadata` on the render
    /// thread): `CascadeStage.convertToGeneralForm` looped over an array literal (an allocation at
    /// every shelf given to a peaking stage), `resetState` over `stages.indices`, and the first
    /// change of each kind instantiated generic metadata (`Range.contains`, the SIMD masks, the
    /// general-form cascade) once per process. `EQDSP.init` now rehearses every kind of change on
    /// a copy on the control plane: 0 and 0, from the first change on.
    @Test
    func anEqualiserChangedWhileRenderingAllocatesNothingOnTheRenderThread() throws {
        let probe = RenderProbe(skippingFirst: 20)
        let (e, p, eq) = try playThroughAnEqualiser(probe)
        defer { e.stop() }
        for i in 0..<50 {
            eq.bands[i % 10].gain = Double(i % 12) - 6
            eq.bands[(i + 3) % 10].filterType = i.isMultiple(of: 3) ? .lowShelf : .parametric
            eq.globalGain = Double(i % 3) - 1
            eq.bypass = i % 7 == 6
        }
        renderOnce(p)
        expectClean(probe, "EQ changed")
    }

    /// A flat equaliser in the chain while a seek lands and the item ends: the render half runs
    /// every cycle without allocating (what an `AudioPlayer` always has in its graph).
    @Test func anEqualiserRenderingThroughASeekAndAnEndAllocatesNothingOnTheRenderThread() throws {
        let probe = RenderProbe(skippingFirst: 20)
        let (e, p, _) = try playThroughAnEqualiser(probe)
        defer { e.stop() }
        let ended = DispatchSemaphore(value: 0)
        p.stop()
        try p.scheduleSegment(try flac("eq-seek.flac", seconds: 1), startingFrame: 24_000, frameCount: 9_600,
                              completionHandler: { _ in ended.signal() })
        p.play()
        #expect(ended.wait(timeout: .now() + 10) == .success, "the segment did not end")
        renderOnce(p)
        expectClean(probe, "EQ through a seek and an end")
    }
}
