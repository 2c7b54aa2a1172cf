// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Synchronization
import TonearmCore

/// The thread of an output fed by an ``OutputTap``: every 10 ms it takes what the render thread
/// put in the tap, brings it to the output's rate (linear interpolation when the clock output
/// plays another rate) and hands it, as interleaved stereo Float32, to `deliver` — on this
/// thread, where I/O may block or fail without touching the render path. Between deliveries it
/// calls `idle` (for the output's own housekeeping: opening a pipe again, accepting clients).
///
/// Threading: `start` and `stop` from one control thread; `deliver` and `idle` on the writer's thread.
public final class TapWriter: @unchecked Sendable {
    // @unchecked: `thread` is touched by start/stop only (one control thread); the rest is
    // immutable or atomic, and the buffers belong to the writer's thread.
    public let tap: OutputTap
    public let outputRate: Int
    private let name: String
    private let running = Atomic<Bool>(false)
    private var thread: DriverThread?

    public init(tap: OutputTap, outputRate: Int, name: String) {
        self.tap = tap
        self.outputRate = outputRate
        self.name = name
    }

    deinit { stop() }

    /// Starts the writer's thread.
    public func start(deliver: @escaping @Sendable (UnsafePointer<Float>, Int) -> Void,
                      idle: @escaping @Sendable () -> Void) throws {
        guard thread == nil else { return }
        running.store(true, ordering: .releasing)
        let tap = tap, outputRate = outputRate
        thread = try DriverThread(name: name) { [self] in
            let chunk = 4096
            let input = UnsafeMutablePointer<Float>.allocate(capacity: chunk * 2)
            let output = UnsafeMutablePointer<Float>.allocate(capacity: chunk * 2 * 8 + 16)
            defer { input.deallocate(); output.deallocate() }
            var resampler = LinearResampler()
            while running.load(ordering: .acquiring) {
                idle()
                while true {
                    let n = tap.ring.read(into: input, maxFrames: chunk)
                    if n == 0 { break }
                    let inRate = tap.sampleRate
                    if inRate == outputRate || inRate <= 0 {
                        deliver(input, n)
                    } else {
                        let m = resampler.process(input, frames: n, ratio: Double(inRate) / Double(outputRate), into: output,
                                                  capacity: chunk * 8)
                        deliver(output, m)
                    }
                }
                var ts = timespec(tv_sec: 0, tv_nsec: 10_000_000)
                nanosleep(&ts, nil)
            }
        }
    }

    /// Stops the thread and waits for it.
    public func stop() {
        running.store(false, ordering: .releasing)
        thread?.join()
        thread = nil
    }
}

/// Stereo linear interpolation from one rate to another, carrying its phase across calls.
struct LinearResampler {
    private var last: (Float, Float) = (0, 0)
    private var phase = 0.0  // position of the next output frame, in input frames after `last`

    /// `ratio`: input frames per output frame.
    mutating func process(_ input: UnsafePointer<Float>, frames: Int, ratio: Double, into output: UnsafeMutablePointer<Float>,
                          capacity: Int) -> Int {
        var produced = 0
        while produced < capacity {
            // Frame index -1 is `last`; 0..<frames the input.
            let p = phase - 1
            let i = Int(p.rounded(.down))
            if i + 1 >= frames { break }
            let frac = Float(p - Double(i))
            let a: (Float, Float) = i < 0 ? last : (input[i * 2], input[i * 2 + 1])
            let b = (input[(i + 1) * 2], input[(i + 1) * 2 + 1])
            output[produced * 2] = a.0 + (b.0 - a.0) * frac
            output[produced * 2 + 1] = a.1 + (b.1 - a.1) * frac
            produced += 1
            phase += ratio
        }
        if frames > 0 {
            last = (input[(frames - 1) * 2], input[(frames - 1) * 2 + 1])
            phase -= Double(frames)
        }
        return produced
    }
}

