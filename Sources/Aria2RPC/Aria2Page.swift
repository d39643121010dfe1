/// aria2's `offset, num` paging of `tellWaiting` and `tellStopped`, and `changePosition`'s
/// target place, as pure arithmetic that cannot overflow: whatever numbers a client sends,
/// the answer is a range inside the list (or none).
public enum Aria2Page {
    /// The indices of `count` items that `offset, num` select, in the order aria2 lists
    /// them: from the start for an offset ≥ 0, backwards from the end for a negative one
    /// (−1 is the last item). Empty when the offset is past either end.
    public static func indices(offset: Int, num: Int, count: Int) -> [Int] {
        guard num > 0, count > 0 else { return [] }
        if offset >= 0 {
            guard offset < count else { return [] }
            let end = offset + min(num, count - offset)
            return Array(offset..<end)
        }
        // −1 is the last item: `-(offset + 1)` items back from it, computed without negating
        // `offset` itself (−Int.min overflows).
        let back = -(offset + 1)
        guard back < count else { return [] }
        let first = count - 1 - back
        let taken = min(num, first + 1)
        return Array(stride(from: first, through: first - taken + 1, by: -1))
    }

    /// `changePosition`'s new place for a job among `others` waiting jobs (itself left
    /// out), from `POS_SET`, `POS_CUR` (relative to `current`) or `POS_END`; clamped to
    /// `0...others`.
    public static func target(how: String, position: Int, current: Int, others: Int) -> Int? {
        let base: Int
        switch how {
        case "POS_SET": base = 0
        case "POS_CUR": base = current
        case "POS_END": base = others
        default: return nil
        }
        let (sum, overflow) = base.addingReportingOverflow(position)
        let target = overflow ? (position < 0 ? Int.min : Int.max) : sum
        return max(0, min(others, target))
    }
}
