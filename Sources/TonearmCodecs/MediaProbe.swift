// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import Synchronization
import TonearmCore

/// What a media file holds, read from its headers alone: the counterpart of ``AudioFile``'s
/// ``AudioFile/fileFormat``, ``AudioFile/duration`` and ``AudioFile/metadata`` for a library
/// scanner, at a small fraction of the cost (no decoder is opened, nothing is decoded).
///
/// How: the demuxer is chosen from the file's first bytes (`fLaC`, `OggS`, `ID3`, an MPEG audio
/// frame, RIFF/WAVE, FORM/AIFF, `ftyp`, EBML, …) instead of running every demuxer's probe
/// (FFmpeg's normal probing is kept for anything else), reads go through a small `AVIOContext`
/// over the file, and what the header leaves out is read from the bytes by this type: FLAC's
/// STREAMINFO, an MP3's first frame header and its Xing/Info and LAME tag, Opus's pre-skip, an
/// ALAC cookie's bit depth. Only when that still leaves the sample rate, the channels or the
/// duration unknown (ADTS AAC, raw formats, CAF without a packet table) does it fall back to
/// `avformat_find_stream_info`, as ``AudioFile`` always does.
///
/// The fields are those ``AudioFile`` gives, computed the same way (the same ``SourceFormat``,
/// the same ``MetadataReader``), with one difference: the duration is what the headers state.
/// Exact (to the sample) for FLAC, WAV, AIFF, WavPack, MP4/M4A, Ogg Vorbis and Opus, and MP3
/// with a Xing/Info and LAME tag; within a packet for Matroska/WebM (millisecond timestamps);
/// estimated from the bit rate and the file size for MP3 without a Xing or VBRI frame (as other
/// tag readers do) and for ADTS. A file whose header promises more audio than it holds
/// (truncated) reports the promised length; one whose packets are damaged is not detected (it
/// is not decoded).
///
/// Errors: as ``AudioFile/init(path:)``: `fileNotFound`, `notReadable`, `isDirectory`,
/// `emptyFile`, `notMediaFile`, `noAudioTrack`, `unsupportedCodec`, `decodeFailed`, each naming
/// the file. Threading: a value; `init` may run on any thread, concurrently.
public struct MediaProbe: Sendable {
    /// The path given.
    public let path: String
    /// What the file stores: container, codec, rate, channels, bit depth, bit rate, layout.
    public let fileFormat: SourceFormat
    /// Seconds of audio as the headers state it (see the type's description); nil when nothing
    /// states it (then only decoding the file can tell: ``AudioFile``).
    public let duration: Double?
    /// Tags and cover art, as ``AudioFile/metadata``.
    public let metadata: AudioMetadata
    /// Whether the header-only path was enough (false: `avformat_find_stream_info` was needed).
    public let headerOnly: Bool

    /// Reads the file at `path`.
    public init(path: String) throws(TonearmError) {
        let (fd, size) = try AudioFile.openChecked(path)
        try self.init(path: path, file: TagFileReader(fd: fd, size: Int(size), owned: true))
    }

    /// Reads the file at `path`, already open as `fd` (not closed here) with `size` bytes, its
    /// first bytes `head` and its last bytes `tail` already read (a caller that hashed them):
    /// those are not read again.
    package init(path: String, fd: Int32, size: Int64, head: [UInt8], tail: [UInt8]) throws(TonearmError) {
        if size <= 0 { throw .emptyFile(path: path) }
        try self.init(path: path, file: TagFileReader(fd: fd, size: Int(size), owned: false, head: head, tail: tail))
    }

    /// Reads the file at `path` through FFmpeg alone, also where a native reader would read it
    /// (FLAC: ``FLACHeader``): for tests that hold the two ways side by side.
    package init(ffmpegOnlyPath path: String) throws(TonearmError) {
        let (fd, size) = try AudioFile.openChecked(path)
        try self.init(path: path, file: TagFileReader(fd: fd, size: Int(size), owned: true), native: false)
    }

