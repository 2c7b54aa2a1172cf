// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// Gapless playback heard for real: one continuous recording split at an arbitrary sample, each
/// half encoded on its own, played by a ``QueuePlayer`` through a private PulseAudio server's null
/// sink while its monitor is recorded. The recording must be the unbroken original: lined up
/// with it the same way after the join and at the end as before (a gap or an overlap at the join
/// would shift everything after it), ending where it ends (the tail is not cut), with no click at
/// the join, and sounding throughout (no dropout).
///
/// The test loads a 44.1 kHz null sink (the queue's rate) and records its monitor at 44.1 kHz, so
/// nothing is resampled: the recording is compared with the decoded halves back to back (to
/// 16-bit precision, about −88 dB), and lags are measured to a fraction of a sample; a gap or
/// overlap of one sample shifts the lag by 1, the checks allow 0.5.
///
/// Real time: each format plays for 4 s. Underruns reported by PulseAudio are counted: a starved
/// take is not judged (a shifted timeline is not a gapless bug) but taken again, and the test
/// fails by name when every take was starved (``firstUnstarvedTake``).
@Suite(.serialized) struct GaplessPulseTests {
    static let recordingRate = 44100.0
    /// A null sink of the queue's own rate, loaded for this test.
    static let sinkName = "gapless44"
    static let sourceRate = 44100
    static let seconds = 4.0
    static let join = 100_003
    /// How late the recorded sound may start. PulseAudio's monitor loses the first milliseconds
    /// of a stream that joins a running sink (the sink rewinds what it had rendered ahead to mix
    /// the new stream in, and the silence already passed to the recorder stays): in this set-up
    /// `paplay` of a 1 s tone was heard 11 to 19 ms short at the start, its end intact; the loss
    /// is at most what the sink renders ahead, its 20 ms latency set by the recorder. So the start
    /// is only bounded here (by that latency and 10 ms more); the end, the lag across the join and
    /// the lag at the end are exact.
    static let monitorStartLoss = 0.030
    /// How far into the recorded sound a dip is taken for the monitor's start artifact and taken
    /// again (see ``startArtifact``).
    static let startDipWindow = 0.060
    /// Where sound starts and ends: the first and last sample above this (the tones peak at 0.4).
    static let threshold: Float = 0.02

    /// A lossless and a lossy format through the sound server: FLAC (the original itself) and
    /// AAC in MP4 (the hardest join: priming and padding from the edit list). Each format's own
    /// join — MP3's LAME header, WAV, Vorbis, Opus — is checked sample for sample by the offline
    /// ``GaplessTests``; what happens after decoding, which this test hears, is the same for
    /// every format (float frames into the queue's render path), so the other formats are not
    /// played in real time again (they cost 8 s each of the CI run).
    static let formats: [(ext: String, args: [String])] = [
        ("flac", ["-c:a", "flac", "-sample_fmt", "s32"]),
        ("m4a", ["-c:a", "aac", "-b:a", "256k"]),
    ]

    final class Counter: Sendable {
        let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// The driver the queue made, kept to read its underrun count afterwards.
    final class DriverBox: Sendable {
        let driver = Mutex<PulseOutput?>(nil)
    }

    @Test(arguments: formats.indices)
    func twoHalvesAreHeardAsTheUnbrokenOriginal(_ index: Int) async throws {
        try await play(index, steady: false)
    }

    /// The join with the steady buffer of media playback (``OutputBuffering/steady``, the queue's
    /// default): it grows from 75 ms to 250 ms a second into the play, before the join at 2.27 s;
    /// the growth must neither break the join nor drop or shift anything (FLAC: the original).
    @Test func theJoinIsExactAfterTheSteadyBufferGrew() async throws {
        try await play(0, steady: true)
    }

