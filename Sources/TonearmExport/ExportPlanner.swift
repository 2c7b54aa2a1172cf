// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// Turns a session's settings into the work to run, checking everything that can be checked
/// before a byte is written.
enum ExportPlanner {
    struct Plan: Sendable {
        var outputPath: String
        var job: any ExportJob
    }

    /// The audio track to export: `trackID` when given (it must exist and be audio), else the
    /// first audio track marked default, else the first audio track.
    static func audioTrack(of asset: Asset, trackID: Int?) async throws(TonearmError) -> AssetTrack {
        let tracks = try await asset.tracks
        if let trackID {
            guard let t = tracks.first(where: { $0.trackID == trackID }) else {
                throw .noSuchTrack(path: asset.path, track: trackID, detail: "the file has \(tracks.count) tracks, numbered 0…\(max(0, tracks.count - 1))")
            }
            guard t.mediaType == .audio else {
                let audio = tracks.filter { $0.mediaType == .audio }.map { "#\($0.trackID)" }
                throw .noSuchTrack(path: asset.path, track: trackID, detail: "it is a \(t.mediaType) track; audio tracks: "
                                   + (audio.isEmpty ? "none" : audio.joined(separator: ", ")))
            }
            return t
        }
        let audio = tracks.filter { $0.mediaType == .audio }
        guard let first = audio.first(where: \.isDefault) ?? audio.first else { throw .noAudioTrack(path: asset.path) }
        return first
    }

    /// The file types `preset` can write for audio in `codec`.
    static func compatibleTypes(preset: ExportPreset, codec: String) -> [ExportFileType] {
        if preset == .passthrough { return ExportFileType.passthroughTypes(for: codec) }
        return preset.supportedFileTypes.filter { EncoderChoice.choose(preset: preset, fileType: $0, sourceBits: nil) != nil }
    }