    private init(path: String, file: TagFileReader, native: Bool = true) throws(TonearmError) {
        if native, let flac = FLACHeader(file) {
            // Read without FFmpeg, as FFmpeg would read it (FLACHeader).
            self.init(path: path, fileFormat: flac.sourceFormat(fileSize: file.size),
                      duration: Double(flac.totalFrames) / Double(flac.sampleRate),
                      metadata: flac.metadata(file: file), headerOnly: true)
            return
        }
        tonearm_av_log_quiet()
        let head = file.read(at: 0, count: min(file.size, Self.headSize)) ?? []
        switch ContainerSniffer.sniff(head: head, file: file) {
        case .image:
            // An image: FFmpeg would open it as a picture stream without sound.
            throw .noAudioTrack(path: path)
        case .known(let name):
            if let opened = try? Self.open(file: file, path: path, format: Self.inputFormats.named[name], head: head) {
                self = try Self.probe(opened, file: file, path: path, head: head, sniffed: true)
                return
            }
            // The bytes fooled the sniffer (or the header is damaged): let FFmpeg probe.
            fallthrough
        case .unknown:
            let opened = try Self.open(file: file, path: path, format: nil, head: head)
            self = try Self.probe(opened, file: file, path: path, head: head, sniffed: false)
        }
    }

    private init(path: String, fileFormat: SourceFormat, duration: Double?, metadata: AudioMetadata, headerOnly: Bool) {
        self.path = path
        self.fileFormat = fileFormat
        self.duration = duration
        self.metadata = metadata
        self.headerOnly = headerOnly
    }

    /// Bytes read at once from the start (sniffing, and the text check of a failed open).
    static let headSize = 4096
    /// The custom I/O buffer: small, because headers are small (large reads bypass it).
    static let ioBufferSize: Int32 = 4096

    /// The demuxers the sniffer names, looked up once (FFmpeg searches its list by name).
    private struct InputFormats: @unchecked Sendable {
        let named: [String: UnsafePointer<AVInputFormat>]
    }
    private static let inputFormats = InputFormats(named: Dictionary(uniqueKeysWithValues: ContainerSniffer.demuxers.compactMap { name in
        av_find_input_format(name).map { (name, $0) }
    }))

    /// An opened demuxer with its I/O; closes both when released.
    private final class Opened {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let io: AVIOBridge
        init(ctx: UnsafeMutablePointer<AVFormatContext>, io: AVIOBridge) { self.ctx = ctx; self.io = io }
        deinit {
            avformat_close_input(&ctx)
            io.close()
        }
    }

    /// Opens the demuxer (`format`, or FFmpeg's probing when nil) over the file; errors as ``AudioFile``.
    private static func open(file: TagFileReader, path: String, format: UnsafePointer<AVInputFormat>?,
                             head: [UInt8]) throws(TonearmError) -> Opened {
        guard let io = AVIOBridge(reader: AVIOFileReader(file: file), bufferSize: ioBufferSize), let ctx = avformat_alloc_context() else {
            throw .decodeFailed(path: path, detail: "out of memory")
        }
        ctx.pointee.pb = io.context
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var opt: UnsafeMutablePointer<AVFormatContext>? = ctx
        let r = avformat_open_input(&opt, path, format, nil)
        if r < 0 {
            // avformat_open_input freed the context; not the custom I/O.
            io.close()
            if r == tonearm_averror(EACCES) { throw .notReadable(path: path, reason: "permission denied") }
            throw .notMediaFile(path: path, detail: AudioFile.openFailure(r, head: head))
        }
        return Opened(ctx: opt!, io: io)
    }

