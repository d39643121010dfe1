/// The process's open-file limit. Every connection is a descriptor, so the soft limit
/// (often 1024) would cap connections long before `--max-connections` does.
public enum OpenFileLimit {
    /// Raises the soft limit to the hard one and returns the new soft limit.
    @discardableResult
    public static func raiseToHardLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt64(limit.rlim_cur)
    }
}
