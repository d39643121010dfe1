import DownloadEngine
import Foundation
import Logging
public import SluiceCore

/// Actions on many jobs at once, and what a job's file looks like inside.
extension JobScheduler {
    /// Pauses every selected job that a pause changes; returns those, as they are now. Named
    /// jobs must all exist, or nothing changes.
    public func pauseAll(_ selection: JobSelection) async throws -> [JobSnapshot] {
        // As for one job: the answer waits for the runs to stop, their checkpoints stored; a
        // job's state and the bytes its run leaves are one write (held from the pause on).
        var held: [String] = []
        defer { writes.release(held) }
        let paused = try await holdingSchedule {
            try await bulk(
                selection,
                holding: { ids in
                    held = ids
                    writes.hold(ids)
                }
            ) { $0.pauseRequested() }
        }
        defer { letGoFinished(selection) }
        await settle(paused.map(\.id))
        writes.release(held)
        await stored(paused.map(\.id))
        // A run that placed its file meanwhile may have let its job go: the store has it.
        var answer: [JobSnapshot] = []
        for job in paused { if let now = try? await jobInPlace(id: job.id) { answer.append(now) } }
        return answer
    }

    /// Resumes every selected job that a resume changes; returns those.
    public func resumeAll(_ selection: JobSelection) async throws -> [JobSnapshot] {
        let all = try await selected(selection)
        defer { letGoFinished(selection) }
        let ids = all.filter { jobs[$0].map { [.paused, .failed].contains($0.state) } ?? false }
        try await holdingSchedule {
            for id in ids {
                StoreCallBudget.renew()
                try await resumeHeld(id: id)
            }
        }
        await stored(ids)
        var resumed: [JobSnapshot] = []
        for id in ids { if let now = try? await answer(id) { resumed.append(now) } }
        return resumed
    }

    /// Deletes every job in `states` (each still in one of them when its turn comes);
    /// returns how many.
    public func deleteAll(states: Set<JobState>, deleteFile: Bool) async throws -> Int {
        let selection = JobSelection.states(states)
        // The jobs this node holds, one at a time: a run to stop, dependents to tell.
        let ids = order.filter { jobs[$0].map(selection.contains) ?? false }
        defer { letGoFinished(selection) }
        var count = try await holdingSchedule {
            var count = 0
            for id in ids {
                guard let job = jobs[id], selection.contains(job) else { continue }
                // Each job's writes get the budget of one command.
                StoreCallBudget.renew()
                try await delete(id: id, deleteFile: deleteFile)
                count += 1
            }
            return count
        }
        count += try await deleteStored(JobState.finished.intersection(states), deleteFile: deleteFile)
        return count
    }

    /// At most this many stored jobs are read and removed together by a bulk delete.
    static let deletePage = 500

    /// Removes the finished jobs of `states` the node left to its store, a page at a time, each page in one transaction with its `removed` deliveries: a million finished
    /// jobs are never all held, nor removed one transaction each. One that a live job waits
    /// for goes the way of a single delete (its dependents are told).
    private func deleteStored(_ states: Set<JobState>, deleteFile: Bool) async throws -> Int {
        guard !states.isEmpty else { return 0 }
        var count = 0
        // A stop of the service (or of the request) ends the clear between two pages: the
        // rest stays stored, and the service exits in its 5 s (docs/settings.md, "Starting and
        // stopping").
        while jobs.storedOnly(in: states) > 0, !isShuttingDown, !Task.isCancelled {
            StoreCallBudget.renew()
            // Newest first; what a page removed is not in the next.
            guard let page = try await repository.page(states: states, limit: Self.deletePage, before: nil) else { break }
            let alone = page.filter { jobs[$0.id] == nil }
            guard !alone.isEmpty else { break }
            // Waited for by a held job: the single delete tells it.
            let waitedFor = { (id: String) in self.finishedDependencies[id] != nil || self.jobs.isWaitedFor(id) }
            for job in alone where waitedFor(job.id) {
                try await holdStored(job.id)
                defer { releaseHold(job.id) }
                try await delete(id: job.id, deleteFile: deleteFile)
                StoreCallBudget.renew()
            }
            // Read again after those deletes: a job held meanwhile is not the store's alone.
            let plain = alone.filter { jobs[$0.id] == nil && !waitedFor($0.id) }
            let removed = plain.flatMap { webhooks?.deliveries(for: .removed, job: $0) ?? [] }
            try await repository.delete(ids: plain.map(\.id), deliveries: removed)
            webhooks?.stored(removed)
            jobs.forgetStored(plain)
            for job in plain {
                book.removed(job.id, state: job.state)
                events.publish(.removed(id: job.id))
                // A failed job may have left its partial file.
                removePartialFiles(job.id)
                if deleteFile { removeFinishedFile(of: job) }
            }
            count += alone.count
            // Others' turn on this actor (a shutdown, a command) between two pages.
            await Task.yield()
        }
        return count
    }