    /// Reads what `opened` holds. `sniffed`: the demuxer was chosen from the bytes (FFmpeg's
    /// probe score, which tells a weak guess, is then not set).
    private static func probe(_ opened: Opened, file: TagFileReader, path: String, head: [UInt8],
                              sniffed: Bool) throws(TonearmError) -> MediaProbe {
        let ctx = opened.ctx!
        let formatName = String(cString: ctx.pointee.iformat.pointee.name)
        if formatName == "tty" { throw .notMediaFile(path: path, detail: "the content looks like text") }
        var headerOnly = true
        // The headers' missing parameters first: FFmpeg's choice of the best stream skips
        // audio streams whose rate or channels are unknown.
        let mp3 = formatName == "mp3" ? MP3Info.read(file) : nil
        for i in 0..<Int(ctx.pointee.nb_streams) where ctx.pointee.streams[i]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
            HeaderFields.fill(ctx, stream: ctx.pointee.streams[i]!, mp3: mp3)
        }
        var (streamIndex, hasDecoder) = audioStream(ctx)
        var stream = streamIndex.map { ctx.pointee.streams[Int($0)]! }
        var length = stream.flatMap { HeaderFields.length(ctx, stream: $0, file: file, mp3: mp3) }
        let complete = stream.map { s in
            let par = s.pointee.codecpar!
            return par.pointee.codec_id != AV_CODEC_ID_NONE && par.pointee.sample_rate > 0
                && par.pointee.ch_layout.nb_channels > 0 && (length ?? 0) > 0
        } ?? false
        if !complete && (stream != nil || ctx.pointee.ctx_flags & AVFMTCTX_NOHEADER != 0 || ctx.pointee.nb_streams == 0) {
            // What the headers leave unknown, FFmpeg finds by reading (and decoding) packets.
            headerOnly = false
            let r = avformat_find_stream_info(ctx, nil)
            if r < 0 { throw .notMediaFile(path: path, detail: AudioFile.openFailure(r, head: head)) }
            (streamIndex, hasDecoder) = audioStream(ctx)
            stream = streamIndex.map { ctx.pointee.streams[Int($0)]! }
            if let s = stream, length == nil || length! <= 0 {
                // A length FFmpeg estimated from the bit rate is exact only at a constant rate (PCM);
                // for others (ADTS AAC) only decoding tells.
                let pcm = String(cString: avcodec_get_name(s.pointee.codecpar.pointee.codec_id)).hasPrefix("pcm_")
                if pcm || ctx.pointee.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE {
                    length = HeaderFields.statedLength(ctx, stream: s)
                }
            }
        }
        guard let stream, let streamIndex else {
            if !sniffed && AudioFile.isWeakGuess(ctx) { throw AudioFile.noAudioInWeakGuess(path: path, head: head) }
            throw .noAudioTrack(path: path)
        }
        // The checks FFmpegDecoder makes before decoding.
        let par = stream.pointee.codecpar!
        let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
        guard hasDecoder || avcodec_find_decoder(par.pointee.codec_id) != nil else {
            throw .unsupportedCodec(path: path, codec: codecName)
        }
        let rate = par.pointee.sample_rate, channels = Int(par.pointee.ch_layout.nb_channels)
        guard rate > 0, (1...64).contains(channels) else {
            throw .decodeFailed(path: path, detail: "invalid audio parameters (\(rate) Hz, \(channels) channels)")
        }
        if par.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC && !codecName.hasPrefix("pcm_") {
            // As a decoder reports it (FFmpeg's PCM decoders leave it unspecified).
            av_channel_layout_uninit(&par.pointee.ch_layout)
            av_channel_layout_default(&par.pointee.ch_layout, Int32(channels))
        }
        HeaderFields.fillBitRate(ctx, file: file)
        let format = AudioFile.sourceFormat(ctx, stream: stream, path: path)
        let metadata = MetadataReader.read(formatContext: ctx, audioStreamIndex: streamIndex, file: file)
        let duration = length.flatMap { $0 > 0 ? Double($0) / Double(rate) : nil }
        return MediaProbe(path: path, fileFormat: format, duration: duration, metadata: metadata, headerOnly: headerOnly)
    }

    /// The audio stream ``AudioFile`` would decode: the best one with a decoder, else the first
    /// (then without a decoder).
    private static func audioStream(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> (Int32?, hasDecoder: Bool) {
        // FFmpeg looks a decoder up by walking its list of codecs: remembered per codec here.
        let first = av_find_best_stream(ctx, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        if first >= 0, hasDecoder(ctx.pointee.streams[Int(first)]!.pointee.codecpar.pointee.codec_id) { return (first, true) }
        var decoder: UnsafePointer<AVCodec>?
        let best = av_find_best_stream(ctx, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0)
        if best >= 0 { return (best, true) }
        for i in 0..<Int(ctx.pointee.nb_streams)
        where ctx.pointee.streams[i]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
            return (Int32(i), false)
        }
        return (nil, false)
    }

    private static let decoders = Mutex<[UInt32: Bool]>([:])

    /// Whether FFmpeg has a decoder for `codec`.
    private static func hasDecoder(_ codec: AVCodecID) -> Bool {
        if let known = decoders.withLock({ $0[codec.rawValue] }) { return known }
        let found = avcodec_find_decoder(codec) != nil
        decoders.withLock { $0[codec.rawValue] = found }
        return found
    }
}

