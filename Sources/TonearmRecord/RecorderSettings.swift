// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmExport

// Apple's settings keys for `AVAudioRecorder(url:settings:)` (AVAudioSettings.h), by the same
// names and with the same string values, so that ported code compiles unchanged.

/// The format (an `AudioFormatID`, e.g. ``kAudioFormatLinearPCM``, ``kAudioFormatFLAC``).
public let AVFormatIDKey = "AVFormatIDKey"
/// The sample rate in hertz (a number).
public let AVSampleRateKey = "AVSampleRateKey"
/// The channel count (a number).
public let AVNumberOfChannelsKey = "AVNumberOfChannelsKey"
/// Bits per sample for linear PCM (8, 16, 24, 32) and FLAC (16, 24).
public let AVLinearPCMBitDepthKey = "AVLinearPCMBitDepthKey"
/// Whether linear PCM is floating point (with a bit depth of 32 or 64).
public let AVLinearPCMIsFloatKey = "AVLinearPCMIsFloatKey"
/// Whether linear PCM is big-endian (WAV is little-endian only: true is refused).
public let AVLinearPCMIsBigEndianKey = "AVLinearPCMIsBigEndianKey"
/// Whether linear PCM is non-interleaved (files are interleaved: ignored, as Apple does for files).
public let AVLinearPCMIsNonInterleaved = "AVLinearPCMIsNonInterleaved"
/// Encoder quality and bit rate: for lossy formats (not recorded yet); ignored for PCM and FLAC.
public let AVEncoderAudioQualityKey = "AVEncoderAudioQualityKey"
public let AVEncoderBitRateKey = "AVEncoderBitRateKey"

/// Apple's `AudioFormatID`s (four-character codes) the settings may name.
public let kAudioFormatLinearPCM: UInt32 = 0x6C70_636D  // 'lpcm'
public let kAudioFormatFLAC: UInt32 = 0x666C_6163  // 'flac'
public let kAudioFormatMPEG4AAC: UInt32 = 0x6161_6320  // 'aac '
public let kAudioFormatAppleLossless: UInt32 = 0x616C_6163  // 'alac'
public let kAudioFormatOpus: UInt32 = 0x6F70_7573  // 'opus'

/// What is wrong with an ``AudioRecorder``'s URL or settings, named: the key and the value given,
/// or the file's extension.
public enum AudioRecorderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A setting's value cannot be recorded: `key` (Apple's name), the `value` given, and why.
    case invalidSetting(key: String, value: String, reason: String)
    /// The file's extension names no type the recorder writes (`supported`: those it does).
    case unsupportedFileType(path: String, extension: String, supported: [String])
    /// The settings' format cannot be written to a file of this type.
    case formatDoesNotFitFile(path: String, format: String, fileType: String)
    /// Recording cannot start from `source` (its name, or "the default source"): no sound server,
    /// no such source, a refused stream — `reason` says which.
    case sourceUnavailable(source: String, reason: String)

    public var description: String {
        switch self {
        case .invalidSetting(let k, let v, let r): "\(k) = \(v): \(r)"
        case .unsupportedFileType(let p, let e, let s):
            "\(p): cannot record to a '.\(e)' file; the recorder writes \(s.map { "." + $0 }.joined(separator: ", "))"
        case .formatDoesNotFitFile(let p, let f, let t): "\(p): \(f) cannot be written to a \(t) file"
        case .sourceUnavailable(let s, let r): "cannot record from \(s): \(r)"
        }
    }
}

/// The file and format a recording is written in, read from Apple's settings and the URL's
/// extension (``init(path:settings:)``).
public struct RecordingFormat: Sendable, Hashable {
    /// What the file is: WAV (linear PCM) or FLAC.
    public enum FileType: String, Sendable, Hashable, CaseIterable {
        case wav, flac
    }

    public var fileType: FileType
    /// The format's `AudioFormatID` (``kAudioFormatLinearPCM`` or ``kAudioFormatFLAC``).
    public var formatID: UInt32
    public var sampleRate: Int
    public var channelCount: Int
    /// Bits per sample in the file.
    public var bitDepth: Int
    /// Floating-point samples (linear PCM only).
    public var isFloat: Bool

    /// The sample rates taken (PulseAudio's range), in hertz.
    public static let sampleRates = 8_000...384_000
    /// The channel counts taken.
    public static let channelCounts = 1...8

