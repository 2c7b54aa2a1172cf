// SPDX-License-Identifier: GPL-3.0-or-later

/// Why watching a folder for changes could not start or stopped (the reason inside
/// ``TonearmError/watchFailed(path:failure:)``). The limits are the kernel's inotify settings,
/// named so that a user can raise them.
public enum WatchFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The limit of inotify watches per user (`fs.inotify.max_user_watches`, one watch per
    /// folder) is reached. `limit` is the setting's value, when it can be read.
    case watchLimit(limit: Int?)
    /// The limit of inotify instances per user (`fs.inotify.max_user_instances`) is reached, or
    /// the process has as many files open as it may.
    case instanceLimit(limit: Int?)
    /// The watched folder was deleted, moved away or unmounted.
    case folderGone
    /// A system call failed otherwise: `detail` is the system's message.
    case system(call: String, detail: String)

    public var description: String {
        switch self {
        case .watchLimit(let limit):
            "the system's limit\(limit.map { " of \($0)" } ?? "") inotify watches (one per folder) is reached; "
                + "raise fs.inotify.max_user_watches (sudo sysctl fs.inotify.max_user_watches=524288, "
                + "and a file in /etc/sysctl.d to keep it)"
        case .instanceLimit(let limit):
            "the system's limit\(limit.map { " of \($0)" } ?? "") inotify instances per user is reached "
                + "(raise fs.inotify.max_user_instances), or the process has as many files open as it may"
        case .folderGone: "the folder was deleted, moved away or unmounted; watching stopped"
        case .system(let call, let detail): "\(call) failed (\(detail))"
        }
    }
}