// MARK: - Choosing the demuxer

/// The demuxer for a file, from its first bytes.
enum ContainerSniffer {
    enum Verdict: Equatable {
        /// FFmpeg's demuxer by that name.
        case known(String)
        /// An image format (no sound in it).
        case image
        /// Nothing recognised: FFmpeg's probing decides.
        case unknown
    }

    /// Every demuxer ``sniff(head:file:)`` names.
    static let demuxers = ["flac", "ogg", "wav", "aiff", "mov", "matroska", "caf", "wv", "ape", "mp3", "aac"]

    static func sniff(head: [UInt8], file: TagFileReader) -> Verdict {
        func at(_ o: Int, _ s: String) -> Bool {
            let b = Array(s.utf8)
            return head.count >= o + b.count && head[o..<(o + b.count)].elementsEqual(b)
        }
        if at(0, "fLaC") { return .known("flac") }
        if at(0, "OggS") { return .known("ogg") }
        if (at(0, "RIFF") || at(0, "RF64") || at(0, "BW64")) && at(8, "WAVE") { return .known("wav") }
        if at(0, "FORM") && (at(8, "AIFF") || at(8, "AIFC")) { return .known("aiff") }
        if at(4, "ftyp") { return .known("mov") }
        if at(0, "\u{1A}\u{45}") && head.count >= 4 && head[2] == 0xDF && head[3] == 0xA3 { return .known("matroska") }
        if at(0, "caff") { return .known("caf") }
        if at(0, "wvpk") { return .known("wv") }
        if at(0, "MAC ") { return .known("ape") }
        if head.count >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF { return .image }
        if at(0, "\u{89}PNG") || at(0, "GIF8") || (at(0, "RIFF") && at(8, "WEBP")) { return .image }
        if head.count >= 8 && head[0] == 0x89 && at(1, "PNG") { return .image }
        // MPEG audio, possibly after ID3v2 tags.
        var offset = 0
        var bytes = head
        if at(0, "ID3") {
            guard let end = ID3v2Skip.end(of: file) else { return .unknown }
            offset = end
            guard let after = file.read(at: offset, count: min(16, file.size - offset)) else { return .unknown }
            bytes = after
            if bytes.count >= 4 && bytes[0..<4].elementsEqual("fLaC".utf8) { return .known("flac") }
        }
        if bytes.count >= 4, MPEGAudioHeader(bytes[0], bytes[1], bytes[2], bytes[3]) != nil {
            // After an ID3v2 tag a frame header is evidence enough; alone, two frames in a row are needed.
            if offset > 0 || MP3Info.read(file) != nil { return .known("mp3") }
            return .unknown
        }
        if bytes.count >= 4, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0, (bytes[2] >> 2) & 0xF < 13 {
            return .known("aac")  // ADTS
        }
        return .unknown
    }
}

/// Where the ID3v2 tags at the start of a file end (several tags in a row are skipped, as
/// FFmpeg does).
enum ID3v2Skip {
    static func end(of file: any TagByteSource) -> Int? {
        var offset = 0
        while let h = file.read(at: offset, count: 10), h[0] == 0x49, h[1] == 0x44, h[2] == 0x33,
              h[3] != 0xFF, h[4] != 0xFF, h[6] & 0x80 == 0, h[7] & 0x80 == 0, h[8] & 0x80 == 0, h[9] & 0x80 == 0 {
            let size = Int(h[6]) << 21 | Int(h[7]) << 14 | Int(h[8]) << 7 | Int(h[9])
            offset += 10 + size + (h[5] & 0x10 != 0 ? 10 : 0)
        }
        return offset < file.size ? offset : nil
    }
}

// MARK: - What the headers leave out

/// An MPEG audio (layer I, II, III) frame header.
struct MPEGAudioHeader: Equatable {
    /// 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5).
    var version: Int
    /// 1, 2 or 3 (ADTS, whose layer bits are 0, is not parsed here).
    var layer: Int
    /// Bits per second (0: free format).
    var bitRate: Int
    var sampleRate: Int
    var channels: Int
    /// Bytes of the frame, header included (0: free format).
    var frameLength: Int
    var samplesPerFrame: Int
    /// Bytes of layer III side information after the header (where a Xing tag starts).
    var sideInfoSize: Int

