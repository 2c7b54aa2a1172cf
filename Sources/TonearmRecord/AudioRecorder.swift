// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Glibc
import Synchronization
import TonearmCore
import TonearmExport
import TonearmSession

/// What an ``AudioRecorder`` tells its delegate (AVAudioRecorderDelegate). Called on the
/// recorder's writer thread (`tonearm-record`), after the file is closed; the recorder may be
/// used from there.
public protocol AudioRecorderDelegate: AnyObject, Sendable {
    /// The recording ended: by ``AudioRecorder/stop()``, at the end of
    /// ``AudioRecorder/record(forDuration:)``, or (`successfully` false) by an error — the file
    /// holds what was recorded until then, with its header right.
    func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool)
    /// Writing the file failed (a full disk, an encoder error); the recording stops.
    func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: (any Error)?)
}

extension AudioRecorderDelegate {
    public func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool) {}
    public func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: (any Error)?) {}
}

/// What happened to a recording, as ``AudioRecorder/events`` delivers it.
public enum AudioRecorderEvent: Sendable, Hashable {
    /// Recording began or resumed.
    case started
    /// Recording paused (``AudioRecorder/pause()``, or the input went away: see `inputLost`).
    case paused
    /// The source recorded from went away (a USB microphone unplugged): the recording paused
    /// (a `paused` follows) rather than go on from whatever input the server chose instead;
    /// ``AudioRecorder/record()`` records on, into the same file, from the input in use now.
    case inputLost(source: String)
    /// Writing failed; a `finished(successfully: false)` follows.
    case encodeError(TonearmError)
    /// The recording ended and the file is closed (`frames`: what it holds).
    case finished(successfully: Bool, frames: Int64)
}

/// Records from a PulseAudio source into a file (AVAudioRecorder): linear PCM (8–32-bit integer
/// or 32/64-bit float, in WAV or CAF), FLAC, Apple Lossless (M4A, CAF; 16 or 24 bits), AAC (M4A,
/// ADTS) or Opus (Ogg), at the rate and channel count the settings ask (the server converts
/// from the source's own format). ``RecordingFormat`` says which file holds what.
///
/// ```swift
/// let recorder = try AudioRecorder(url: URL(fileURLWithPath: "take.flac"),
///                                  settings: [AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 2])
/// recorder.record(forDuration: 10)   // stops by itself after exactly 480,000 frames
/// ```
///
/// How it runs: a record stream on a PulseAudio connection of its own (``PulseRecordStream``),
/// whose read callback copies into a preallocated lock-free ring and wakes the writer; a writer
/// thread (`tonearm-record`) takes from the ring when woken, measures the levels and encodes and
/// writes the file (FFmpeg's encoders, through TonearmExport). Holes the server reports are
/// written as silence and counted (``holeFrameCount``).
///
/// Threading: the control calls (`prepareToRecord`, `record`, `pause`, `stop`, `deleteRecording`)
/// may come from any thread, one at a time; the properties may be read from any thread.
public final class AudioRecorder: Sendable {
    public let url: URL
    /// The format of the file, read from the settings and the extension.
    public let format: RecordingFormat
    /// The source recorded from (nil: the session's ``AudioSession/preferredInput``, else the
    /// server's default), and the server (nil: the default).
    public let source: String?
    public let server: String?
    /// The session whose preferred input a recorder without a source reads from
    /// (AVAudioRecorder belongs to `AVAudioSession.sharedInstance()`); nil: none.
    public let session: AudioSession?

    private enum Phase: Sendable { case idle, prepared, recording, paused, stopping, finished }

    /// The parts of the recorder the control calls change (under `control`).
    private struct Control: ~Copyable {
        var phase = Phase.idle
        var stream: PulseRecordStream?
        var writer: WriterBox?
        var writerRunning = false
        var lastError: TonearmError?
        var lastFrames: Int64 = 0
        var lastHoles: Int64 = 0
        var lastDropped: Int64 = 0
        var sourceName: String?
    }

    private let control = Mutex(Control())
    /// The writer thread's life: entered when it starts, left when it has closed the file.
    private let writerDone = DispatchGroup()
    private let stopFlag = Atomic<Bool>(false)
    private let meteringFlag = Atomic<Bool>(false)
    private let meters: Mutex<Meters>
    private let delegateBox = Mutex<WeakDelegate>(WeakDelegate())
    private let broadcaster = EventBroadcaster<AudioRecorderEvent>()
    private let writeObserver = Mutex<(@Sendable (_ frames: Int64, _ peak: Float) -> Void)?>(nil)

