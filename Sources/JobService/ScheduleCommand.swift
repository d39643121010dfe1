import DownloadEngine
import Foundation
import Logging
public import SluiceCore

/// `GET /schedule`'s answer: the table and what the queue runs with now.
public struct ScheduleStatus: Sendable, Equatable {
    public var schedule: Schedule
    public var inEffect: QueueInEffect

    public var json: JSONValue {
        guard case .object(var members) = schedule.json else { return schedule.json }
        members.append(("inEffect", inEffect.json))
        return .object(members)
    }
}

/// `PUT /schedule` on the runner's actor: stored first (nothing changes when the store
/// cannot write), then in effect at once; the other nodes of a cluster read it from the store
/// (`ScheduleService`).
enum ScheduleCommand {
    /// What the queue runs with, again: after a change of its own settings, of the
    /// schedule's state or of an override. A new rate applies to running downloads at once;
    /// fewer slots send jobs back, more start them.
    static func applyInEffect(on node: isolated JobScheduler) {
        let updated = node.timetable.inEffect(own: node.settings, at: node.configuration.clock.now())
        let before = node.inEffect
        guard updated != before else { return }
        node.inEffect = updated
        if updated.limitRate != before.limitRate { node.queueLimiter.setRate(updated.limitRate) }
        if updated.holds != before.holds { node.jobs.stampHolds(node.holds, now: node.configuration.clock.now()) }
        if updated.settings != before.settings || updated.holds != before.holds {
            node.logger.info(
                "the queue runs with maxActive \(updated.maxActive), limitRate \(updated.limitRate.map(String.init) ?? "none")\(updated.run ? "" : ", its window closed")"
            )
            node.schedule()
        }
    }

    /// The schedule evaluated at `now` (`ScheduleService`'s tick): what it sets applies when
    /// it changed. Returns when it next changes.
    static func evaluate(at now: Date, on node: isolated JobScheduler) -> Date? {
        if node.timetable.evaluate(at: now) || node.inEffect.next != node.timetable.next { applyInEffect(on: node) }
        // A new day or month: a reached quota holds no more.
        let wasReached = node.quota.reached
        if node.quota.roll(to: Int64(now.timeIntervalSince1970.rounded(.down)), zone: node.timetable.schedule.zone), wasReached,
            !node.quota.reached
        {
            node.logger.notice("a new period: the download quota holds no more")
            node.jobs.stampHolds(node.holds, now: now)
            node.schedule()
        }
        // A job's `startAt` (or `Retry-After`) reached by a step of the wall clock, which the
        // wake-up's sleep does not see.
        if let due = node.jobs.earliestRetry, due <= now { node.wakeNow() }
        return node.timetable.next
    }

    static func replace(with schedule: Schedule, on node: isolated JobScheduler) async throws -> ScheduleStatus {
        try await node.repository.saveScheduleText(schedule.json.text)
        node.timetable.replace(with: schedule, at: node.configuration.clock.now())
        applyInEffect(on: node)
        node.logger.info("the schedule changed: \(schedule.rules.count) rule(s) in \(schedule.timeZone)")
        await ClusterClaims.claimed(on: node)
        return node.scheduleStatus()
    }

    /// The schedule the store holds, taken when another node stored a new one.
    static func reload(_ stored: Schedule, on node: isolated JobScheduler) async {
        guard stored != node.timetable.schedule else { return }
        node.timetable.replace(with: stored, at: node.configuration.clock.now())
        applyInEffect(on: node)
        node.logger.info("the schedule changed in the store: \(stored.rules.count) rule(s) in \(stored.timeZone)")
        await ClusterClaims.claimed(on: node)
    }

    /// Takes the stored schedule if another node changed it; a store that does not answer
    /// leaves the one in effect.
    static func reloadStored(on node: isolated JobScheduler) async {
        guard node.storeAnswers else { return }
        let seen = node.timetable.replacements
        let read = await StoreCallBudget.$current.withValue(StoreCallBudget(node.configuration.storeBudget)) {
            try? await node.repository.scheduleText()
        }
        guard let text = read ?? nil, let json = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
            let stored = try? Schedule(json: json)
        else { return }
        // Replaced here meanwhile: what was read is older.
        guard node.timetable.replacements == seen else { return }
        await reload(stored, on: node)
    }
}
