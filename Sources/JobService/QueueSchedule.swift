public import Foundation
public import SluiceCore

/// The schedule as a runner keeps it: the table, what it sets now, when that next changes,
/// and a manual override. Evaluated, never stepped: `evaluate(at:)` computes the state from
/// the table and the instant alone, so a tick, a restart, a step of the wall clock and a new
/// table are all the same call.
public struct QueueSchedule: Sendable {
    public private(set) var schedule: Schedule
    private var evaluator: ScheduleEvaluator
    public private(set) var state = ScheduleState()
    public private(set) var next: Date?
    public private(set) var override: QueueOverride?
    /// Whether `next` must be found again (a new table, or a change came).
    private var nextStale = true
    /// How many times the table was replaced: a read of the stored one that began before a
    /// replacement is older than it.
    public private(set) var replacements = 0
    /// The instant last evaluated: an earlier one means the wall clock stepped back.
    private var lastInstant = Int64.min

    public init(_ schedule: Schedule = .empty) {
        self.schedule = schedule
        evaluator = ScheduleEvaluator(schedule)
    }

    /// What is in effect at `now`; true when that changed (or the override ran out).
    @discardableResult
    public mutating func evaluate(at now: Date) -> Bool {
        let instant = Int64(now.timeIntervalSince1970.rounded(.down))
        let state = evaluator.state(at: instant)
        if instant < lastInstant { nextStale = true }
        lastInstant = instant
        var changed = state != self.state
        if changed || nextStale || next.map({ $0 <= now }) ?? false {
            next = evaluator.nextChange(after: instant).map { Date(timeIntervalSince1970: TimeInterval($0)) }
            nextStale = false
        }
        self.state = state
        if let override, override.until <= now {
            self.override = nil
            changed = true
        }
        return changed
    }

    /// A new table, in effect at once; an override of the old one ends.
    public mutating func replace(with schedule: Schedule, at now: Date) {
        self.schedule = schedule
        evaluator = ScheduleEvaluator(schedule)
        replacements += 1
        override = nil
        next = nil
        nextStale = true
        evaluate(at: now)
    }

    /// A `PATCH /queue` at `now`: the fields it changes that a rule sets now are overridden
    /// until `until`, or the schedule's next change (with none, for good: the queue's own
    /// value is what it names). Fields no rule sets need no override.
    public mutating func overridden(by patch: QueueSettingsPatch, until: Date?, at now: Date) {
        let end = until ?? next ?? .distantFuture
        var override = self.override.flatMap { $0.until > now ? $0 : nil } ?? QueueOverride(until: end)
        override.until = end
        if patch.limitRate != nil, state.limitRate != nil { override.limitRate = true }
        if patch.maxActive != nil, state.maxActive != nil { override.maxActive = true }
        if patch.paused == false, state.run?.value == false { override.run = true }
        self.override = override.isEmpty ? nil : override
    }

    public func inEffect(own: QueueSettings, at now: Date) -> QueueInEffect {
        QueueInEffect.resolve(own: own, schedule: state, override: override, now: now, next: next)
    }
}
