// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm

/// The commented example `tonearm config --init` writes: every setting, commented out, with
/// what it takes. Uncommenting a `# key = value` line gives a valid setting.
enum ConfigExample {
    static var text: String { """
        # Tonearm's settings. Flags on the command line win over these; `tonearm config` shows
        # what is in effect and where each value came from. Uncomment a line to use it.

        [playback]
        # Where to play: pulse, null, null:untimed or file:PATH.wav (default: PulseAudio if a
        # server answers, else null).
        # output = "pulse"
        # The PulseAudio output (sink) to play to; `tonearm outputs` lists them.
        # device = "alsa_output.pci-0000_00_1f.3.analog-stereo"
        # The volume, 0-100, until there is a last run's to start from (--volume sets it).
        # volume = 80
        # Equalizer: a preset or bands as FREQ:GAIN,… (for example "31:+3,62:+2,1k:-1").
        # The presets: \(EQPreset.all.map(\.name).joined(separator: ", ")).
        # eq = "flat"
        # ReplayGain: off, track or album; and the pre-amp in dB (-20 to +20).
        # replaygain = "album"
        # preamp = 0.0
        # Crossfade between items in seconds, 0-30 (0: gapless).
        # crossfade = 0.0
        # Repeat: off, one or all; shuffle: true or false.
        # repeat = "off"
        # shuffle = false

        [keys]
        # The play screen's keys, by action: one key ("q") or several (["q", "Q"]).
        # quit = ["q", "Q"]

        [library]
        # The media library's database (default: $XDG_DATA_HOME/tonearm/library.sqlite) and the
        # music folders. `~/` is the home folder; relative paths start at this file's folder.
        # database = "~/.local/share/tonearm/library.sqlite"
        # folders = ["~/Music"]

        [daemon]
        # `tonearm daemon`, the background player driven over the MPD protocol. Each flag of
        # the same name wins over these.
        # The music folders (--music), the database (lsinfo, find, update), watched: the first
        # is MPD's music folder, each other one a top-level folder of it under its name.
        # music = ["~/Music"]
        # TCP addresses to listen on (--listen), [] for none; the Unix socket
        # $XDG_RUNTIME_DIR/tonearm/mpd.sock is always there.
        # listen = ["127.0.0.1:6600"]
        # Where to play (--output): pulse or null (default: PulseAudio if a server answers).
        # outputs = ["pulse"]
        # Passwords as MPD's: "SECRET@PERMISSIONS" (read, add, player, control, admin). Here
        # rather than as --password, which `ps` shows; keep this file readable by you only.
        # password = ["secret@read,add,control,admin"]
        # What a client may do before it sends a password (default: everything without a
        # password, nothing with one), and a client on the Unix socket (default: the same).
        # default_permissions = "read"
        # local_permissions = "read,add,control,admin"
        # Play along with other Tonearm players (--mix) instead of pausing while one plays
        # and playing on when it ends.
        # mix = false
        # The web remote (--http): a page for any browser or phone at http://ADDR:PORT/.
        # true: 127.0.0.1:6680 (this machine only); "0.0.0.0:6680" for the network, which
        # needs a password above (the page asks for it). Default: off.
        # http = "127.0.0.1:6680"

        """
    }
}
