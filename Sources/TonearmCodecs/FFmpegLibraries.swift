// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpegLazy

/// FFmpeg's libraries, which Tonearm loads on their first use (CFFmpegLazy), not at start.
public enum FFmpegLibraries {
    /// Starts loading the libraries on a thread of their own and returns at once: for a command
    /// that is about to decode (`tonearm play VIDEO`), so that the loading (tens of milliseconds:
    /// about 90 libraries) overlaps its argument parsing and settings. The first FFmpeg call waits
    /// until they are loaded. A library that cannot be loaded is reported at that first call (the
    /// process ends there with status 127, as it did without this), never by the loading thread.
    /// Any thread; nothing happens once they are loaded.
    public static func loadInBackground() {
        tonearm_ffmpeg_load_in_background()
    }

    /// Loads the libraries now, or waits until a load in progress (``loadInBackground()``) is
    /// over; whether they are loaded (a library that cannot be loaded is said at the first FFmpeg
    /// call). Any thread.
    @discardableResult
    public static func load() -> Bool { tonearm_ffmpeg_load() != 0 }

    /// Whether the libraries are loaded in this process.
    public static var isLoaded: Bool { tonearm_ffmpeg_is_loaded() != 0 }
}
