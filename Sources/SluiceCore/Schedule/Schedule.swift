import Foundation

/// The schedule (CONTRACT.md §7, `GET`/`PUT /schedule`): a week of rules in a time zone, or
/// rclone's `--bwlimit` timetable, which becomes rules. One for the whole service (and for a
/// cluster), kept in the store.
public struct Schedule: Sendable, Equatable {
    /// An IANA name.
    public var timeZone: String
    public var rules: [ScheduleRule]
    /// The timetable the rules were made from, shown back as it was given.
    public var timetable: String?

    /// At most this many rules (a timetable's included): a week of hours is 168.
    public static let maximumRules = 400

    public static let empty = Schedule(timeZone: "UTC", rules: [])

    public init(timeZone: String, rules: [ScheduleRule], timetable: String? = nil) {
        self.timeZone = timeZone
        self.rules = rules
        self.timetable = timetable
    }

    /// The zone, which `init(json:)` checked exists.
    public var zone: ScheduleZone { ScheduleZone(identifier: timeZone) ?? ScheduleZone(TimeZone(identifier: "UTC")!) }

    /// The body of `PUT /schedule` (or `serve --schedule FILE`): `timeZone` (default `UTC`),
    /// and `rules` or `timetable`, nothing else. Anything malformed is `invalid_field` naming
    /// it (`rules[2].from`).
    public init(json: JSONValue) throws {
        guard case .object(let members) = json else { throw SluiceError(.invalidJSON, "the schedule must be a JSON object") }
        let allowed: Set<String> = ["timeZone", "rules", "timetable"]
        if let unknown = members.map(\.0).sorted().first(where: { !allowed.contains($0) }) {
            throw SluiceError(
                .invalidField, "\(unknown) is not a field of the schedule; the fields are rules, timeZone, timetable", field: unknown)
        }
        switch json["timeZone"] {
        case nil: timeZone = "UTC"
        case .string(let name)?:
            guard name.utf8.count <= 64, ScheduleZone(identifier: name) != nil else {
                throw SluiceError(.invalidField, "timeZone must be an IANA time zone name such as Europe/Berlin", field: "timeZone")
            }
            timeZone = name
        default: throw SluiceError(.invalidField, "timeZone must be an IANA time zone name such as Europe/Berlin", field: "timeZone")
        }
        switch (json["rules"], json["timetable"]) {
        case (.some, .some):
            throw SluiceError(.invalidField, "give rules or a timetable, not both", field: "timetable")
        case (.array(let values)?, nil):
            guard values.count <= Self.maximumRules else {
                throw SluiceError(.invalidField, "at most \(Self.maximumRules) rules", field: "rules")
            }
            rules = try values.enumerated().map { try Self.rule($1, field: "rules[\($0)]") }
            timetable = nil
        case (.some, nil):
            throw SluiceError(.invalidField, "rules must be an array of rules", field: "rules")
        case (nil, .string(let text)?):
            rules = try RcloneTimetable.rules(text)
            timetable = text
        case (nil, .some):
            throw SluiceError(.invalidField, "timetable must be a string such as \"Mon-08:00,512K Sat-00:00,off\"", field: "timetable")
        case (nil, nil):
            rules = []
            timetable = nil
        }
    }

    static func rule(_ json: JSONValue, field: String) throws -> ScheduleRule {
        guard case .object(let members) = json else {
            throw SluiceError(.invalidField, "\(field) must be an object with days, from and to", field: field)
        }
        let allowed: Set<String> = ["days", "from", "to", "limitRate", "maxActive", "run"]
        if let unknown = members.map(\.0).sorted().first(where: { !allowed.contains($0) }) {
            throw SluiceError(
                .invalidField, "\(unknown) is not a field of a rule; the fields are \(allowed.sorted().joined(separator: ", "))",
                field: "\(field).\(unknown)")
        }
        func refuse(_ key: String, _ message: String) -> SluiceError {
            SluiceError(.invalidField, "\(field).\(key) \(message)", field: "\(field).\(key)")
        }
        var days = Set(Weekday.allCases)
        switch json["days"] {
        case nil, .string("*")?: break
        case .array(let names)? where !names.isEmpty && names.count <= 7:
            days = []
            for name in names {
                guard let day = name.stringValue.flatMap({ Weekday(name: $0) }) else {
                    throw refuse("days", "must be \"*\" or a list of mon, tue, wed, thu, fri, sat, sun")
                }
                days.insert(day)
            }
        default: throw refuse("days", "must be \"*\" or a list of mon, tue, wed, thu, fri, sat, sun")
        }
        guard let from = json["from"]?.stringValue.flatMap({ ScheduleRule.minutes($0, allowingEnd: false) }) else {
            throw refuse("from", "must be a local time HH:MM from 00:00 to 23:59")
        }
        guard let to = json["to"]?.stringValue.flatMap({ ScheduleRule.minutes($0, allowingEnd: true) }) else {
            throw refuse("to", "must be a local time HH:MM from 00:00 to 24:00")
        }
        var rule = ScheduleRule(days: days, from: from, to: to)
        switch json["limitRate"] {
        case nil: break
        case .null?: rule.limitRate = .removed
        case .integer(let rate)? where (1...RateLimit.maximum).contains(rate): rule.limitRate = .set(rate)
        default: throw refuse("limitRate", "must be a whole number of bytes per second from 1 to \(RateLimit.maximum), or null")
        }
        switch json["maxActive"] {
        case nil: break
        case .integer(let count)? where QueueSettings.maxActiveRange.contains(Int(count)): rule.maxActive = Int(count)
        default: throw refuse("maxActive", "must be between 1 and 64")
        }
        switch json["run"] {
        case nil: break
        case .bool(let run)?: rule.run = run
        default: throw refuse("run", "must be true or false")
        }
        guard rule.limitRate != nil || rule.maxActive != nil || rule.run != nil else {
            throw SluiceError(.invalidField, "\(field) sets nothing: give limitRate, maxActive or run", field: field)
        }
        return rule
    }

    /// As `GET /schedule` shows it and the store keeps it: what `init(json:)` reads back.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("timeZone", .string(timeZone))]
        if let timetable {
            members.append(("timetable", .string(timetable)))
        } else {
            members.append(("rules", .array(rules.map(\.json))))
        }
        return .object(members)
    }
}

extension ScheduleRule {
    public var json: JSONValue {
        let everyDay = days.count == Weekday.allCases.count
        var members: [(String, JSONValue)] = [
            ("days", everyDay ? .string("*") : .array(Weekday.allCases.filter(days.contains).map { .string($0.rawValue) })),
            ("from", .string(Self.text(minutes: from))), ("to", .string(Self.text(minutes: to))),
        ]
        if let limitRate { members.append(("limitRate", JSONValue(limitRate.value))) }
        if let maxActive { members.append(("maxActive", JSONValue(maxActive))) }
        if let run { members.append(("run", .bool(run))) }
        return .object(members)
    }
}
