// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore

@Suite struct RingTests {
    @Test func spscQueueIsFIFOAndBounded() {
        let q = SPSCQueue<Int>(capacity: 3)
        #expect(q.push(1) && q.push(2) && q.push(3))
        #expect(!q.push(4))
        #expect(q.pop() == 1)
        #expect(q.push(4))
        #expect([q.pop(), q.pop(), q.pop(), q.pop()] == [2, 3, 4, nil])
    }

    @Test func spscQueueAcrossThreadsLosesNothing() async {
        let q = SPSCQueue<Int>(capacity: 64)
        let n = 200_000
        let producer = Thread {
            var i = 0
            while i < n { if q.push(i) { i += 1 } }
        }
        producer.start()
        var next = 0
        var ok = true
        while next < n {
            if let v = q.pop() {
                if v != next { ok = false }
                next += 1
            }
        }
        #expect(ok)
    }

    @Test func blockRingCarriesHeadersAndPartialReads() {
        let r = PCMBlockRing(blockFrames: 4, channels: 2, blockCount: 2)
        let w = r.writableBlock()!
        for i in 0..<8 { w[i] = Float(i) }
        r.commit(PCMBlockInfo(generation: 7, sourceFrame: 100, frameCount: 4, endOfStream: false))
        let w2 = r.writableBlock()!
        w2[0] = 42
        r.commit(PCMBlockInfo(generation: 8, sourceFrame: 0, frameCount: 1, endOfStream: true))
        #expect(r.writableBlock() == nil)
        var b = r.readableBlock()!
        #expect(b.info.generation == 7 && b.info.sourceFrame == 100 && b.remaining == 4)
        r.consume(3)
        b = r.readableBlock()!
        #expect(b.remaining == 1 && b.samples[0] == 6 && b.samples[1] == 7 && b.offset == 3)
        r.consume(1)
        #expect(r.dropBlocks(olderThan: 8) == 0)
        b = r.readableBlock()!
        #expect(b.info.endOfStream && b.samples[0] == 42)
        #expect(r.dropBlocks(olderThan: 9) == 1)
        #expect(r.readableBlock() == nil)
    }

    @Test func pcmBufferAllocatesChannelsAndClamps() {
        let b = AudioPCMBuffer(format: .standard(sampleRate: 44100, channels: 3), frameCapacity: 10)!
        b.frameLength = 50
        #expect(b.frameLength == 10)
        b.floatChannelData[2][9] = 1.5
        #expect(b.channel(2)[9] == 1.5)
        #expect(AudioPCMBuffer(format: .standard(sampleRate: 0, channels: 2), frameCapacity: 10) == nil)
    }

    @Test func errorsNameTheFileAndTheProblem() {
        let e = TonearmError.notMediaFile(path: "/music/a.mp3", detail: "it is a text file")
        #expect("\(e)".contains("/music/a.mp3"))
        #expect("\(e)".contains("not a media file"))
        #expect(e.path == "/music/a.mp3")
    }
}