    func play(_ index: Int, steady: Bool) async throws {
        let format = Self.formats[index]
        let ext = format.ext
        let dir = try TempDir("gapless-pulse")
        defer { dir.remove() }

        // The recording, its halves, and the reference at the sink's rate.
        let whole = dir.file("whole.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i",
                                   "aevalsrc=exprs=\(GaplessTests.expressions):s=\(Self.sourceRate):d=\(Self.seconds)",
                                   "-c:a", "pcm_f32le", whole])
        let first = dir.file("a.\(ext)"), second = dir.file("b.\(ext)")
        try await Fixtures.ffmpeg(["-i", whole, "-af", "atrim=end_sample=\(Self.join)"] + format.args + [first])
        try await Fixtures.ffmpeg(["-i", whole, "-af", "atrim=start_sample=\(Self.join),asetpts=N/SR/TB"] + format.args + [second])
        // What the queue should play: the decoded halves back to back (for FLAC the original
        // itself; for MP3 the codec's error near the join would hide a click), as long as the
        // original.
        let halves = [try decode(first), try decode(second)]
        let originalFrames = try readWAV(whole).frameCount
        #expect(halves[0][0].count == Self.join && halves[0][0].count + halves[1][0].count == originalFrames,
                "\(ext): the halves decode to \(halves[0][0].count) + \(halves[1][0].count) frames, not \(Self.join) + \(originalFrames - Self.join)")
        let reference = (channels: [halves[0][0] + halves[1][0], halves[0][1] + halves[1][1]], sampleRate: Double(Self.sourceRate))

        // Play the queue through the private server while recording its monitor.
        // One take: the queue played through a private server while its monitor is recorded;
        // taken again when the server starved the stream (see firstUnstarvedTake).
        struct Take { var heardPath: String, seen: [QueuePlayerEvent], sinkSpec: String, playTime: Duration, settled: Bool, didGrow: Bool
                     var coarseLags: [Int: Int] }
        let takes = 3
        let (chosen, counts) = try await firstUnstarvedTake("gapless \(ext)", attempts: takes) { attempt in
            let server = try PrivatePulseServer()
            defer { server.stop() }
            let heardPath = dir.file("heard-\(attempt).wav")
            // The server's own sink runs at 48 kHz; a 44.1 kHz stream made PulseAudio either resample
            // it or (now and then) switch that sink to 44.1 kHz, and then the 48 kHz recording was
            // resampled with an arbitrary phase. A sink at the queue's rate, recorded at that rate,
            // involves no resampling at all: the recording is the played samples to 16 bits.
            try server.pactl("load-module", "module-null-sink", "sink_name=\(Self.sinkName)", "format=float32le",
                             "rate=\(Self.sourceRate)", "channels=2")
            let recorder = try ChildProcess(["parecord", "-v", "-d", "\(Self.sinkName).monitor", "--latency-msec=20",
                                             "--format=s16le", "--rate=\(Self.sourceRate)", "--channels=2",
                                             "--file-format=wav", heardPath],
                                            environment: server.environment.merging(["LC_ALL": "C"]) { $1 },
                                            captureStandardError: true)
            defer { recorder.terminate(SIGINT) }
            try #require(recorder.waitForStandardError(containing: "Stream successfully created.", timeout: 5),
                         "\(ext): parecord did not connect: \(recorder.standardErrorText.suffix(2000))")
            // A null sink with a new recorder first renders one long block (nothing reaches the
            // recorder meanwhile); a stream that started then would lose its start in the recording.
            // The recorder receiving 200 ms of silence shows that the sink runs with small blocks.
            let flowing = try waitForRecording(heardPath, atLeast: Int(0.2 * Self.recordingRate),
                                               endingInSilence: Int(0.1 * Self.recordingRate), timeout: 5)
            try #require(flowing, "\(ext): the recorder received no audio from the monitor within 5 s")
            let serverString = server.serverString
            let box = DriverBox()
            let tap = Mutex<TappedOutput?>(nil)
            let q = QueuePlayer(items: [first, second].map { QueueItem(path: $0) }, output: {
                let d = steady
                    ? PulseOutput(server: serverString, streamName: "gapless-\(ext)", device: Self.sinkName,
                                  targetLatency: PulseOutput.steadyLatency, startLatency: PulseOutput.shortLatency, growAfter: 1)
                    : PulseOutput(server: serverString, streamName: "gapless-\(ext)", device: Self.sinkName)
                box.driver.withLock { $0 = d }
                guard steady else { return d }
                let tapped = TappedOutput(d)
                tap.withLock { $0 = tapped }
                return tapped
            })
            defer { q.stop() }
            let events = q.events
            let collector = eventsUntilFinished(events)
            let clock = ContinuousClock()
            let started = clock.now
            q.play()
            // The sink's format while the stream plays (the stream is connected when play returns).
            let sinkSpec = (try? server.pactl("list", "short", "sinks").stdout)?
                .split(separator: "\n").first { $0.contains(Self.sinkName) }?
                .split(separator: "\t").dropFirst(3).first.map(String.init) ?? "?"
            let seen = try await finished(collector, timeout: Self.seconds + 20)
            let playTime = clock.now - started
            let underruns = box.driver.withLock { $0?.underrunCount } ?? -1
            var didGrow = true
            if steady {
                let tapped = try #require(tap.withLock { $0 })
                didGrow = await tapped.seen.wait(timeout: 2, until: tapped.grew(beyond: PulseOutput.shortLatency))
                if !didGrow { print("\(ext): events of the steady output: \(tapped.seen.value)") }
            }

