// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmRecord

/// The recorder's settings (Apple's keys) and file types, offline: what is taken, the defaults,
/// and a typed error naming the key or the extension for what is not.
@Suite struct RecorderSettingsTests {
    private func url(_ name: String) -> URL { URL(fileURLWithPath: "/tmp/\(name)") }

    @Test func theExtensionChoosesTheFormatAndTheDefaultsAre48kStereo16Bit() throws {
        let wav = try AudioRecorder(url: url("a.wav"), settings: [:]).format
        #expect(wav.fileType == .wav && wav.formatID == kAudioFormatLinearPCM && wav.sampleRate == 48_000)
        #expect(wav.channelCount == 2 && wav.bitDepth == 16 && !wav.isFloat)
        #expect(wav.encoderName == "pcm_s16le")
        let flac = try AudioRecorder(url: url("b.FLAC"), settings: [AVSampleRateKey: 44_100.0, AVNumberOfChannelsKey: 1,
                                                                    AVLinearPCMBitDepthKey: 24]).format
        #expect(flac.fileType == .flac && flac.formatID == kAudioFormatFLAC && flac.sampleRate == 44_100)
        #expect(flac.channelCount == 1 && flac.bitDepth == 24)
        let float = try RecordingFormat(path: "c.wav", settings: [AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMIsFloatKey: true])
        #expect(float.isFloat && float.bitDepth == 32 && float.encoderName == "pcm_f32le")
        #expect(try RecordingFormat(path: "d.wav", settings: [AVLinearPCMBitDepthKey: 24]).encoderName == "pcm_s24le")
        #expect(try RecordingFormat(path: "e.wav", settings: [AVLinearPCMBitDepthKey: NSNumber(value: 8)]).encoderName == "pcm_u8")
    }

    @Test func aBadSettingIsNamedWithItsValue() {
        func error(_ path: String, _ settings: [String: Any]) -> AudioRecorderError? {
            do { _ = try RecordingFormat(path: path, settings: settings); return nil } catch { return error }
        }
        #expect(error("a.wav", [AVSampleRateKey: 0]) == .invalidSetting(key: AVSampleRateKey, value: "0",
                                                                        reason: "the sample rate must be 8000–384000 Hz"))
        #expect(error("a.wav", [AVSampleRateKey: 44_100.5]) == .invalidSetting(key: AVSampleRateKey, value: "44100.5",
                                                                               reason: "not a whole number"))
        #expect(error("a.wav", [AVNumberOfChannelsKey: 9]) == .invalidSetting(key: AVNumberOfChannelsKey, value: "9",
                                                                              reason: "the channel count must be 1–8"))
        #expect(error("a.wav", [AVNumberOfChannelsKey: "two"]) == .invalidSetting(key: AVNumberOfChannelsKey, value: "two",
                                                                                  reason: "not a number"))
        #expect(error("a.wav", [AVLinearPCMBitDepthKey: 20]) == .invalidSetting(key: AVLinearPCMBitDepthKey, value: "20",
                                                                                reason: "integer PCM is 8, 16, 24 or 32 bits"))
        #expect(error("a.wav", [AVLinearPCMIsFloatKey: true, AVLinearPCMBitDepthKey: 16])
                == .invalidSetting(key: AVLinearPCMBitDepthKey, value: "16", reason: "floating-point PCM is 32 or 64 bits"))
        #expect(error("a.flac", [AVLinearPCMBitDepthKey: 32]) == .invalidSetting(key: AVLinearPCMBitDepthKey, value: "32",
                                                                                 reason: "FLAC is recorded at 16 or 24 bits"))
        #expect(error("a.wav", [AVLinearPCMIsBigEndianKey: true])?.description
                == "AVLinearPCMIsBigEndianKey = true: WAV and FLAC files are little-endian")
        #expect(error("a.wav", [AVFormatIDKey: kAudioFormatMPEG4AAC])?.description
                == "AVFormatIDKey = 'aac ': not recorded yet; the recorder writes linear PCM (.wav) and FLAC (.flac)")
        #expect(error("a.wav", [AVFormatIDKey: 1234]) == .invalidSetting(key: AVFormatIDKey, value: "1234",
                                                                         reason: "not a format the recorder knows"))
    }

    @Test func aFileTypeTheRecorderDoesNotWriteIsNamed() {
        #expect(throws: AudioRecorderError.unsupportedFileType(path: "/tmp/x.mp3", extension: "mp3", supported: ["wav", "flac"])) {
            try AudioRecorder(url: URL(fileURLWithPath: "/tmp/x.mp3"), settings: [:])
        }
        #expect(throws: AudioRecorderError.unsupportedFileType(path: "/tmp/noext", extension: "", supported: ["wav", "flac"])) {
            try AudioRecorder(url: URL(fileURLWithPath: "/tmp/noext"), settings: [:])
        }
        #expect(throws: AudioRecorderError.formatDoesNotFitFile(path: "/tmp/x.flac", format: "linear PCM", fileType: "FLAC")) {
            try AudioRecorder(url: URL(fileURLWithPath: "/tmp/x.flac"), settings: [AVFormatIDKey: kAudioFormatLinearPCM])
        }
        #expect(throws: TonearmError.invalidURL("http://host/x.wav")) {
            try AudioRecorder(url: URL(string: "http://host/x.wav")!, settings: [:])
        }
        #expect(AudioRecorderError.unsupportedFileType(path: "x.mp3", extension: "mp3", supported: ["wav", "flac"]).description
                == "x.mp3: cannot record to a '.mp3' file; the recorder writes .wav, .flac")
    }

    /// A recorder that was never started records nothing: no file, not recording, time 0.
    @Test func nothingIsCreatedBeforePrepare() throws {
        let path = "/tmp/tonearm-never-\(getpid()).wav"
        let r = try AudioRecorder(url: URL(fileURLWithPath: path), settings: [:])
        #expect(!r.isRecording && r.currentTime == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
        r.stop()
        #expect(!r.deleteRecording())
    }
}
