// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Testing
import TonearmCore
import TonearmRender
import TonearmTestSupport
@testable import TonearmEngine

/// Taps on graph nodes, offline (manual rendering: the test's thread is the render thread): a
/// tap on the main mixer receives exactly what the engine rendered, in buffers of its size with
/// consecutive times; removeTap stops it; the refusals are typed errors.
@Suite struct NodeTapTests {
    @Test func aTapOnTheMainMixerGetsExactlyWhatWasRendered() async throws {
        let e = AudioEngine(output: { NullOutput() })
        let format = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2)
        try e.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 4_096)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        // A ramp that never repeats within what is rendered, left and right apart.
        let source = AudioPCMBuffer(format: .standard(sampleRate: 48_000, channels: 2), frameCapacity: 30_000)!
        source.frameLength = 30_000
        for i in 0..<30_000 {
            source.floatChannelData[0][i] = Float(i) / 30_000
            source.floatChannelData[1][i] = -Float(i) / 30_000
        }
        // Scheduled before the engine starts (as AVAudioEngine allows): the first offline render
        // must wait for it (it rendered silence when the decoder thread had not started yet).
        p.scheduleBuffer(source)
        try e.start()
        p.play()

        let got = Watched<[(time: Int64, left: [Float], right: [Float])]>([])
        let removed = Atomic<Bool>(false)
        let late = Atomic<Int>(0)
        try e.mainMixerNode.installTap(onBus: 0, bufferSize: 1_000, format: nil) { buffer, time in
            if removed.load(ordering: .acquiring) { late.add(1, ordering: .relaxed) }
            #expect(buffer.frameLength == 1_000 && buffer.format.channelCount == 2 && buffer.format.sampleRate == 48_000)
            got.update { $0.append((time.sampleTime, Array(buffer.channel(0)), Array(buffer.channel(1)))) }
        }
        #expect(throws: AudioInputError.tapAlreadyInstalled(node: "AudioMixerNode", bus: 0)) {
            try e.mainMixerNode.installTap(onBus: 0, bufferSize: 1_000, format: nil) { _, _ in }
        }
        var left: [Float] = [], right: [Float] = []
        let out = AudioPCMBuffer(format: .standard(sampleRate: 48_000, channels: 2), frameCapacity: 4_096)!
        for _ in 0..<5 {
            #expect(try e.renderOffline(4_096, to: out) == .success)
            left += out.channel(0)
            right += out.channel(1)
        }
        // 20,480 frames rendered: 20 whole buffers.
        #expect(await got.wait(timeout: 10) { $0.count >= 20 })
        e.mainMixerNode.removeTap(onBus: 0)
        removed.store(true, ordering: .releasing)
        let taken = got.value
        #expect(taken.count == 20)
        #expect(taken.map(\.time) == (0..<20).map { Int64($0) * 1_000 })
        #expect(taken.flatMap(\.left) == Array(left[0..<20_000]))
        #expect(taken.flatMap(\.right) == Array(right[0..<20_000]))
        #expect(left[1_000] != 0, "the player was heard")
        // Rendering on after removeTap calls nothing (its thread is gone).
        #expect(try e.renderOffline(4_096, to: out) == .success)
        #expect(late.load(ordering: .relaxed) == 0 && got.value.count == 20)
        e.stop()
    }

    @Test func tapRefusalsOnGraphNodesAreTypedErrors() throws {
        let e = AudioEngine(output: { NullOutput() })
        let loose = AudioMixerNode()
        #expect(throws: AudioInputError.invalidTap(node: "AudioMixerNode", reason: "attach the node to an engine first")) {
            try loose.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in }
        }
        #expect(throws: AudioInputError.noSuchBus(node: "AudioOutputNode", bus: 0)) {
            try e.outputNode.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in }
        }
        #expect(throws: AudioInputError.noSuchBus(node: "AudioMixerNode", bus: 1)) {
            try e.mainMixerNode.installTap(onBus: 1, bufferSize: 512, format: nil) { _, _ in }
        }
        #expect(throws: AudioInputError.self) {
            try e.mainMixerNode.installTap(onBus: 0, bufferSize: 512, format: .standard(sampleRate: 44_100, channels: 2)) { _, _ in }
        }
        #expect(!e.mainMixerNode.hasTap)
    }
}