    private static let bitRates: [[Int]] = [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],  // MPEG-1 layer I
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],     // MPEG-1 layer II
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],      // MPEG-1 layer III
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],     // MPEG-2/2.5 layer I
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],          // MPEG-2/2.5 layers II, III
    ]

    /// Parses 4 bytes; nil unless they are a valid header (sync, version, layer, rates).
    init?(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        let v = (b1 >> 3) & 3, l = (b1 >> 1) & 3
        let bi = Int(b2 >> 4), si = Int((b2 >> 2) & 3)
        guard v != 1, l != 0, bi != 15, si != 3 else { return nil }
        version = v == 3 ? 1 : v == 2 ? 2 : 25
        layer = 4 - Int(l)
        let table = version == 1 ? layer - 1 : layer == 1 ? 3 : 4
        bitRate = Self.bitRates[table][bi] * 1000
        sampleRate = [44100, 48000, 32000][si] / (version == 1 ? 1 : version == 2 ? 2 : 4)
        channels = b3 >> 6 == 3 ? 1 : 2
        let padding = Int((b2 >> 1) & 1)
        samplesPerFrame = layer == 1 ? 384 : layer == 3 && version != 1 ? 576 : 1152
        if bitRate == 0 {
            frameLength = 0
        } else if layer == 1 {
            frameLength = (12 * bitRate / sampleRate + padding) * 4
        } else {
            frameLength = samplesPerFrame / 8 * bitRate / sampleRate + padding
        }
        sideInfoSize = layer != 3 ? 0 : version == 1 ? (channels == 1 ? 17 : 32) : (channels == 1 ? 9 : 17)
    }
}

/// Fills in the codec parameters and the length a demuxer's header leaves out, from the file's bytes.
enum HeaderFields {
    /// Sets the sample rate, channels, bits per sample and (MP3) bit rate of `stream` when the
    /// demuxer left them out and the bytes state them.
    static func fill(_ ctx: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                     mp3: MP3Info?) {
        let par = stream.pointee.codecpar!
        switch par.pointee.codec_id {
        case AV_CODEC_ID_FLAC:
            // STREAMINFO (the extradata): 20 bits of rate, 3 of channels − 1, 5 of bits − 1, 36 of samples.
            guard let x = extradata(par), x.count >= 18 else { return }
            let rate = Int32(x[10]) << 12 | Int32(x[11]) << 4 | Int32(x[12]) >> 4
            let channels = Int32((x[12] >> 1) & 7) + 1
            let bits = Int32((x[12] & 1) << 4 | x[13] >> 4) + 1
            if par.pointee.sample_rate <= 0 { par.pointee.sample_rate = rate }
            if par.pointee.ch_layout.nb_channels <= 0 { setLayout(par, flacLayout(Int(channels))) }
            if par.pointee.bits_per_raw_sample <= 0 { par.pointee.bits_per_raw_sample = bits }
        case AV_CODEC_ID_MP3, AV_CODEC_ID_MP2, AV_CODEC_ID_MP1:
            guard let info = mp3 else { return }
            if par.pointee.sample_rate <= 0 { par.pointee.sample_rate = Int32(info.header.sampleRate) }
            if par.pointee.ch_layout.nb_channels <= 0 { setLayout(par, info.header.channels == 1 ? "mono" : "stereo") }
            if par.pointee.bit_rate <= 0 { par.pointee.bit_rate = Int64(info.header.bitRate) }
        case AV_CODEC_ID_ALAC:
            // The magic cookie (ALACSpecificConfig, after FFmpeg's 12-byte atom header): bit depth at 5.
            guard par.pointee.bits_per_raw_sample <= 0, let x = extradata(par), x.count >= 36,
                  x[4..<8].elementsEqual("alac".utf8) else { return }
            par.pointee.bits_per_raw_sample = Int32(x[17])
        default:
            return
        }
    }

