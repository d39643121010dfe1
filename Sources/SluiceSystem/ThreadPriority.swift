/// The scheduling priority of the calling thread.
public enum ThreadPriority {
    /// Gives the calling thread the nice value `value` (on Linux, `setpriority` with
    /// `PRIO_PROCESS` and 0 sets the calling thread's only). Cheap and idempotent.
    public static func setCurrentThreadNice(_ value: Int32) {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, value)
        #endif
    }
}
