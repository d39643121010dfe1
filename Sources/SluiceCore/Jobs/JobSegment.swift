/// One part of a job's file as `GET /jobs/ID/segments` shows it: the byte range
/// `start..<end`, how many bytes from `start` are on disk, and whether a connection is
/// fetching it now.
public struct JobSegment: Sendable, Equatable {
    public var start: Int64
    public var end: Int64
    public var done: Int64
    public var active: Bool

    public init(start: Int64, end: Int64, done: Int64, active: Bool) {
        self.start = start
        self.end = end
        self.done = done
        self.active = active
    }

    public var json: JSONValue {
        .object([("start", .integer(start)), ("end", .integer(end)), ("done", .integer(done)), ("active", .bool(active))])
    }

    /// A running download's segments, as its map has them.
    public static func live(_ map: SegmentMap) -> [JobSegment] {
        map.segments.map { JobSegment(start: $0.start, end: $0.end, done: $0.written, active: $0.claimed && !$0.isFinished) }
            .sorted { $0.start < $1.start }
    }

    /// A stopped download's file from its checkpoint: each written range whole, each gap
    /// between them (and to `total`) with nothing done.
    public static func stored(written: [Range<Int64>], total: Int64) -> [JobSegment] {
        var result: [JobSegment] = []
        var cursor: Int64 = 0
        for range in written.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.upperBound > cursor {
            let start = max(range.lowerBound, cursor)
            if start > cursor { result.append(JobSegment(start: cursor, end: start, done: 0, active: false)) }
            result.append(JobSegment(start: start, end: range.upperBound, done: range.upperBound - start, active: false))
            cursor = range.upperBound
        }
        if total > cursor { result.append(JobSegment(start: cursor, end: total, done: 0, active: false)) }
        return result
    }
}
