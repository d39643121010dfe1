/// Which jobs a bulk action (`POST /jobs/pause`, `POST /jobs/resume`, `DELETE /jobs`)
/// acts on: those in some states (`?state=`), those named (`{"ids": [...]}`), those named
/// that are in some states (both), or all.
public enum JobSelection: Sendable, Equatable {
    case all
    case states(Set<JobState>)
    /// Every id must name a job; with `states`, only those in them are acted on.
    case ids([String], states: Set<JobState>? = nil)

    /// `?state=a,b`: known states only, else `invalid_field` naming `state`. Empty items
    /// are skipped (`,failed,` is `failed`), as the spec's pattern allows.
    public static func states(parsing text: String) throws -> Set<JobState> {
        try Set(
            text.split(separator: ",").map { name in
                guard let state = JobState(rawValue: String(name)) else {
                    throw SluiceError(
                        .invalidField,
                        "state must be a comma-separated list of \(JobState.allCases.map(\.rawValue).joined(separator: ", "))",
                        field: "state"
                    )
                }
                return state
            }
        )
    }

    /// Whether the selection takes every job in `state` (`all`, or a list of states that names
    /// it); a list of ids takes no state whole.
    public func contains(state: JobState) -> Bool {
        switch self {
        case .all: true
        case .states(let states): states.contains(state)
        case .ids: false
        }
    }

    public func contains(_ job: JobSnapshot) -> Bool {
        switch self {
        case .all: true
        case .states(let states): states.contains(job.state)
        case .ids(let ids, let states): ids.contains(job.id) && (states?.contains(job.state) ?? true)
        }
    }
}

/// The body of a bulk action that names jobs: `{"ids": ["ID", ...]}`, 1 to 1000 of them.
public struct JobIDList: Sendable, Equatable, Decodable {
    public var ids: [String]

    public init(from decoder: any Decoder) throws {
        let body = try PatchBody(decoder, allowed: ["ids"])
        guard let ids = try body.value([String].self, "ids") else {
            throw SluiceError(.invalidField, "ids is required: a list of job ids", field: "ids")
        }
        guard (1...1000).contains(ids.count) else {
            throw SluiceError(.invalidField, "ids must list 1 to 1000 jobs", field: "ids")
        }
        self.ids = ids
    }
}