    /// A recorder writing `url` (a file URL ending in `.wav`, `.flac`, `.caf`, `.m4a`, `.aac`,
    /// `.opus` or `.ogg`) with Apple's `settings` (``AVFormatIDKey``, ``AVSampleRateKey``,
    /// ``AVNumberOfChannelsKey``, ``AVLinearPCMBitDepthKey``, ``AVLinearPCMIsFloatKey``,
    /// ``AVEncoderBitDepthHintKey``, ``AVEncoderBitRateKey``, ``AVEncoderBitRatePerChannelKey``,
    /// ``AVEncoderAudioQualityKey``), recording from `source` (a PulseAudio source name; nil:
    /// `session`'s preferred input, else the server's default source) on `server` (nil: the
    /// default server).
    /// Nothing is created before ``prepareToRecord()`` or ``record()``. Throws
    /// ``AudioRecorderError`` naming the setting or the extension that is wrong, and
    /// ``TonearmError/invalidURL(_:)`` for a URL that is not a file.
    public init(url: URL, settings: [String: Any], source: String? = nil, server: String? = nil,
                session: AudioSession? = .shared) throws {
        guard url.isFileURL else { throw TonearmError.invalidURL(url.absoluteString) }
        self.url = url
        format = try RecordingFormat(path: url.path, settings: settings)
        self.source = source
        self.server = server
        self.session = session
        meters = Mutex(Meters(channels: format.channelCount))
    }

    deinit {
        // Only reached when no writer thread runs (it holds the recorder): a prepared file is
        // closed empty and valid.
        control.withLock { c in
            c.stream?.close()
            try? c.writer?.writer.finish()
        }
        broadcaster.finish()
    }

    /// The delegate, held weakly.
    public var delegate: (any AudioRecorderDelegate)? {
        get { delegateBox.withLock { $0.value } }
        set { delegateBox.withLock { $0.value = newValue } }
    }

    /// The recorder's events from now on (every one kept until read).
    public var events: AsyncStream<AudioRecorderEvent> { broadcaster.stream(bufferingNewest: nil) }

    /// Apple's settings for the file's format.
    public var settings: [String: any Sendable] { format.settings }

    /// Whether it is recording now (not paused, not stopped).
    public var isRecording: Bool { control.withLock { $0.phase == .recording } }

    /// Seconds recorded so far in this recording (frames taken ÷ the rate, pauses left out);
    /// 0 when not recording or paused.
    public var currentTime: TimeInterval {
        control.withLock { c in
            guard c.phase == .recording || c.phase == .paused, let s = c.stream else { return 0 }
            return Double(s.acceptedFrames) / Double(format.sampleRate)
        }
    }

    /// Frames in the file of the current or the last recording (what ``currentTime`` counts, also
    /// after the recording stopped).
    public var recordedFrameCount: Int64 {
        control.withLock { c in c.stream.map { $0.acceptedFrames } ?? c.lastFrames }
    }
    /// Frames of silence written for holes the sound server reported (current or last recording).
    public var holeFrameCount: Int64 { control.withLock { c in c.stream.map { $0.holeFrames } ?? c.lastHoles } }
    /// Frames lost because the writer fell behind the ring (current or last recording); 0 on a sane machine.
    public var droppedFrameCount: Int64 { control.withLock { c in c.stream.map { $0.droppedFrames } ?? c.lastDropped } }
    /// The source's name as the server gave it, once prepared (after a move, the source now
    /// recorded from).
    public var sourceName: String? { control.withLock { c in c.stream.map { $0.currentSourceName } ?? c.sourceName } }
    /// Why the last `prepareToRecord()` or `record…` returned false, or the recording ended badly.
    public var lastError: TonearmError? { control.withLock { $0.lastError } }

    // MARK: Control

    /// Creates the file (its header written) and opens the record stream, paused, so that
    /// ``record()`` starts at once. Returns false on failure (``lastError`` says why).
    @discardableResult
    public func prepareToRecord() -> Bool {
        do { try prepare(); return true } catch { control.withLock { $0.lastError = Self.typed(error) }; return false }
    }

    /// ``prepareToRecord()``, throwing what went wrong: `writeFailed` naming the file,
    /// `outputUnavailable` naming the server or source.
    public func prepare() throws {
        try control.withLock { c throws in try prepareLocked(&c) }
    }

