/// Which bytes of a file of known length are on disk and who is fetching the rest.
///
/// The file is divided into contiguous segments; each is fetched front to back by at most
/// one worker, so what a segment has on disk is always `start ..< start + written`. An idle
/// worker takes the back half of the largest unfinished segment (`claim`), so the tail of a
/// download never waits on one slow connection. Completion is proven by coverage: the
/// written ranges must cover `0 ..< total`, whatever the counters say.
public struct SegmentMap: Sendable, Equatable {
    public struct Segment: Sendable, Equatable, Identifiable {
        public let id: Int
        public let start: Int64
        /// Exclusive; moves down when another worker takes the back half.
        public internal(set) var end: Int64
        /// Bytes on disk from `start`.
        public internal(set) var written: Int64
        /// Whether a worker is fetching it.
        public internal(set) var claimed: Bool
        /// Bytes reserved by `reserve` and being written now; not yet on disk.
        public internal(set) var pending: Int64 = 0

        public var next: Int64 { start + written }
        /// Bytes nobody has written or is writing yet.
        public var remaining: Int64 { end - next - pending }
        public var isFinished: Bool { next >= end }
    }

    /// A worker's assignment: fetch `range` into segment `segment`.
    public struct Claim: Sendable, Equatable {
        public let segment: Int
        public let range: Range<Int64>
    }

    public let total: Int64
    /// Sorted by `start`; together they cover `0 ..< total` without overlap.
    public private(set) var segments: [Segment]
    /// Segments smaller than this are not split further.
    public let minimumSplit: Int64
    private var nextID: Int

    /// A fresh map split into `parts` equal segments (fewer for a small file).
    public init(total: Int64, parts: Int, minimumSplit: Int64 = 1 << 20) {
        precondition(total >= 0 && parts >= 1)
        self.total = total
        self.minimumSplit = max(1, minimumSplit)
        let count = Int(max(1, min(Int64(parts), total / self.minimumSplit)))
        var segments: [Segment] = []
        // `total * index / count` overflows for announced sizes near Int64.max; the first
        // `total % count` segments take one byte more instead, with no product over `total`.
        let base = total / Int64(count)
        let extra = total % Int64(count)
        func boundary(_ index: Int) -> Int64 { base * Int64(index) + min(Int64(index), extra) }
        for index in 0..<count {
            segments.append(Segment(id: index, start: boundary(index), end: boundary(index + 1), written: 0, claimed: false))
        }
        self.segments = segments
        self.nextID = count
    }

    /// A map rebuilt from the ranges a checkpoint says are on disk: each written range
    /// becomes a finished segment and each gap an unclaimed one, the gaps split further so
    /// that `parts` workers can start at once.
    public init(total: Int64, written: [Range<Int64>], parts: Int, minimumSplit: Int64 = 1 << 20) {
        self.init(total: total, parts: 1, minimumSplit: minimumSplit)
        var segments: [Segment] = []
        var cursor: Int64 = 0
        func add(_ start: Int64, _ end: Int64, written: Int64) {
            segments.append(Segment(id: segments.count, start: start, end: end, written: written, claimed: false))
        }
        for range in Self.merge(written.map { max(0, $0.lowerBound)..<min(total, $0.upperBound) }) where !range.isEmpty {
            if range.lowerBound > cursor { add(cursor, range.lowerBound, written: 0) }
            add(range.lowerBound, range.upperBound, written: range.upperBound - range.lowerBound)
            cursor = range.upperBound
        }
        if cursor < total || segments.isEmpty { add(cursor, total, written: 0) }
        self.segments = segments
        self.nextID = segments.count
        // Split the largest gaps until there is work for every worker.
        while self.segments.filter({ !$0.isFinished }).count < parts, let id = largestSplittable(claimedOnly: false) {
            split(id)
        }
    }

    // MARK: Queries

    /// Bytes on disk.
    public var writtenBytes: Int64 { segments.reduce(0) { $0 + $1.written } }

    /// The byte ranges on disk, merged and sorted.
    public var writtenRanges: [Range<Int64>] {
        Self.merge(segments.filter { $0.written > 0 }.map { $0.start..<$0.next })
    }

