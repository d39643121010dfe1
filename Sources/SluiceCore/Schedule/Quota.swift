import Foundation

/// Quotas (CONTRACT.md §7): bytes downloaded by all jobs per calendar day and per month in the
/// schedule's time zone, the month starting on `monthStartsOn`. At a quota the queue holds
/// every job (`heldBy: "quota"`) until the period ends.
public struct QuotaSettings: Sendable, Equatable {
    public var day: Int64?
    public var month: Int64?
    /// The day of the month a month's period starts on, 1 to 28.
    public var monthStartsOn: Int

    public static let none = QuotaSettings(day: nil, month: nil, monthStartsOn: 1)

    public init(day: Int64?, month: Int64?, monthStartsOn: Int) {
        self.day = day
        self.month = month
        self.monthStartsOn = monthStartsOn
    }

    public var isEmpty: Bool { day == nil && month == nil }

    /// `PATCH /queue`'s `quota`: `day`, `month` (bytes, null for none), `monthStartsOn`.
    public init(json: JSONValue, over current: QuotaSettings) throws {
        guard case .object(let members) = json else {
            throw SluiceError(.invalidField, "quota must be an object with day, month and monthStartsOn", field: "quota")
        }
        let allowed: Set<String> = ["day", "month", "monthStartsOn"]
        if let unknown = members.map(\.0).sorted().first(where: { !allowed.contains($0) }) {
            throw SluiceError(
                .invalidField, "quota.\(unknown) is not a field; the fields are day, month, monthStartsOn", field: "quota.\(unknown)")
        }
        self = current
        for key in ["day", "month"] {
            switch json[key] {
            case nil: continue
            case .null?: if key == "day" { day = nil } else { month = nil }
            case .integer(let bytes)? where bytes >= 1 && bytes <= 1 << 60: if key == "day" { day = bytes } else { month = bytes }
            default:
                throw SluiceError(
                    .invalidField, "quota.\(key) must be a whole number of bytes from 1 to 2^60, or null", field: "quota.\(key)")
            }
        }
        switch json["monthStartsOn"] {
        case nil: break
        case .integer(let day)? where (1...28).contains(day): monthStartsOn = Int(day)
        default: throw SluiceError(.invalidField, "quota.monthStartsOn must be a day from 1 to 28", field: "quota.monthStartsOn")
        }
    }
}

/// The bytes counted against the quotas, by period. A pure value: the instant and the zone
/// come in, so a restart, a step of the clock or a new period are the same call.
public struct QuotaLedger: Sendable, Equatable {
    public var settings: QuotaSettings
    /// The local day counted (its day number), and the first day of the month's period.
    public private(set) var day: Int
    public private(set) var dayBytes: Int64 = 0
    public private(set) var monthStart: Int
    public private(set) var monthBytes: Int64 = 0
    /// How many times the store's ledger was written: a node takes a ledger read from the
    /// store only when it is no older than the one it holds (two exchanges of one node may
    /// answer out of order).
    public var revision: Int64 = 0

    public init(settings: QuotaSettings = .none) {
        self.settings = settings
        day = .min
        monthStart = .min
    }

    /// A ledger as stored.
    public init(settings: QuotaSettings, day: Int, dayBytes: Int64, monthStart: Int, monthBytes: Int64) {
        self.settings = settings
        self.day = day
        self.dayBytes = max(0, dayBytes)
        self.monthStart = monthStart
        self.monthBytes = max(0, monthBytes)
    }

    /// The first day of the month's period holding `date`.
    public func periodStart(of date: CivilDate) -> CivilDate {
        let (year, month, dayOfMonth) = date.parts
        let starts = settings.monthStartsOn
        if dayOfMonth >= starts { return CivilDate(year: year, month: month, day: starts)! }
        return month == 1 ? CivilDate(year: year - 1, month: 12, day: starts)! : CivilDate(year: year, month: month - 1, day: starts)!
    }

    /// The counts for the periods holding `instant`: a new day or month starts from zero.
    /// Returns whether a period changed.
    @discardableResult
    public mutating func roll(to instant: Int64, zone: ScheduleZone) -> Bool {
        let today = zone.local(instant).date
        var changed = false
        if today.dayNumber != day {
            day = today.dayNumber
            dayBytes = 0
            changed = true
        }
        let start = periodStart(of: today).dayNumber
        if start != monthStart {
            monthStart = start
            monthBytes = 0
            changed = true
        }
        return changed
    }