            // `.finished` comes once the stream has drained; the monitor's last fragment reaches the
            // recorder a little later. Wait (woken by each write to the file) until the recording holds
            // at least the whole sound and then 100 ms of silence, so that its end is not cut here.
            // Not itself a check: parecord writes what it has when it stops, and the end of the sound
            // is checked to the sample below (a clean clone's run once saw no write for 5 s under
            // load, the end then intact).
            let settled = try waitForRecording(heardPath, atLeast: Int(Self.seconds * Self.recordingRate),
                                               endingInSilence: Int(0.1 * Self.recordingRate), timeout: 10)
            recorder.terminate(SIGINT)
            // The monitor's rewind can also leave a start that is not a clean burst: a clean
            // clone's run once heard the first 264 samples early and a dip 40 ms in, the rest of
            // the play exact. A take whose sound starts before its place is taken again like a
            // starved one (counted with its underruns; a player that always starts so still fails,
            // judged on its last take).
            let (artifact, coarseLags) = try startArtifact(heardPath, reference: reference)
            if let artifact { print("\(ext): take \(attempt): \(artifact)") }
            return (Take(heardPath: heardPath, seen: seen, sinkSpec: sinkSpec, playTime: playTime, settled: settled,
                         didGrow: didGrow, coarseLags: coarseLags), underruns + (artifact == nil || attempt == takes ? 0 : 1))
        }
        let take = try #require(chosen, "\(ext): PulseAudio reported underruns in every take (\(counts)) — the stream was starved (a loaded machine?), so dropouts and shifts in the recording would not be the queue's")
        let (heardPath, seen, sinkSpec, playTime, settled) = (take.heardPath, take.seen, take.sinkSpec, take.playTime, take.settled)
        #expect(take.didGrow, "\(ext): the steady buffer did not grow during the play")

        let problems = seen.filter {
            switch $0 {
            case .itemFailed, .outputLost: true
            default: false
            }
        }
        #expect(problems.isEmpty, "\(ext): \(problems)")

        let heard = try readWAV(heardPath)
        let issues = Counter()
        /// `#expect`, counting failures (to keep the recording for a look).
        func check(_ ok: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
            if !ok {
                issues.add()
                Issue.record(Comment(rawValue: message()), sourceLocation: sourceLocation)
            }
        }
        #expect(heard.sampleRate == Self.recordingRate && heard.channelCount == 2)
        let rate = heard.sampleRate
        #expect(sinkSpec.contains("\(Self.sourceRate)Hz"), "\(ext): the sink ran at \(sinkSpec)")
        var report = "\(ext): sink \(sinkSpec) while playing, played in \(playTime), underruns by take \(counts)"
            + (settled ? "" : "; the recording had not ended in silence 10 s after .finished")

        for c in 0..<2 {
            let rec = heard.channels[c], ref = reference.channels[c]
            guard let (recSpan, burst) = recordedSpan(rec, rate: rate), let refSpan = soundingSpan(ref) else {
                Issue.record("\(ext) channel \(c): nothing was heard")
                return
            }
            let recSeconds = Double(recSpan.count) / rate, refSeconds = Double(refSpan.count) / rate
            // (2) Alignment: where the recording lines up with the original (found over the
            // whole first 0.5 s, so that a cut start does not mislead it), refined early in the
            // tone, right after the join and at the end: the lag must hold.
            let coarse = take.coarseLags[recSpan.lowerBound + 4800]
                ?? coarseLag(heard.channels, reference.channels, at: recSpan.lowerBound + 4800)
            let early = (refSpan.lowerBound + 2000)..<(refSpan.lowerBound + 22_000)
            let afterJoin = (Self.join + 2048)..<(Self.join + 20_000)
            let late = (refSpan.upperBound - 22_000)..<(refSpan.upperBound - 2000)
            let before = bestLag(rec, ref, early, around: coarse)
            let after = bestLag(rec, ref, afterJoin, around: coarse)
            let end = bestLag(rec, ref, late, around: coarse)
            // Where the original's first and last sounding samples should be heard at that lag.
            let startMissing = Double(recSpan.lowerBound - refSpan.lowerBound) - before
            let endMissing = before - Double(recSpan.upperBound - refSpan.upperBound)
            // (1) Length. The end is heard exactly where the original's end falls at that lag
            // (the tail is not cut, nothing is added). The start may be late by up to
            // ``monitorStartLoss``: the monitor recording itself loses the first milliseconds of
            // a stream that joins a running sink (see there); it must never be early.
            check(abs(endMissing) < 0.002 * rate,
                    "\(ext) channel \(c): the sound ends \(endMissing / rate * 1000) ms before the original's end (lag \(before))")
            check(startMissing > -0.002 * rate && startMissing < Self.monitorStartLoss * rate,
                    "\(ext) channel \(c): the sound starts \(startMissing / rate * 1000) ms after the original's start (lag \(before))")
            check(recSeconds > refSeconds - Self.monitorStartLoss - 0.002 && recSeconds < refSeconds + 0.002,
                    "\(ext) channel \(c): heard \(recSeconds) s, the original is \(refSeconds) s (\(originalFrames) frames at 44.1 kHz)")
            check(abs(after - before) < 0.5,
                    "\(ext) channel \(c): lag \(before) before the join, \(after) after it (a gap or overlap of \((after - before) * 44100 / rate) samples at 44.1 kHz)")
            check(abs(end - before) < 0.5, "\(ext) channel \(c): lag \(before) early, \(end) at the end")

            // No click at the join: a one-sample gap or repeat gives about −24 dB here; without
            // one, what is left is the recording's 16-bit rounding (about −88 dB).
            let lag = Int(before.rounded())
            let j = Self.join
            let atJoin = errorDB(rec, ref, (j - 2048)..<(j + 2048), lag: lag)
            let elsewhere = errorDB(rec, ref, (j - 40_000)..<(j - 35_904), lag: lag)
            check(atJoin < -40, "\(ext) channel \(c): error \(atJoin) dB at the join, \(elsewhere) dB elsewhere")

            // (3) No dropout: every 10 ms block of the sounding span is at least half as loud as
            // the original.
            let expected = rms(ref[refSpan])
            let block = Int(rate / 100)
            var quiet: [(seconds: Double, rms: Float)] = []
            var i = recSpan.lowerBound
            while i + block <= recSpan.upperBound {
                let level = rms(rec[i..<(i + block)])
                if level < expected / 2 { quiet.append((Double(i - recSpan.lowerBound) / rate, level)) }
                i += block
            }
            check(quiet.isEmpty, "\(ext) channel \(c): \(quiet.count) blocks below half the level \(expected), first at \(quiet.prefix(5)) s into the sound; underruns by take \(counts)")

            if burst > 0 { report += String(format: "\n  channel %ld: a burst of %.1f ms before the stream, then silence (the monitor's rewind), left out", c, Double(burst) / rate * 1000) }
            report += String(format: "\n  channel %ld: heard %.5f s (original %.5f s, %+.2f ms), start %+.1f samples late, end %+.1f samples early; lag %.3f before the join, %.3f after, %.3f at the end; error at the join %.1f dB, elsewhere %.1f dB",
                             c, recSeconds, refSeconds, (recSeconds - refSeconds) * 1000, startMissing, endMissing, before, after, end, atJoin, elsewhere)
        }
        print(report)
        if issues.value > 0 {
            let kept = FileManager.default.temporaryDirectory.appendingPathComponent("gapless-pulse-\(ext)-heard.wav").path
            try? FileManager.default.removeItem(atPath: kept)
            try? FileManager.default.copyItem(atPath: heardPath, toPath: kept)
            print("\(ext): the recording is kept at \(kept) (expected: the decoded halves back to back)")
        }
    }

    // MARK: Measures

    func decode(_ path: String) throws -> [[Float]] {
        let f = try AudioFile(path: path)
        let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: Int(f.length))!
        try f.read(into: buf)
        return buf.channelArrays()
    }

    /// From the first to the last sample whose magnitude exceeds ``threshold``.
    /// The sounding span of a recording, leaving out a burst at its very start that the
    /// monitor can add: when a stream joins the running sink, the sink rewinds what it had
    /// rendered ahead, but what the monitor had already passed on stays — seen once in a clean
    /// clone's run as 18 ms of the tone's start, 30 ms of silence, then the whole stream at its
    /// place. A burst shorter than ``monitorStartLoss`` followed by at least 10 ms of silence
    /// (a tone is never that quiet for 441 samples) is that; its length is returned to report.
    func recordedSpan(_ x: [Float], rate: Double) -> (Range<Int>, burst: Int)? {
        guard let span = soundingSpan(x) else { return nil }
        let quietNeeded = Int(0.010 * rate), burstLimit = Int(Self.monitorStartLoss * rate)
        var quiet = 0
        var i = span.lowerBound
        while i < min(span.upperBound, span.lowerBound + burstLimit + quietNeeded * 4) {
            if abs(x[i]) > Self.threshold {
                if quiet >= quietNeeded && i - quiet - span.lowerBound < burstLimit {
                    return (i..<span.upperBound, i - quiet - span.lowerBound)
                }
                quiet = 0
            } else {
                quiet += 1
            }
            i += 1
        }
        return (span, 0)
    }

    /// Whether the recording's sound starts more than 2 ms before its place (the place found by
    /// lining the recording up with `reference` early in the tone), in either channel: the
    /// monitor's rewind artifact when it is not a clean burst (see ``recordedSpan``). `nil` when
    /// the start is in place; otherwise what was seen, for the log.
    /// Also returns each channel's coarse lag (keyed by where its sound starts), which the checks
    /// of the chosen take reuse: it is the costly part of lining up.
    func startArtifact(_ heardPath: String, reference: (channels: [[Float]], sampleRate: Double))
        throws -> (artifact: String?, coarseLags: [Int: Int]) {
        let heard = try readWAV(heardPath)
        guard heard.channelCount == 2 else { return (nil, [:]) }
        let rate = heard.sampleRate
        var lags: [Int: Int] = [:]
        for c in 0..<2 {
            let rec = heard.channels[c], ref = reference.channels[c]
            guard let (recSpan, _) = recordedSpan(rec, rate: rate), let refSpan = soundingSpan(ref),
                  recSpan.lowerBound + 4800 + 4096 <= rec.count else { continue }
            let start = recSpan.lowerBound + 4800
            let coarse = lags[start] ?? coarseLag(heard.channels, reference.channels, at: start)
            lags[start] = coarse
            let early = (refSpan.lowerBound + 2000)..<(refSpan.lowerBound + 22_000)
            let lag = bestLag(rec, ref, early, around: coarse)
            let startMissing = Double(recSpan.lowerBound - refSpan.lowerBound) - lag
            if startMissing <= -0.002 * rate {
                let seen = String(format: "channel %ld's sound starts %.1f ms before its place (the monitor's start artifact?): taken again",
                                  c, -startMissing / rate * 1000)
                return (seen, lags)
            }
            // The same rewind can leave the start late (within ``monitorStartLoss``) with a dip
            // after it: a clean clone's CI run heard the start 238 samples late and one 10 ms block
            // at a third of the level 30 ms in, the rest exact and no underrun. A dip within the
            // first ``startDipWindow`` of the sound is taken again; a later one is judged.
            let expected = rms(ref[refSpan]), block = Int(rate / 100)
            var i = recSpan.lowerBound
            while i + block <= min(recSpan.upperBound, recSpan.lowerBound + Int(Self.startDipWindow * rate)) {
                if rms(rec[i..<(i + block)]) < expected / 2 {
                    let seen = String(format: "channel %ld's sound dips %.1f ms after its start (the monitor's start artifact?): taken again",
                                      c, Double(i - recSpan.lowerBound) / rate * 1000)
                    return (seen, lags)
                }
                i += block
            }
        }
        return (nil, lags)
    }

    func soundingSpan(_ x: [Float]) -> Range<Int>? {
        guard let a = x.firstIndex(where: { abs($0) > Self.threshold }),
              let b = x.lastIndex(where: { abs($0) > Self.threshold }) else { return nil }
        return a..<(b + 1)
    }

    /// The lag (recording index minus reference index, within `around ± maxLag`) at which `rec`
    /// best matches `ref` over `range` (reference indices), refined to a fraction of a sample by
    /// a parabola through the squared errors at the best whole lag and its neighbours.
    func bestLag(_ rec: [Float], _ ref: [Float], _ range: Range<Int>, around: Int, maxLag: Int = 8) -> Double {
        func error(_ lag: Int) -> Double {
            var e = 0.0
            for i in range {
                let k = i + lag
                let r: Float = k >= 0 && k < rec.count ? rec[k] : 0
                let d = Double(r - ref[i])
                e += d * d
            }
            return e
        }
        let lags = (around - maxLag)...(around + maxLag)
        let errors = lags.map(error)
        let m = errors.indices.min { errors[$0] < errors[$1] }!
        guard m > 0, m < errors.count - 1 else { return Double(lags.lowerBound + m) }
        let (l, c, r) = (errors[m - 1], errors[m], errors[m + 1])
        let curvature = l - 2 * c + r
        let delta = curvature > 0 ? (l - r) / (2 * curvature) : 0
        return Double(lags.lowerBound + m) + delta
    }

    /// The whole lag (recording index minus reference index) at which the 4096 recorded frames
    /// from `at` best match the reference (both channels), searched over the reference's first
    /// 0.45 s. The right tones repeat every 0.5 s; within that, the best false match (both
    /// channels) is about −24 dB, the true one about −88 dB.
    func coarseLag(_ rec: [[Float]], _ ref: [[Float]], at start: Int, window: Int = 4096) -> Int {
        let span = min(Int(0.45 * Self.recordingRate), ref[0].count - window)
        guard start + window <= rec[0].count, span > 0 else { return 0 }
        var errors = [Float](repeating: 0, count: span)
        for c in 0..<2 {
            rec[c].withUnsafeBufferPointer { r in
                ref[c].withUnsafeBufferPointer { o in
                    for offset in 0..<span {
                        var e: Float = 0
                        for i in 0..<window {
                            let d = r[start + i] - o[offset + i]
                            e += d * d
                        }
                        errors[offset] += e
                    }
                }
            }
        }
        let best = errors.indices.min { errors[$0] < errors[$1] }!
        return start - best
    }

    /// RMS of `rec[i + lag] − ref[i]` over `range`, relative to the RMS of `ref` there, in dB.
    func errorDB(_ rec: [Float], _ ref: [Float], _ range: Range<Int>, lag: Int) -> Double {
        var e = 0.0, s = 0.0
        for i in range {
            let k = i + lag
            let r: Float = k >= 0 && k < rec.count ? rec[k] : 0
            e += Double(r - ref[i]) * Double(r - ref[i])
            s += Double(ref[i]) * Double(ref[i])
        }
        return 10 * log10(max(e, 1e-30) / max(s, 1e-30))
    }

    // MARK: Waiting for the recorder

    /// Waits until the 16-bit stereo WAV that `parecord` is writing at `path` holds at least
    /// `frames` frames and its last `silence` frames are silent. Woken by inotify on each write
    /// to the file; `timeout` is only a deadline. Returns whether the condition was met.
    func waitForRecording(_ path: String, atLeast frames: Int, endingInSilence silence: Int, timeout: Double) throws -> Bool {
        let fd = inotify_init1(Int32(O_CLOEXEC))
        guard fd >= 0 else { throw TestSupportError("inotify_init1: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard inotify_add_watch(fd, path, UInt32(IN_MODIFY)) >= 0 else {
            throw TestSupportError("inotify_add_watch \(path): \(String(cString: strerror(errno)))")
        }
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if try recordingEndsInSilence(path, atLeast: frames, silence: silence) { return true }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return false }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let n = poll(&pfd, 1, Int32(min(left * 1000 + 1, 60_000)))
            if n < 0 && errno != EINTR { throw TestSupportError("poll: \(String(cString: strerror(errno)))") }
            if n > 0 { _ = read(fd, &buffer, buffer.count) }  // consume the events
        }
    }

    /// Whether the 16-bit stereo WAV being written at `path` has at least `frames` frames of data
    /// and its last `silence` frames are all below ``threshold``.
    func recordingEndsInSilence(_ path: String, atLeast frames: Int, silence: Int) throws -> Bool {
        guard let h = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? h.close() }
        let size = Int(try h.seekToEnd())
        try h.seek(toOffset: 0)
        let head = [UInt8](try h.read(upToCount: 4096) ?? Data())
        // The data chunk's start (its size field is not final while parecord writes).
        var offset = 12, dataStart: Int?
        while offset + 8 <= head.count {
            let id = String(decoding: head[offset..<offset + 4], as: UTF8.self)
            if id == "data" { dataStart = offset + 8; break }
            let chunk = Int(head[offset + 4]) | Int(head[offset + 5]) << 8 | Int(head[offset + 6]) << 16 | Int(head[offset + 7]) << 24
            offset += 8 + chunk + (chunk & 1)
        }
        guard let dataStart else { return false }
        let available = (size - dataStart) / 4
        guard available >= frames, available >= silence else { return false }
        try h.seek(toOffset: UInt64(dataStart + (available - silence) * 4))
        let tail = [UInt8](try h.read(upToCount: silence * 4) ?? Data())
        guard tail.count == silence * 4 else { return false }
        let limit = Int(Self.threshold * 32768)
        for k in stride(from: 0, to: tail.count, by: 2) {
            let v = Int(Int16(bitPattern: UInt16(tail[k]) | UInt16(tail[k + 1]) << 8))
            if abs(v) > limit { return false }
        }
        return true
    }
}

