// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCore

/// The FFmpeg state behind one ``AudioFile``: demuxer, decoder, the sample timeline and the
/// trimming, seeking and conversion logic. Not thread-safe: `AudioFile` serialises every call.
///
/// Timeline: every decoded frame gets a timestamp in samples. Position 0 is the first sample a
/// straight decode from the start yields (after the encoder delay the decoder removes), and
/// `length` is where a straight decode ends (after padding; capped by the container's own
/// duration, which cuts AAC end padding in MP4). Two ways to get exact timestamps:
/// - *trusted* containers (PCM in any container, FLAC with a known length, MP4/MOV): the
///   demuxer's timestamps are exact after a seek, so its seeks are used directly;
/// - all others (MP3, ADTS, Ogg, Matroska/WebM, …): the file is scanned once at open (demux only,
///   no decoding) into a packet index: byte position, exact sample timestamp from the summed packet
///   durations, and the skip/discard side data. Every packet read later gets its timestamp and
///   side data from the index, so decoding after a seek behaves exactly as a straight decode.
///
/// Canonical decoding (AAC, and Opus streams with SILK or hybrid packets): some decoders keep
/// state that a seek cannot rebuild exactly (AAC's PNS noise generator survives a flush and runs
/// on from the start of the stream; SILK's float LPC state never converges after a preroll). For
/// them the output is defined per *segment*: the stream is cut at raw timestamps
/// `segmentBase + s × segmentSamples`, and the packets of segment `s` are decoded by a fresh
/// decoder started `segmentPreroll` samples of packets before the segment (that output is
/// discarded). A straight read restarts the decoder that way at every boundary, and a seek starts
/// it for the segment holding the target, so both run the same computation and give the same bits.
///
/// Its parts, a type or a file each: the container side is an ``FFmpegDemuxer`` (its I/O an
/// ``AVIOBridge``, or FFmpeg's own for a path), the decoding side an ``FFmpegAudioCodec``, the
/// packet index a ``PacketIndex``; the decoding loop is in `FFmpegDecoder+Decoding.swift`, the
/// timeline (what the container says about it: ``GaplessTimeline``) and the trimming to it in
/// `FFmpegDecoder+Timeline.swift`, the seeking and the canonical segments in
/// `FFmpegDecoder+Seeking.swift`; decoded, trimmed samples wait in ``PendingFrames`` until they
/// are read. The state they share is this class's (internal, for those files; nothing else in
/// the module sets it).
final class FFmpegDecoder {
    let name: String
    /// The decoding side (declared before the demuxer: its context goes first, as it came last).
    let codec: FFmpegAudioCodec
    /// The container side.
    let demuxer: FFmpegDemuxer
    // The demuxer's and the codec's, kept here for the decoding loop.
    let stream: UnsafeMutablePointer<AVStream>
    let streamIndex: Int32
    let packet: UnsafeMutablePointer<AVPacket>
    let frame: UnsafeMutablePointer<AVFrame>
    /// The demuxer's name (`mov,mp4,m4a,3gp,3g2,mj2`, `flac`, …).
    let formatName: String
    let timeBase: AVRational
    let sampleRate: Int32
    let channels: Int
    let codecID: AVCodecID

    /// The format context (nil once closed).
    var fmt: UnsafeMutablePointer<AVFormatContext>? { demuxer.fmt }
    /// The custom I/O (bytes in memory, a network stream; nil for a file opened by path).
    var io: AVIOBridge? { demuxer.io }
    /// The open decoder context.
    var codecCtx: UnsafeMutablePointer<AVCodecContext>? { codec.context }

    // Packet index (indexed mode only).
    let indexed: Bool
    /// Streaming mode: no scan and no look at the end (the stream may be endless or still
    /// arriving); `length` is the container's own when it states one, else `Int64.max`; seeks are
    /// the demuxer's own (not sample-exact).
    let streaming: Bool
    var index = PacketIndex()
    let byteSeek: Bool

    // Timeline (set by `establishTimeline`).
    var startTs: Int64 = 0
    var length: Int64 = .max
    let headerFrames: Int64?
    var firstDts: Int64 = 0

    // Reading state.
    var pos: Int64 = 0
    let pending = PendingFrames()
    var inputEOF = false
    var decoderEOF = false
    var nextPacket = 0 // indexed mode: index of the next audio packet; -1 = to identify
    var packetCounter = 0
    var consecutiveErrors = 0
    var checkOvershoot = false
    var overshot = false
    var reportedTruncation = false

    // Canonical decoding (segmentSamples == 0: off; see the type's documentation).
    var segmentSamples: Int64 = 0
    var segmentPreroll: Int64 = 0
    var segmentBase: Int64 = 0
    var sawSILK = false
    /// The largest end timestamp (pts + duration, stream time base) of a packet read so far.
    var lastPacketEnd: Int64 = .min
    var segment = -1                // the segment being decoded; -1: not tracking boundaries
    var nextBoundary: Int64 = .max  // raw timestamp where the next segment starts
    var skipBefore: Int64 = .min    // packets before this raw timestamp are read but not decoded
    var discardBefore: Int64 = .min // decoded frames before this raw timestamp are preroll
    var checkFirstPacket = false    // the next packet is the first after positioning a segment
    var segmentSeekTarget: Int64 = 0 // trusted mode: the demuxer timestamp sought for it

