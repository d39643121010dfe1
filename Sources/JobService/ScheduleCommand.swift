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
    static func replace(with schedule: Schedule, on node: isolated JobScheduler) async throws -> ScheduleStatus {
        try await node.repository.saveScheduleText(schedule.json.text)
        node.timetable.replace(with: schedule, at: node.configuration.clock.now())
        node.applyInEffect()
        node.logger.info("the schedule changed: \(schedule.rules.count) rule(s) in \(schedule.timeZone)")
        await ClusterClaims.claimed(on: node)
        return node.scheduleStatus()
    }

    /// The schedule the store holds, taken when another node stored a new one.
    static func reload(_ stored: Schedule, on node: isolated JobScheduler) async {
        guard stored != node.timetable.schedule else { return }
        node.timetable.replace(with: stored, at: node.configuration.clock.now())
        node.applyInEffect()
        node.logger.info("the schedule changed in the store: \(stored.rules.count) rule(s) in \(stored.timeZone)")
        await ClusterClaims.claimed(on: node)
    }
}
