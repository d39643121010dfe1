import DownloadEngine
import Foundation
import Logging
import SluiceCore

/// Actions on many jobs at once (`POST /jobs/pause`, `/jobs/resume`, `DELETE /jobs`), made of
/// the commands on one job, on the runner's actor: a selection's finished jobs the node left
/// to its store are held for the action, and scheduling waits for its end.
enum BulkCommands {
    /// Pauses every selected job that a pause changes; returns those, as they are now. Named
    /// jobs must all exist, or nothing changes.
    static func pauseAll(_ selection: JobSelection, on node: isolated JobScheduler) async throws -> [JobSnapshot] {
        // As for one job: the answer waits for the runs to stop, their checkpoints stored; a
        // job's state and the bytes its run leaves are one write (held from the pause on).
        var held: [String] = []
        defer { node.writes.release(held) }
        let paused = try await node.holdingSchedule {
            try await Self.bulk(
                selection,
                holding: { ids in
                    held = ids
                    node.writes.hold(ids)
                }, on: node
            ) { $0.pauseRequested() }
        }
        defer { letGoFinished(selection, on: node) }
        await JobCommands.settle(paused.map(\.id), on: node)
        node.writes.release(held)
        await JobCommands.stored(paused.map(\.id), on: node)
        // A run that placed its file meanwhile may have let its job go: the store has it.
        var answer: [JobSnapshot] = []
        for job in paused { if let now = try? await node.jobInPlace(id: job.id) { answer.append(now) } }
        return answer
    }

    /// Resumes every selected job that a resume changes; returns those.
    static func resumeAll(_ selection: JobSelection, on node: isolated JobScheduler) async throws -> [JobSnapshot] {
        let all = try await selected(selection, on: node)
        defer { letGoFinished(selection, on: node) }
        let ids = all.filter { node.jobs[$0].map { [.paused, .failed].contains($0.state) } ?? false }
        try await node.holdingSchedule {
            for id in ids {
                StoreCallBudget.renew()
                try await JobCommands.resumeHeld(id: id, on: node)
            }
        }
        await JobCommands.stored(ids, on: node)
        var resumed: [JobSnapshot] = []
        for id in ids { if let now = try? await JobCommands.answer(id, on: node) { resumed.append(now) } }
        return resumed
    }

    /// Deletes every job in `states` (each still in one of them when its turn comes);
    /// returns how many.
    static func deleteAll(states: Set<JobState>, deleteFile: Bool, on node: isolated JobScheduler) async throws -> Int {
        let selection = JobSelection.states(states)
        // The jobs this node holds, one at a time: a run to stop, dependents to tell.
        let ids = node.order.filter { node.jobs[$0].map(selection.contains) ?? false }
        defer { letGoFinished(selection, on: node) }
        var count = try await node.holdingSchedule {
            var count = 0
            for id in ids {
                guard let job = node.jobs[id], selection.contains(job) else { continue }
                // Each job's writes get the budget of one command.
                StoreCallBudget.renew()
                try await node.delete(id: id, deleteFile: deleteFile)
                count += 1
            }
            return count
        }
        count += try await deleteStored(JobState.finished.intersection(states), deleteFile: deleteFile, on: node)
        return count
    }

    /// At most this many stored jobs are read and removed together by a bulk delete.
    static let deletePage = 500

