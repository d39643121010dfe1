/// A value a rule set, and which rule (its index in the schedule's rules).
public struct Ruled<Value: Sendable & Equatable>: Sendable, Equatable {
    public var value: Value
    public var rule: Int

    public init(_ value: Value, rule: Int) {
        self.value = value
        self.rule = rule
    }
}

/// What the schedule sets at an instant: each field the last rule holding then set, nil
/// where none did (the queue's own value applies).
public struct ScheduleState: Sendable, Equatable {
    /// nil inside: unlimited.
    public var limitRate: Ruled<Int64?>?
    public var maxActive: Ruled<Int>?
    public var run: Ruled<Bool>?

    public init(limitRate: Ruled<Int64?>? = nil, maxActive: Ruled<Int>? = nil, run: Ruled<Bool>? = nil) {
        self.limitRate = limitRate
        self.maxActive = maxActive
        self.run = run
    }

    /// Whether the two set the same values, whichever rules set them: a timetable's rule for
    /// Tuesday taking over Monday's same rate at midnight is no change of what is in effect.
    public func setsTheSame(as other: ScheduleState) -> Bool {
        limitRate?.value == other.limitRate?.value && maxActive?.value == other.maxActive?.value && run?.value == other.run?.value
    }
}
