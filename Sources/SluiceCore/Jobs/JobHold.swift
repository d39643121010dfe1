public import Foundation

/// What holds a `queued` job back (CONTRACT.md §7, `heldBy`): one visible reason, the job
/// taking no slot meanwhile and starting by itself when it clears.
public enum JobHold: String, Sendable, Equatable, CaseIterable {
    case startAt, window, quota, disk, url, storage, dependencies
}

/// The conditions of the whole queue that hold jobs back, and the rule that names one reason
/// per job: its own `startAt` first, then the queue's (a closed window, for a job that does
/// not ignore the schedule; a full disk), and `dependencies` only when nothing else holds it.
public struct QueueHolds: Sendable, Equatable {
    public var windowClosed = false
    /// The free space is under the floor: nothing starts.
    public var diskLow = false
    /// Jobs that met a full disk, waiting for space to come back (`DiskWatch`).
    public var diskWaiting: Set<String> = []
    /// A quota (a day's, a month's) is reached: nothing runs until the period ends.
    public var quotaReached = false

    public init(windowClosed: Bool = false, diskLow: Bool = false, diskWaiting: Set<String> = [], quotaReached: Bool = false) {
        self.windowClosed = windowClosed
        self.diskLow = diskLow
        self.diskWaiting = diskWaiting
        self.quotaReached = quotaReached
    }

    public func heldBy(_ job: JobSnapshot, now: Date) -> JobHold? {
        guard job.state == .queued else { return nil }
        if let startAt = job.startAt, startAt > now { return .startAt }
        if diskLow || diskWaiting.contains(job.id) { return .disk }
        if quotaReached { return .quota }
        if windowClosed, !job.ignoreSchedule { return .window }
        return job.waitingFor.isEmpty ? nil : .dependencies
    }

    /// Whether the queue's conditions let `job` start (its own are the queue plan's).
    public func admits(_ job: JobSnapshot) -> Bool {
        !diskLow && !quotaReached && !diskWaiting.contains(job.id) && (!windowClosed || job.ignoreSchedule)
    }

    /// Whether anything of the queue's holds a job that is ready by its own fields.
    public var holdsAny: Bool { windowClosed || diskLow || quotaReached || !diskWaiting.isEmpty }

    /// How many ready jobs of each priority the queue reads for `wanted` starts: none when
    /// nothing may start (a low disk, a quota), every one while the window is closed (only
    /// those that ignore the schedule may start, wherever they are), and `wanted` plus the
    /// jobs waiting for space (which may be among the first) otherwise. Every `schedule()`
    /// reads this many: a long queue is not read whole for one job waiting for space.
    public func readLimit(wanted: Int) -> Int {
        if diskLow || quotaReached { return 0 }
        if windowClosed { return .max }
        return wanted + diskWaiting.count
    }
}
