public import Foundation
public import SluiceCore

/// What set a value the queue runs with (`setBy` in `GET /queue`): the queue's own settings
/// (flags, `PATCH /queue`), a rule of the schedule, or a manual change that overrides the rule
/// until the next boundary (or its `until`).
public enum SettingSource: Sendable, Equatable {
    case queue
    case rule(Int)
    case override

    public var json: JSONValue {
        switch self {
        case .queue: .string("queue")
        case .rule(let index): .string("rules[\(index)]")
        case .override: .string("override")
        }
    }
}

/// A `PATCH /queue` made while a rule set what it changes: the queue's own value wins for
/// those fields until `until` (the schedule's next change, or the body's `until`).
public struct QueueOverride: Sendable, Equatable {
    public var limitRate = false
    public var maxActive = false
    /// `paused: false` during a closed window opens it.
    public var run = false
    public var until: Date

    public init(limitRate: Bool = false, maxActive: Bool = false, run: Bool = false, until: Date) {
        self.limitRate = limitRate
        self.maxActive = maxActive
        self.run = run
        self.until = until
    }

    var isEmpty: Bool { !limitRate && !maxActive && !run }
}

/// The values the queue runs with now: the queue's own settings, under the schedule's rules,
/// under a manual override. A closed window (`run: false`) starts nothing and leaves no slot.
public struct QueueInEffect: Sendable, Equatable {
    /// The queue's own settings, as stored.
    public var own: QueueSettings
    public var maxActive: Int
    public var limitRate: Int64?
    /// False while a rule closes the window.
    public var run: Bool
    public var maxActiveSetBy: SettingSource = .queue
    public var limitRateSetBy: SettingSource = .queue
    public var runSetBy: SettingSource = .queue
    /// When the schedule next changes what is in effect; nil for never (or no schedule).
    public var next: Date?
    public var overrideUntil: Date?

    /// The settings the queue's rules read (`QueuePlan`, the machine). A closed window is
    /// not in them: it holds jobs (`holds`), and those that ignore the schedule still run.
    public var settings: QueueSettings {
        QueueSettings(paused: own.paused, maxActive: maxActive, limitRate: limitRate)
    }

    /// What the queue's conditions hold back now.
    public var holds: QueueHolds { QueueHolds(windowClosed: !run) }

    /// Why a running job goes back to the queue when its window closes.
    public var windowClosedReason: String { "the schedule's window is closed (\(runSetBy.json.stringValue ?? ""))" }

    public init(own: QueueSettings) {
        self.own = own
        maxActive = own.maxActive
        limitRate = own.limitRate
        run = true
    }

    /// Field by field: an unexpired override's field is the queue's own; else the rule's,
    /// where a rule sets it; else the queue's own.
    public static func resolve(own: QueueSettings, schedule state: ScheduleState, override: QueueOverride?, now: Date, next: Date?)
        -> QueueInEffect
    {
        var effect = QueueInEffect(own: own)
        effect.next = next
        let override = override.flatMap { $0.until > now ? $0 : nil }
        effect.overrideUntil = override?.until
        (effect.maxActive, effect.maxActiveSetBy) = pick(own.maxActive, state.maxActive, overridden: override?.maxActive == true)
        (effect.limitRate, effect.limitRateSetBy) = pick(own.limitRate, state.limitRate, overridden: override?.limitRate == true)
        (effect.run, effect.runSetBy) = pick(true, state.run, overridden: override?.run == true)
        return effect
    }

    /// One field: the queue's own value without a rule or under an override of it, else the
    /// rule's.
    private static func pick<Value>(_ own: Value, _ rule: Ruled<Value>?, overridden: Bool) -> (Value, SettingSource) {
        guard let rule else { return (own, .queue) }
        return overridden ? (own, .override) : (rule.value, .rule(rule.rule))
    }
}

extension QueueInEffect {
    /// `setBy`: which setting gave each value.
    public var setByJSON: JSONValue {
        .object([("maxActive", maxActiveSetBy.json), ("limitRate", limitRateSetBy.json), ("run", runSetBy.json)])
    }

    /// `GET /schedule`'s `inEffect`.
    public var json: JSONValue {
        .object([
            ("maxActive", JSONValue(maxActive)), ("limitRate", JSONValue(limitRate)), ("run", .bool(run)), ("setBy", setByJSON),
            ("next", JSONValue(next)), ("overrideUntil", JSONValue(overrideUntil)),
        ])
    }
}
