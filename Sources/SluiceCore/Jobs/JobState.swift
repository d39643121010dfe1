/// Where a job is in its life (docs/api.md, "A job"; docs/job-states.md).
public enum JobState: String, Codable, Sendable, CaseIterable, Hashable {
    case queued, running, paused, completed, failed

    /// Queued, running or paused: a job the service holds in memory. A finished one
    /// (completed, failed) may live in the store only.
    public var isLive: Bool { self == .queued || self == .running || self == .paused }

    public static let live: Set<JobState> = [.queued, .running, .paused]
    public static let finished: Set<JobState> = [.completed, .failed]
}

/// The job lifecycle as an explicit state machine: one method per event, each returning what
/// the scheduler must do. A user event that the state does not allow is a rejection (409); an
/// engine event that cannot happen in the state is a programming error.
public struct JobLifecycle: Sendable, Equatable {
    public enum Action: Equatable, Sendable {
        /// Nothing to do (the event was idempotent).
        case none
        /// The job may start when a slot is free.
        case enqueue
        /// Start the download now.
        case startDownload
        /// Stop the running download; it checkpoints.
        case stopDownload
        /// Stop the download if it runs, then remove its files and record.
        case remove(stopFirst: Bool)
        /// The request is not allowed in this state.
        case reject(String)
    }

    public private(set) var state: JobState

    public init(state: JobState) {
        self.state = state
    }

    // MARK: User events

    public mutating func pauseRequested() -> Action {
        switch state {
        case .queued, .failed:
            state = .paused
            return .none
        case .running:
            state = .paused
            return .stopDownload
        case .paused:
            return .none
        case .completed:
            return .reject("a completed job cannot be paused")
        }
    }

    public mutating func resumeRequested() -> Action {
        switch state {
        case .paused, .failed:
            state = .queued
            return .enqueue
        case .queued, .running:
            return .none
        case .completed:
            return .reject("a completed job cannot be resumed")
        }
    }

    public mutating func deleteRequested() -> Action {
        .remove(stopFirst: state == .running)
    }

    // MARK: Scheduler and engine events

    /// A slot is free and this job is next.
    public mutating func slotGranted() -> Action {
        guard state == .queued else { preconditionFailure("slot granted to a \(state) job") }
        state = .running
        return .startDownload
    }

    /// The download finished and the file is in place. A pause (or a pause and a resume
    /// still waiting for a slot) that raced with placing the file loses: the file is done,
    /// and taking it back would leave a finished file no job owns.
    public mutating func downloadFinished() -> Action {
        guard state == .running || state == .paused || state == .queued else { preconditionFailure("a \(state) job finished") }
        state = .completed
        return .none
    }

    /// The download failed for good.
    public mutating func downloadFailed() -> Action {
        switch state {
        case .running:
            state = .failed
            return .none
        case .paused, .queued:
            // The user paused (or paused and resumed) while it was failing: keep their choice.
            return .none
        case .completed, .failed:
            preconditionFailure("a \(state) job failed")
        }
    }

    /// The remote asked for a long wait (`Retry-After`): the download stopped after a
    /// checkpoint and the job waits `queued`, its slot given to another.
    public mutating func retryScheduled() -> Action {
        switch state {
        case .running:
            state = .queued
            return .none
        case .queued, .paused:
            // The user acted meanwhile: keep their choice.
            return .none
        case .completed, .failed:
            preconditionFailure("a \(state) job scheduled a retry")
        }
    }

    /// A dependency failed or was deleted while the job waited for it.
    public mutating func dependencyFailed() -> Action {
        guard state == .queued else { return .none }
        state = .failed
        return .none
    }

    /// The queue runs more jobs than it now allows (`maxActive` lowered), or the job's new
    /// dependencies are not complete: it goes back to waiting, after a checkpoint.
    public mutating func sentBack() -> Action {
        guard state == .running else { return .none }
        state = .queued
        return .stopDownload
    }

    /// The service is stopping: the job stays `running` in the store so the next start resumes it.
    public mutating func serviceStopping() -> Action {
        state == .running ? .stopDownload : .none
    }

    /// On start after any stop: what was running or queued runs again.
    public mutating func serviceStarted() -> Action {
        switch state {
        case .running, .queued:
            state = .queued
            return .enqueue
        case .paused, .completed, .failed:
            return .none
        }
    }
}