/// snapserver's `sampleformat`, `RATE:BITS:CHANNELS` (48000:16:2 by default): signed
/// little-endian samples of 8, 16, 24 (in the lower three bytes of a 32-bit word, as snapserver
/// reads them) or 32 bits, one or two channels (one: the mean of left and right).
public struct SnapcastFormat: Sendable, Hashable, CustomStringConvertible {
    public let sampleRate: Int
    public let bits: Int
    public let channels: Int

    public static let standard = SnapcastFormat(checked: 48_000, 16, 2)

    private init(checked rate: Int, _ bits: Int, _ channels: Int) {
        sampleRate = rate
        self.bits = bits
        self.channels = channels
    }

    /// Throws ``TonearmError/invalidArgument(_:)`` naming the value that is out of range.
    public init(sampleRate: Int, bits: Int, channels: Int) throws(TonearmError) {
        guard (8_000...384_000).contains(sampleRate) else {
            throw .invalidArgument("sample format: rate \(sampleRate) is not between 8000 and 384000")
        }
        guard [8, 16, 24, 32].contains(bits) else { throw .invalidArgument("sample format: \(bits) bits; snapserver takes 8, 16, 24 or 32") }
        guard (1...2).contains(channels) else { throw .invalidArgument("sample format: \(channels) channels; choose 1 or 2") }
        self.init(checked: sampleRate, bits, channels)
    }

    /// Parses `RATE:BITS:CHANNELS`, as snapserver's `sampleformat` (`44100:16:2`).
    public init(parsing text: String) throws(TonearmError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let r = parts[0], let b = parts[1], let c = parts[2] else {
            throw .invalidArgument("sample format '\(text)': expected RATE:BITS:CHANNELS, as in 48000:16:2")
        }
        try self.init(sampleRate: r, bits: b, channels: c)
    }

    public var description: String { "\(sampleRate):\(bits):\(channels)" }

    /// Bytes of one sample in the pipe (24 bits take 4).
    public var sampleBytes: Int { bits == 24 ? 4 : bits / 8 }
    /// Bytes of one frame in the pipe.
    public var frameBytes: Int { sampleBytes * channels }

    /// Converts `frames` interleaved stereo Float32 frames to this format into `out` (room for
    /// `frames × frameBytes`), clipped; returns the bytes written. No allocation.
    public func convert(_ samples: UnsafePointer<Float>, frames: Int, into out: UnsafeMutableRawPointer) -> Int {
        let scale: Float = switch bits {
        case 8: 127
        case 16: 32767
        case 24: 8_388_607
        default: 2_147_483_520  // the largest Float below 2^31
        }
        var o = 0
        for f in 0..<frames {
            let l = samples[f * 2], r = samples[f * 2 + 1]
            for c in 0..<channels {
                let v = channels == 1 ? (l + r) * 0.5 : (c == 0 ? l : r)
                let s = (max(-1, min(1, v)) * scale).rounded()
                switch bits {
                case 8: out.storeBytes(of: Int8(s), toByteOffset: o, as: Int8.self)
                case 16: out.storeBytes(of: Int16(s).littleEndian, toByteOffset: o, as: Int16.self)
                default: out.storeBytes(of: Int32(s).littleEndian, toByteOffset: o, as: Int32.self)
                }
                o += sampleBytes
            }
        }
        return o
    }
}