    /// `bytes` more downloaded at `instant`.
    public mutating func add(_ bytes: Int64, at instant: Int64, zone: ScheduleZone) {
        guard bytes > 0 else { return }
        roll(to: instant, zone: zone)
        dayBytes = dayBytes.addingSaturating(bytes)
        monthBytes = monthBytes.addingSaturating(bytes)
    }

    /// Whether a quota is reached (in the periods last rolled to).
    public var reached: Bool {
        (settings.day.map { dayBytes >= $0 } ?? false) || (settings.month.map { monthBytes >= $0 } ?? false)
    }

    public var remainingDay: Int64? { settings.day.map { max(0, $0 - dayBytes) } }
    public var remainingMonth: Int64? { settings.month.map { max(0, $0 - monthBytes) } }

    /// When the quota that holds now ends: the next local midnight, or the next month's
    /// period; nil when none is reached.
    public func resets(zone: ScheduleZone) -> Int64? {
        guard reached else { return nil }
        let dayReached = settings.day.map { dayBytes >= $0 } ?? false
        let monthReached = settings.month.map { monthBytes >= $0 } ?? false
        let tomorrow = zone.instant(CivilDate(dayNumber: day + 1), minute: 0)
        let (year, month, _) = CivilDate(dayNumber: monthStart).parts
        let next =
            month == 12
            ? CivilDate(year: year + 1, month: 1, day: settings.monthStartsOn)!
            : CivilDate(year: year, month: month + 1, day: settings.monthStartsOn)!
        let nextMonth = zone.instant(next, minute: 0)
        switch (dayReached, monthReached) {
        case (_, true): return nextMonth
        default: return tomorrow
        }
    }

    /// As `GET /queue` shows it.
    public var json: JSONValue {
        .object([
            ("day", JSONValue(settings.day)), ("month", JSONValue(settings.month)), ("monthStartsOn", JSONValue(settings.monthStartsOn)),
            ("used", .object([("day", .integer(dayBytes)), ("month", .integer(monthBytes))])),
            ("remaining", .object([("day", JSONValue(remainingDay)), ("month", JSONValue(remainingMonth))])),
        ])
    }

    /// As the store keeps it.
    public var stored: JSONValue {
        .object([
            ("day", JSONValue(settings.day)), ("month", JSONValue(settings.month)), ("monthStartsOn", JSONValue(settings.monthStartsOn)),
            ("countedDay", .integer(Int64(day == .min ? 0 : day))), ("dayBytes", .integer(dayBytes)),
            ("countedMonth", .integer(Int64(monthStart == .min ? 0 : monthStart))), ("monthBytes", .integer(monthBytes)),
            ("revision", .integer(revision)),
        ])
    }

    /// A stored ledger's text (`stored.text`); nil for one that cannot be read.
    public init?(storedText text: String) {
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else { return nil }
        self.init(stored: json)
    }

    /// What a cluster's store keeps when a node brings `bytes` it counted (and, with
    /// `settings`, new quotas): the stored counts, rolled to `instant`'s periods, plus them.
    /// Every node adds to the same counts; none overwrites another's.
    /// With `patch` (`PATCH /queue`'s `quota`), the stored settings patched: what another node
    /// changed meanwhile is kept (a patch the node checked but the stored settings refuse
    /// changes nothing).
    public static func merged(
        stored: QuotaLedger?, adding bytes: Int64, patch: JSONValue?, at instant: Int64, zone: ScheduleZone
    ) -> QuotaLedger {
        var ledger = stored ?? QuotaLedger()
        if let patch, let settings = try? QuotaSettings(json: patch, over: ledger.settings) { ledger.settings = settings }
        ledger.roll(to: instant, zone: zone)
        ledger.add(bytes, at: instant, zone: zone)
        ledger.revision = ledger.revision.addingReportingOverflow(1).overflow ? 0 : ledger.revision + 1
        return ledger
    }

    /// A stored ledger; nil for one that cannot be read (no quota then).
    public init?(stored json: JSONValue) {
        func integer(_ key: String) -> Int64? {
            if case .integer(let value)? = json[key] { return value }
            return nil
        }
        guard let starts = integer("monthStartsOn"), (1...28).contains(starts) else { return nil }
        let settings = QuotaSettings(day: integer("day"), month: integer("month"), monthStartsOn: Int(starts))
        self.init(
            settings: settings, day: Int(integer("countedDay") ?? 0), dayBytes: integer("dayBytes") ?? 0,
            monthStart: Int(integer("countedMonth") ?? 0), monthBytes: integer("monthBytes") ?? 0)
        revision = integer("revision") ?? 0
    }
}