    private func prepareLocked(_ c: inout Control) throws {
        switch c.phase {
        case .prepared, .recording, .paused: return
        case .stopping: throw TonearmError.invalidState("\(url.path): the recording is stopping")
        case .idle, .finished: break
        }
        let path = url.path
        let writer = try RecordingFileWriter(path: path, fileType: format.exportFileType, encoder: format.encoderName,
                                             bits: format.encoderBits, bitRate: format.bitRate, sampleRate: format.sampleRate,
                                             channels: format.channelCount)
        let stream: PulseRecordStream
        do {
            stream = try PulseRecordStream(server: server, source: source ?? session?.preferredInput?.name, sampleRate: format.sampleRate,
                                           channels: format.channelCount)
        } catch {
            try? writer.finish()
            unlink(path)
            throw error
        }
        c.stream = stream
        c.writer = WriterBox(writer)
        c.sourceName = stream.currentSourceName
        c.phase = .prepared
        c.lastError = nil
        stopFlag.store(false, ordering: .releasing)
        meters.withLock { $0.reset() }
    }

    /// Starts recording, or resumes after ``pause()`` into the same file. Prepares first when
    /// needed (after a ``stop()``, a new recording replaces the file). Returns false on failure.
    @discardableResult
    public func record() -> Bool {
        do { try start(duration: nil); return true } catch { control.withLock { $0.lastError = Self.typed(error) }; return false }
    }

    /// Records `duration` seconds more — exactly `duration × rate` frames, rounded — and stops
    /// by itself (the delegate and ``events`` hear of it). A pause in between does not count.
    @discardableResult
    public func record(forDuration duration: TimeInterval) -> Bool {
        do { try start(duration: duration); return true } catch { control.withLock { $0.lastError = Self.typed(error) }; return false }
    }

    /// Starts recording what the source captures from `time` on (seconds on the
    /// ``deviceCurrentTime`` clock, which players' `play(atTime:)` share); a time past starts at
    /// once. Until then nothing is kept and ``currentTime`` stays 0. The start is the frame the
    /// source delivered at that time, to within its latency (a fragment, 20 ms). Returns false
    /// when already recording, or on failure (``lastError`` says why).
    @discardableResult
    public func record(atTime time: TimeInterval) -> Bool {
        do { try start(at: time); return true } catch { control.withLock { $0.lastError = Self.typed(error) }; return false }
    }

    /// ``record(atTime:)`` that stops by itself after `duration` seconds — exactly
    /// `duration × rate` frames from the start.
    @discardableResult
    public func record(atTime time: TimeInterval, forDuration duration: TimeInterval) -> Bool {
        do { try start(at: time, duration: duration); return true } catch { control.withLock { $0.lastError = Self.typed(error) }; return false }
    }