    /// The output path and file type the settings name. Throws `invalidArgument`, `invalidURL`.
    static func output(_ s: AssetExportSession.Settings) throws(TonearmError) -> (String, ExportFileType) {
        guard let url = s.outputURL else { throw .invalidArgument("the export has no output URL") }
        guard url.isFileURL else { throw .invalidURL(url.absoluteString) }
        guard let fileType = s.outputFileType ?? ExportFileType(pathExtension: url.pathExtension) else {
            throw .invalidArgument("\(url.path): cannot tell the file type from the extension '\(url.pathExtension)'; "
                                   + "known: \(ExportFileType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return (url.path, fileType)
    }

    /// A composition's export: its segments (inside the time range) re-encoded in order.
    static func plan(composition: Composition, preset: ExportPreset, settings s: AssetExportSession.Settings) async throws(TonearmError) -> Plan {
        let (path, fileType) = try output(s)
        let c = s.timeRange.map { composition.trimmed(to: $0.clamped(to: AssetTimeRange(start: 0, duration: composition.duration))) }
            ?? composition
        guard let first = c.segments.first else { throw .invalidArgument("\(path): the composition is empty") }
        if preset == .passthrough { return try await passthroughPlan(c, path: path, fileType: fileType, settings: s) }
        guard let choice = EncoderChoice.choose(preset: preset, fileType: fileType, sourceBits: nil) else {
            throw .invalidArgument("\(path): the \(preset) preset cannot write \(fileType) files; it writes "
                                   + compatibleTypes(preset: preset, codec: "").map(\.rawValue).joined(separator: ", "))
        }
        let firstAsset = Asset(url: first.url)
        let track = try await firstAsset.track(withTrackID: first.trackID)
        let deepChoice = EncoderChoice.choose(preset: preset, fileType: fileType, sourceBits: track?.formatDescription.bitsPerSample) ?? choice
        let tags: ExportTags
        if let m = s.metadata { tags = ExportTags(metadata: m, includingArtwork: s.includesArtwork) } else {
            let m = try await firstAsset.metadata
            tags = ExportTags(metadata: m.common, formatSpecific: m.formatSpecific, includingArtwork: s.includesArtwork)
        }
        let segments = c.segments.map { Transcoder.Segment(path: $0.url.path, trackID: $0.trackID, range: $0.sourceRange) }
        return Plan(outputPath: path, job: Transcoder(segments: segments, fileType: fileType, choice: deepChoice, tags: tags,
                                                     language: track?.language))
    }

    /// A composition's passthrough: its packets unchanged, the container able to hold the first
    /// segment's codec (the job checks that every segment has that format). One segment is the
    /// asset's passthrough of a time range.
    private static func passthroughPlan(_ c: Composition, path: String, fileType: ExportFileType,
                                        settings s: AssetExportSession.Settings) async throws(TonearmError) -> Plan {
        let first = c.segments[0]
        let firstAsset = Asset(url: first.url)
        guard let track = try await firstAsset.track(withTrackID: first.trackID) else {
            throw .noSuchTrack(path: firstAsset.path, track: first.trackID, detail: "the file changed since it was inserted")
        }
        let compatible = compatibleTypes(preset: .passthrough, codec: track.codecName)
        guard compatible.contains(fileType) else {
            throw .incompatibleFileType(path: path, codec: track.codecName, fileType: fileType.rawValue, compatible: compatible.map(\.rawValue))
        }
        let tags: ExportTags
        if let m = s.metadata { tags = ExportTags(metadata: m, includingArtwork: s.includesArtwork) } else {
            let m = try await firstAsset.metadata
            tags = ExportTags(metadata: m.common, formatSpecific: m.formatSpecific, includingArtwork: s.includesArtwork)
        }
        if c.segments.count == 1 {
            // The whole track is the asset's passthrough (its encoder-delay packets before 0
            // included); a part of it, the packets overlapping the part.
            let end = track.timeRange.duration > 0 ? track.timeRange.end : try await firstAsset.duration
            let whole = first.sourceRange.start <= 1e-9 && first.sourceRange.end >= end - 1e-6
            return Plan(outputPath: path, job: Remuxer(sourcePath: firstAsset.path, trackID: first.trackID, fileType: fileType,
                                                      timeRange: whole ? nil : first.sourceRange, tags: tags, language: track.language))
        }
        let segments = c.segments.map { CompositionRemuxer.Segment(path: $0.url.path, trackID: $0.trackID, range: $0.sourceRange) }
        return Plan(outputPath: path, job: CompositionRemuxer(segments: segments, fileType: fileType, tags: tags, language: track.language))
    }

    static func plan(asset: Asset, preset: ExportPreset, settings s: AssetExportSession.Settings) async throws(TonearmError) -> Plan {
        let (path, fileType) = try output(s)
        let contents = try await asset.load()
        let track = try await audioTrack(of: asset, trackID: s.audioTrackID)
        let compatible = compatibleTypes(preset: preset, codec: track.codecName)
        if !compatible.contains(fileType) {
            if preset == .passthrough {
                throw .incompatibleFileType(path: path, codec: track.codecName, fileType: fileType.rawValue,
                                            compatible: compatible.map(\.rawValue))
            }
            throw .invalidArgument("\(path): the \(preset) preset cannot write \(fileType) files; it writes "
                                   + compatible.map(\.rawValue).joined(separator: ", "))
        }
        var range = s.timeRange
        if let r = s.timeRange {
            let available = track.timeRange.duration > 0 ? track.timeRange.end : contents.duration
            if r.duration <= 0 { throw .invalidArgument("\(path): the time range \(r) is empty") }
            if r.start >= available {
                throw .invalidArgument("\(path): the time range \(r) starts after the end of \(asset.path) (\(Int((available * 1000).rounded())) ms)")
            }
            // An open-ended range runs to the last sample the transcoder finds (it clamps to the
            // file); a passthrough, which keeps whole packets, ends it where the track ends, as
            // an explicit end there would.
            if r.isOpenEnded && preset == .passthrough { range = r.clamped(to: AssetTimeRange(start: 0, end: available)) }
        }
        let tags = s.metadata.map { ExportTags(metadata: $0, includingArtwork: s.includesArtwork) }
            ?? ExportTags(metadata: contents.metadata.common, formatSpecific: contents.metadata.formatSpecific,
                          includingArtwork: s.includesArtwork)
        if preset == .passthrough {
            return Plan(outputPath: path, job: Remuxer(sourcePath: asset.path, trackID: track.trackID, fileType: fileType,
                                                      timeRange: range, tags: tags, language: track.language))
        }
        guard let choice = EncoderChoice.choose(preset: preset, fileType: fileType, sourceBits: track.formatDescription.bitsPerSample) else {
            throw .invalidArgument("\(path): the \(preset) preset cannot write \(fileType) files")
        }
        return Plan(outputPath: path, job: Transcoder(segments: [.init(path: asset.path, trackID: track.trackID, range: range)],
                                                     fileType: fileType, choice: choice, tags: tags, language: track.language))
    }
}