    // Warnings, read from any thread.
    private let warningList = WarningList()

    static let nopts = tonearm_av_nopts_value()
    static let eagain = tonearm_averror_eagain()
    static let eof = tonearm_averror_eof()

    // MARK: Opening

    /// Takes `fmt` (and `io`): closed when the decoder goes, also when opening fails.
    init(name: String, fmt: UnsafeMutablePointer<AVFormatContext>, io: AVIOBridge?,
         streaming: Bool = false, audioStream: Int32 = -1) throws(TonearmError) {
        self.name = name
        self.streaming = streaming
        let demuxer = try FFmpegDemuxer(name: name, fmt: fmt, io: io, audioStream: audioStream)
        self.demuxer = demuxer
        stream = demuxer.stream
        streamIndex = demuxer.streamIndex
        packet = demuxer.packet
        timeBase = demuxer.timeBase
        formatName = demuxer.formatName
        let par = stream.pointee.codecpar!
        codecID = par.pointee.codec_id
        sampleRate = par.pointee.sample_rate
        channels = Int(par.pointee.ch_layout.nb_channels)
        let codecName = String(cString: avcodec_get_name(codecID))

        let isPCM = codecName.hasPrefix("pcm_")
        let trusted = (isPCM && stream.pointee.duration > 0)
            || (codecID == AV_CODEC_ID_FLAC && stream.pointee.duration > 0 && formatName == "flac")
            || formatName.hasPrefix("mov,")
            || (formatName == "caf" && stream.pointee.duration > 0)
        indexed = !trusted && !streaming
        byteSeek = ["mp3", "aac", "ac3", "eac3", "mp2", "dts"].contains(formatName)
            && (fmt.pointee.iformat.pointee.flags & AVFMT_NO_BYTE_SEEK) == 0

        // Prefer FFmpeg's float AAC decoder (the one the ffmpeg command uses) over aac_fixed.
        var decoder = demuxer.bestDecoder
        if codecID == AV_CODEC_ID_AAC, let floatAAC = avcodec_find_decoder_by_name("aac") { decoder = floatAAC }
        guard let found = decoder ?? avcodec_find_decoder(codecID) else {
            throw .unsupportedCodec(path: name, codec: codecName)
        }
        guard sampleRate > 0, (1...64).contains(channels) else {
            throw .decodeFailed(path: name, detail: "invalid audio parameters (\(sampleRate) Hz, \(channels) channels)")
        }
        codec = FFmpegAudioCodec(codec: found, parameters: par,
                                 packetTimeBase: indexed ? AVRational(num: 1, den: sampleRate) : timeBase)
        frame = codec.frame
        headerFrames = stream.pointee.duration > 0
            ? av_rescale_q(stream.pointee.duration, timeBase, AVRational(num: 1, den: sampleRate)) : nil
        let openResult = codec.open()
        if openResult == FFmpegAudioCodec.configFailed {
            throw .decodeFailed(path: name, detail: "cannot configure the \(codecName) decoder")
        }
        if openResult < 0 {
            throw .unsupportedCodec(path: name, codec: "\(codecName) (\(Self.errorString(openResult)))")
        }
        demuxer.discardOtherStreams()

        if indexed {
            let scan = try demuxer.scan(name: name, sampleRate: sampleRate, codecID: codecID,
                                        fallbackDuration: Int64(max(0, codec.frameSize)),
                                        hashed: !byteSeek) // byte seeks land on known packets
            index = scan.index
            firstDts = scan.firstDts
            sawSILK = scan.sawSILK
        } else {
            firstDts = demuxer.firstAudioTimestamp()
        }
        configureSegments()
        try establishTimeline()
    }

    static func errorString(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 128)
        tonearm_av_strerror(code, &buf, 128)
        return stringFromCBuffer(buf)
    }

    func toSamples(_ ts: Int64) -> Int64 {
        demuxer.toSamples(ts, sampleRate: sampleRate)
    }

    func fromSamples(_ s: Int64) -> Int64 {
        demuxer.fromSamples(s, sampleRate: sampleRate)
    }

    // MARK: Warnings

    func addWarning(_ w: AudioWarning) { warningList.add(w) }

    func takeWarnings() -> [AudioWarning] { warningList.take() }

    // MARK: Reading

    /// Reads up to `count` frames into planar channel pointers at `offset`; returns frames read.
    func read(into out: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, count: Int) throws(TonearmError) -> Int {
        var done = 0
        while done < count {
            if pending.count == 0 { guard try fillPending() else { break } }
            let n = pending.take(into: out, offset: offset + done, frames: count - done)
            pos += Int64(n); done += n
        }
        return done
    }

    /// Reads up to `count` frames interleaved into `out`; returns frames read.
    func readInterleaved(into out: UnsafeMutablePointer<Float>, count: Int) throws(TonearmError) -> Int {
        var done = 0
        while done < count {
            if pending.count == 0 { guard try fillPending() else { break } }
            let n = pending.takeInterleaved(into: out + done * channels, frames: count - done)
            pos += Int64(n); done += n
        }
        return done
    }
}

/// A Swift string from a NUL-terminated C buffer.
func stringFromCBuffer(_ buf: [CChar]) -> String {
    let bytes = buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