/// The Snapcast output (`snapcast:FIFO[:RATE:BITS:CHANNELS]`): what plays, in the source's
/// ``SnapcastFormat`` (snapserver's default `sampleformat`, 48000:16:2, or as configured), written into the named pipe
/// of a snapserver `pipe` source. The pipe is opened without blocking (read-write): while there
/// is no pipe yet (snapserver not started) it is tried again with a growing delay (0.1 s to 2 s), and
/// the log says so once; when snapserver stops reading, what does not fit is dropped and counted,
/// never waited for; when it goes away the pipe is opened again.
public final class SnapcastOutput: @unchecked Sendable {
    // @unchecked: `fd`, `retryAt`, `delay` and `said` belong to the writer's thread (`idle` and
    // `deliver` run there only); the counters are atomic.
    public let path: String
    public let format: SnapcastFormat
    public let writer: TapWriter
    private let log: @Sendable (String) -> Void
    private var fd: Int32 = -1
    private var retryAt: UInt64 = 0
    private var delay: UInt64 = 100_000_000
    private var said = false
    private let droppedBytes = Atomic<Int>(0)
    private let writtenBytes = Atomic<Int>(0)
    private let scratch: UnsafeMutableRawPointer

    public init(path: String, tap: OutputTap, format: SnapcastFormat = .standard, log: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.format = format
        self.log = log
        writer = TapWriter(tap: tap, outputRate: format.sampleRate, name: "tonearm-snapcast")
        // The writer delivers at most 4096 × 8 frames at once (4096 resampled up to 8 times).
        scratch = .allocate(byteCount: (4096 * 8 + 16) * format.frameBytes, alignment: 8)
    }

    deinit {
        writer.stop()
        if fd >= 0 { close(fd) }
        scratch.deallocate()
    }

    /// Bytes dropped because the pipe was full or closed (snapserver not reading).
    public var dropped: Int { droppedBytes.load(ordering: .relaxed) }
    /// Bytes written into the pipe.
    public var written: Int { writtenBytes.load(ordering: .relaxed) }

    public func start() throws {
        signal(SIGPIPE, SIG_IGN)
        try writer.start(deliver: { [self] in write($0, frames: $1) }, idle: { [self] in openIfDue() })
    }

    public func stop() {
        writer.stop()
        if fd >= 0 { close(fd); fd = -1 }
    }

    private func openIfDue() {
        guard fd < 0 else { return }
        let now = monotonicNanoseconds()
        guard now >= retryAt else { return }
        // Read-write: on Linux, opening a FIFO so never blocks and never fails for want of a
        // reader (snapserver opens its end only now and then while nothing is written); what
        // snapserver does not take fills the pipe's buffer, and then is dropped (EAGAIN).
        var st = stat()
        let isFIFO = stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO
        let f = isFIFO ? open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) : -1
        if f >= 0 {
            fd = f
            delay = 100_000_000
            log("snapcast: writing to \(path)")
            said = false
            return
        }
        let e = errno
        if !said {
            let why = isFIFO ? errnoDescription(e) : "no named pipe there yet"
            log("snapcast: cannot open \(path) (\(why): is snapserver running with a pipe source there?); trying again")
            said = true
        }
        retryAt = now + delay
        delay = min(delay * 2, 2_000_000_000)
    }

    private func write(_ samples: UnsafePointer<Float>, frames: Int) {
        let bytes = format.convert(samples, frames: frames, into: scratch)
        guard fd >= 0 else { droppedBytes.wrappingAdd(bytes, ordering: .relaxed); return }
        var done = 0
        while done < bytes {
            // At most PIPE_BUF (whole frames) at a time: such a write is whole or refused (EAGAIN),
            // never partial, so the pipe never loses its frame alignment.
            let most = Int(PIPE_BUF) / format.frameBytes * format.frameBytes
            let w = Glibc.write(fd, UnsafeRawPointer(scratch) + done, min(most, bytes - done))
            if w > 0 { done += w; continue }
            let e = errno
            if w < 0, e == EINTR { continue }
            if w < 0, e == EAGAIN { break }  // snapserver is not reading: drop the rest
            // EPIPE: snapserver went away. Open again later.
            close(fd)
            fd = -1
            log("snapcast: \(path) closed (\(errnoDescription(e))); opening again when snapserver reads")
            break
        }
        writtenBytes.wrappingAdd(done, ordering: .relaxed)
        if done < bytes { droppedBytes.wrappingAdd(bytes - done, ordering: .relaxed) }
    }
}
