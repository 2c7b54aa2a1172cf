// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmEngine
import TonearmCodecs
import TonearmOutput

extension AudioPlayer {
    /// Creates a player for the audio file at `url` (any format FFmpeg decodes).
    /// - Parameter output: makes the output driver when the player is prepared; by default
    ///   ``OutputSelection/automatic`` (PulseAudio when the program registered it with
    ///   `PulseOutput.register()` and a server answers, else the silent null output).
    /// - Throws: ``TonearmError`` naming the file and what is wrong with it.
    public convenience init(contentsOf url: URL,
                            output: @escaping @Sendable () throws -> any AudioOutputDriver = AudioPlayer.defaultOutput) throws {
        let file = try AudioFile(forReading: url)
        self.init(source: file, url: url, data: nil, output: output)
    }

    /// Creates a player for an ``AudioFile`` already opened (its tags and format can then be
    /// shown before playing). The player takes the file over: do not read from it afterwards.
    public convenience init(file: AudioFile,
                            output: @escaping @Sendable () throws -> any AudioOutputDriver = AudioPlayer.defaultOutput) {
        self.init(source: file, url: file.url, data: nil, output: output)
    }

    /// Creates a player for encoded audio held in memory (a whole file's bytes).
    /// - Throws: ``TonearmError`` when the bytes are not playable audio.
    public convenience init(data: Data,
                            output: @escaping @Sendable () throws -> any AudioOutputDriver = AudioPlayer.defaultOutput) throws {
        let file = try AudioFile(data: [UInt8](data), nameHint: nil)
        self.init(source: file, url: nil, data: data, output: output)
    }

    /// The output used when none is given: PulseAudio/PipeWire when the program registered it
    /// (`PulseOutput.register()`, see ``OutputDriverRegistry``) and a server answers, otherwise
    /// the real-time null output.
    ///
    /// The server is probed once per process, the first time a player needs it; the choice (and
    /// the notice to show when nothing will be heard) is ``automaticOutput``. The buffering is
    /// ``OutputBuffering/steady`` (short at the start, long after a second of play): a file player
    /// flushes the output on a seek or a rate change, so the long buffer never delays what is asked
    /// for. (Sounds that must be heard at once are ``SystemSound``'s, which keeps a short buffer.)
    public static let defaultOutput: @Sendable () throws -> any AudioOutputDriver = {
        automaticOutput.selection.makeDriver(buffering: .steady)
    }

    /// The output chosen for players created without one (see ``defaultOutput``).
    public static var automaticOutput: OutputSelection.AutomaticChoice { AutomaticOutputProbe.choice }

}

/// Probes for a sound server once, on first use (an immutable, lazily initialised value).
private enum AutomaticOutputProbe {
    static let choice = OutputSelection.automatic()
}
