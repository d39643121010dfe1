import Testing

@testable import SluiceCore

/// The table of docs/job-states.md, row by row.
@Suite struct JobLifecycleTests {
    struct Row: Sendable, CustomStringConvertible {
        var from: JobState
        var event: String
        var to: JobState
        var action: JobLifecycle.Action
        var description: String { "\(from) + \(event)" }
    }

    static let rows: [Row] = [
        Row(from: .queued, event: "pause", to: .paused, action: .none),
        Row(from: .queued, event: "resume", to: .queued, action: .none),
        Row(from: .queued, event: "delete", to: .queued, action: .remove(stopFirst: false)),
        Row(from: .queued, event: "slot", to: .running, action: .startDownload),
        Row(from: .queued, event: "finished", to: .completed, action: .none),
        Row(from: .queued, event: "failed", to: .queued, action: .none),
        Row(from: .queued, event: "started", to: .queued, action: .enqueue),
        Row(from: .running, event: "pause", to: .paused, action: .stopDownload),
        Row(from: .running, event: "resume", to: .running, action: .none),
        Row(from: .running, event: "delete", to: .running, action: .remove(stopFirst: true)),
        Row(from: .running, event: "finished", to: .completed, action: .none),
        Row(from: .running, event: "failed", to: .failed, action: .none),
        Row(from: .running, event: "retry later", to: .queued, action: .none),
        Row(from: .queued, event: "retry later", to: .queued, action: .none),
        Row(from: .paused, event: "retry later", to: .paused, action: .none),
        Row(from: .running, event: "stopping", to: .running, action: .stopDownload),
        Row(from: .running, event: "started", to: .queued, action: .enqueue),
        Row(from: .paused, event: "pause", to: .paused, action: .none),
        Row(from: .paused, event: "resume", to: .queued, action: .enqueue),
        Row(from: .paused, event: "delete", to: .paused, action: .remove(stopFirst: false)),
        Row(from: .paused, event: "finished", to: .completed, action: .none),
        Row(from: .paused, event: "failed", to: .paused, action: .none),
        Row(from: .paused, event: "stopping", to: .paused, action: .none),
        Row(from: .paused, event: "started", to: .paused, action: .none),
        Row(from: .completed, event: "pause", to: .completed, action: .reject("a completed job cannot be paused")),
        Row(from: .completed, event: "resume", to: .completed, action: .reject("a completed job cannot be resumed")),
        Row(from: .completed, event: "delete", to: .completed, action: .remove(stopFirst: false)),
        Row(from: .completed, event: "started", to: .completed, action: .none),
        Row(from: .failed, event: "pause", to: .paused, action: .none),
        Row(from: .failed, event: "resume", to: .queued, action: .enqueue),
        Row(from: .failed, event: "delete", to: .failed, action: .remove(stopFirst: false)),
        Row(from: .failed, event: "started", to: .failed, action: .none),
    ]

    @Test(arguments: rows)
    func transition(row: Row) {
        var lifecycle = JobLifecycle(state: row.from)
        let action: JobLifecycle.Action
        switch row.event {
        case "pause": action = lifecycle.pauseRequested()
        case "resume": action = lifecycle.resumeRequested()
        case "delete": action = lifecycle.deleteRequested()
        case "slot": action = lifecycle.slotGranted()
        case "finished": action = lifecycle.downloadFinished()
        case "failed": action = lifecycle.downloadFailed()
        case "retry later": action = lifecycle.retryScheduled()
        case "stopping": action = lifecycle.serviceStopping()
        case "started": action = lifecycle.serviceStarted()
        default: preconditionFailure("unknown event \(row.event)")
        }
        #expect(action == row.action)
        #expect(lifecycle.state == row.to)
    }
}

@Suite struct CreateJobRequestTests {
    @Test(
        arguments: [
            ("https://example.com/a.iso", nil),
            ("HTTP://EXAMPLE.COM", nil),
            ("http://user:pw@host:8080/x?y#z", nil),
            ("http://[::1]:8080/x", nil),
            ("ftp://example.com/a", "unsupported_scheme"),
            ("javascript:alert(1)", "unsupported_scheme"),
            ("example.com/a", "invalid_url"),
            ("http:/example.com", "invalid_url"),
            ("http://", "invalid_url"),
            ("http:// host/", "invalid_url"),
            ("", "invalid_url"),
        ] as [(String, String?)])
    func urls(url: String, code: String?) {
        do {
            try CreateJobRequest.validateURL(url)
            #expect(code == nil)
        } catch let error as SluiceError {
            #expect(error.code.rawValue == code)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