    /// The length in frames at the stream's sample rate, as the headers state it (nil: unknown).
    static func length(_ ctx: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                       file: TagFileReader, mp3: MP3Info?) -> Int64? {
        let par = stream.pointee.codecpar!
        let rate = Int64(par.pointee.sample_rate)
        guard rate > 0 else { return nil }
        let formatName = String(cString: ctx.pointee.iformat.pointee.name)
        if let info = mp3 {
            if let frames = info.frames {
                return frames * Int64(info.header.samplesPerFrame) - Int64(info.trimmed)
            }
            if stream.pointee.duration <= 0 || stream.pointee.duration == tonearm_av_nopts_value() {
                // No Xing or VBRI frame: estimated from the first frame's bit rate, as other tag readers do.
                let bytes = Int64(file.size - info.audioStart - trailingTagBytes(file))
                guard info.header.bitRate > 0, bytes > 0 else { return nil }
                return bytes * 8 * rate / Int64(info.header.bitRate)
            }
        }
        guard var length = statedLength(ctx, stream: stream) else { return nil }
        if formatName == "ogg" && par.pointee.codec_id == AV_CODEC_ID_OPUS,
           let x = extradata(par), x.count >= 12, x[0..<8].elementsEqual("OpusHead".utf8) {
            // The last granule position counts the pre-skip, which the decoder drops.
            length -= Int64(x[10]) | Int64(x[11]) << 8
        }
        if formatName.hasPrefix("mov,"), let smpb = FFmpegDecoder.iTunSMPB(ctx, stream), length > smpb.frames {
            length = smpb.frames
        }
        return length
    }

    /// The stream's duration in frames, else the container's; nil when neither is known.
    static func statedLength(_ ctx: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>) -> Int64? {
        let nopts = tonearm_av_nopts_value()
        let rate = stream.pointee.codecpar.pointee.sample_rate
        guard rate > 0 else { return nil }
        if stream.pointee.duration > 0 && stream.pointee.duration != nopts {
            return av_rescale_q(stream.pointee.duration, stream.pointee.time_base, AVRational(num: 1, den: rate))
        }
        if ctx.pointee.duration > 0 && ctx.pointee.duration != nopts {
            return av_rescale_q(ctx.pointee.duration, AVRational(num: 1, den: tonearm_av_time_base()), AVRational(num: 1, den: rate))
        }
        return nil
    }

    /// The container's bit rate as `avformat_find_stream_info` sets it: the file's size over the
    /// container's duration (the longest stream's when it states none).
    static func fillBitRate(_ ctx: UnsafeMutablePointer<AVFormatContext>, file: TagFileReader) {
        let nopts = tonearm_av_nopts_value()
        var duration = ctx.pointee.duration
        if duration == nopts || duration <= 0 {
            duration = 0
            for i in 0..<Int(ctx.pointee.nb_streams) {
                let s = ctx.pointee.streams[i]!
                guard s.pointee.duration > 0, s.pointee.duration != nopts else { continue }
                duration = max(duration, av_rescale_q(s.pointee.duration, s.pointee.time_base,
                                                      AVRational(num: 1, den: tonearm_av_time_base())))
            }
        }
        guard duration > 0, file.size > 0 else { return }
        ctx.pointee.bit_rate = Int64(Double(file.size) * 8 * Double(tonearm_av_time_base()) / Double(duration))
    }

    /// Bytes of ID3v1 and APEv2 tags at the end of the file.
    static func trailingTagBytes(_ file: TagFileReader) -> Int {
        var end = file.size
        if end >= 128, let t = file.read(at: end - 128, count: 3), t.elementsEqual("TAG".utf8) { end -= 128 }
        if end >= 32, let f = file.read(at: end - 32, count: 32), f[0..<8].elementsEqual("APETAGEX".utf8) {
            let size = Int(f[12]) | Int(f[13]) << 8 | Int(f[14]) << 16 | Int(f[15]) << 24
            let hasHeader = f[23] & 0x80 != 0
            end -= size + (hasHeader ? 32 : 0)
        }
        return max(0, file.size - end)
    }

    private static func extradata(_ par: UnsafeMutablePointer<AVCodecParameters>) -> UnsafeBufferPointer<UInt8>? {
        guard let d = par.pointee.extradata, par.pointee.extradata_size > 0 else { return nil }
        return UnsafeBufferPointer(start: d, count: Int(par.pointee.extradata_size))
    }