    /// Reads `settings` (Apple's keys; missing ones default to 48 kHz, stereo, 16-bit integer,
    /// and the format the extension names) for a file at `path`. Throws ``AudioRecorderError``
    /// naming the key or the extension that is wrong; keys it does not know are ignored, as
    /// Apple's recorder ignores them.
    public init(path: String, settings: [String: Any]) throws(AudioRecorderError) {
        let ext = (path as NSString).pathExtension.lowercased()
        let type: FileType
        switch ext {
        case "wav", "wave": type = .wav
        case "flac": type = .flac
        default: throw .unsupportedFileType(path: path, extension: ext, supported: FileType.allCases.map(\.rawValue))
        }
        fileType = type
        func number(_ key: String) throws(AudioRecorderError) -> Double? {
            guard let v = settings[key] else { return nil }
            switch v {
            case let x as Int: return Double(x)
            case let x as Double: return x
            case let x as Float: return Double(x)
            case let x as UInt32: return Double(x)
            case let x as Int32: return Double(x)
            case let x as UInt: return Double(x)
            case let x as Int64: return Double(x)
            case let x as NSNumber: return x.doubleValue
            default: throw .invalidSetting(key: key, value: "\(v)", reason: "not a number")
            }
        }
        func flag(_ key: String) throws(AudioRecorderError) -> Bool? {
            guard let v = settings[key] else { return nil }
            if let b = v as? Bool { return b }
            if let n = try number(key) { return n != 0 }
            return nil
        }
        func integer(_ key: String, _ value: Double) throws(AudioRecorderError) -> Int {
            guard value.isFinite, value == value.rounded(), abs(value) < 1e9 else {
                throw .invalidSetting(key: key, value: "\(value)", reason: "not a whole number")
            }
            return Int(value)
        }

        let id: UInt32
        if let raw = try number(AVFormatIDKey) {
            guard raw >= 0, raw <= Double(UInt32.max), raw == raw.rounded() else {
                throw .invalidSetting(key: AVFormatIDKey, value: "\(raw)", reason: "not an AudioFormatID")
            }
            id = UInt32(raw)
        } else {
            id = type == .flac ? kAudioFormatFLAC : kAudioFormatLinearPCM
        }
        switch id {
        case kAudioFormatLinearPCM:
            if type != .wav { throw .formatDoesNotFitFile(path: path, format: "linear PCM", fileType: type.rawValue.uppercased()) }
        case kAudioFormatFLAC:
            if type != .flac { throw .formatDoesNotFitFile(path: path, format: "FLAC", fileType: type.rawValue.uppercased()) }
        case kAudioFormatMPEG4AAC, kAudioFormatAppleLossless, kAudioFormatOpus:
            throw .invalidSetting(key: AVFormatIDKey, value: Self.fourCC(id),
                                  reason: "not recorded yet; the recorder writes linear PCM (.wav) and FLAC (.flac)")
        default:
            throw .invalidSetting(key: AVFormatIDKey, value: Self.fourCC(id), reason: "not a format the recorder knows")
        }
        formatID = id

        let rate = try number(AVSampleRateKey).map { v throws(AudioRecorderError) in try integer(AVSampleRateKey, v) } ?? 48_000
        guard Self.sampleRates.contains(rate) else {
            throw .invalidSetting(key: AVSampleRateKey, value: "\(rate)",
                                  reason: "the sample rate must be \(Self.sampleRates.lowerBound)–\(Self.sampleRates.upperBound) Hz")
        }
        sampleRate = rate
        let channels = try number(AVNumberOfChannelsKey).map { v throws(AudioRecorderError) in try integer(AVNumberOfChannelsKey, v) } ?? 2
        guard Self.channelCounts.contains(channels) else {
            throw .invalidSetting(key: AVNumberOfChannelsKey, value: "\(channels)",
                                  reason: "the channel count must be \(Self.channelCounts.lowerBound)–\(Self.channelCounts.upperBound)")
        }
        channelCount = channels

        let float = try flag(AVLinearPCMIsFloatKey) ?? false
        let bits = try number(AVLinearPCMBitDepthKey).map { v throws(AudioRecorderError) in try integer(AVLinearPCMBitDepthKey, v) }
            ?? (float ? 32 : 16)
        if type == .flac {
            if float { throw .invalidSetting(key: AVLinearPCMIsFloatKey, value: "true", reason: "FLAC holds integer samples only") }
            guard bits == 16 || bits == 24 else {
                throw .invalidSetting(key: AVLinearPCMBitDepthKey, value: "\(bits)", reason: "FLAC is recorded at 16 or 24 bits")
            }
        } else if float {
            guard bits == 32 || bits == 64 else {
                throw .invalidSetting(key: AVLinearPCMBitDepthKey, value: "\(bits)", reason: "floating-point PCM is 32 or 64 bits")
            }
        } else {
            guard [8, 16, 24, 32].contains(bits) else {
                throw .invalidSetting(key: AVLinearPCMBitDepthKey, value: "\(bits)", reason: "integer PCM is 8, 16, 24 or 32 bits")
            }
        }
        if try flag(AVLinearPCMIsBigEndianKey) == true {
            throw .invalidSetting(key: AVLinearPCMIsBigEndianKey, value: "true", reason: "WAV and FLAC files are little-endian")
        }
        bitDepth = bits
        isFloat = float
    }

    /// FFmpeg's encoder for the format.
    var encoderName: String {
        switch fileType {
        case .flac: return "flac"
        case .wav:
            if isFloat { return bitDepth == 64 ? "pcm_f64le" : "pcm_f32le" }
            switch bitDepth {
            case 8: return "pcm_u8"
            case 24: return "pcm_s24le"
            case 32: return "pcm_s32le"
            default: return "pcm_s16le"
            }
        }
    }

    var exportFileType: ExportFileType { fileType == .flac ? .flac : .wav }

    /// Apple's settings for this format (what ``AudioRecorder/settings`` answers).
    public var settings: [String: any Sendable] {
        var s: [String: any Sendable] = [AVFormatIDKey: formatID, AVSampleRateKey: Double(sampleRate),
                                         AVNumberOfChannelsKey: channelCount, AVLinearPCMBitDepthKey: bitDepth]
        if fileType == .wav { s[AVLinearPCMIsFloatKey] = isFloat; s[AVLinearPCMIsBigEndianKey] = false }
        return s
    }

    /// An `AudioFormatID` as its four characters when they are printable ('aac '), else the number.
    static func fourCC(_ id: UInt32) -> String {
        let bytes = [24, 16, 8, 0].map { UInt8((id >> UInt32($0)) & 0xFF) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "\(id)" }
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
}
