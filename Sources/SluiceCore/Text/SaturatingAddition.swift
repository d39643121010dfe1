extension Int64 {
    /// `self + other`, or `Int64.max` where that overflows: a count of bytes that can only
    /// grow (a quota's) stops at the top instead of trapping.
    public func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? .min : .max) : sum
    }
}