    /// The clock of ``record(atTime:)``: seconds on the process's monotonic clock, running
    /// whether or not anything records, the same as ``AudioPlayer``'s `deviceCurrentTime`.
    public var deviceCurrentTime: TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// ``record()`` / ``record(forDuration:)`` / ``record(atTime:)``, throwing what went wrong:
    /// `invalidArgument` for a duration or time that is not a positive finite number,
    /// `invalidState` for a start time while already recording, and what preparing throws.
    public func start(at time: TimeInterval? = nil, duration: TimeInterval? = nil) throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw TonearmError.invalidArgument("record(forDuration:): \(duration) is not a positive number of seconds")
        }
        if let time, !(time.isFinite && time >= 0) {
            throw TonearmError.invalidArgument("record(atTime:): \(time) is not a time on the deviceCurrentTime clock")
        }
        let started: Bool = try control.withLock { c throws in
            if c.phase == .recording, time != nil {
                throw TonearmError.invalidState("\(url.path): record(atTime:) while already recording")
            }
            if c.phase == .recording, duration == nil { return false }
            try prepareLocked(&c)
            guard let stream = c.stream, let box = c.writer else { return false }
            // (At least 1: 0 means no start time. `time` is finite and not negative.)
            if let time { stream.setStart(uptimeNanoseconds: max(1, UInt64(min((time * 1e9).rounded(), 1.8e19)))) }
            if let duration {
                stream.setLimit(frames: stream.acceptedFrames + Int64((duration * Double(format.sampleRate)).rounded()))
            } else if c.phase != .recording {
                stream.setLimit(frames: nil)
            }
            if !c.writerRunning {
                c.writerRunning = true
                startWriter(stream: stream, box: box)
            }
            if c.phase != .recording { try stream.setCorked(false) }
            c.phase = .recording
            return true
        }
        if started { broadcaster.yield(.started) }
    }

    /// Pauses: the stream is corked (what the source gave until now is kept), the file stays
    /// open; ``record()`` continues it. Nothing happens unless recording.
    public func pause() {
        let paused: Bool = control.withLock { c in
            guard c.phase == .recording, let stream = c.stream else { return false }
            do { try stream.setCorked(true) } catch { c.lastError = Self.typed(error) }
            c.phase = .paused
            return true
        }
        if paused { broadcaster.yield(.paused) }
    }

    /// Stops: the stream is closed, what it gave is written, the file is finished (WAV's sizes,
    /// FLAC's STREAMINFO) and closed, then the delegate hears `successfully: true`. Returns when
    /// the file is complete. Nothing happens unless recording, paused or prepared.
    public func stop() {
        let wait: Bool = control.withLock { c in
            switch c.phase {
            case .recording, .paused:
                c.phase = .stopping
                c.stream?.close()
                stopFlag.store(true, ordering: .releasing)
                c.stream?.wakeWriter()
                return true
            case .stopping:
                return true
            case .prepared:
                // Never started: the file is closed empty, no writer thread ran.
                c.stream?.close()
                c.stream = nil
                try? c.writer?.writer.finish()
                c.writer = nil
                c.lastFrames = 0
                c.phase = .finished
                return false
            case .idle, .finished:
                return false
            }
        }
        if wait { writerDone.wait() }
    }

    /// Removes the file. Only when stopped (not recording, not paused): returns false otherwise,
    /// or when the file could not be removed.
    @discardableResult
    public func deleteRecording() -> Bool {
        control.withLock { c in
            guard c.phase == .idle || c.phase == .finished else { return false }
            return unlink(url.path) == 0
        }
    }

    // MARK: Metering

    /// Whether levels are measured (``updateMeters()``). Off by default, as Apple's.
    public var isMeteringEnabled: Bool {
        get { meteringFlag.load(ordering: .relaxed) }
        set { meteringFlag.store(newValue, ordering: .relaxed) }
    }

    /// Takes the levels of what was recorded since the last call: ``averagePower(forChannel:)``
    /// (the RMS) and ``peakPower(forChannel:)`` then read them. With nothing recorded since,
    /// the last values stay.
    public func updateMeters() {
        meters.withLock { $0.update() }
    }

    /// The RMS level of `channel` over the last ``updateMeters()`` window, in dBFS (a full-scale
    /// square wave is 0, a full-scale sine −3.01); −160 for silence, metering off or no such channel.
    public func averagePower(forChannel channel: Int) -> Float {
        guard isMeteringEnabled else { return -160 }
        return meters.withLock { $0.average(channel) }
    }

    /// The largest absolute sample of `channel` over the last ``updateMeters()`` window, in dBFS
    /// (a full-scale sine is 0); −160 for silence, metering off or no such channel.
    public func peakPower(forChannel channel: Int) -> Float {
        guard isMeteringEnabled else { return -160 }
        return meters.withLock { $0.peak(channel) }
    }

    /// Calls `body` on the writer thread after each chunk it wrote, with the frames in the file so
    /// far and the chunk's largest absolute sample (what the tests wait on).
    package func observeWrites(_ body: (@Sendable (_ frames: Int64, _ peak: Float) -> Void)?) {
        writeObserver.withLock { $0 = body }
    }

    // MARK: The writer thread

    private func startWriter(stream: PulseRecordStream, box: WriterBox) {
        writerDone.enter()
        let thread = Thread { [self] in
            nameCurrentThread("tonearm-record")
            writerLoop(stream: stream, box: box)
        }
        thread.name = "tonearm-record"
        thread.start()
    }

    private func writerLoop(stream: PulseRecordStream, box: WriterBox) {
        let chunk = 4096
        let channels = format.channelCount
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * channels)
        defer { buffer.deallocate() }
        var failure: TonearmError?
        var encodeFailed = false
        while failure == nil {
            let stopping = stopFlag.load(ordering: .acquiring)
            while failure == nil {
                let n = stream.ring.read(into: buffer, maxFrames: chunk)
                if n == 0 { break }
                if meteringFlag.load(ordering: .relaxed) { meters.withLock { $0.add(buffer, frames: n) } }
                do { try box.writer.write(buffer, frames: n) } catch {
                    failure = error
                    encodeFailed = true
                }
                if let observe = writeObserver.withLock({ $0 }) {
                    var peak: Float = 0
                    for i in 0..<(n * channels) { peak = max(peak, abs(buffer[i])) }
                    observe(box.writer.framesWritten, peak)
                }
            }
            if stopping || failure != nil { break }
            if stream.limitReached {
                // The end of record(forDuration:): what the ring holds is written next turn.
                closeStream()
                continue
            }
            if let lost = stream.takeInputLost() {
                let paused: Bool = control.withLock { c in
                    guard c.phase == .recording else { return false }
                    c.phase = .paused
                    return true
                }
                broadcaster.yield(.inputLost(source: lost))
                if paused { broadcaster.yield(.paused) }
                continue
            }
            if stream.isLost {
                failure = .outputUnavailable(driver: "pulse", reason: "the source or the sound server went away")
                break
            }
            // Until the read callback brings more (every fragment, 20 ms), the stream is lost or
            // a control call wakes it; the bound only guards against a missed wake-up.
            stream.waitForData(timeout: 0.25)
        }
        if failure != nil { closeStream() }
        do { try box.writer.finish() } catch {
            if failure == nil {
                failure = error
                encodeFailed = true
            }
        }
        var frames = box.writer.framesWritten
        if encodeFailed {
            // A write failed (a full disk): the header is made to say what the file holds (WAV:
            // cut to whole frames; FLAC: cut after the last whole frame, its sample count set),
            // so that what was recorded before the failure plays, and the count said is what
            // the file holds — not what was given to the encoder.
            switch format.fileType {
            case .wav: if let held = try? WAVRepair.repair(path: url.path) { frames = held }
            case .flac: if let held = try? FLACRepair.repair(path: url.path) { frames = held }
            default: frames = DecodableFrames.scan(path: url.path)?.samples ?? 0
            }
        }
        control.withLock { c in
            c.lastFrames = frames
            c.lastHoles = stream.holeFrames
            c.lastDropped = stream.droppedFrames
            c.sourceName = stream.currentSourceName
            if let failure { c.lastError = failure }
            c.stream = nil
            c.writer = nil
            c.writerRunning = false
            c.phase = .finished
        }
        writerDone.leave()
        let d = delegate
        if let failure, encodeFailed {
            broadcaster.yield(.encodeError(failure))
            d?.audioRecorderEncodeErrorDidOccur(self, error: failure)
        }
        broadcaster.yield(.finished(successfully: failure == nil, frames: frames))
        d?.audioRecorderDidFinishRecording(self, successfully: failure == nil)
    }

    /// Closes the stream from the writer thread (the end of a timed recording, an error).
    private func closeStream() {
        control.withLock { c in
            if c.phase == .recording || c.phase == .paused { c.phase = .stopping }
            c.stream?.close()
        }
        stopFlag.store(true, ordering: .releasing)
    }

    private static func typed(_ error: any Error) -> TonearmError {
        if let t = error as? TonearmError { return t }
        return .invalidArgument(String(describing: error))
    }
}

