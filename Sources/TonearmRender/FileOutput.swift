// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Synchronization
import TonearmCore

/// Writes exactly what would be heard to a WAV file, as fast as possible.
///
/// Its own thread pulls blocks with `.offline` timing (the source may wait for its decoder, so
/// the result is complete and deterministic) and writes them in place at `path`. When a render
/// reports `ended`, the frames it rendered are written, the header is fixed up and
/// ``AudioOutputEvent/drained`` is published. ``stop()`` also leaves a valid file (with what was
/// written so far).
///
/// Samples: `.float32` writes the Float32 samples unchanged (`WAVE_FORMAT_IEEE_FLOAT`, bit-exact);
/// `.int16` rounds to 16-bit PCM, clipping at full scale, without dither. Mono and stereo use the
/// plain `WAVEFORMAT` header; more channels `WAVE_FORMAT_EXTENSIBLE`, whose channel mask is the
/// format's layout (``AudioChannelLayout/waveChannelMask``; 0, "not said", for a layout WAV cannot
/// express). Files stop at the 4 GiB limit of RIFF.
///
/// Errors: an unwritable path fails ``open(format:)`` with ``TonearmError/writeFailed(path:reason:)``.
/// A write that fails later (disk full, I/O error) ends the thread, removes the partial file (when
/// it is a regular file) and publishes ``AudioOutputEvent/deviceLost(reason:)`` whose reason is
/// the `writeFailed` error's description.
///
/// Threading: control-plane calls from one thread at a time; `stop()` joins the writer thread.
/// `framesPlayed` (frames written), `latency`, `underrunCount`, `format` may be read from any thread.
///
/// Lifetime: the running thread keeps the driver alive; call `stop()` or `close()` to release it.
///
/// `@unchecked Sendable`: shared state is under its condition's lock or atomic; the file and
/// buffers belong to the writer thread while it runs and to the control plane otherwise.
public final class FileOutput: AudioOutputDriver, @unchecked Sendable {
    /// How samples are stored in the file.
    public enum SampleFormat: String, Sendable, Hashable {
        /// 32-bit IEEE float, the samples exactly as rendered.
        case float32
        /// 16-bit signed PCM, rounded and clipped.
        case int16
    }

    /// The file written.
    public let path: String
    /// How samples are stored.
    public let sampleFormat: SampleFormat
    /// Frames pulled per render call.
    public let blockFrames: Int

    public var name: String { "file:\(path)" }
    public var isAudible: Bool { false }
    public var format: AudioFormat { cond.withLock { _format } }
    public var events: AsyncStream<AudioOutputEvent> { eventChannel.stream }


    private let pull = PullThreadControl()
    private var cond: DriverCondition { pull.cond }
    /// The source of the last ``start(source:)`` (control plane only): ``resume()`` starts the
    /// writer on it again after it ended at the source's end.
    private var startedSource: (any AudioRenderSource)?
    private let eventChannel = OutputEventChannel()
    private let written = Atomic<Int64>(0)
    // Guarded by `cond`.
    private var _format = AudioFormat.interleavedFloat(sampleRate: 48_000, channels: 2)
    // Control plane; handed to the writer thread while it runs (start/stop give the ordering).
    private var fd: Int32 = -1
    private var isRegularFile = false
    private var headerWritten = false
    private var dataBytes: UInt64 = 0
    private var scratch: UnsafeMutablePointer<Float>?
    private var pcm16: UnsafeMutablePointer<Int16>?

    /// Creates a file output; nothing is created until ``open(format:)``.
    public init(path: String, sampleFormat: SampleFormat = .float32, blockFrames: Int = 4096) {
        self.path = path
        self.sampleFormat = sampleFormat
        self.blockFrames = max(1, blockFrames)
    }

    deinit {
        close()
        eventChannel.finish()
    }

    private var bytesPerSample: Int { sampleFormat == .float32 ? 4 : 2 }
    private var headerSize: Int {
        channelMask == nil ? (sampleFormat == .float32 ? 58 : 44) : (sampleFormat == .float32 ? 80 : 68)
    }
    /// The `WAVE_FORMAT_EXTENSIBLE` channel mask, nil for the plain header (one or two channels).
    /// Set by `open`, before the writer thread starts.
    private var channelMask: UInt32?