    /// How far the file is written without a gap from byte 0. Segments are kept in the
    /// order of their starts, so this walks them once and allocates nothing (the hasher
    /// asks after every write).
    public var writtenPrefix: Int64 {
        var prefix: Int64 = 0
        for segment in segments {
            guard segment.start <= prefix else { break }
            prefix = max(prefix, segment.next)
        }
        return prefix
    }

    /// True only when the written ranges cover the whole file.
    public var isComplete: Bool {
        let ranges = writtenRanges
        return total == 0 || (ranges.count == 1 && ranges[0] == 0..<total)
    }

    public func segment(_ id: Int) -> Segment? {
        segments.first { $0.id == id }
    }

    // MARK: Events

    /// Assigns work to an idle worker: an unclaimed unfinished segment if there is one,
    /// else the back half of the largest claimed one. Nil when nothing is left to share.
    public mutating func claim() -> Claim? {
        if let index = segments.firstIndex(where: { !$0.claimed && !$0.isFinished }) {
            segments[index].claimed = true
            return Claim(segment: segments[index].id, range: segments[index].next..<segments[index].end)
        }
        guard let victim = largestSplittable(claimedOnly: true), let index = split(victim) else { return nil }
        segments[index].claimed = true
        return Claim(segment: segments[index].id, range: segments[index].next..<segments[index].end)
    }

    /// Reserves up to `count` bytes at the segment's next offset for writing, clipped to
    /// its end, so that no split can hand them to another worker meanwhile. Returns the
    /// bytes the worker may write at `segment.next`; fewer than `count` means the end moved
    /// down (its back half was taken) and the worker should stop after writing them.
    public mutating func reserve(_ count: Int64, segment id: Int) -> Int64 {
        let index = indexOf(id)
        precondition(segments[index].pending == 0, "segment \(id) already has a write in flight")
        let accepted = max(0, min(count, segments[index].remaining))
        segments[index].pending = accepted
        return accepted
    }

    /// The reserved bytes are on disk.
    public mutating func commit(segment id: Int) {
        let index = indexOf(id)
        segments[index].written += segments[index].pending
        segments[index].pending = 0
    }

    /// The reserved bytes were not written (the write failed).
    public mutating func abandon(segment id: Int) {
        segments[indexOf(id)].pending = 0
    }

    /// Reserves and commits at once: `count` bytes were written at the segment's next offset.
    @discardableResult
    public mutating func record(_ count: Int64, segment id: Int) -> Int64 {
        let accepted = reserve(count, segment: id)
        commit(segment: id)
        return accepted
    }

    private func indexOf(_ id: Int) -> Int {
        guard let index = segments.firstIndex(where: { $0.id == id }) else {
            preconditionFailure("no segment \(id) in the map")
        }
        return index
    }

    /// The worker of a segment stopped (finished, failed or cancelled): it may be claimed again.
    public mutating func release(segment id: Int) {
        if let index = segments.firstIndex(where: { $0.id == id }) {
            segments[index].claimed = false
            segments[index].pending = 0
        }
    }

    /// Forgets every claim, as after a restart of all workers.
    public mutating func releaseAll() {
        for index in segments.indices {
            segments[index].claimed = false
            segments[index].pending = 0
        }
    }

    // MARK: Splitting

    private func largestSplittable(claimedOnly: Bool) -> Int? {
        segments
            .filter { (!claimedOnly || $0.claimed) && $0.remaining / 2 >= minimumSplit }
            .max { $0.remaining < $1.remaining }?.id
    }

    /// Cuts the unfinished part of segment `id` in two; returns the index of the new back half.
    @discardableResult
    private mutating func split(_ id: Int) -> Int? {
        guard let index = segments.firstIndex(where: { $0.id == id }) else { return nil }
        let segment = segments[index]
        let middle = segment.next + segment.pending + segment.remaining / 2
        segments[index].end = middle
        let back = Segment(id: nextID, start: middle, end: segment.end, written: 0, claimed: false)
        nextID += 1
        segments.insert(back, at: index + 1)
        return index + 1
    }

    static func merge(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        var merged: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where !range.isEmpty {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