/// The file writer, handed to the writer thread (one thread uses it at a time: the control call
/// that made it until the thread starts, then the thread).
private final class WriterBox: @unchecked Sendable {
    let writer: RecordingFileWriter
    init(_ writer: RecordingFileWriter) { self.writer = writer }
}

private struct WeakDelegate {
    weak var value: (any AudioRecorderDelegate)?
}

/// The levels of what was recorded since the last `update()` (accumulated by the writer thread),
/// and the levels that update took.
struct Meters {
    private var sums: [Double]
    private var peaks: [Float]
    private var count = 0
    private var averageDB: [Float]
    private var peakDB: [Float]

    init(channels: Int) {
        sums = Array(repeating: 0, count: channels)
        peaks = Array(repeating: 0, count: channels)
        averageDB = Array(repeating: -160, count: channels)
        peakDB = Array(repeating: -160, count: channels)
    }

    mutating func reset() {
        for c in sums.indices { sums[c] = 0; peaks[c] = 0; averageDB[c] = -160; peakDB[c] = -160 }
        count = 0
    }

    mutating func add(_ samples: UnsafePointer<Float>, frames: Int) {
        let channels = sums.count
        for c in 0..<channels {
            var sum = 0.0
            var peak = peaks[c]
            var p = samples + c
            for _ in 0..<frames {
                let x = p.pointee
                sum += Double(x) * Double(x)
                peak = max(peak, abs(x))
                p += channels
            }
            sums[c] += sum
            peaks[c] = peak
        }
        count += frames
    }

    mutating func update() {
        guard count > 0 else { return }
        for c in sums.indices {
            averageDB[c] = Self.decibels((sums[c] / Double(count)).squareRoot())
            peakDB[c] = Self.decibels(Double(peaks[c]))
            sums[c] = 0
            peaks[c] = 0
        }
        count = 0
    }

    func average(_ channel: Int) -> Float { averageDB.indices.contains(channel) ? averageDB[channel] : -160 }
    func peak(_ channel: Int) -> Float { peakDB.indices.contains(channel) ? peakDB[channel] : -160 }

    static func decibels(_ amplitude: Double) -> Float {
        amplitude > 1e-8 ? Float(max(-160, 20 * log10(amplitude))) : -160
    }
}