    /// Removes the finished jobs of `states` the node left to its store, a page at a time, each page in one transaction with its `removed` deliveries: a million finished
    /// jobs are never all held, nor removed one transaction each. One that a live job waits
    /// for goes the way of a single delete (its dependents are told).
    private static func deleteStored(_ states: Set<JobState>, deleteFile: Bool, on node: isolated JobScheduler) async throws -> Int {
        guard !states.isEmpty else { return 0 }
        var count = 0
        // A stop of the service (or of the request) ends the clear between two pages: the
        // rest stays stored, and the service exits in its 5 s (docs/settings.md, "Starting and
        // stopping").
        while node.jobs.storedOnly(in: states) > 0, !node.isShuttingDown, !Task.isCancelled {
            StoreCallBudget.renew()
            // Newest first; what a page removed is not in the next.
            guard let page = try await node.repository.page(states: states, limit: Self.deletePage, before: nil) else { break }
            let alone = page.filter { node.jobs[$0.id] == nil }
            guard !alone.isEmpty else { break }
            // Waited for by a held job: the single delete tells it.
            let waitedFor = { (id: String) in node.finishedDependencies[id] != nil || node.jobs.isWaitedFor(id) }
            for job in alone where waitedFor(job.id) {
                try await node.holdStored(job.id)
                defer { node.releaseHold(job.id) }
                try await node.delete(id: job.id, deleteFile: deleteFile)
                StoreCallBudget.renew()
            }
            // Read again after those deletes: a job held meanwhile is not the store's alone.
            let plain = alone.filter { node.jobs[$0.id] == nil && !waitedFor($0.id) }
            let removed = plain.flatMap { node.webhooks?.deliveries(for: .removed, job: $0) ?? [] }
            try await node.repository.delete(ids: plain.map(\.id), deliveries: removed)
            node.webhooks?.stored(removed)
            node.jobs.forgetStored(plain)
            for job in plain {
                node.book.removed(job.id, state: job.state)
                node.events.publish(.removed(id: job.id))
                // A failed job may have left its partial file.
                node.removePartialFiles(job.id)
                if deleteFile { JobCommands.removeFinishedFile(of: job, on: node) }
            }
            count += alone.count
            // Others' turn on this actor (a shutdown, a command) between two pages.
            await Task.yield()
        }
        return count
    }

    /// The ids of the selected jobs, oldest first. Finished ones the node left to its store
    /// are held again for the action (`letGoFinished` lets them go after it).
    private static func selected(_ selection: JobSelection, on node: isolated JobScheduler) async throws -> [String] {
        switch selection {
        case .ids(let ids, _):
            var held: [String] = []
            do {
                for id in ids {
                    try await node.holdStored(id)
                    held.append(id)
                }
                if let unknown = ids.first(where: { node.jobs[$0] == nil }) {
                    throw SluiceError(.invalidField, "ids names no job \(unknown)", field: "ids")
                }
            } catch {
                for id in held { node.releaseHold(id) }
                throw error
            }
        case .all, .states:
            // A pause or a resume changes a failed job only (a completed one refuses both).
            let stored: Set<JobState> = selection.contains(state: .failed) ? [.failed] : []
            if !stored.isEmpty, node.jobs.storedOnly(in: stored) > 0 {
                var before: String?
                var found: [JobSnapshot] = []
                while let page = try await node.repository.page(states: stored, limit: 1000, before: before), let last = page.last {
                    found += page.filter { node.jobs[$0.id] == nil }
                    before = last.id
                }
                node.jobs.adopt(found)
                // What they wait for, as the store has it (a dependency gone from the table
                // too), as `holdStored` reads it for one job.
                try await DependencyStates.read(Set(found.flatMap(\.after)), on: node)
            }
        }
        return node.order.filter { node.jobs[$0].map(selection.contains) ?? false }
    }

    /// Lets every finished job held for an action go back to the store alone (the jobs it
    /// named held by it until now).
    private static func letGoFinished(_ selection: JobSelection, on node: isolated JobScheduler) {
        if case .ids(let ids, _) = selection { for id in ids { node.releaseHold(id) } }
        for job in node.jobs.jobs(in: JobState.finished) { node.letGoIfFinished(job.id) }
    }

    private static func bulk(
        _ selection: JobSelection, holding: ([String]) -> Void = { _ in }, on node: isolated JobScheduler,
        _ event: (inout JobLifecycle) -> JobLifecycle.Action
    ) async throws -> [JobSnapshot] {
        var changed: [JobSnapshot] = []
        let ids = try await selected(selection, on: node)
        holding(ids)
        do {
            for id in ids {
                guard let before = node.jobs[id] else { continue }
                var probe = JobLifecycle(state: before.state)
                let action = event(&probe)
                if case .reject = action { continue }
                guard probe.state != before.state else { continue }
                StoreCallBudget.renew()
                changed.append(try await node.apply(id, event))
            }
        } catch {
            // The jobs the selection held go with the error (the caller lets go on success).
            letGoFinished(selection, on: node)
            throw error
        }
        return changed
    }
}
