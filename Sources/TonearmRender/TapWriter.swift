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

/// The Snapcast output (`snapcast:FIFO`): what plays, as signed 16-bit little-endian stereo at
/// 48 kHz (snapserver's default `sampleformat`, or the rate given), written into the named pipe
/// of a snapserver `pipe` source. The pipe is opened without blocking (read-write): while there
/// is no pipe yet (snapserver not started) it is tried again with a growing delay (0.1 s to 2 s), and
/// the log says so once; when snapserver stops reading, what does not fit is dropped and counted,
/// never waited for; when it goes away the pipe is opened again.
public final class SnapcastOutput: @unchecked Sendable {
    // @unchecked: `fd`, `retryAt`, `delay` and `said` belong to the writer's thread (`idle` and
    // `deliver` run there only); the counters are atomic.
    public let path: String
    public let writer: TapWriter
    private let log: @Sendable (String) -> Void
    private var fd: Int32 = -1
    private var retryAt: UInt64 = 0
    private var delay: UInt64 = 100_000_000
    private var said = false
    private let droppedBytes = Atomic<Int>(0)
    private let writtenBytes = Atomic<Int>(0)
    private let scratch: UnsafeMutablePointer<Int16>

    public init(path: String, tap: OutputTap, sampleRate: Int = 48_000, log: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.log = log
        writer = TapWriter(tap: tap, outputRate: sampleRate, name: "tonearm-snapcast")
        scratch = .allocate(capacity: 4096 * 2 * 8 + 16)
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
        let n = frames * 2
        for i in 0..<n {
            let s = max(-1, min(1, samples[i])) * 32767
            scratch[i] = Int16(s.rounded()).littleEndian
        }
        let bytes = n * 2
        guard fd >= 0 else { droppedBytes.wrappingAdd(bytes, ordering: .relaxed); return }
        var done = 0
        while done < bytes {
            // At most PIPE_BUF at a time: such a write is whole or refused (EAGAIN), never partial,
            // so the pipe never loses its frame alignment.
            let w = Glibc.write(fd, UnsafeRawPointer(scratch) + done, min(Int(PIPE_BUF), bytes - done))
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
