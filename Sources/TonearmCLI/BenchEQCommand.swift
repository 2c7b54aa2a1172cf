// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// `tonearm bench-eq`: times the equaliser kernel alone on one core (hidden; used by
/// scripts/bench).
struct BenchEQCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-eq",
        abstract: "Time the equalizer DSP alone on generated audio and print how many times real time it ran.",
        discussion: """
            Examples:
              tonearm bench-eq
              tonearm bench-eq --seconds 60 --eq rock
            """,
        shouldDisplay: false)

    @Option(name: .long, help: "Seconds of audio to process.")
    var seconds: Double = 600

    @Option(name: .long, help: "Interleaved channels.")
    var channels: Int = 2

    @Option(name: .long, help: "Sample rate in Hz.")
    var sampleRate: Double = 44_100

    @Option(name: .long, help: "Frames per process call.")
    var block: Int = 1024

    @Option(name: .long, help: "Equalizer: a preset or FREQ:GAIN,…")
    var eq: String = "31:+3,62:+2,125:0,250:-1,500:-2,1k:-1,2k:0,4k:+2,8k:+3,16k:+4"

    @Option(name: .long, help: "Timed repetitions; the best is printed.")
    var repeats: Int = 3

    func validate() throws {
        guard seconds > 0, channels > 0, sampleRate > 0, block > 0, repeats > 0 else {
            throw ValidationError("--seconds, --channels, --sample-rate, --block and --repeats must be positive")
        }
        do { _ = try EQChoice(parsing: eq) } catch { throw ValidationError("\(error)") }
    }

    func run() throws {
        let choice = try EQChoice(parsing: eq)
        var equalizer: Equalizer
        switch choice {
        case .preset(let p):
            equalizer = Equalizer(preset: p, sampleRate: sampleRate, channels: channels)
        case .bands(let b):
            equalizer = Equalizer(bands: b, sampleRate: sampleRate, channels: channels)
        }
        var best = 0.0
        var all: [Double] = []
        for _ in 0..<repeats {
            let f = equalizer.measureRealTimeFactor(seconds: seconds, blockFrames: block)
            all.append(f)
            best = max(best, f)
        }
        let bandCount = equalizer.bands.count
        print("equalizer: \(bandCount) bands × \(channels) channels, \(Int(sampleRate)) Hz, \(block)-frame blocks, "
              + "\(seconds) s of audio; runs: " + all.map { String(format: "%.0f×", $0) }.joined(separator: " "))
        print(String(format: "%.0f× real time", best))
    }
}
