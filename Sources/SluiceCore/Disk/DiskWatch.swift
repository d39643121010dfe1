/// Jobs waiting for disk space (CONTRACT.md §4, §7 "Disk"), decided from the file system's
/// free space alone. Under the floor kept free, the queue starts nothing. A job that met a
/// full disk (or a reservation that did not fit) waits, its bytes kept, until the space above
/// the floor has grown since then: space came back, so it may fit now. Growth, not a level:
/// a job too large for what is free waits for more, instead of failing again every tick.
public struct DiskWatch: Sendable, Equatable {
    /// Free space for this user, as last seen; nil before the first look.
    public private(set) var available: Int64?
    /// Under the floor: nothing starts.
    public private(set) var low = false
    /// Each waiting job, with the space above the floor when it met the shortage.
    public private(set) var waiting: [String: Int64] = [:]

    /// How much the space above the floor must grow for a waiting job to go on.
    public static let growth: Int64 = 1 << 20

    public init() {}

    /// A look at the file system: `available` free, `floor` kept free. Returns the jobs that
    /// may go on; `changed` when what holds jobs changed (the low mark, or jobs released).
    public mutating func observe(available: Int64, floor: Int64) -> (released: [String], changed: Bool) {
        self.available = available
        let wasLow = low
        low = available < floor
        let usable = max(0, available - max(0, floor))
        let released = low ? [] : waiting.filter { usable >= $0.value + Self.growth }.map(\.key).sorted()
        for id in released { waiting[id] = nil }
        return (released, wasLow != low || !released.isEmpty)
    }

    /// `id` met the shortage: it waits for the space above `floor` to grow.
    public mutating func wait(_ id: String, floor: Int64) {
        waiting[id] = max(0, (available ?? 0) - max(0, floor))
    }

    /// `id` no longer waits (paused, deleted, started).
    public mutating func forget(_ id: String) { waiting[id] = nil }
}