/// ``GaplessPulseTests``' retake rule for the monitor's start artifact, checked without a server
/// (apart from that suite, so that it runs with the offline tests).
@Suite struct GaplessArtifactTests {
    /// The retake rule's own check, on made-up recordings (no server): a tone heard at its
    /// place is not an artifact; the same with its first 40 ms heard 264 samples early and a dip
    /// after them (the start seen once in a clean clone's run) is one.
    @Test func aStartBeforeItsPlaceIsTakenForTheMonitorsArtifact() throws {
        let pulse = GaplessPulseTests()
        let dir = try TempDir("gapless-artifact")
        defer { dir.remove() }
        let rate = Int(GaplessPulseTests.recordingRate), lag = 12_000
        let tone = (0..<rate).map { i in
            0.2 * Float(sin(2 * Double.pi * 220 * Double(i) / Double(rate)) + sin(2 * Double.pi * 331.7 * Double(i) / Double(rate)))
        }
        let reference = (channels: [tone, tone], sampleRate: GaplessPulseTests.recordingRate)
        var clean = [Float](repeating: 0, count: lag + rate + 4410)
        clean.replaceSubrange(lag..<(lag + rate), with: tone)
        // The first 40 ms heard 264 samples early, then 5 ms at a tenth of the level (not the
        // silence of a clean burst, which ``recordedSpan`` leaves out), then the tone in place.
        var early = clean
        early.replaceSubrange((lag - 264)..<(lag + 1500), with: tone[0..<1764])
        for i in (lag + 1500)..<(lag + 1720) { early[i] *= 0.1 }
        let cleanPath = dir.file("clean.wav"), earlyPath = dir.file("early.wav")
        try writeWAV16(cleanPath, channels: [clean, clean], sampleRate: rate)
        try writeWAV16(earlyPath, channels: [early, early], sampleRate: rate)
        #expect(try pulse.startArtifact(cleanPath, reference: reference).artifact == nil)
        let seen = try pulse.startArtifact(earlyPath, reference: reference).artifact
        #expect(seen?.contains("6.0 ms before its place") == true, "\(seen ?? "nil")")
        // Heard 238 samples late, with a 20 ms dip 30 ms in (the CI run's start): taken again;
        // the same dip half a second in is not the start's artifact (the checks judge it).
        var late = clean
        for i in lag..<(lag + 238) { late[i] = 0 }
        for i in (lag + 1323)..<(lag + 2205) { late[i] *= 0.2 }
        var laterDip = clean
        for i in (lag + 22_050)..<(lag + 22_932) { laterDip[i] *= 0.2 }
        let latePath = dir.file("late.wav"), laterDipPath = dir.file("later-dip.wav")
        try writeWAV16(latePath, channels: [late, late], sampleRate: rate)
        try writeWAV16(laterDipPath, channels: [laterDip, laterDip], sampleRate: rate)
        let lateSeen = try pulse.startArtifact(latePath, reference: reference).artifact
        #expect(lateSeen?.contains("dips") == true, "\(lateSeen ?? "nil")")
        #expect(try pulse.startArtifact(laterDipPath, reference: reference).artifact == nil)
    }
}
