// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCodecs
import TonearmCore

/// What ``Asset`` loads: the container, its duration, tracks and tags.
public struct AssetContents: Sendable, Hashable {
    /// FFmpeg's demuxer name ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", …).
    public var formatName: String
    /// The demuxer's long name ("QuickTime / MOV", "Matroska / WebM", …).
    public var formatLongName: String
    /// Seconds: the container's duration, else the longest track's end.
    public var duration: Double
    /// Every stream in container order.
    public var tracks: [AssetTrack]
    public var metadata: AssetMetadata
}

/// Reads an ``AssetContents`` from a file with FFmpeg (blocking I/O; called by ``Asset``).
enum AssetProbe {
    /// Opens `path`, reads stream info and tags, closes it.
    /// Throws `fileNotFound`, `isDirectory`, `emptyFile`, `notReadable`, `notMediaFile`.
    static func probe(path: String) throws(TonearmError) -> AssetContents {
        let opened = try FFmpegSupport.openInput(path)
        var fc: UnsafeMutablePointer<AVFormatContext>? = opened.context
        defer {
            avformat_close_input(&fc)
            withExtendedLifetime(opened.io) {}
        }
        let ctx = fc!
        var tracks: [AssetTrack] = []
        let nopts = tonearm_av_nopts_value()
        let containerDuration = ctx.pointee.duration != nopts && ctx.pointee.duration > 0
            ? Double(ctx.pointee.duration) / Double(tonearm_av_time_base()) : nil
        for i in 0..<Int(ctx.pointee.nb_streams) {
            let st = ctx.pointee.streams[i]!
            let par = st.pointee.codecpar!
            let tags = FFmpegSupport.entries(st.pointee.metadata)
            let tb = st.pointee.time_base
            let start = st.pointee.start_time != nopts ? max(0, FFmpegSupport.seconds(st.pointee.start_time, tb)) : 0
            let duration = st.pointee.duration != nopts && st.pointee.duration > 0
                ? FFmpegSupport.seconds(st.pointee.duration, tb) : (containerDuration.map { max(0, $0 - start) } ?? 0)
            let codecID = par.pointee.codec_id
            let descriptor = avcodec_descriptor_get(codecID)
            var format = TrackFormatDescription(
                codecName: String(cString: avcodec_get_name(codecID)),
                codecLongName: descriptor.flatMap { $0.pointee.long_name.map { String(cString: $0) } })
            if par.pointee.bit_rate > 0 { format.bitRate = Int(par.pointee.bit_rate) }
            let type: AssetMediaType
            switch par.pointee.codec_type {
            case AVMEDIA_TYPE_AUDIO:
                type = .audio
                format.sampleRate = Int(par.pointee.sample_rate)
                format.channelCount = Int(par.pointee.ch_layout.nb_channels)
                format.channelLayout = FFmpegSupport.layoutName(par)
                let raw = Int(par.pointee.bits_per_raw_sample), coded = Int(par.pointee.bits_per_coded_sample)
                let name = format.codecName
                if name.hasPrefix("pcm_") || ["flac", "alac", "wavpack", "tta", "ape"].contains(name) {
                    format.bitsPerSample = raw > 0 ? raw : coded > 0 ? coded : nil
                }
            case AVMEDIA_TYPE_VIDEO:
                type = (st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0 ? .artwork : .video
                format.width = Int(par.pointee.width)
                format.height = Int(par.pointee.height)
            case AVMEDIA_TYPE_SUBTITLE: type = .subtitle
            case AVMEDIA_TYPE_DATA: type = .data
            case AVMEDIA_TYPE_ATTACHMENT: type = .attachment
            default: type = .unknown
            }
            let language = tags["language"].flatMap { $0.isEmpty || $0 == "und" ? nil : $0 }
            tracks.append(AssetTrack(
                trackID: i, mediaType: type, formatDescription: format, language: language, title: tags["title"],
                timeRange: AssetTimeRange(start: start, duration: duration),
                isDefault: (st.pointee.disposition & AV_DISPOSITION_DEFAULT) != 0))
        }
        let formatSpecific = FFmpegSupport.entries(ctx.pointee.metadata)
        var common = AudioMetadata()
        if tracks.contains(where: { $0.mediaType == .audio }) {
            // The shared reader gives the normalised view (APE and ID3v1 at the end of the file too).
            common = (try? MetadataReader.readMetadata(path: path)) ?? AudioMetadata()
        }
        return AssetContents(
            formatName: String(cString: ctx.pointee.iformat.pointee.name),
            formatLongName: ctx.pointee.iformat.pointee.long_name.map { String(cString: $0) } ?? "",
            duration: containerDuration ?? tracks.map(\.timeRange.end).max() ?? 0,
            tracks: tracks, metadata: AssetMetadata(common: common, formatSpecific: formatSpecific))
    }
}