    /// Creates (or truncates) the file. Throws ``TonearmError/writeFailed(path:reason:)`` when it
    /// cannot be created, and ``TonearmError/outputUnavailable(driver:reason:)`` for an invalid format.
    public func open(format requested: AudioFormat) throws {
        guard requested.isValid, requested.sampleRate == requested.sampleRate.rounded(),
              requested.sampleRate <= Double(UInt32.max / 8 / 64) else {
            throw TonearmError.outputUnavailable(driver: name, reason: "unsupported format \(requested)")
        }
        close()
        let newFD = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if newFD < 0 {
            throw TonearmError.writeFailed(path: path, reason: errnoDescription(errno))
        }
        var st = stat()
        isRegularFile = fstat(newFD, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        fd = newFD
        headerWritten = false
        dataBytes = 0
        written.store(0, ordering: .relaxed)
        var f = requested
        f.commonFormat = .pcmFormatFloat32
        f.isInterleaved = true
        let count = blockFrames * f.channelCount
        scratch = .allocate(capacity: count)
        scratch!.initialize(repeating: 0, count: count)
        if sampleFormat == .int16 {
            pcm16 = .allocate(capacity: count)
            pcm16!.initialize(repeating: 0, count: count)
        }
        channelMask = f.channelCount > 2 ? f.effectiveChannelLayout?.waveChannelMask ?? 0 : nil
        cond.withLock { _format = f }
    }

    /// Starts the writer thread pulling from `source`. Throws when not open, or after a write
    /// failure (open again to retry).
    public func start(source: any AudioRenderSource) throws {
        guard fd >= 0 else { throw TonearmError.invalidState("\(name): start before open (or after a write failure)") }
        stop()
        guard fd >= 0 else { throw TonearmError.invalidState("\(name): the file was closed by a write failure") }
        startedSource = source
        cond.withLock { pull.state = .running }
        do {
            pull.thread = try DriverThread(name: "tonearm-file") { [self] in
                writeLoop(source: source)
            }
        } catch {
            cond.withLock { pull.state = .idle }
            throw error
        }
    }

    private func writeLoop(source: any AudioRenderSource) {
        guard let scratch else { return }
        let channels = format.channelCount
        while true {
            cond.lock()
            while pull.state == .paused { cond.wait() }
            let stopping = pull.state != .running
            cond.unlock()
            if stopping { break }

            let result = source.render(into: scratch, frameCount: blockFrames, timing: .offline)
            let frames = result.ended ? max(0, min(result.framesRendered, blockFrames)) : blockFrames
            if frames > 0 {
                if let error = append(scratch, samples: frames * channels) {
                    fail(error)
                    return
                }
                written.add(Int64(frames), ordering: .relaxed)
            }
            if result.ended {
                if let error = finalizeHeader() {
                    fail(error)
                    return
                }
                cond.withLock {
                    pull.state = .idle
                    cond.broadcast()
                }
                eventChannel.yield(.drained)
                return
            }
        }
        if let error = finalizeHeader() { fail(error) }
    }

    /// Writes the placeholder header first, then the samples. Returns an error text on failure.
    private func append(_ samples: UnsafeMutablePointer<Float>, samples count: Int) -> String? {
        if !headerWritten {
            if let e = writeHeader() { return e }
            headerWritten = true
        }
        let bytes = count * bytesPerSample
        if dataBytes + UInt64(bytes) + UInt64(headerSize) > UInt64(UInt32.max) {
            return "the WAV format cannot hold more than 4 GiB"
        }
        let e: String?
        if sampleFormat == .int16, let out = pcm16 {
            for i in 0..<count {
                let x = samples[i]
                let clipped = x.isNaN ? 0 : min(max(x, -1), 1)
                out[i] = Int16((clipped * 32767).rounded())
            }
            e = writeAll(UnsafeRawPointer(out), bytes)
        } else {
            e = writeAll(UnsafeRawPointer(samples), bytes)
        }
        if e == nil { dataBytes += UInt64(bytes) }
        return e
    }

    private func writeAll(_ p: UnsafeRawPointer, _ count: Int) -> String? {
        var done = 0
        while done < count {
            let n = Glibc.write(fd, p + done, count - done)
            if n < 0 {
                if errno == EINTR { continue }
                return errnoDescription(errno)
            }
            if n == 0 { return "the device accepted no bytes" }
            done += n
        }
        return nil
    }

    /// The header for the current `dataBytes` (little-endian).
    private func header() -> [UInt8] {
        var h: [UInt8] = []
        h.reserveCapacity(headerSize)
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { h.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { h.append(contentsOf: $0) } }
        func tag(_ s: String) { h.append(contentsOf: Array(s.utf8)) }
        let f = format
        let channels = UInt16(f.channelCount)
        let rate = UInt32(f.sampleRate)
        let blockAlign = UInt16(f.channelCount * bytesPerSample)
        let data = UInt32(truncatingIfNeeded: dataBytes)
        tag("RIFF"); u32(UInt32(headerSize - 8) + data); tag("WAVE")
        if let mask = channelMask {
            // WAVEFORMATEXTENSIBLE: cbSize 22, valid bits, channel mask, sub-format GUID.
            let bits: UInt16 = sampleFormat == .float32 ? 32 : 16
            tag("fmt "); u32(40); u16(0xFFFE); u16(channels); u32(rate); u32(rate * UInt32(blockAlign))
            u16(blockAlign); u16(bits); u16(22); u16(bits); u32(mask)
            u16(sampleFormat == .float32 ? 3 : 1)
            h.append(contentsOf: [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
            if sampleFormat == .float32 { tag("fact"); u32(4); u32(data / UInt32(blockAlign)) }
        } else if sampleFormat == .float32 {
            tag("fmt "); u32(18); u16(3); u16(channels); u32(rate); u32(rate * UInt32(blockAlign))
            u16(blockAlign); u16(32); u16(0)
            tag("fact"); u32(4); u32(data / UInt32(blockAlign))
        } else {
            tag("fmt "); u32(16); u16(1); u16(channels); u32(rate); u32(rate * UInt32(blockAlign))
            u16(blockAlign); u16(16)
        }
        tag("data"); u32(data)
        return h
    }

    private func writeHeader() -> String? {
        let h = header()
        return h.withUnsafeBytes { writeAll($0.baseAddress!, $0.count) }
    }

    /// Rewrites the header with the final sizes (writing it first if nothing was written).
    private func finalizeHeader() -> String? {
        if !headerWritten {
            if let e = writeHeader() { return e }
            headerWritten = true
            return nil
        }
        let h = header()
        let n = h.withUnsafeBytes { pwrite(fd, $0.baseAddress!, $0.count, 0) }
        if n != h.count { return n < 0 ? errnoDescription(errno) : "short header write" }
        return nil
    }

    /// Closes and removes the partial file, and reports the failure.
    private func fail(_ reason: String) {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        if isRegularFile { unlink(path) }
        cond.withLock { pull.state = .idle }
        eventChannel.yield(.deviceLost(reason: TonearmError.writeFailed(path: path, reason: reason).description))
    }

    /// Waits (at most `timeout` seconds) until the writer has written everything the source
    /// rendered up to its end (the source reported `ended`), so a caller that stops afterwards
    /// loses nothing — an effect's tail rendered after the music included. Control plane.
    public func drain(timeout: Double) {
        guard pull.thread != nil else { return }
        let deadline = monotonicNanoseconds() + UInt64(max(0, timeout) * 1e9)
        cond.lock()
        while pull.state == .running && monotonicNanoseconds() < deadline {
            cond.wait(untilNanoseconds: deadline)
        }
        cond.unlock()
    }

    /// Holds the writer thread until ``resume()``.
    public func pause() {
        pull.pause()
    }

    /// Continues writing after ``pause()``; after the writer ended at the source's end
    /// (``AudioOutputEvent/drained``) it starts it again on the same source, appending to the
    /// file — a player that was given more to play after its end (a queue seeking back as its
    /// last item ended) goes on writing.
    public func resume() {
        let endedBySource = pull.thread != nil && cond.withLock { pull.state == .idle }
        if endedBySource, fd >= 0, let source = startedSource {
            try? start(source: source)
            return
        }
        pull.resume()
    }

    /// Ends the writer thread and waits for it; the file is left valid with what was written.
    public func stop() {
        pull.stop()
        startedSource = nil
    }

    /// Stops, completes the header when nothing was started, closes the file, and finishes the
    /// current `events` stream (a new one is ready for the next `open`).
    public func close() {
        stop()
        if fd >= 0 {
            if !headerWritten { _ = finalizeHeader() }
            Glibc.close(fd)
            fd = -1
        }
        scratch?.deallocate()
        scratch = nil
        pcm16?.deallocate()
        pcm16 = nil
        eventChannel.finish()
    }

    /// Ignored: the file holds the samples as rendered.
    public func setVolume(_ volume: Float) {}

    /// Runs `replace` and drops nothing: every block rendered is in the file once written (the
    /// file is what would be heard, so a seek in it is a cut, never a loss), and nothing waits to
    /// be played after a write.
    public func flush(replacing replace: () -> Void) { replace() }

    /// 0: nothing is buffered after a write.
    public var latency: Double { 0 }
    /// Frames written since `open`.
    public var framesPlayed: Int64 { written.load(ordering: .relaxed) }
    /// Always 0 (offline rendering never starves).
    public var underrunCount: Int { 0 }
}