    /// Which parts of the job's file are on disk: live from a running download, else from
    /// its checkpoint; a completed job's file is one whole segment.
    public func segments(id: String) async throws -> [JobSegment] {
        guard let job = try await jobInPlace(id: id) else { throw SluiceError(.notFound, "no job \(id)") }
        if let run = runs.running(id) { return run.download.segments() }
        if job.state == .completed {
            let size = job.bytesTotal ?? job.bytesDone
            return size > 0 ? [JobSegment(start: 0, end: size, done: size, active: false)] : []
        }
        guard let checkpoint = try await repository.checkpoint(id: id), let total = checkpoint.totalBytes else { return [] }
        return JobSegment.stored(written: checkpoint.writtenRanges, total: total)
    }

    /// The ids of the selected jobs, oldest first. Finished ones the node left to its store
    /// are held again for the action (`letGoFinished` lets them go after it).
    private func selected(_ selection: JobSelection) async throws -> [String] {
        switch selection {
        case .ids(let ids, _):
            var held: [String] = []
            do {
                for id in ids {
                    try await holdStored(id)
                    held.append(id)
                }
                if let unknown = ids.first(where: { jobs[$0] == nil }) {
                    throw SluiceError(.invalidField, "ids names no job \(unknown)", field: "ids")
                }
            } catch {
                for id in held { releaseHold(id) }
                throw error
            }
        case .all, .states:
            // A pause or a resume changes a failed job only (a completed one refuses both).
            let stored: Set<JobState> = selection.contains(state: .failed) ? [.failed] : []
            if !stored.isEmpty, jobs.storedOnly(in: stored) > 0 {
                var before: String?
                var found: [JobSnapshot] = []
                while let page = try await repository.page(states: stored, limit: 1000, before: before), let last = page.last {
                    found += page.filter { jobs[$0.id] == nil }
                    before = last.id
                }
                jobs.adopt(found)
                // What they wait for, as the store has it (a dependency gone from the table
                // too), as `holdStored` reads it for one job.
                try await readDependencyStates(Set(found.flatMap(\.after)))
            }
        }
        return order.filter { jobs[$0].map(selection.contains) ?? false }
    }

    /// Lets every finished job held for an action go back to the store alone (the jobs it
    /// named held by it until now).
    private func letGoFinished(_ selection: JobSelection) {
        if case .ids(let ids, _) = selection { for id in ids { releaseHold(id) } }
        for job in jobs.jobs(in: JobState.finished) { letGoIfFinished(job.id) }
    }

    private func bulk(
        _ selection: JobSelection, holding: ([String]) -> Void = { _ in }, _ event: (inout JobLifecycle) -> JobLifecycle.Action
    ) async throws -> [JobSnapshot] {
        var changed: [JobSnapshot] = []
        let ids = try await selected(selection)
        holding(ids)
        do {
            for id in ids {
                guard let before = jobs[id] else { continue }
                var probe = JobLifecycle(state: before.state)
                let action = event(&probe)
                if case .reject = action { continue }
                guard probe.state != before.state else { continue }
                StoreCallBudget.renew()
                changed.append(try await apply(id, event))
            }
        } catch {
            // The jobs the selection held go with the error (the caller lets go on success).
            letGoFinished(selection)
            throw error
        }
        return changed
    }
}