    private static func setLayout(_ par: UnsafeMutablePointer<AVCodecParameters>, _ name: String) {
        var layout = AVChannelLayout()
        guard av_channel_layout_from_string(&layout, name) == 0 else { return }
        av_channel_layout_uninit(&par.pointee.ch_layout)
        par.pointee.ch_layout = layout
    }

    /// FLAC's channel assignments, as FFmpeg's decoder reports them.
    private static func flacLayout(_ channels: Int) -> String {
        ["mono", "stereo", "3.0", "quad", "5.0", "5.1", "6.1", "7.1"][max(1, min(channels, 8)) - 1]
    }
}

/// An MP3's first frame and its Xing/Info (with LAME) or VBRI tag.
struct MP3Info {
    /// The header of the first audio frame (after a Xing/Info/VBRI frame).
    var header: MPEGAudioHeader
    /// Where the audio frames start (after ID3v2 tags; the Xing frame included).
    var audioStart: Int
    /// Audio frames, from a Xing/Info or VBRI tag.
    var frames: Int64?
    /// Samples FFmpeg trims, from a LAME tag: the encoder delay and padding (the decoder's own
    /// delay of 529 samples is trimmed at the start and given back at the end).
    var trimmed = 0

    /// Reads the file's start; nil when no valid frame is found near it.
    static func read(_ file: any TagByteSource) -> MP3Info? {
        guard let start = ID3v2Skip.end(of: file) ?? (file.size > 0 ? 0 : nil),
              let bytes = file.read(at: start, count: min(file.size - start, 8192)), bytes.count >= 4 else { return nil }
        func header(at o: Int) -> MPEGAudioHeader? {
            guard o + 4 <= bytes.count, let h = MPEGAudioHeader(bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]),
                  h.layer != 0 else { return nil }
            return h
        }
        func u32(_ o: Int) -> Int? {
            guard o + 4 <= bytes.count else { return nil }
            return Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3])
        }
        func tag(_ o: Int, _ s: String) -> Bool {
            o + 4 <= bytes.count && bytes[o..<(o + 4)].elementsEqual(s.utf8)
        }
        // A Xing/Info or VBRI tag is in the first frame, right after the ID3v2 tags (as FFmpeg reads it).
        if let first = header(at: 0), first.frameLength > 0 {
            let x = 4 + first.sideInfoSize
            var info: MP3Info?
            if first.layer == 3 && (tag(x, "Xing") || tag(x, "Info")), let flags = u32(x + 4) {
                var o = x + 8
                var frames: Int64?
                if flags & 1 != 0 { frames = u32(o).map(Int64.init); o += 4 }
                if flags & 2 != 0 { o += 4 }
                if flags & 4 != 0 { o += 100 }
                if flags & 8 != 0 { o += 4 }
                info = MP3Info(header: first, audioStart: start + first.frameLength, frames: frames)
                // LAME tag: a 9-byte encoder version, 12 bytes, then 12 bits of delay and 12 of padding.
                if frames != nil, tag(o, "LAME") || tag(o, "Lavf") || tag(o, "Lavc"), o + 24 <= bytes.count {
                    let v = Int(bytes[o + 21]) << 16 | Int(bytes[o + 22]) << 8 | Int(bytes[o + 23])
                    info!.trimmed = (v >> 12) + (v & 0xFFF)
                }
            } else if tag(4 + 32, "VBRI"), bytes.count >= 4 + 32 + 18, bytes[40] == 0 && bytes[41] == 1 {
                info = MP3Info(header: first, audioStart: start + first.frameLength, frames: u32(4 + 32 + 14).map(Int64.init))
            }
            if var info {
                // The stream's parameters come from the first audio frame.
                if let next = header(at: first.frameLength) { info.header = next }
                if info.frames == 0 { info.frames = nil }
                return info
            }
        }
        // No tag: the first frame whose successor is where its length says (as FFmpeg resyncs).
        var o = 0
        while o + 4 <= bytes.count {
            if let h = header(at: o) {
                if h.frameLength > 0, let next = header(at: o + h.frameLength),
                   next.version == h.version, next.layer == h.layer, next.sampleRate == h.sampleRate {
                    return MP3Info(header: h, audioStart: start + o)
                }
                if h.frameLength > 0, o + h.frameLength >= file.size - start { return MP3Info(header: h, audioStart: start + o) }
            }
            o += 1
        }
        return nil
    }
}
